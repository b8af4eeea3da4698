"""Two runs' outputs compared layer by layer: dumps in, the first layer that parts ways and symptoms out.

A stage beside diagnosis and graph: it reads dumps (msprobe dump.json, MindSpore statistic.csv, MindSpore
CPU ``.npy`` tensors) through diagnosis's materialisation and budgets, aligns layers, compares their
statistics with a dtype-aware tolerance, and emits symptoms for the knowledge engine.

Public API: read_dump, find_mapping, load_mapping (reading); reads_in_place, read_dump_at, mapping_file
(the same reading split for an isolated child that receives plain values); compare_dumps, depth_profile,
TOLERANCES, OutputsComparison (comparing); output_symptoms, op_family, symptom_declarations (symptoms);
divergence_asks (what would decide a divergence no cause explains); Dump, Layer, TensorStats (the model).
Names are imported on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.lazy import lazy_getattr

_EXPORTS: dict[str, str] = {
    "read_dump": "outputs.ingest",
    "find_mapping": "outputs.ingest",
    "reads_in_place": "outputs.ingest",
    "read_dump_at": "outputs.ingest",
    "mapping_file": "outputs.ingest",
    "load_mapping": "outputs.msprobe",
    "compare_dumps": "outputs.compare",
    "depth_profile": "outputs.compare",
    "TOLERANCES": "outputs.compare",
    "OutputsComparison": "outputs.compare",
    "output_symptoms": "outputs.symptoms",
    "op_family": "outputs.symptoms",
    "symptom_declarations": "outputs.symptoms",
    "divergence_asks": "outputs.undecided",
    "Dump": "outputs.layers",
    "Layer": "outputs.layers",
    "TensorStats": "outputs.stats",
}

if TYPE_CHECKING:
    from outputs.compare import TOLERANCES, OutputsComparison, compare_dumps, depth_profile
    from outputs.ingest import find_mapping, mapping_file, read_dump, read_dump_at, reads_in_place
    from outputs.layers import Dump, Layer
    from outputs.msprobe import load_mapping
    from outputs.stats import TensorStats
    from outputs.symptoms import op_family, output_symptoms, symptom_declarations
    from outputs.undecided import divergence_asks

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())

__all__ = [
    "TOLERANCES",
    "Dump",
    "Layer",
    "OutputsComparison",
    "TensorStats",
    "compare_dumps",
    "depth_profile",
    "divergence_asks",
    "find_mapping",
    "load_mapping",
    "mapping_file",
    "op_family",
    "output_symptoms",
    "read_dump",
    "read_dump_at",
    "reads_in_place",
    "symptom_declarations",
]

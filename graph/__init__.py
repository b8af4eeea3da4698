"""MINDIR graphs: load a .mindir with protobuf alone, find fusion chains and decomposed transformer
patterns (attention, norms, activations, rotary: graph.patterns), check export hygiene,
cross-link chains with profiled kernels, and draw the graph (graph.view, imported on demand).

Public API: load_mindir, find_chains, chain_counts, hygiene_symptoms, crosslink, model_match
(with MODEL_MATCH_MIN), overview_figure, symptom_declarations (the kinds the graph checks declare).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

# Pick protobuf's fast upb backend before anything imports protobuf: MindSpore sets this variable to
# "python" at import when it is unset, which makes every later parse in the process ~200x slower.
os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "upb")

from core.symptoms import SymptomValues, declared_in
from graph import hygiene
from graph.chains import PATTERNS, Pattern, chain_counts, find_chains
from graph.hygiene import hygiene_symptoms
from graph.loader import MAX_FILE_BYTES, load_mindir
from graph.model import Chain, FunctionInfo, MindirModel, ParameterSummary, TensorInfo
from graph.patterns import DAG_PATTERNS, DagPattern, Slot

if TYPE_CHECKING:  # imported on first use by __getattr__ below; named here for the type checker
    from graph.profile_join import MODEL_MATCH_MIN, crosslink, model_match
    from graph.view import overview_figure


def symptom_declarations() -> dict[str, tuple[type[SymptomValues], ...]]:
    """The symptom kinds the graph checks declare, by module name (the vocabulary is made of them)."""
    from graph import profile_join

    return {module.__name__: declared_in(module) for module in (hygiene, profile_join)}


def __getattr__(name: str) -> object:
    """`crosslink`, `model_match` and `overview_figure` are imported on first use: they pull in pandas
    and plotly."""
    if name == "crosslink":
        from graph.profile_join import crosslink

        return crosslink
    if name in ("model_match", "MODEL_MATCH_MIN"):
        from graph import profile_join

        return getattr(profile_join, name)
    if name == "overview_figure":  # plotly, which the analysis does not need either
        from graph.view import overview_figure

        return overview_figure
    raise AttributeError(f"module 'graph' has no attribute {name!r}")


__all__ = [
    "DAG_PATTERNS",
    "MAX_FILE_BYTES",
    "MODEL_MATCH_MIN",
    "PATTERNS",
    "Chain",
    "DagPattern",
    "FunctionInfo",
    "MindirModel",
    "ParameterSummary",
    "Pattern",
    "Slot",
    "TensorInfo",
    "chain_counts",
    "crosslink",
    "find_chains",
    "hygiene_symptoms",
    "load_mindir",
    "model_match",
    "overview_figure",
    "symptom_declarations",
]

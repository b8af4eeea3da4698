"""The vocabulary every stage shares: the run model, the symptom vocabulary, limitations and errors.

The bottom layer of the corridor (docs/architecture.md): it imports no other package of the project,
and every package may import it.

Public API: Run, RunMeta, ProfilerConfig, Limitation, Symptom, SymptomKind, SYMPTOM_KINDS, SOURCES,
InputError and the canonical table schemas.
"""

from __future__ import annotations

from core.errors import InputError
from core.model import (
    KERNEL_SCHEMA,
    PIPE_COUNTERS,
    STEP_SCHEMA,
    Limitation,
    ProfilerConfig,
    Run,
    RunMeta,
    conform_kernels,
    conform_steps,
    empty_kernels,
    empty_steps,
)
from core.symptoms import SOURCES, SYMPTOM_KINDS, Symptom, SymptomKind

__all__ = [
    "KERNEL_SCHEMA",
    "PIPE_COUNTERS",
    "SOURCES",
    "STEP_SCHEMA",
    "SYMPTOM_KINDS",
    "InputError",
    "Limitation",
    "ProfilerConfig",
    "Run",
    "RunMeta",
    "Symptom",
    "SymptomKind",
    "conform_kernels",
    "conform_steps",
    "empty_kernels",
    "empty_steps",
]

"""Symptom analyzers: one small module per concern, each a pure function over prepared data.

Two kinds, registered below:
- pair analyzers take a `Comparison` and return symptoms about the difference (source "pair");
- run analyzers take one `Side` and its role and return symptoms about that run alone
  (source "baseline" or "target"); they also serve the single-run diagnosis.

Every module that emits symptoms (each module here, graph/hygiene.py, graph/profile_join.py,
outputs/symptoms.py) declares near its top each kind it emits as a `core.symptoms.SymptomValues` dataclass
(description, what it describes, message ids, typed values) and builds its symptoms through it
(``TrainModeKernels(...).symptom(summary, role)``); ``EMITS = Emits.of(...)`` lists those declarations.
The vocabulary `SYMPTOM_KINDS` is generated from them (``python -m doctor.vocabulary``), each kind declared
by exactly one module, and tests/test_symptom_fixtures.py runs every emitter over the fires / quiet /
shared cases of tests/fixtures/symptoms/<kind>.yaml: an undeclared kind, a value off its declaration, or a
declared kind without a passing case of each, fails it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TypeVar

from core.symptoms import SYMPTOM_KINDS, Symptom, SymptomValues, declared_in
from diagnosis.compare import Comparison, Side

PairAnalyzer = Callable[[Comparison], list[Symptom]]
RunAnalyzer = Callable[[Side, str], list[Symptom]]

PAIR_ANALYZERS: list[PairAnalyzer] = []
RUN_ANALYZERS: list[RunAnalyzer] = []


def pair_analyzer(fn: PairAnalyzer) -> PairAnalyzer:
    """Register a pair analyzer."""
    PAIR_ANALYZERS.append(fn)
    return fn


def run_analyzer(fn: RunAnalyzer) -> RunAnalyzer:
    """Register a single-run analyzer."""
    RUN_ANALYZERS.append(fn)
    return fn


# Reports list symptoms in this order of analyzer modules (then in each module's order), whatever
# imported which module first: the order the facade's imports gave when the reports were pinned.
MODULE_ORDER = (
    "devices",
    "config",
    "environment",
    "kernels",
    "pipeline",
    "precision",
    "timing",
    "shapes",
    "training",
    "ranks",
)


Analyzer = TypeVar("Analyzer", bound=Callable[..., list[Symptom]])


def _ordered(analyzers: list[Analyzer]) -> list[Analyzer]:
    """The registered analyzers in MODULE_ORDER (a module missing from it fails here, loudly)."""
    return sorted(analyzers, key=lambda fn: MODULE_ORDER.index(fn.__module__.rsplit(".", 1)[-1]))


def _load_all() -> None:
    """Import every analyzer module of MODULE_ORDER: importing one registers its analyzers."""
    for name in MODULE_ORDER:
        importlib.import_module(f"{__name__}.{name}")


def symptom_declarations() -> dict[str, tuple[type[SymptomValues], ...]]:
    """The symptom kinds each analyzer module declares, by module name (the vocabulary is made of them)."""
    _load_all()
    return {
        f"{__name__}.{name}": declared_in(importlib.import_module(f"{__name__}.{name}"))
        for name in MODULE_ORDER
    }


def analyze_pair(comparison: Comparison) -> list[Symptom]:
    """All pair symptoms plus run symptoms of the target (and of the baseline where they matter)."""
    _load_all()
    found: list[Symptom] = []
    for fn in _ordered(PAIR_ANALYZERS):
        found += fn(comparison)
    for fn in _ordered(RUN_ANALYZERS):
        found += _run_symptoms(fn, comparison.target, "target")
        # The baseline's own symptoms let rules discount what both runs share (same job twice).
        found += _run_symptoms(fn, comparison.baseline, "baseline")
    _check(found)
    return found


def analyze_run(side: Side, role: str = "target") -> list[Symptom]:
    """Run symptoms of one run on its own."""
    _load_all()
    found: list[Symptom] = []
    for fn in _ordered(RUN_ANALYZERS):
        found += _run_symptoms(fn, side, role)
    _check(found)
    return found


def _run_symptoms(fn: Callable[..., list[Symptom]], side: Side, role: str) -> list[Symptom]:
    """One run analyzer's symptoms of a prepared run, computed once per run and role: a multi-rank job's
    slow rank is analysed on its own and again against its typical rank (symptoms are frozen)."""
    key = f"run-analyzer:{fn.__module__}.{fn.__qualname__}:{role}"
    return list(side.memo(key, lambda prepared: tuple(fn(prepared, role))))


def _check(symptoms: list[Symptom]) -> None:
    unknown = {s.kind for s in symptoms} - set(SYMPTOM_KINDS)
    if unknown:
        raise ValueError(f"analyzers emitted unregistered symptom kinds: {sorted(unknown)}")

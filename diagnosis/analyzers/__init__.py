"""Symptom analyzers: one small module per concern, each a pure function over prepared data.

Two kinds, registered below:
- pair analyzers take a `Comparison` and return symptoms about the difference (source "pair");
- run analyzers take one `Side` and its role and return symptoms about that run alone
  (source "baseline" or "target"); they also serve the single-run diagnosis.
"""

from __future__ import annotations

from collections.abc import Callable

from diagnosis.compare import Comparison, Side
from core.symptoms import SYMPTOM_KINDS, Symptom

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


def _load_all() -> None:
    # devices registers first: reports list symptoms in registration order, and that order was set
    # when the facade imported devices (for its npu-smi parser, now a reader) before the others.
    import diagnosis.analyzers.devices  # noqa: F401  (registration by import)
    from diagnosis.analyzers import (  # noqa: F401  (registration by import)
        config,
        environment,
        kernels,
        pipeline,
        precision,
        shapes,
        timing,
        training,
    )


def analyze_pair(comparison: Comparison) -> list[Symptom]:
    """All pair symptoms plus run symptoms of the target (and of the baseline where they matter)."""
    _load_all()
    found: list[Symptom] = []
    for fn in PAIR_ANALYZERS:
        found += fn(comparison)
    for fn in RUN_ANALYZERS:
        found += fn(comparison.target, "target")
        # The baseline's own symptoms let rules discount what both runs share (same job twice).
        found += fn(comparison.baseline, "baseline")
    _check(found)
    return found


def analyze_run(side: Side, role: str = "target") -> list[Symptom]:
    """Run symptoms of one run on its own."""
    _load_all()
    found: list[Symptom] = []
    for fn in RUN_ANALYZERS:
        found += fn(side, role)
    _check(found)
    return found


def _check(symptoms: list[Symptom]) -> None:
    unknown = {s.kind for s in symptoms} - set(SYMPTOM_KINDS)
    if unknown:
        raise ValueError(f"analyzers emitted unregistered symptom kinds: {sorted(unknown)}")

"""Cached access to the real MindSpore CPU profiler fixtures (tests/fixtures/cpu/<scenario>)."""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import Path

from diagnosis.analyzers import analyze_pair, analyze_run
from diagnosis.compare import Comparison, compare_runs, prepare
from diagnosis.ingest import read_folder
from core.model import Run
from core.symptoms import Symptom

CPU = Path(__file__).parent / "fixtures" / "cpu"


@cache
def cpu_run(scenario: str) -> Run:
    """The canonical run of one CPU scenario (read once per test session)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_folder(CPU / scenario)


@cache
def cpu_pair(baseline: str, target: str) -> tuple[Comparison, tuple[Symptom, ...]]:
    """Comparison and symptoms of two CPU scenarios (cached)."""
    comparison = compare_runs(cpu_run(baseline), cpu_run(target))
    return comparison, tuple(analyze_pair(comparison))


@cache
def cpu_single(scenario: str) -> tuple[Symptom, ...]:
    """Run symptoms of one CPU scenario on its own."""
    return tuple(analyze_run(prepare(cpu_run(scenario)), "target"))


def kinds(symptoms: tuple[Symptom, ...]) -> set[str]:
    return {s.kind for s in symptoms}


def one(symptoms: tuple[Symptom, ...], kind: str) -> Symptom:
    found = [s for s in symptoms if s.kind == kind]
    assert len(found) == 1, f"expected one {kind}, got {[s.kind for s in symptoms]}"
    return found[0]

"""Cached access to the real MindSpore CPU profiler fixtures (tests/fixtures/cpu/<scenario>)."""

from __future__ import annotations

import warnings
from functools import cache

from core.model import Run
from core.symptoms import Symptom
from diagnosis.analyzers import analyze_pair, analyze_run
from diagnosis.compare import Comparison, compare_runs, prepare
from diagnosis.ingest import read_folder
from tests.support.inputs import ROOT

FIXTURES = ROOT / "tests" / "fixtures"


@cache
def fixture_run(path: str) -> Run:
    """The canonical run of one fixture folder below tests/fixtures (read once per test session; callers
    copy before editing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_folder(FIXTURES / path)


def cpu_run(scenario: str) -> Run:
    """The canonical run of one CPU scenario (tests/fixtures/cpu/<scenario>)."""
    return fixture_run(f"cpu/{scenario}")


@cache
def cpu_pair(baseline: str, target: str) -> tuple[Comparison, tuple[Symptom, ...]]:
    """Comparison and symptoms of two CPU scenarios (cached)."""
    comparison = compare_runs(cpu_run(baseline), cpu_run(target))
    return comparison, tuple(analyze_pair(comparison))


@cache
def fixture_pair(
    baseline: str, target: str, baseline_role: str | None = None
) -> tuple[Comparison, tuple[Symptom, ...]]:
    """Comparison and symptoms of two fixture folders below tests/fixtures (cached); `baseline_role`
    as in compare_runs ("first" keeps the given order)."""
    comparison = compare_runs(fixture_run(baseline), fixture_run(target), baseline=baseline_role)
    return comparison, tuple(analyze_pair(comparison))


@cache
def cpu_single(scenario: str) -> tuple[Symptom, ...]:
    """Run symptoms of one CPU scenario on its own."""
    return tuple(analyze_run(prepare(cpu_run(scenario)), "target"))


def kinds(symptoms: tuple[Symptom, ...]) -> set[str]:
    """The kinds among `symptoms`."""
    return {s.kind for s in symptoms}


def one(symptoms: tuple[Symptom, ...], kind: str) -> Symptom:
    """The one symptom of `kind` (fails when there is none or more than one)."""
    found = [s for s in symptoms if s.kind == kind]
    assert len(found) == 1, f"expected one {kind}, got {[s.kind for s in symptoms]}"
    return found[0]

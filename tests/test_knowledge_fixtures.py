"""Semgrep-style fixture pairs: every rule fires and ranks first on its `fires` cases and is absent
from the causes of its `quiet` cases (near misses, contradicting symptoms, missing data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.model import Limitation
from core.symptoms import SYMPTOM_KINDS, Symptom
from doctor.facade import diagnose
from knowledge import evaluate, load_rules

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
CASE_KEYS = {"name", "inputs", "symptoms", "limitations", "expect"}
SYMPTOM_KEYS = {"kind", "source", "strength", "values", "evidence", "recoverable_ms_per_step", "summary"}
EXPECT_KEYS = {"severity", "recoverable_ms_per_step", "min_confidence", "undecided"}


@dataclass(frozen=True)
class Case:
    """One fixture case: the inputs and symptoms, and what must (not) happen to the rule."""

    rule: str
    kind: str  # "fires" | "quiet"
    name: str
    inputs: frozenset[str]
    symptoms: tuple[Symptom, ...]
    limitations: tuple[Limitation, ...]
    expect: dict[str, Any] = field(default_factory=dict)


def _symptom(raw: dict[str, Any]) -> Symptom:
    unknown = set(raw) - SYMPTOM_KEYS
    assert not unknown, f"unknown symptom keys {unknown}"
    # Fixtures speak the analyzers' vocabulary: a value no analyzer emits would test nothing real.
    registered = set(SYMPTOM_KINDS[raw["kind"]].values)
    assert set(raw.get("values", {})) <= registered, f"{raw['kind']}: {set(raw['values']) - registered}"
    return Symptom(
        kind=raw["kind"],
        summary=raw.get("summary", f"fixture {raw['kind']}"),
        source=raw.get("source", "pair"),
        strength=raw.get("strength", 1.0),
        values=raw.get("values", {}),
        evidence=tuple(raw.get("evidence", ())),
        recoverable_ms_per_step=raw.get("recoverable_ms_per_step"),
    )


def _case(rule: str, kind: str, raw: dict[str, Any]) -> Case:
    unknown = set(raw) - CASE_KEYS
    assert not unknown, f"{rule} {kind} {raw.get('name')}: unknown keys {unknown}"
    expect = raw.get("expect", {})
    assert set(expect) <= EXPECT_KEYS, f"{rule}: unknown expect keys {set(expect) - EXPECT_KEYS}"
    return Case(
        rule=rule,
        kind=kind,
        name=raw["name"],
        inputs=frozenset(raw["inputs"]),
        symptoms=tuple(_symptom(s) for s in raw.get("symptoms", [])),
        limitations=tuple(Limitation(**lim) for lim in raw.get("limitations", [])),
        expect=expect,
    )


def load_fixture(path: Path) -> dict[str, list[Case]]:
    """The symptom cases of one fixture file, by kind ("shared" holds the shared-trait cases given as
    symptoms; those given as real profiles are in `shared_profiles`)."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert set(raw) <= {"rule", "fires", "quiet", "shared"}, f"{path.name}: unknown top-level keys"
    assert raw["rule"] == path.stem, f"{path.name}: rule {raw['rule']!r} differs from the file name"
    cases = {kind: [_case(raw["rule"], kind, c) for c in raw.get(kind, [])] for kind in ("fires", "quiet")}
    cases["shared"] = [_case(raw["rule"], "shared", c) for c in raw.get("shared", []) if "profiles" not in c]
    return cases


def shared_profiles() -> list[tuple[str, str, Path, Path]]:
    """(rule, case name, baseline folder, target folder) of the shared-trait cases given as profiles."""
    out = []
    for path in sorted(FIXTURES.glob("*.yaml")):
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in raw.get("shared", []):
            if "profiles" in case:
                assert set(case) == {"name", "profiles"}, f"{path.stem}: {case}"
                first, second = (FIXTURES.parent / p for p in case["profiles"])
                out.append((raw["rule"], case["name"], first, second))
    return out


def all_cases() -> list[Case]:
    return [
        case
        for path in sorted(FIXTURES.glob("*.yaml"))
        for cases in load_fixture(path).values()
        for case in cases
    ]


CASES = all_cases()


@pytest.mark.slow
def test_every_rule_has_fire_and_quiet_cases() -> None:
    rule_ids = {rule.id for rule in load_rules()}
    fixture_ids = {path.stem for path in FIXTURES.glob("*.yaml")}
    assert fixture_ids == rule_ids, f"missing: {rule_ids - fixture_ids}; stray: {fixture_ids - rule_ids}"
    for path in FIXTURES.glob("*.yaml"):
        cases = load_fixture(path)
        assert cases["fires"], f"{path.stem} has no fires case"
        assert cases["quiet"], f"{path.stem} has no quiet case"
    with_shared = {case.rule for case in CASES if case.kind == "shared"} | {r for r, *_ in shared_profiles()}
    assert with_shared == rule_ids, f"rules without a shared-trait case: {rule_ids - with_shared}"


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "fires"], ids=lambda c: f"{c.rule}:{c.name}")
def test_rule_fires_and_ranks_first(case: Case) -> None:
    diagnosis = evaluate(case.symptoms, case.limitations, case.inputs)
    ranked = [c.id for c in diagnosis.causes]
    assert ranked and ranked[0] == case.rule, f"expected {case.rule} first, got {ranked}"
    top = diagnosis.causes[0]
    assert top.evidence and all(e.role in ("supports", "contradicts", "explains") for e in top.evidence)
    if "severity" in case.expect:
        assert top.severity == case.expect["severity"]
    if "recoverable_ms_per_step" in case.expect:
        assert top.recoverable_ms_per_step == pytest.approx(case.expect["recoverable_ms_per_step"])
    assert top.confidence >= case.expect.get("min_confidence", 0.5)
    assert case.rule not in {u.id for u in diagnosis.undecided}


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "quiet"], ids=lambda c: f"{c.rule}:{c.name}")
def test_rule_stays_quiet(case: Case) -> None:
    diagnosis = evaluate(case.symptoms, case.limitations, case.inputs)
    assert case.rule not in {c.id for c in diagnosis.causes}
    if "undecided" in case.expect:
        undecided = case.rule in {u.id for u in diagnosis.undecided}
        assert undecided is case.expect["undecided"]


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "shared"], ids=lambda c: f"{c.rule}:{c.name}")
def test_a_trait_both_runs_share_is_no_cause(case: Case) -> None:
    """The same symptom on both runs: the engine subtracts the baseline's and nothing is left."""
    assert {s.source for s in case.symptoms} == {"target", "baseline"}
    diagnosis = evaluate(case.symptoms, case.limitations, case.inputs)
    assert case.rule not in {c.id for c in diagnosis.causes}
    assert diagnosis.status == "nothing-found"


@pytest.mark.slow
@pytest.mark.parametrize(("rule", "name", "baseline", "target"), shared_profiles(), ids=lambda v: str(v)[:60])
def test_a_trait_both_real_runs_share_is_no_significant_cause(
    rule: str, name: str, baseline: Path, target: Path
):
    """Real profiles that share the trait end to end: the rule is not a significant cause."""
    report = diagnose(baseline, target, isolate=False)
    significant = {c.id for c in report.causes if c.significant}
    assert rule not in significant, name

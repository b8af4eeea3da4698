"""Verdicts support staff can trust: a trait both runs share never supports a cause, two runs of one
job and healthy train-vs-infer pairs say "nothing significant", and titles never claim more than the
evidence measures."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.symptoms import SYMPTOM_KINDS, Symptom
from doctor.facade import diagnose
from knowledge import evaluate, load_rules
from knowledge.schema import QUANTITY_CLAIMS

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples" / "ascend"
CPU = FIXTURES / "cpu"
ASCEND_EXAMPLE = FIXTURES.parents[1] / "assets" / "examples" / "ascend_derived_fp32_split"

# Every run folder the suite holds: each compared with itself must give nothing significant.
RUN_FOLDERS = [
    *(p for p in sorted(CPU.iterdir()) if p.is_dir()),
    FIXTURES / "ascend" / "level0" / "train",
    FIXTURES / "ascend" / "level0" / "infer",
    FIXTURES / "ascend" / "level1" / "train",
    FIXTURES / "ascend" / "level1" / "infer",
    FIXTURES / "ascend" / "legacy_ascend",
    FIXTURES / "ascend" / "legacy_gpu",
    FIXTURES / "ascend" / "ms23",
    FIXTURES / "ascend" / "torch_npu",
    FIXTURES / "ascend_symptoms" / "serving" / "steady",
    FIXTURES / "ascend_symptoms" / "serving" / "slow",
    SAMPLES / "kernel_details_2023_training",
    SAMPLES / "kernel_details_2025_bf16_llm",
    *(
        FIXTURES / "ascend_llm" / name
        for name in (
            "fused_infer",
            "split_infer",
            "norm_fused",
            "norm_split",
            "prefill_only",
            "generate_graph",
            "generate_host_bound",
        )
    ),
    *(
        FIXTURES / "transformer" / "profiles" / name
        for name in (
            "llama_infer_graph",
            "llama_generate_graph",
            "llama_generate_pynative",
            "llama_generate_wide_graph",
        )
    ),
    *(ASCEND_EXAMPLE / side for side in ("baseline", "target")),  # derived from a real NPU step
]
# Healthy pairs of different runs: set up correctly, so nothing is wrong with the target.
HEALTHY_PAIRS = [
    ("train_fp32_graph", "infer_fp32_graph"),
    ("train_amp_o2_graph", "infer_amp_o2_graph"),
    ("infer_fp32_graph", "infer_fp32_graph_repeat"),
    ("infer_fp32_graph_repeat", "infer_fp32_graph_repeat2"),
    ("infer_fp32_graph", "infer_fp32_graph_batch32"),
    ("train_fp32_graph", "infer_fp32_graph_batch32"),
]
# Pairs with a cause, for the title/evidence check (the healthy ones are checked too).
CAUSE_PAIRS = [
    ("cpu/train_amp_o2_graph", "cpu/infer_fp32_graph"),
    ("cpu/train_fp32_graph", "cpu/infer_fp32_pynative"),
    ("cpu/train_fp32_graph", "cpu/infer_trainmode_graph"),
    ("cpu/train_fp32_graph", "cpu/infer_fp32_graph_nowarmup"),
    ("cpu/infer_fp32_graph", "cpu/infer_fp32_graph_contention"),
    ("cpu/infer_fp32_graph", "cpu/infer_fp32_graph_dynamic_shapes"),
    ("ascend/level1/train", "ascend/level1/infer"),
    ("ascend/level0/train", "ascend/level0/infer"),
    ("ascend_symptoms/serving/steady", "ascend_symptoms/serving/slow"),
]
NUMBER = re.compile(r"\d")


def _listed_high(report: Any) -> list[str]:
    return [c.id for c in report.causes if c.severity_label in ("high", "critical")]


@pytest.mark.slow
@pytest.mark.parametrize("folder", RUN_FOLDERS, ids=lambda p: p.name)
def test_any_run_compared_with_itself_gives_nothing_significant(folder: Path) -> None:
    report = diagnose(folder, folder, isolate=False)
    assert report.data["verdict"]["status"] == "nothing-found", [c.id for c in report.causes]
    assert not [c for c in report.causes if c.significant]
    assert _listed_high(report) == []


@pytest.mark.slow
@pytest.mark.parametrize(("baseline", "target"), HEALTHY_PAIRS)
def test_a_healthy_pair_gives_nothing_significant_and_lists_nothing_high(baseline: str, target: str) -> None:
    report = diagnose(CPU / baseline, CPU / target, isolate=False)
    assert report.data["verdict"]["status"] == "nothing-found", [c.id for c in report.causes]
    assert _listed_high(report) == []


# --- the engine property: whatever the run symptoms, the same ones on both sides explain nothing ----

RUN_KINDS = sorted(
    {
        s.symptom
        for rule in load_rules()
        for s in rule.supports
        if s.sources is None and not s.symptom.startswith(("mindir", "chains"))
    }
)


@st.composite
def run_symptom(draw: st.DrawFn) -> Symptom:
    """A run-level symptom of any kind rules support, with any numbers for its value keys."""
    kind = draw(st.sampled_from(RUN_KINDS))
    number = st.one_of(st.integers(0, 500), st.floats(0, 500, allow_nan=False))
    values = {key: draw(number) for key in SYMPTOM_KINDS[kind].values}
    return Symptom(
        kind,
        f"{kind} seen",
        source="target",
        strength=draw(st.floats(0, 1)),
        values=values,
        recoverable_ms_per_step=draw(st.one_of(st.none(), st.floats(0, 100))),
    )


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(run_symptom(), min_size=1, max_size=6, unique_by=lambda s: s.kind))
def test_run_symptoms_shared_by_both_runs_never_support_a_cause(symptoms: list[Symptom]) -> None:
    mirrored = [Symptom(**{**s.__dict__, "source": "baseline"}) for s in symptoms]
    diagnosis = evaluate([*symptoms, *mirrored], [], {"pair"})
    assert diagnosis.causes == []
    assert diagnosis.status == "nothing-found"


def test_the_same_symptoms_on_the_target_alone_do_support_causes() -> None:
    """The property above is not vacuous: the target's symptoms alone make causes."""
    jitter = Symptom(
        "step-jitter",
        "jitter",
        source="target",
        values={"spread": 0.9, "steps": 50, "p50_ms": 5.0, "tail_ms": 2.0},
    )
    assert [c.id for c in evaluate([jitter], [], {"pair"}).causes] == ["latency-jitter"]


# --- titles state the hypothesis, evidence states the number ---------------------------------------


def test_no_rule_title_claims_a_quantity() -> None:
    for rule in load_rules():
        for title in (rule.title.en, rule.title.zh):
            assert not QUANTITY_CLAIMS.search(title), (rule.id, title)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("baseline", "target"), CAUSE_PAIRS + [(f"cpu/{a}", f"cpu/{b}") for a, b in HEALTHY_PAIRS]
)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_report_titles_and_evidence_are_consistent(baseline: str, target: str, lang: str) -> None:
    """Every listed cause: a title without a quantity claim, a quantified cause whose evidence states
    the number, and a verdict that names a cause only when one is significant. (Categorical evidence,
    e.g. "graph vs PyNative" or the names of random transforms, carries no number.)"""
    report = diagnose(FIXTURES / baseline, FIXTURES / target, isolate=False, lang=lang)
    verdict = report.data["verdict"]
    for cause in report.causes:
        assert not QUANTITY_CLAIMS.search(cause.title), cause.title
        supports = [e for e in cause.evidence if e.role == "supports"]
        assert supports, cause.id
        quantified = cause.recoverable_ms_per_step is not None
        assert not quantified or any(NUMBER.search(e.summary) for e in supports), cause.id
    significant = [c.id for c in report.causes if c.significant]
    assert (verdict["top_cause"] is None) == (verdict["status"] == "nothing-found")
    assert verdict["top_cause"] is None or verdict["top_cause"] in significant
    assert all(c.section == "ranked" for c in report.causes if c.significant)

"""Each symptom a CPU run can show: where it fires on a real MindSpore pair, and where it must not."""

from __future__ import annotations

import pytest

from core.symptoms import SYMPTOM_KINDS
from tests.support.runs import cpu_pair, cpu_single, kinds, one

# Symptoms that would wrongly accuse one of two identical jobs.
SEVERE = {
    "step-time-gap",
    "op-slowdown",
    "uniform-slowdown",
    "precision-change",
    "execution-mode-mismatch",
    "train-mode-kernels",
    "shape-mismatch",
    "op-set-mismatch",
    "fusion-split",
}


def test_precision_change_from_casts_fires_for_amp_training_vs_fp32_inference():
    _, symptoms = cpu_pair("train_amp_o2_graph", "infer_fp32_graph")
    s = one(symptoms, "precision-change")
    assert s.values["evidence_basis"] == "cast ops and AMP scopes"
    assert s.values["baseline_casts_per_step"] > 2 and s.values["target_casts_per_step"] == 0
    assert s.recoverable_ms_per_step is None  # Cast counts show the change but cannot price it on CPU
    assert {row["op_type"] for row in s.evidence} <= {"Conv2D", "MatMul"}


@pytest.mark.parametrize(
    ("baseline", "target"),
    [("train_fp32_graph", "infer_fp32_graph"), ("train_amp_o2_graph", "infer_amp_o2_graph")],
)
@pytest.mark.slow
def test_precision_change_quiet_when_both_sides_use_the_same_precision(baseline, target):
    _, symptoms = cpu_pair(baseline, target)
    assert "precision-change" not in kinds(symptoms)


def test_execution_mode_mismatch():
    _, symptoms = cpu_pair("infer_fp32_graph", "infer_fp32_pynative")
    s = one(symptoms, "execution-mode-mismatch")
    assert s.values == {"baseline_mode": "graph", "target_mode": "pynative"}
    _, same = cpu_pair("train_fp32_graph", "infer_fp32_graph")
    assert "execution-mode-mismatch" not in kinds(same)


def test_pynative_target_is_much_slower_and_mostly_idle():
    _, symptoms = cpu_pair("infer_fp32_graph", "infer_fp32_pynative")
    gap = one(symptoms, "step-time-gap")
    assert gap.values["ratio"] > 3
    assert "dynamic-shapes" not in kinds(symptoms)  # merged same-type ops are not shape changes


def test_train_mode_kernels_in_inference():
    _, symptoms = cpu_pair("infer_fp32_graph", "infer_trainmode_graph")
    s = one(symptoms, "train-mode-kernels")
    assert s.values["dropout_kernels"] >= 1
    assert "train-mode-kernels" not in kinds(cpu_single("infer_fp32_graph"))
    assert "train-mode-kernels" not in kinds(cpu_single("train_fp32_graph"))  # training is allowed dropout


def test_shape_mismatch_and_per_sample_judgement():
    comparison, symptoms = cpu_pair("infer_fp32_graph", "infer_fp32_graph_batch32")
    s = one(symptoms, "shape-mismatch")
    assert (s.values["baseline_batch"], s.values["target_batch"]) == (8, 32)
    # Judged per sample, never per step: four times the samples in a longer step is no gap.
    assert comparison.per_sample and "step-time-gap" not in kinds(symptoms)
    _, same = cpu_pair("train_fp32_graph", "infer_fp32_graph")
    assert "shape-mismatch" not in kinds(same)


def test_dynamic_shapes_and_recompiles():
    s = one(cpu_single("infer_fp32_graph_dynamic_shapes"), "dynamic-shapes")
    assert s.values["max_distinct_shapes"] >= 3
    assert s.values["recompile_steps"] >= 2
    assert s.recoverable_ms_per_step > 10  # each recompile costs 100+ ms on CPU
    assert "dynamic-shapes" not in kinds(cpu_single("infer_fp32_graph"))


def test_first_step_outlier_without_warmup():
    s = one(cpu_single("infer_fp32_graph_nowarmup"), "first-step-outlier")
    assert s.values["ratio"] >= 1.5
    assert "first-step-outlier" not in kinds(cpu_single("infer_fp32_graph"))


def test_drift_under_a_competing_load():
    s = one(cpu_single("infer_fp32_graph_contention"), "step-drift")
    assert s.values["last_ms"] > 1.5 * s.values["first_ms"]
    for quiet in ("infer_fp32_graph", "infer_fp32_graph_repeat"):
        assert "step-drift" not in kinds(cpu_single(quiet))


def test_jitter_fires_on_the_contended_run_only():
    assert one(cpu_single("infer_fp32_graph_contention"), "step-jitter").values["spread"] > 0.4
    assert "step-jitter" not in kinds(cpu_single("infer_fp32_graph"))


def test_cast_heavy_on_amp_inference_only():
    s = one(cpu_single("infer_amp_o2_graph"), "cast-heavy")
    assert s.values["casts_per_step"] > 2 * s.values["compute_ops_per_step"]
    assert "cast-heavy" not in kinds(cpu_single("infer_fp32_graph"))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("infer_fp32_graph", "infer_fp32_graph_repeat"),
        ("infer_fp32_graph_repeat", "infer_fp32_graph_repeat2"),
        ("infer_fp32_graph_repeat2", "infer_fp32_graph"),
    ],
)
@pytest.mark.slow
def test_two_runs_of_the_same_job_show_no_severe_symptom(a, b):
    _, symptoms = cpu_pair(a, b)
    assert not (kinds(symptoms) & SEVERE), [s.summary for s in symptoms]


def test_only_registered_kinds_are_emitted():
    _, symptoms = cpu_pair("train_amp_o2_graph", "infer_fp32_pynative")
    assert kinds(symptoms) <= set(SYMPTOM_KINDS)
    for s in symptoms:
        assert set(s.values) <= set(SYMPTOM_KINDS[s.kind].values), s.kind

"""End to end on real MindSpore CPU run pairs: the injected cause ranks first (at worst top 3),
and two runs of the same job produce no significant cause."""

from __future__ import annotations

import pytest

import knowledge
from tests.support.runs import cpu_pair, cpu_run


def _diagnose(baseline: str, target: str) -> knowledge.Diagnosis:
    _, symptoms = cpu_pair(baseline, target)
    limitations = cpu_run(baseline).limitations + cpu_run(target).limitations
    return knowledge.evaluate(list(symptoms), limitations, {"pair"})


@pytest.mark.parametrize(
    ("baseline", "target", "cause"),
    [
        ("train_amp_o2_graph", "infer_fp32_graph", "precision-mismatch"),
        ("infer_amp_o2_graph", "infer_fp32_graph", "precision-mismatch"),
        ("infer_fp32_graph", "infer_fp32_pynative", "execution-mode-mismatch"),
        ("infer_fp32_graph", "infer_trainmode_graph", "train-mode-at-inference"),
        ("train_fp32_graph", "infer_fp32_graph_nowarmup", "missing-warmup"),
        ("infer_fp32_graph", "infer_fp32_graph_contention", "latency-drift"),
        ("infer_fp32_graph", "infer_fp32_graph_dynamic_shapes", "dynamic-shape-recompile"),
        ("train_fp32_graph", "infer_fp32_graph_batch32", "shape-mismatch"),
    ],
)
@pytest.mark.slow
def test_injected_cause_ranks_first(baseline, target, cause):
    ids = [c.id for c in _diagnose(baseline, target).causes]
    assert cause in ids[:3], ids
    assert ids[0] == cause, ids


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("infer_fp32_graph", "infer_fp32_graph_repeat"),
        ("infer_fp32_graph_repeat", "infer_fp32_graph_repeat2"),
        ("infer_fp32_graph_repeat2", "infer_fp32_graph"),
    ],
)
def test_same_job_twice_has_no_significant_cause(a, b):
    diagnosis = _diagnose(a, b)
    assert diagnosis.nothing_found
    assert not [c for c in diagnosis.causes if c.severity in ("critical", "high")]

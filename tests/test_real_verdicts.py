"""Issue 28 on real profiles nobody here wrote (../shared/samples): OP State is a fact, not changing
shapes; a profiler-level difference never breaks the alignment; the verdict measures the step the user
feels; inputs that do not belong together are said so."""

from __future__ import annotations

from pathlib import Path

import pytest

from doctor.facade import diagnose

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"
TORCH_NPU = SAMPLES / "torch_npu_2rank" / "text"
LEVEL1_RANK0 = TORCH_NPU / "level1" / "rank0_ascend_pt"
LEVEL0_RANK0 = TORCH_NPU / "level0" / "rank0_ascend_pt"

needs_samples = pytest.mark.skipif(not TORCH_NPU.is_dir(), reason="../shared/samples is not present")


def _kinds(report) -> list[str]:
    return [s["kind"] for s in report.data["symptoms"]]


def _notes(report) -> list[str]:
    return [w["text"] for w in report.data["warnings"] if w["kind"] == "note"]


@needs_samples
def test_op_state_dynamic_is_a_fact_not_changing_shapes() -> None:
    """Every aclnn kernel of the real torch_npu run is `dynamic`, every operator has one shape: no
    dynamic-shapes symptom, the share is a note, and the run compared with itself finds nothing."""
    report = diagnose(LEVEL1_RANK0, LEVEL1_RANK0, isolate=False)
    assert "dynamic-shapes" not in _kinds(report)
    fact = "OP State dynamic: 100% of the baseline's and 100% of the target's kernels"
    assert any(n.startswith(fact) for n in _notes(report))
    assert report.data["verdict"]["status"] == "nothing-found"


def test_shapes_that_really_change_still_fire() -> None:
    """The real CPU run fed three batch sizes: distinct shapes and recompiles make the symptom."""
    cpu = FIXTURES / "cpu"
    report = diagnose(cpu / "infer_fp32_graph", cpu / "infer_fp32_graph_dynamic_shapes", isolate=False)
    (symptom,) = [s for s in report.data["symptoms"] if s["kind"] == "dynamic-shapes"]
    assert symptom["source"] == "target"
    assert symptom["values"]["max_distinct_shapes"] >= 3 or symptom["values"]["recompile_steps"] >= 1
    assert "dynamic-shape-recompile" in [c["id"] for c in report.causes if c["significant"]]


@needs_samples
def test_a_profiler_level_difference_never_reads_as_different_work() -> None:
    """The real job at Level1 against its Level0 export (no types, shapes, OP State; hcom kernels named
    with another per-run id): every operator is matched, the level is a profiler-config-mismatch
    finding, and what Level0 cannot show is undecided, never workload-not-comparable."""
    report = diagnose(LEVEL1_RANK0, LEVEL0_RANK0, isolate=False)
    ids = [c["id"] for c in report.causes]
    assert "workload-not-comparable" not in ids
    assert "op-set-mismatch" not in _kinds(report)
    assert ids[0] == "profiler-config-mismatch"
    matched = next(n for n in _notes(report) if n.startswith("Matched "))
    assert matched.startswith("Matched 100% of the baseline's and 100% of the target's")
    undecided = [w["text"] for w in report.data["warnings"] if w["kind"] == "undecided"]
    assert any("input shapes" in u for u in undecided)
    pairs = {r["operator"]: r for r in report.data["operators"]["records"]}
    assert pairs["hcom_allReduce__868_0_1"]["match"] == "sequence"


def test_name_signatures_mask_per_run_ids_and_keep_indices() -> None:
    """The digits shared by every name of a pattern (a run id) are masked; the varying ones stay."""
    from diagnosis.align import name_signatures

    b, t = name_signatures(
        ["hcom_allReduce__586_0_1", "hcom_allReduce__586_1_1", "Conv2D1"],
        ["hcom_allReduce__868_1_1", "hcom_allReduce__868_0_1", "Conv2D1"],
    )
    assert b == ["hcom_allReduce__#_0_#", "hcom_allReduce__#_1_#", "Conv#D#"]
    assert t == ["hcom_allReduce__#_1_#", "hcom_allReduce__#_0_#", "Conv#D#"]

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
    assert "dynamic-shape-recompile" in [c.id for c in report.causes if c.significant]


@needs_samples
def test_a_profiler_level_difference_never_reads_as_different_work() -> None:
    """The real job at Level1 against its Level0 export (no types, shapes, OP State; hcom kernels named
    with another per-run id): every operator is matched, the level is a profiler-config-mismatch
    finding, and what Level0 cannot show is undecided, never workload-not-comparable."""
    report = diagnose(LEVEL1_RANK0, LEVEL0_RANK0, isolate=False)
    ids = [c.id for c in report.causes]
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


CPU = FIXTURES / "cpu"
LAUNCH_GAPS = FIXTURES / "cpu_derived" / "infer_fp32_graph_launch_gaps"


def test_a_slowdown_between_kernels_is_measured_in_wall_time() -> None:
    """The real run with every launch gap grown (tests/fixtures/cpu_derived): operator time unchanged,
    step wall time +44 %. The verdict states the wall time, and with no significant cause it is an
    unexplained slowdown that says the time went between kernels, never "not slower"."""
    report = diagnose(CPU / "infer_fp32_graph", LAUNCH_GAPS, isolate=False)
    timing, verdict = report.data["timing"], report.data["verdict"]
    assert timing["ratio"] == pytest.approx(1.0, abs=0.01)  # what the verdict used to state
    headline = timing["headline"]
    assert headline["measure"] == "wall"
    assert headline["ratio"] == pytest.approx(1.44, abs=0.02)
    assert abs(headline["operator_delta_ms"]) < 0.05 and headline["gap_delta_ms"] > 3.0
    assert verdict["slowdown"] == headline["ratio"]
    assert verdict["status"] == "unexplained-slowdown"
    assert "+3.17 ms/step between kernels" in verdict["text"]
    assert "host traces" in verdict["text"]
    assert "per step in wall time" in verdict["text"]
    assert "not slower" not in verdict["text"]


def test_a_noisy_baseline_is_stated_and_medians_compared() -> None:
    """Real CPU runs under intermittent competing load: the baseline is noisy (two steps of 0.7 and 1.2
    s), so by the mean the target is not slower; by the median it is, beyond both runs' noise, and with
    no significant cause that is an unexplained slowdown stating the baseline's spread."""
    report = diagnose(
        CPU / "infer_fp32_graph_intermittent", CPU / "infer_fp32_graph_intermittent_heavy", isolate=False
    )
    headline, verdict = report.data["timing"]["headline"], report.data["verdict"]
    assert headline["statistic"] == "median" and headline["beyond_noise"] is True
    assert headline["ratio"] >= 1.2
    assert headline["baseline_spread"] >= 0.3
    assert "the baseline itself is noisy" in verdict["text"]
    assert verdict["status"] == "unexplained-slowdown"
    assert "nothing significant" not in verdict["text"].lower()


def test_the_same_run_twice_is_said_so_and_a_repeat_stays_quiet() -> None:
    """The same folder on both sides is named as such; two independent runs of one job are not slower."""
    same = diagnose(CPU / "infer_fp32_graph", CPU / "infer_fp32_graph", isolate=False)
    assert same.data["verdict"]["status"] == "nothing-found"
    assert same.data["verdict"]["text"].startswith("The two inputs are the same run")
    repeat = diagnose(CPU / "infer_fp32_graph", CPU / "infer_fp32_graph_repeat", isolate=False)
    assert repeat.data["verdict"]["status"] == "nothing-found"
    assert not repeat.data["timing"]["headline"]["same_run"]


def test_the_unexplained_status_is_said_in_every_renderer_and_in_chinese() -> None:
    """The new status reads as "unexplained slowdown" in Markdown and HTML, and in Chinese."""
    from doctor.render import render

    report = diagnose(CPU / "infer_fp32_graph", LAUNCH_GAPS, isolate=False, lang="zh")
    assert report.data["verdict"]["status"] == "unexplained-slowdown"
    assert "无法解释的变慢" in render(report, "md")
    assert "verdict unexplained" in render(report, "html")
    assert "无法解释的变慢" in report.data["verdict"]["text"]


EXAMPLE = Path(__file__).resolve().parents[1] / "assets" / "examples" / "amp_train_vs_fp32_infer"
RESNET = Path(__file__).resolve().parents[1] / "assets" / "models" / "resnet50_noweights.mindir"


def test_a_mindir_of_another_model_is_warned_and_kept_out_of_the_evidence() -> None:
    """ResNet-50's MINDIR beside the profiles of the 2-conv fixture net: a model warning with the
    matched share, no cross-link, no MINDIR symptom in the evidence; the net's own MINDIR joins."""
    foreign = diagnose(EXAMPLE / "baseline", EXAMPLE / "target", RESNET, isolate=False)
    [warning] = [w for w in foreign.data["warnings"] if w["text"].startswith("The MINDIR ")]
    assert "resnet50_noweights.mindir does not match the profiles: only 1% matched" in warning["text"]
    assert "mindir+profile" not in foreign.data["input_kinds"]
    assert not [s for s in foreign.data["symptoms"] if s["source"] in ("mindir", "mindir+profile")]
    for cause in foreign.causes:
        assert all(e.source not in ("mindir", "mindir+profile") for e in cause.evidence)
    own = diagnose(
        EXAMPLE / "baseline", EXAMPLE / "target", EXAMPLE / "fixture_net_fp32_eval.mindir", isolate=False
    )
    assert not [w for w in own.data["warnings"] if w["text"].startswith("The MINDIR ")]
    assert "mindir+profile" in own.data["input_kinds"]


def test_model_match_by_scope_and_by_operator_count() -> None:
    """The matched share: the fixture net's cells against its own profile and against ResNet-50's; a
    scope-less torch_npu profile is judged by its Conv/MatMul count."""
    import graph
    from diagnosis import read_folder

    profile = read_folder(EXAMPLE / "target")
    own = graph.model_match(graph.load_mindir(EXAMPLE / "fixture_net_fp32_eval.mindir"), profile)
    other = graph.model_match(graph.load_mindir(RESNET), profile)
    assert own is not None and own[1] == "scope" and own[0] >= graph.MODEL_MATCH_MIN
    assert other is not None and other[1] == "scope" and other[0] < 0.05


def test_advice_never_asks_for_a_mindir_that_was_given() -> None:
    """CPU profiles have no dtypes: without a model the advice offers to add the MINDIR; with the
    matching MINDIR given, no warning asks for it any more."""
    asks = "MINDIR and add it"
    bare = diagnose(EXAMPLE / "baseline", EXAMPLE / "target", isolate=False)
    assert any(asks in (w["remedy"] or "") for w in bare.data["warnings"])
    given = diagnose(
        EXAMPLE / "baseline", EXAMPLE / "target", EXAMPLE / "fixture_net_fp32_eval.mindir", isolate=False
    )
    for w in given.data["warnings"]:
        assert "add the exported MINDIR" not in (w["remedy"] or "") and asks not in (w["remedy"] or "")

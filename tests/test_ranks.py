"""Every rank of a job: the per-step breakdown against each real run's own step_trace_time.csv, the real
2-rank job read whole, the straggler test on derived jobs, broken ranks, --rank, the process pool and the
Dask path (a LocalCluster of two workers)."""

from __future__ import annotations

import csv
import dataclasses
import shutil
from pathlib import Path

import pytest

from core.errors import InputError
from diagnosis.analyzers import analyze_run
from diagnosis.compare import prepare
from diagnosis.ingest import read_folder
from diagnosis.ranks import _from_kernels, find_straggler, step_breakdown
from diagnosis.scale import summarize_ranks
from tests.fixtures.cluster.generate import Job, make_job, samples_root
from tests.support.runs import FIXTURES

CLUSTER = FIXTURES / "cluster"
TORCH = samples_root() / "torch_npu_2rank" / "text"
REAL_RUNS = sorted(TORCH.glob("level*/rank*_ascend_pt"))
FIELDS = {
    "Computing": "computing_us",
    "Communication(Not Overlapped)": "communication_us",
    "Overlapped": "overlapped_us",
    "Free": "free_us",
}


def _trace(run_root: Path) -> dict[str, float]:
    with open(
        run_root / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv", newline="", encoding="utf-8"
    ) as fh:
        row = next(csv.DictReader(fh))
    return {key: float(row[key]) for key in FIELDS}


@pytest.mark.parametrize("run_root", REAL_RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_breakdown_from_kernels_matches_the_runs_own_step_trace_time(run_root: Path) -> None:
    """HCCL launches against compute launches by time overlap give each real run's own figures within 1 %."""
    rank = int(run_root.name[4])
    run = read_folder(run_root.parent, rank=rank)
    (step,) = _from_kernels(run)
    for column, field in FIELDS.items():
        assert getattr(step, field) == pytest.approx(_trace(run_root)[column], rel=0.01), column


def test_the_real_two_rank_job_reads_both_ranks_with_communication_as_communication() -> None:
    run = read_folder(TORCH / "level1")
    assert run.ranks is not None and [s.rank for s in run.ranks.summaries] == [0, 1]
    (step,) = run.ranks.summaries[0].breakdown
    assert run.ranks.summaries[0].breakdown_source == "step_trace_time"
    assert (step.step, round(step.computing_us / 1000, 1)) == (50, 8.9)
    assert round(step.communication_us / 1000, 1) == 102.0
    assert round(step.free_us / 1000, 1) == 25.7
    assert run.ranks.straggler is None and "at least 3" in run.ranks.reason
    kinds = {s.kind for s in analyze_run(prepare(run))}
    assert "communication-bound" in kinds
    assert "device-idle" not in kinds  # 25.7 ms free of 136.6 ms: communicating is not idling


def test_step_trace_and_kernel_breakdowns_agree_on_the_real_job() -> None:
    run = read_folder(TORCH / "level2", rank=1)
    recorded, source = step_breakdown(run)
    assert source == "step_trace_time"
    derived = _from_kernels(run)
    for a, b in zip(recorded, derived, strict=True):
        assert b.communication_us == pytest.approx(a.communication_us, rel=0.01)


def test_rank_narrows_to_one_rank() -> None:
    run = read_folder(TORCH / "level1", rank=1)
    assert run.meta.rank == 1 and run.ranks is None and run.meta.ranks_available == (0, 1)


def test_the_straggler_is_named_and_the_others_are_its_victims() -> None:
    run = read_folder(CLUSTER / "straggler")
    slow = run.ranks.straggler
    assert (slow.rank, slow.steps_flagged, slow.steps_total) == (2, 2, 2)
    assert slow.ratio == pytest.approx(1.44, abs=0.03)
    assert slow.victims == (0, 1, 3) and slow.typical_rank != 2
    assert run.meta.rank == 2  # the operator analysis reads the slow rank


def test_a_healthy_job_has_no_straggler() -> None:
    for name in ("healthy_a", "healthy_b"):
        run = read_folder(CLUSTER / name)
        assert run.ranks.straggler is None and run.meta.rank == 0


def test_a_rank_slow_in_too_few_steps_is_not_a_straggler() -> None:
    summaries = read_folder(CLUSTER / "straggler").ranks.summaries
    slow = summaries[2]
    # keep its first step slow, make its second step typical: slow in 1 of 2 steps (< 60 %)
    typical = summaries[1].breakdown[1]
    edited = dataclasses.replace(slow, breakdown=(slow.breakdown[0], dataclasses.replace(typical)))
    straggler, _ = find_straggler([*summaries[:2], edited, summaries[3]])
    assert straggler is None


def test_a_broken_rank_is_reported_and_the_others_analysed(tmp_path: Path) -> None:
    job = shutil.copytree(CLUSTER / "straggler", tmp_path / "job")
    (job / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").write_text("garbage\n1,2\n")
    run = read_folder(job)
    (broken,) = run.ranks.broken
    assert broken.rank == 1 and str(tmp_path) not in broken.error
    assert any(lim.topic == "ranks" and "rank 1" in lim.reason for lim in run.limitations)
    assert run.ranks.straggler is not None and run.ranks.straggler.rank == 2


def test_every_rank_broken_is_an_input_error(tmp_path: Path) -> None:
    job = shutil.copytree(CLUSTER / "healthy_a", tmp_path / "job")
    for kd in job.glob("rank*/ASCEND_PROFILER_OUTPUT/kernel_details.csv"):
        kd.write_text("garbage\n1,2\n")
    with pytest.raises(InputError):
        read_folder(job)


def test_the_process_pool_gives_the_serial_summaries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from diagnosis.ingest import find_runs

    # without step_trace_time.csv no small file gives the breakdown: every rank is read in full, in the pool
    job = shutil.copytree(CLUSTER / "healthy_a", tmp_path / "job")
    for trace in job.glob("rank*/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"):
        trace.unlink()
    cands = [c for c in find_runs(job) if c.rank is not None]
    monkeypatch.setenv("PERF_DOCTOR_RANK_WORKERS", "1")
    serial = summarize_ranks(cands, job)
    monkeypatch.setenv("PERF_DOCTOR_RANK_WORKERS", "2")
    pooled = summarize_ranks(cands, job)
    assert pooled == serial and len(serial) == 4
    assert {s.breakdown_source for s in serial} == {"kernels"}


def test_quick_summaries_give_the_full_reads_figures() -> None:
    """The small files of a rank (run here) and its full read (run in the pool) summarise it alike."""
    from diagnosis.ingest import find_runs, full_summary, quick_candidate

    for cand in [c for c in find_runs(CLUSTER / "straggler") if c.rank is not None]:
        quick, full = quick_candidate(cand), full_summary(cand)
        assert quick is not None and quick.breakdown == full.breakdown
        assert quick.op_us.keys() <= full.op_us.keys() and quick.link_gbps == full.link_gbps


def test_the_dask_path_on_a_local_cluster_of_two_workers() -> None:
    distributed = pytest.importorskip("distributed")
    from diagnosis.ingest import find_runs

    cands = [c for c in find_runs(CLUSTER / "straggler") if c.rank is not None]
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as lc:
        on_dask = summarize_ranks(cands, CLUSTER / "straggler", scheduler=lc.scheduler_address)
        run = read_folder(CLUSTER / "straggler", scheduler=lc.scheduler_address)
    assert on_dask == summarize_ranks(cands, CLUSTER / "straggler")
    assert run.ranks.straggler.rank == 2


def test_an_unreachable_scheduler_is_an_input_error() -> None:
    from diagnosis.ingest import find_runs

    cands = [c for c in find_runs(CLUSTER / "healthy_a") if c.rank is not None]
    with pytest.raises(InputError):
        summarize_ranks(cands, CLUSTER / "healthy_a", scheduler="tcp://127.0.0.1:9")


def test_a_derived_eight_rank_straggler_job(tmp_path: Path) -> None:
    job = make_job(tmp_path / "job", Job(ranks=8, steps=3, seed=7, slow=5))
    run = read_folder(job)
    assert run.ranks.straggler.rank == 5 and len(run.ranks.summaries) == 8
    assert set(run.ranks.straggler.victims) == {0, 1, 2, 3, 4, 6, 7}


def test_msprof_analyze_cluster_output_gives_every_rank() -> None:
    """The real cluster_analysis_output of an 8-rank job beside one rank's files: every rank's figures as
    the file states them, and no straggler (computing 80.1-81.7 ms: the ranks differ in waiting only)."""
    sample = samples_root() / "ascend"
    run = read_folder(sample)
    with open(sample / "cluster_analysis_output" / "cluster_step_trace_time.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Type"] == "rank"]
    summaries = run.ranks.summaries
    assert [s.rank for s in summaries] == [int(r["Index"]) for r in rows] == list(range(8))
    for summary, row in zip(summaries, rows, strict=True):
        (step,) = summary.breakdown
        assert step.computing_us == pytest.approx(float(row["Computing"]))
        assert step.communication_us == pytest.approx(float(row["Communication(Not Overlapped)"]))
        assert summary.breakdown_source == "cluster"
    assert run.ranks.straggler is None


def test_a_broken_cluster_step_trace_is_a_limitation(tmp_path: Path) -> None:
    job = shutil.copytree(CLUSTER / "healthy_a", tmp_path / "job")
    (job / "cluster_analysis_output").mkdir()
    (job / "cluster_analysis_output" / "cluster_step_trace_time.csv").write_text("Step,Type\n,rank\n")
    run = read_folder(job)
    assert any("lacks the columns" in lim.reason for lim in run.limitations)
    assert len(run.ranks.summaries) == 4


def test_the_quick_summary_agrees_with_the_full_read() -> None:
    """A rank summarised from its small files has the breakdown, links and op totals of a full read
    (op_statistic.csv holds no HCCL tasks, so the full read's hcom_* total is the one extra entry)."""
    from diagnosis.ranks import quick_summary, summarize

    root = TORCH / "level1" / "rank1_ascend_pt"
    quick = quick_summary(root, 1, root.name, "torch-npu")
    full = summarize(read_folder(TORCH / "level1", rank=1), 1, root.name)
    assert quick is not None and quick.breakdown == full.breakdown
    assert quick.link_gbps == full.link_gbps
    for op, us in quick.op_us.items():
        assert full.op_us[op] == pytest.approx(us, rel=1e-3), op
    assert set(full.op_us) - set(quick.op_us) == {"hcom_allReduce_"}

"""Every rank of a job: the per-step breakdown against each real run's own step_trace_time.csv, the real
2-rank job read whole, the straggler test on derived jobs, broken ranks, --rank, the process pool and the
Dask path (a LocalCluster of two workers)."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
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
WORLD = "17522688603477080586"  # the real job's communication group, after "@" in its operator names
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
    assert run.ranks.straggler is None and "no outlier test" in run.ranks.reason  # 8.9 ms on both ranks
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


def test_the_dask_path_on_a_local_cluster_of_two_workers() -> None:
    distributed = pytest.importorskip("distributed")
    from diagnosis.ingest import find_runs

    cands = [c for c in find_runs(CLUSTER / "straggler") if c.rank is not None]
    saved = dict(os.environ)
    try:
        with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as lc:
            on_dask = summarize_ranks(cands, CLUSTER / "straggler", scheduler=lc.scheduler_address)
            run = read_folder(CLUSTER / "straggler", scheduler=lc.scheduler_address)
    finally:  # LocalCluster sets OMP_NUM_THREADS=1, MALLOC_TRIM_THRESHOLD_ ... in this process for good;
        # a warm reader started later would inherit them (one Arrow thread: less memory than the
        # isolation tests' limit is sized for)
        os.environ.clear()
        os.environ.update(saved)
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
    assert quick.link_gbps == full.link_gbps and quick.links == full.links and len(quick.links) == 7
    assert quick.group_rank == full.group_rank == {WORLD: 1}
    assert quick.aicore_mhz == full.aicore_mhz == 1800.0  # trace_view.json's two AI Core Freq samples
    for op, us in quick.op_us.items():
        assert full.op_us[op] == pytest.approx(us, rel=1e-3), op
    assert set(full.op_us) - set(quick.op_us) == {"hcom_allReduce_"}


def test_communication_matrix_links_are_named_by_global_ranks() -> None:
    """The real 2-rank job's matrices: each rank's allreduce-total link to the other with the figures its
    own file states (0-1: 15.7599 GB/s in rank 0's, 1-0: 15.8557 GB/s in rank 1's). Its links to the six
    ranks of the group that were not uploaded name no global rank, so they are left out."""
    summaries = read_folder(TORCH / "level1").ranks.summaries
    assert [s.pair_gbps for s in summaries] == [{"HCCS": {"0-1": 15.7599}}, {"HCCS": {"1-0": 15.8557}}]
    assert [len(s.links) for s in summaries] == [7, 7]  # group-local: 0-1 ... 0-7, 1-0, 1-2 ... 1-7


def test_group_ranks_map_to_global_ranks_by_each_ranks_own_link(tmp_path: Path) -> None:
    """The same job with its two ranks renumbered 8 and 9 (the group's ranks 0 and 1 are global 8 and 9,
    as in a second data-parallel group): the links are named 8-9 and 9-8, with the same figures."""
    job = tmp_path / "job"
    for old, new in ((0, 8), (1, 9)):
        root = shutil.copytree(TORCH / "level1" / f"rank{old}_ascend_pt", job / f"rank{new}_ascend_pt")
        info = root / f"profiler_info_{old}.json"
        data = json.loads(info.read_text(encoding="utf-8"))
        info.unlink()
        (root / f"profiler_info_{new}.json").write_text(
            json.dumps({**data, "rank_id": new}), encoding="utf-8"
        )
    summaries = read_folder(job).ranks.summaries
    assert [s.rank for s in summaries] == [8, 9]
    assert [s.pair_gbps for s in summaries] == [{"HCCS": {"8-9": 15.7599}}, {"HCCS": {"9-8": 15.8557}}]


def test_parallel_group_info_names_the_ranks_that_were_not_uploaded() -> None:
    """profiler_metadata.json's parallel_group_info: a group's i-th smallest global rank is its rank i,
    and the group id in operator names is msprof-analyze's hash of the group name ("group_name_0" is
    5862276093215481612 in its documented example)."""
    from diagnosis.ranks import global_ranks, with_global_pairs
    from diagnosis.readers.communication import group_id, group_members

    assert group_id("group_name_0") == "5862276093215481612"
    (rank0, _) = read_folder(TORCH / "level1").ranks.summaries
    members = group_members({"parallel_group_info": {"dp": {"global_ranks": [14, 0, 12, 10, 2, 4, 6, 8]}}})
    assert members == {group_id("dp"): (0, 2, 4, 6, 8, 10, 12, 14)}
    world = dataclasses.replace(rank0, group_members={WORLD: members[group_id("dp")]})
    assert global_ranks([world])[WORLD] == {i: 2 * i for i in range(8)}
    (named,) = with_global_pairs([world])
    assert list(named.pair_gbps["HCCS"]) == [f"0-{2 * d}" for d in range(1, 8)]
    assert named.pair_gbps["HCCS"]["0-8"] == 15.6494  # rank 0's allreduce-total 0-4 link in its file


def test_msprof_analyze_cluster_matrix_gives_the_same_links() -> None:
    """A cluster_communication_matrix.json written as msprof-analyze writes it from the real job's two
    matrices (group key "(0, 1)", links already in global ranks, a Total Op Info sum per group) gives each
    rank the links its own matrix gives."""
    from diagnosis.readers.cluster import cluster_pairs

    built: dict = {"(0, 1)": {}}
    for r in (0, 1):
        path = (
            TORCH / "level1" / f"rank{r}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "communication_matrix.json"
        )
        for step, kinds in json.loads(path.read_text(encoding="utf-8")).items():
            ops = built["(0, 1)"].setdefault(step, {})
            for op, links in kinds["collective"].items():
                own = {k: v for k, v in links.items() if set(k.split("-")) <= {"0", "1"}}
                ops.setdefault(op, {}).update(own)
                if op.startswith("allreduce-total"):  # the group's sum repeats the totals: not counted twice
                    ops.setdefault(f"Total Op Info@{WORLD}", {}).update(own)
    pairs = cluster_pairs(built)
    summaries = read_folder(TORCH / "level1").ranks.summaries
    assert pairs == {s.rank: s.pair_gbps for s in summaries}


def _with_pairs(pairs: dict[str, dict[str, float]], ranks: int = 3) -> list:
    from core.model import RankSummary

    return [RankSummary(rank=r, root=f"rank{r}", pair_gbps=pairs if r == 0 else {}) for r in range(ranks)]


def test_a_slow_link_of_the_matrix_is_named_and_healthy_links_are_not() -> None:
    """The real rank 0's links (15.4-16.0 GB/s, its group's ranks taken as global ranks 0-7) say nothing;
    the same links with 0-3 cut to 30 % name 0-3."""
    from diagnosis.ingest import find_runs, quick_candidate
    from diagnosis.ranks import find_slow_links
    from diagnosis.readers.communication import pair_bandwidth

    (cand,) = [c for c in find_runs(TORCH / "level1") if c.rank == 0]
    real = pair_bandwidth(quick_candidate(cand).links, {WORLD: {r: r for r in range(8)}})
    assert find_slow_links(_with_pairs(real)) == []
    cut = {"HCCS": {**real["HCCS"], "0-3": round(real["HCCS"]["0-3"] * 0.3, 4)}}
    (slow,) = find_slow_links(_with_pairs(cut))
    assert (slow["rank"], slow["link"], slow["pair"]) == (0, "HCCS", "0-3")
    assert slow["median_gbps"] == pytest.approx(15.6, rel=1e-4)  # median of the 7 links with 0-3 cut: 0-5


def test_cluster_communication_gives_the_ranks_link_bandwidth() -> None:
    """The real cluster_communication.json (group (0, 1)): ranks 0 and 1 get the mean bandwidth per link
    type over the operators that used it (HCCS of rank 0: 2.7012 and 0.0496 GB/s), the other ranks none."""
    summaries = {s.rank: s for s in read_folder(samples_root() / "ascend").ranks.summaries}
    assert summaries[0].link_gbps == pytest.approx({"HCCS": 1.3754, "PCIE": 1.8588, "SDMA": 1.2377}, abs=1e-4)
    assert summaries[1].link_gbps == pytest.approx({"HCCS": 1.389, "PCIE": 1.8639, "SDMA": 1.2665}, abs=1e-4)
    assert all(not summaries[r].link_gbps for r in range(2, 8))


def _job_summaries(tmp_path: Path, job: Job) -> list:
    return read_folder(make_job(tmp_path / f"job{job.ranks}_{job.slow}", job)).ranks.summaries


@pytest.mark.parametrize("ranks", [3, 5, 10])
def test_dixons_test_names_the_slow_rank_of_few_ranks(tmp_path: Path, ranks: int) -> None:
    """3 to 10 ranks: Dixon's Q names the rank running its optimizer on AI CPU, a healthy job stays quiet."""
    slow, _ = find_straggler(_job_summaries(tmp_path, Job(ranks=ranks, steps=3, seed=ranks, slow=ranks // 2)))
    assert slow is not None and (slow.rank, slow.test, slow.steps_flagged) == (ranks // 2, "dixon", 3)
    healthy, reason = find_straggler(_job_summaries(tmp_path, Job(ranks=ranks, steps=3, seed=ranks)))
    assert healthy is None and reason == ""


def test_dixons_test_is_not_fooled_by_a_spread_out_job() -> None:
    """Computing 100, 110, 121 ms: the longest is 10 % over the next but no outlier (Q = 0.52 < 0.97)."""
    from core.model import RankSummary, StepBreakdown

    summaries = [
        RankSummary(rank=r, root=f"r{r}", breakdown=(StepBreakdown(1, 200e3, ms * 1e3, 1e3, 0.0, 1e3),))
        for r, ms in enumerate((100, 110, 121))
    ]
    assert find_straggler(summaries) == (None, "")
    summaries[2] = dataclasses.replace(
        summaries[2], breakdown=(StepBreakdown(1, 200e3, 160e3, 1e3, 0.0, 1e3),)
    )  # 160 ms: Q = 50 / 60 = 0.83 < 0.97, still no outlier among 3
    assert find_straggler(summaries)[0] is None
    summaries[1] = dataclasses.replace(
        summaries[1], breakdown=(StepBreakdown(1, 200e3, 101e3, 1e3, 0.0, 1e3),)
    )
    assert find_straggler(summaries)[0].rank == 2  # 100, 101, 160: Q = 59 / 60 = 0.983 > 0.970


def test_two_ranks_name_the_slow_one_only_when_the_other_waits_for_it(tmp_path: Path) -> None:
    """Two ranks have no odd one out: the one computing 1.44x is named because the other waits for it in the
    all-reduce; with that wait removed, or without a gap, none is named and the reason says why."""
    summaries = _job_summaries(tmp_path, Job(ranks=2, steps=3, seed=2, slow=1))
    slow, _ = find_straggler(summaries)
    assert (slow.rank, slow.typical_rank, slow.test, slow.victims) == (1, 0, "pair", (0,))
    assert slow.ratio == pytest.approx(1.44, abs=0.03)
    no_wait = [dataclasses.replace(summaries[0], breakdown=summaries[1].breakdown), summaries[1]]
    no_wait[0] = dataclasses.replace(
        no_wait[0],
        breakdown=tuple(
            dataclasses.replace(b, computing_us=b.computing_us / 1.44, communication_us=0.0)
            for b in summaries[1].breakdown
        ),
    )
    none, reason = find_straggler(no_wait)
    assert none is None and "does not wait" in reason
    alike, reason = find_straggler(_job_summaries(tmp_path, Job(ranks=2, steps=3, seed=3)))
    assert alike is None and "no outlier test" in reason


def _two_rank_db_job(folder: Path) -> Path:
    """Two ranks of MindSpore's SQLite export: the committed ms_infer run copied as rank 0 and rank 1 (its
    profiler_info renamed and its rank_id set to 1)."""
    source = FIXTURES / "ascend" / "db" / "ms_infer" / "ubuntu_2301_20251130090000456_ascend_ms"
    for rank in (0, 1):
        root = shutil.copytree(source, folder / f"host_{rank}_ascend_ms")
        info = root / "profiler_info_0.json"
        text = info.read_text(encoding="utf-8").replace('"rank_id": 0', f'"rank_id": {rank}')
        info.unlink()
        (root / f"profiler_info_{rank}.json").write_text(text, encoding="utf-8")
    return folder


def test_pool_workers_read_sqlite_ranks_like_a_serial_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two SQLite ranks read in a pool of 2 workers (each decodes its database itself): the summaries
    equal a serial read."""
    from diagnosis.ingest import find_runs

    job = _two_rank_db_job(tmp_path / "job")
    cands = [c for c in find_runs(job) if c.rank is not None]
    monkeypatch.setenv("PERF_DOCTOR_RANK_WORKERS", "1")
    serial = summarize_ranks(cands, job)
    monkeypatch.setenv("PERF_DOCTOR_RANK_WORKERS", "2")
    pooled = summarize_ranks(cands, job)
    assert pooled == serial and [s.rank for s in pooled] == [0, 1] and all(s.ok for s in pooled)


UNDER_NO_FILE_WRITES = """
import multiprocessing, os, pickle, resource, signal, sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from diagnosis.ingest import find_runs
from diagnosis.scale import summarize_ranks

job = Path(sys.argv[1])
cands = [c for c in find_runs(job) if c.rank is not None]
os.environ["PERF_DOCTOR_RANK_WORKERS"] = "1"
serial = summarize_ranks(cands, job)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # as doctor's isolated reader
try:
    ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("forkserver"))
    pool = "started"
except OSError as error:
    pool = error.strerror
forks = []
fork = os.fork
os.fork = lambda: forks.append(1) or fork()
os.environ.update(PERF_DOCTOR_RANK_WORKERS="2", PERF_DOCTOR_RANK_POOL="fork")
forked = summarize_ranks(cands, job)
print(pool, len(forks), forked == serial, len(serial), sorted({s.breakdown_source for s in serial}))
"""


def test_forked_workers_read_the_ranks_where_no_file_may_be_written(tmp_path: Path) -> None:
    """A process that may write no file (RLIMIT_FSIZE=0, as the isolated reader) cannot start a process
    pool: its locks are POSIX semaphores, files it cannot size. Two forked workers answering over pipes
    read the four ranks (in full: no step_trace_time.csv) and give the serial summaries."""
    import subprocess
    import sys

    job = shutil.copytree(CLUSTER / "healthy_a", tmp_path / "job")
    for trace in job.glob("rank*/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"):
        trace.unlink()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", UNDER_NO_FILE_WRITES, str(job)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["File", "too", "large", "2", "True", "4", "['kernels']"]


def test_a_forked_worker_that_dies_has_its_ranks_read_here(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A worker stopped by a limit (here: killed as it starts) sends nothing: its ranks are read in the
    calling process, where the same limit would name the file, and the summaries are still complete."""
    import signal

    from diagnosis import scale
    from diagnosis.ingest import find_runs, full_summary

    job = shutil.copytree(CLUSTER / "healthy_a", tmp_path / "job")
    cands = [c for c in find_runs(job) if c.rank is not None]
    serial = [full_summary(c, str(job)) for c in cands]
    real_fork = os.fork

    def dying_fork() -> int:
        pid = real_fork()
        if pid == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return pid

    monkeypatch.setattr(os, "fork", dying_fork)
    got = scale.in_forks(cands, str(job), 2)
    monkeypatch.setattr(os, "fork", real_fork)
    assert got == serial and len(got) == 4


def test_many_ranks_small_files_are_read_half_in_a_forked_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """From QUICK_FORK_RANKS ranks on, a process running no other thread reads half the ranks' small files
    in a forked worker: the summaries are the serial ones, one worker was forked, and none is forked by a
    process running another thread (run alone in a fork: pytest may run other threads)."""
    import threading

    from core.forks import in_forks
    from diagnosis import scale
    from diagnosis.ingest import find_runs

    job = CLUSTER / "straggler"
    cands = sorted((c for c in find_runs(job) if c.rank is not None), key=lambda c: c.rank or 0)
    serial = scale.quick_summaries(cands, str(job))
    monkeypatch.setattr(scale, "QUICK_FORK_RANKS", 2)
    real_fork, forked = os.fork, []
    monkeypatch.setattr(os, "fork", lambda: forked.append(1) or real_fork())

    def alone(_: object) -> tuple[bool, int]:
        return scale.quick_summaries(cands, str(job)) == serial, len(forked)

    assert in_forks([[None]], alone) == [(True, 2)]  # the fork running `alone`, then its worker
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        forked.clear()
        assert scale.quick_summaries(cands, str(job)) == serial and forked == []
    finally:
        release.set()
        other.join()
    assert len(serial) == 4 and all(s is not None for s in serial)


@pytest.mark.slow
def test_the_isolated_reader_reads_a_jobs_ranks_in_forked_workers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """End to end in doctor's isolated reader (a fork of the warm zygote, started afresh with two rank
    workers asked for): the four ranks read in full come back as the in-process serial read gives them."""
    from diagnosis.workspace import Workspace
    from sandbox import isolation

    job = shutil.copytree(CLUSTER / "healthy_a", tmp_path / "job")
    for trace in job.glob("rank*/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"):
        trace.unlink()
    monkeypatch.setenv("PERF_DOCTOR_RANK_WORKERS", "1")
    serial = read_folder(job).ranks.summaries
    monkeypatch.setenv("PERF_DOCTOR_RANK_WORKERS", "2")
    _restart_zygote(isolation)  # it reads the environment when it starts
    try:
        with Workspace(base=tmp_path) as workspace:
            run, _ = isolation.read_profile(job, rank=None, source="job", scheduler=None, workspace=workspace)
    finally:
        monkeypatch.delenv("PERF_DOCTOR_RANK_WORKERS")
        _restart_zygote(isolation)
    assert run.ranks.summaries == serial and {s.breakdown_source for s in serial} == {"kernels"}


def _restart_zygote(isolation) -> None:
    """Stop the warm zygote, if one runs: the next read starts one with this process's environment."""
    for zygote in isolation._ZYGOTE:
        zygote.process.kill()
        zygote.process.wait()

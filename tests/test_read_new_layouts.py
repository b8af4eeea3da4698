"""The real layouts that were refused (issue 28, point 3), read from ../shared/samples: torch_npu's SQLite
export, CANN msprof's older timeline layout, and MindSpore 1.x step-and-communication-only runs. Every
expected figure is read from the sample's own files here, never typed in."""

from __future__ import annotations

import json
import shutil
import sqlite3
import zipfile
from collections import Counter
from pathlib import Path

import pytest

import cli.main as cli
from core import InputError
from core.model import PIPE_COUNTERS
from diagnosis import Workspace, materialize, read_folder
from diagnosis.ingest import find_runs
from tests.support.inputs import files_of
from tests.support.samples import LEVELS, TIMELINE, TORCH_DB, TORCH_TEXT, query, torch_db, trace_events

pytestmark = pytest.mark.skipif(
    not TORCH_DB.is_dir(), reason="../shared/samples is not beside the repository"
)


# ------------------------------------------------------------------------------------ torch_npu db export


@pytest.mark.parametrize("level", LEVELS)
def test_each_rank_of_the_torch_npu_db_export_is_one_candidate(level: str) -> None:
    found = sorted((c.layout, c.rank, c.root.name) for c in find_runs(TORCH_DB / level))
    assert found == [("torch-npu-db", 0, "rank0_ascend_pt"), ("torch-npu-db", 1, "rank1_ascend_pt")]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("rank", [0, 1])
def test_the_db_export_gives_the_figures_its_own_tables_hold(level: str, rank: int) -> None:
    db = torch_db(level, rank)
    run = read_folder(TORCH_DB / level, rank=rank)
    compute = query(
        db, "SELECT T.endNs - T.startNs FROM TASK T JOIN COMPUTE_TASK_INFO C USING (globalTaskId)"
    )
    comm = query(db, "SELECT endNs - startNs FROM COMMUNICATION_OP")
    kernels = run.kernels
    hccl = kernels["core"] == "HCCL"
    assert (run.meta.layout, run.meta.rank, run.meta.framework) == ("torch-npu-db", rank, "torch_npu")
    assert (len(kernels) - int(hccl.sum()), int(hccl.sum())) == (len(compute), len(comm))
    assert kernels.loc[~hccl, "duration_us"].sum() == pytest.approx(sum(r[0] for r in compute) / 1000)
    assert kernels.loc[hccl, "duration_us"].sum() == pytest.approx(sum(r[0] for r in comm) / 1000)
    ((step_id, start_ns, _),) = query(db, "SELECT id, startNs, endNs FROM STEP_TIME")
    ((step, busy, comm_exposed, free),) = query(
        db.with_name("analysis.db"),
        "SELECT step, computing, communication_not_overlapped, free FROM StepTraceTime",
    )
    steps = run.steps.astype("float64")
    assert steps["step"].tolist() == [step_id] == [int(step)]
    assert steps.loc[0, "start_us"] == pytest.approx(start_ns / 1000)
    assert steps.loc[0, ["busy_us", "communication_us", "free_us"]].tolist() == pytest.approx(
        [busy, comm_exposed, free]
    )
    assert steps.loc[0, "duration_us"] == pytest.approx(busy + comm_exposed + free)
    assert set(kernels["step"].dropna().tolist()) == {step_id}
    freq = query(db, "SELECT timestampNs, freq FROM AICORE_FREQ ORDER BY timestampNs")
    assert run.frequency["ts_us"].astype("float64").tolist() == pytest.approx([t / 1000 for t, _ in freq])
    assert run.frequency["mhz"].astype("float64").tolist() == [float(f) for _, f in freq]
    assert run.meta.files == (
        f"profiler_info_{rank}.json",
        f"ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db",
        "ASCEND_PROFILER_OUTPUT/analysis.db",
    )


def _compute_names(kernels) -> Counter[str]:
    return Counter(kernels.loc[kernels["core"].fillna("") != "HCCL", "name"].astype(str))


@pytest.mark.parametrize("level", LEVELS)
def test_the_text_and_db_exports_of_one_job_give_the_same_kernels_and_steps(level: str) -> None:
    """Two captures of the same job at one level (text and db): the same kernels by name, kernel totals
    and step breakdown within 1 %, the same step ids."""
    for rank in (0, 1):
        text, db = read_folder(TORCH_TEXT / level, rank=rank), read_folder(TORCH_DB / level, rank=rank)
        assert len(db.kernels) == len(text.kernels)
        assert _compute_names(db.kernels) == _compute_names(text.kernels)
        assert db.kernels["duration_us"].count() == text.kernels["duration_us"].count()
        compute = [_compute_total(run) for run in (text, db)]
        assert compute[1] == pytest.approx(compute[0], rel=0.01)
        assert db.steps["step"].tolist() == text.steps["step"].tolist()
        assert float(db.steps["busy_us"].sum()) == pytest.approx(float(text.steps["busy_us"].sum()), rel=0.01)
        counters = sorted(c for c in text.kernels.columns if c in PIPE_COUNTERS)  # Level1 and Level2 only
        assert sorted(c for c in db.kernels.columns if c in PIPE_COUNTERS) == counters
        for name in counters:  # TASK_PMU_INFO against kernel_details.csv's ratio columns
            assert db.kernels[name].count() == text.kernels[name].count()
            assert db.kernels[name].mean() == pytest.approx(text.kernels[name].mean(), rel=0.05)


def _compute_total(run) -> float:
    kernels = run.kernels
    return float(kernels.loc[~kernels["name"].astype(str).str.startswith("hcom_"), "duration_us"].sum())


def test_a_torch_npu_db_without_compute_tasks_names_the_file_and_what_is_read(tmp_path: Path) -> None:
    run = tmp_path / "rank0_ascend_pt"
    shutil.copytree(TORCH_DB / "level1" / "rank0_ascend_pt", run)
    db = run / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    db.chmod(0o644)
    with sqlite3.connect(db) as connection:
        connection.execute("DROP TABLE COMPUTE_TASK_INFO")
    with pytest.raises(InputError) as caught:
        read_folder(run)
    assert caught.value.path.endswith("ascend_pytorch_profiler_0.db")
    assert caught.value.problem == "has no table COMPUTE_TASK_INFO"
    assert "TASK, COMPUTE_TASK_INFO and STRING_IDS" in caught.value.expected
    assert "StepTraceTime" in caught.value.expected


def test_a_repeated_task_key_is_read_once_not_multiplied(tmp_path: Path) -> None:
    run = tmp_path / "rank0_ascend_pt"
    shutil.copytree(TORCH_DB / "level1" / "rank0_ascend_pt", run)
    db = run / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    db.chmod(0o644)
    with sqlite3.connect(db) as connection:
        connection.execute(
            "INSERT INTO TASK SELECT * FROM TASK"
        )  # every task key twice (COMPUTE_TASK_INFO's is unique)
    assert len(read_folder(run).kernels) == len(read_folder(TORCH_DB / "level1", rank=0).kernels)


def test_the_not_profiler_error_lists_torch_npu_db_and_the_timeline_layout(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing")
    with pytest.raises(InputError) as caught:
        read_folder(tmp_path)
    assert "ascend_pytorch_profiler_<rank>.db" in caught.value.expected
    assert "device_<id>/timeline/msprof_<device>_<model>_<iteration>.json" in caught.value.expected


# ------------------------------------------------------------------------------ msprof timeline layout


def _device(rank: int) -> Path:
    return next(TIMELINE.glob(f"PROF_*/device_{rank}"))


def test_each_device_of_the_timeline_layout_is_one_rank_from_its_info_json() -> None:
    found = sorted((c.layout, c.rank, c.root.name) for c in find_runs(TIMELINE))
    ranks = [json.loads((_device(d) / f"info.json.{d}").read_text())["rank_id"] for d in (0, 1)]
    assert found == [("cann-msprof-timeline", r, f"device_{d}") for d, r in zip((0, 1), ranks, strict=True)]


@pytest.mark.parametrize("rank", [0, 1])
def test_the_timeline_gives_the_steps_tasks_and_hccl_ops_of_its_own_files(rank: int) -> None:
    """msprof_*.json holds what task_time_*, step_trace_* and hccl_* hold: the reader's kernels are the
    compute tasks of task_time_* plus the communication operators of hccl_*, its steps the iterations of
    step_trace_*."""
    timeline = _device(rank) / "timeline"
    run = read_folder(TIMELINE, rank=rank)
    tasks = [
        (e["name"], e["ts"], e["dur"])
        for path in sorted(timeline.glob("task_time_*.json"))
        for e in trace_events(path)
        if e.get("ph") == "X" and str(e.get("args", {}).get("Task Type", "")).startswith(("AI_", "MIX_"))
    ]
    comm_ops = [
        (e["name"], e["ts"], e["dur"])
        for path in sorted(timeline.glob("hccl_*.json"))
        for e in trace_events(path)
        if e.get("ph") == "X" and "args" not in e  # the "Communication Kernel" operators (tasks have args)
    ]
    kernels = run.kernels
    expected = sorted(tasks + comm_ops, key=lambda t: t[1])
    assert kernels["name"].astype(str).tolist() == [t[0] for t in expected]
    assert kernels["start_us"].astype(float).tolist() == pytest.approx([t[1] for t in expected])
    assert kernels["duration_us"].sum() == pytest.approx(sum(t[2] for t in tasks + comm_ops))
    iterations = {
        e["args"]["Iteration ID"]: (e["ts"], e["dur"])
        for path in timeline.glob("step_trace_*.json")
        for e in trace_events(path)
        if e.get("cat") == "Iteration Time"
    }
    steps = run.steps.astype("float64")
    assert steps["step"].tolist() == sorted(iterations)
    assert steps["duration_us"].tolist() == pytest.approx([iterations[i][1] for i in sorted(iterations)])
    assert steps["start_us"].tolist() == pytest.approx([iterations[i][0] for i in sorted(iterations)])
    assert run.meta.files[0] == f"info.json.{rank}" and len(run.meta.files) == 1 + len(iterations)


@pytest.mark.parametrize("rank", [0, 1])
def test_the_timeline_step_breakdown_is_its_overlap_analysis(rank: int) -> None:
    run = read_folder(TIMELINE, rank=rank)
    for path, step in zip(run.meta.files[1:], run.steps.itertuples(), strict=True):
        sums: Counter[str] = Counter()
        events = trace_events(_device(rank) / path)
        overlap = {
            e["pid"]
            for e in events
            if e.get("name") == "process_name" and e["args"]["name"] == "Overlap Analysis"
        }
        for e in events:
            if e.get("ph") == "X" and e.get("pid") in overlap:
                sums[e["name"]] += e["dur"]
        assert [step.busy_us, step.communication_us, step.free_us] == pytest.approx(
            [sums["Computing"], sums["Communication(Not Overlapped)"], sums["Free"]]
        )


def test_a_folder_upload_of_the_timeline_files_is_rebuilt_and_read(tmp_path: Path) -> None:
    files = files_of(_device(0))
    with Workspace() as ws:
        run = read_folder(materialize(files, ws))
    direct = read_folder(TIMELINE, rank=0)
    assert (run.meta.layout, run.meta.rank, len(run.kernels), len(run.steps)) == (
        "cann-msprof-timeline",
        0,
        len(direct.kernels),
        len(direct.steps),
    )


@pytest.mark.parametrize("folder", [TIMELINE, TORCH_DB / "level1"], ids=["timeline", "torch-npu-db"])
def test_pack_keeps_exactly_the_files_read(folder: Path, capsys, tmp_path: Path) -> None:
    out = tmp_path / "packed.zip"
    assert cli.main(["pack", str(folder), "-o", str(out)]) == 0
    capsys.readouterr()
    names = zipfile.ZipFile(out).namelist()
    assert len(names) == sum(len(read_folder(folder, rank=r).meta.files) for r in (0, 1))
    with Workspace() as ws:
        packed = read_folder(materialize(str(out), ws), rank=1)
    direct = read_folder(folder, rank=1)
    assert (packed.meta.layout, len(packed.kernels), len(packed.steps)) == (
        direct.meta.layout,
        len(direct.kernels),
        len(direct.steps),
    )


def test_the_msprof_schema_exports_read_their_aicore_freq_table(tmp_path: Path) -> None:
    """MindSpore's and msprof's db exports (readers.sqlite_db) read AICORE_FREQ as torch_npu's does."""
    fixture = Path(__file__).resolve().parent / "fixtures" / "ascend" / "db" / "ms_infer"
    shutil.copytree(fixture, tmp_path / "run")
    db = next((tmp_path / "run").rglob("ascend_mindspore_profiler.db"))
    start = query(db, "SELECT MIN(startNs) FROM TASK")[0][0]
    samples = [(0, start - 1000, 1800), (0, start + 5000, 1300)]  # the torch_npu table's columns
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE AICORE_FREQ (deviceId INTEGER, timestampNs INTEGER, freq INTEGER)")
        connection.executemany("INSERT INTO AICORE_FREQ VALUES (?, ?, ?)", samples)
    run = read_folder(tmp_path / "run")
    assert run.meta.layout == "ascend-ms-db"
    assert run.frequency["mhz"].astype(float).tolist() == [1800.0, 1300.0]
    assert run.frequency["ts_us"].astype(float).tolist() == pytest.approx(
        [(start - 1000) / 1000, (start + 5000) / 1000]
    )
    assert read_folder(fixture).frequency.empty  # the fixture itself has no AICORE_FREQ table

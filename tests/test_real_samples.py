"""Real-sample contract (issue 28, point 8): every folder of ../shared/samples is read, the figures the
reader gives are the folder's own (rank count, steps, step_trace_time figures, clock values, read here from
the files with the standard library), and a profile compared with itself gives nothing significant.
Folders that are not a profile (msprof-analyze's cluster output, msprobe dumps) are refused with an error
naming what was found."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from core import InputError
from diagnosis import read_folder
from diagnosis.ingest import list_ranks
from doctor.facade import diagnose
from tests.support.samples import LEGACY, LEVELS, SAMPLES, TIMELINE, TORCH_DB, TORCH_TEXT, query, torch_db

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared/samples is not beside the repository")
ASCEND = SAMPLES / "ascend"
APO = "ASCEND_PROFILER_OUTPUT"

# Every profile folder of the samples (the ranks it holds, its layout).
PROFILES = {
    **{f"torch_npu_2rank/text/{lv}": ((0, 1), "torch-npu") for lv in LEVELS},
    **{f"torch_npu_2rank/db/{lv}": ((0, 1), "torch-npu-db") for lv in LEVELS},
    "msprof_timeline_2dev": ((0, 1), "cann-msprof-timeline"),
    "mindspore_legacy_4rank": ((0, 1, 2, 3), "legacy-steps"),
    "ascend/kernel_details_2023_training": ((), "ascend-ms"),
    "ascend/kernel_details_2025_bf16_llm": ((), "ascend-ms"),
    "ascend/torch_npu_cnn_train_step": ((), "ascend-ms"),
}
NOT_PROFILES = {  # folder -> what the refusal must name as found
    "ascend/cluster_analysis_output": ("cluster_communication.json", "cluster_step_trace_time.csv"),
    "ascend/kernel_details_excerpt": ("test.csv",),
    "msprobe_dump": ("mindspore_data/", "pytorch_data/"),
}


def test_the_contract_covers_every_sample_folder() -> None:
    """A new sample folder must be added here (read, or refused with a reason)."""
    folders = {p.relative_to(SAMPLES).as_posix() for p in SAMPLES.iterdir() if p.is_dir()}
    folders |= {p.relative_to(SAMPLES).as_posix() for p in ASCEND.iterdir() if p.is_dir()}
    folders |= {f"torch_npu_2rank/{k}/{lv}" for k in ("text", "db") for lv in LEVELS}
    covered = set(PROFILES) | set(NOT_PROFILES) | {"ascend", "torch_npu_2rank"}
    assert folders <= covered, folders - covered


@pytest.mark.parametrize("folder", sorted(PROFILES))
def test_each_profile_is_read_with_its_ranks_and_layout(folder: str) -> None:
    ranks, layout = PROFILES[folder]
    assert tuple(list_ranks(SAMPLES / folder)) == ranks
    for rank in ranks or (None,):
        run = read_folder(SAMPLES / folder, rank=rank)
        assert (run.meta.layout, run.meta.rank, run.meta.ranks_available) == (layout, rank, ranks)
        assert len(run.kernels) > 0


# -------------------------------------------------------------------------------- figures of the files


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _counter_mhz(trace: Path) -> list[float]:
    events = json.loads(trace.read_text(encoding="utf-8"))
    return sorted(
        float(e["args"]["MHz"]) for e in events if e.get("ph") == "C" and e.get("name") == "AI Core Freq"
    )


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("rank", [0, 1])
def test_torch_npu_text_steps_and_clock_are_those_of_its_files(level: str, rank: int) -> None:
    apo = TORCH_TEXT / level / f"rank{rank}_ascend_pt" / APO
    run = read_folder(TORCH_TEXT / level, rank=rank)
    table = _rows(apo / "step_trace_time.csv")
    steps = run.steps.astype("float64")
    assert steps["step"].tolist() == [float(r["Step"]) for r in table]
    for column, header in (
        ("busy_us", "Computing"),
        ("communication_us", "Communication(Not Overlapped)"),
        ("free_us", "Free"),
    ):
        assert steps[column].tolist() == pytest.approx([float(r[header]) for r in table])
    assert sorted(run.frequency["mhz"].astype(float).tolist()) == _counter_mhz(apo / "trace_view.json")
    assert len(run.kernels) == len(_rows(apo / "kernel_details.csv"))


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("rank", [0, 1])
def test_torch_npu_db_steps_and_clock_are_those_of_its_tables(level: str, rank: int) -> None:
    db = torch_db(level, rank)
    run = read_folder(TORCH_DB / level, rank=rank)
    breakdown = query(
        db.with_name("analysis.db"),
        "SELECT step, computing, communication_not_overlapped, free FROM StepTraceTime",
    )
    steps = run.steps.astype("float64")
    assert steps["step"].tolist() == [float(r[0]) for r in breakdown]
    assert steps[["busy_us", "communication_us", "free_us"]].values.tolist() == [
        list(map(float, r[1:])) for r in breakdown
    ]
    assert run.frequency["mhz"].astype(float).tolist() == [
        float(r[0]) for r in query(db, "SELECT freq FROM AICORE_FREQ ORDER BY timestampNs")
    ]


@pytest.mark.parametrize("rank", [0, 1])
def test_msprof_timeline_steps_and_clock_are_those_of_its_files(rank: int) -> None:
    device = next(TIMELINE.glob(f"PROF_*/device_{rank}"))
    run = read_folder(TIMELINE, rank=rank)
    iterations = sorted(
        (e["args"]["Iteration ID"], e["dur"])
        for path in (device / "timeline").glob("msprof_*.json")
        for e in json.loads(path.read_text(encoding="utf-8"))
        if e.get("cat") == "Iteration Time"
    )
    assert (
        list(zip(run.steps["step"].tolist(), run.steps["duration_us"].astype(float).tolist(), strict=True))
        == iterations
    )
    counters = [m for path in (device / "timeline").glob("msprof_*.json") for m in _counter_mhz(path)]
    assert counters == [] and run.frequency.empty  # this capture wrote no AI Core Freq counter
    info = json.loads((device / f"info.json.{rank}").read_text(encoding="utf-8"))
    assert (
        run.meta.rank == info["rank_id"]
        and run.meta.environment["ai_core_num"] == info["DeviceInfo"][0]["ai_core_num"]
    )


@pytest.mark.parametrize("rank", [0, 1, 2, 3])
def test_legacy_steps_and_communication_are_those_of_step_trace_raw(rank: int) -> None:
    table = [r for r in _rows(LEGACY / f"step_trace_raw_{rank}_detail_time.csv") if r["step_num"].isdigit()]
    run = read_folder(LEGACY, rank=rank)
    steps = run.steps.astype("float64")
    assert steps["step"].tolist() == [float(r["step_num"]) for r in table]
    assert steps["duration_us"].tolist() == pytest.approx([int(r["total"]) / 100 for r in table])
    assert steps["busy_us"].tolist() == pytest.approx(
        [(int(r["fp_and_bp"]) + int(r["tail"])) / 100 for r in table]
    )
    assert steps["free_us"].tolist() == pytest.approx([int(r["iteration_interval"]) / 100 for r in table])
    ops = [c for c in table[0] if c.startswith("stream_") and f"{c}_start_point" in table[0]]
    assert len(run.kernels) == len(ops) * len(table)
    assert run.kernels["duration_us"].astype(float).sum() == pytest.approx(
        sum(int(r[c]) for r in table for c in ops) / 100
    )
    assert set(run.kernels["core"]) == {"HCCL"}
    assert run.meta.files == (f"step_trace_raw_{rank}_detail_time.csv", f"hccl_raw_{rank}.csv")
    missing = run.cannot_answer("operators")
    assert missing is not None and f"aicore_intermediate_{rank}_detail.csv" in missing.reason


@pytest.mark.parametrize("name", ["kernel_details_2023_training", "kernel_details_2025_bf16_llm"])
def test_a_lone_kernel_details_sample_gives_its_rows_and_step(name: str) -> None:
    table = _rows(ASCEND / name / "kernel_details.csv")
    run = read_folder(ASCEND / name)
    assert len(run.kernels) == len(table)
    assert sorted(run.kernels["step"].dropna().unique().tolist()) == sorted(
        {int(r["Step Id"]) for r in table}
    )


def test_a_lone_torch_npu_trace_gives_its_hardware_kernels_and_step() -> None:
    events = json.loads((ASCEND / "torch_npu_cnn_train_step" / "trace_view.json").read_text(encoding="utf-8"))
    hardware = {
        e["pid"] for e in events if e.get("name") == "process_name" and e["args"]["name"] == "Ascend Hardware"
    }
    run = read_folder(ASCEND / "torch_npu_cnn_train_step")
    assert len(run.kernels) == sum(1 for e in events if e.get("ph") == "X" and e.get("pid") in hardware)
    assert run.steps["step"].tolist() == [1]  # ProfilerStep#1


def test_the_kernel_details_excerpt_is_read_under_its_profiler_name(tmp_path: Path) -> None:
    shutil.copy(ASCEND / "kernel_details_excerpt" / "test.csv", tmp_path / "kernel_details.csv")
    assert len(read_folder(tmp_path).kernels) == len(_rows(ASCEND / "kernel_details_excerpt" / "test.csv"))


@pytest.mark.parametrize("folder", sorted(NOT_PROFILES))
def test_a_folder_that_is_not_a_profile_is_refused_naming_what_it_holds(folder: str) -> None:
    """msprof-analyze's cluster output and msprobe's accuracy dumps are not profiler output (msprobe dumps
    are for a later issue): one clear InputError naming the folder and its files."""
    with pytest.raises(InputError) as caught:
        read_folder(SAMPLES / folder)
    assert caught.value.problem.startswith("this is not profiler output")
    assert all(name in caught.value.problem for name in NOT_PROFILES[folder])
    assert caught.value.expected.startswith("a MindSpore profiler output")


# ----------------------------------------------------------------------------- compared with itself


@pytest.mark.slow
@pytest.mark.parametrize("folder", sorted(PROFILES))
def test_each_profile_compared_with_itself_gives_nothing_significant(folder: str) -> None:
    report = diagnose(SAMPLES / folder, SAMPLES / folder, isolate=False)
    assert report.data["verdict"]["status"] == "nothing-found", [c.id for c in report.causes]
    assert not [c for c in report.causes if c.significant]
    assert not [c.id for c in report.causes if c.severity_label in ("high", "critical")]
    kinds = {s["kind"] for s in report.data["symptoms"]}
    assert "frequency-drop" not in kinds  # the clock stays full while kernels run
    # OP State = dynamic is how kernels were compiled, not changing shapes (issue 28, point 2); in the
    # communication-bound jobs, communication is not idle time (point 1). The lone single-card files keep
    # their device-idle: their gaps between kernels are real.
    assert "dynamic-shapes" not in kinds
    if not folder.startswith("ascend/"):
        assert "device-idle" not in kinds, kinds

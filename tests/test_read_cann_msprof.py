"""CANN msprof output (PROF_*/mindstudio_profiler_output/, Ascend 310 through MindSpore Lite, ACL or the
msprof command line): detection, the canonical run, ranks from device_<id>, settings from sample.json,
steps from step_trace or one step with a limitation, bad files, folder uploads and a compare on the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import cli.main as cli
from core import InputError
from diagnosis import Workspace, find_runs, materialize, read_folder
from doctor import diagnose
from doctor.render import render
from tests.support.inputs import ASCEND

MSPROF = ASCEND / "msprof"
LITE = MSPROF / "lite_infer"
L0 = MSPROF / "l0_nosteps"
LITE_PROF = "PROF_000001_20251130100000123_FKFLNPEPPRRCFCBA"
OUT = "mindstudio_profiler_output"
SUMMARY = "op_summary_20251130100000123.csv"
STEP_TRACE = "step_trace_20251130100000123.csv"
TRAIN = ASCEND / "level1" / "train"


def copy(tmp_path: Path, source: Path = LITE) -> Path:
    return Path(shutil.copytree(source, tmp_path / source.name))


def test_a_lite_inference_profile_reads_with_steps_rank_and_settings() -> None:
    run = read_folder(LITE)
    assert (run.meta.layout, run.meta.rank, run.meta.device, run.meta.phase) == (
        "cann-msprof",
        0,
        "Ascend",
        "inference",
    )
    assert (run.meta.config.level, run.meta.config.aic_metrics) == ("Level1", "PipeUtilization")
    assert run.meta.files == (
        "device_0/sample.json",
        f"{OUT}/{SUMMARY}",
        f"{OUT}/{STEP_TRACE}",
        f"{OUT}/op_statistic_20251130100000123.csv",
    )
    assert len(run.kernels) == 24 and run.kernels["step"].tolist() == [1] * 8 + [2] * 8 + [3] * 8
    assert run.steps["step"].tolist() == [1, 2, 3]
    assert run.steps["duration_us"].tolist()[:2] == [667.9, 667.9]
    assert run.steps["busy_us"].round(3).tolist() == [220.0, 220.0, 220.0]
    first = run.kernels.iloc[0]
    assert (first["op_type"], first["core"], first["input_dtypes"], first["op_state"]) == (
        "Cast",
        "AI_CPU",
        "DOUBLE",
        "static",
    )
    assert "aic_mac_ratio" in run.kernels.columns and "op_statistic" in run.extras
    assert [lim.topic for lim in run.limitations] == []


def test_an_old_cann_l0_profile_without_step_trace_is_one_step_with_limitations() -> None:
    run = read_folder(L0)
    assert (run.meta.rank, run.meta.config.level, run.meta.config.aic_metrics) == (1, "Level0", None)
    assert run.steps.empty and run.kernels["step"].isna().all() and run.step_count == 1
    topics = [lim.topic for lim in run.limitations]
    assert topics == ["dtypes", "shapes", "formats", "op-state", "aic-metrics", "steps"]
    assert "op_summary_20251130110000456.csv" in run.limitations[0].reason
    assert "msprof" in run.limitations[-1].remedy


def test_device_folders_are_ranks() -> None:
    cands = find_runs(MSPROF)
    assert sorted((c.layout, c.rank) for c in cands) == [("cann-msprof", 0), ("cann-msprof", 1)]
    assert read_folder(MSPROF, rank=1).meta.config.level == "Level0"
    assert read_folder(MSPROF).meta.ranks_available == (0, 1)


def test_two_devices_in_one_prof_folder_are_two_ranks_split_by_device_id(tmp_path: Path) -> None:
    prof = copy(tmp_path) / LITE_PROF
    shutil.copytree(prof / "device_0", prof / "device_1")
    summary = prof / OUT / SUMMARY
    lines = summary.read_text().splitlines()
    other = [("1," + line.split(",", 1)[1]) for line in lines[1:5]]
    summary.write_text("\n".join([*lines, *other]) + "\n")
    assert sorted(c.rank for c in find_runs(tmp_path)) == [0, 1]
    assert len(read_folder(tmp_path, rank=0).kernels) == 24
    assert len(read_folder(tmp_path, rank=1).kernels) == 4


def test_without_sample_json_the_settings_are_unknown(tmp_path: Path) -> None:
    root = copy(tmp_path)
    (root / LITE_PROF / "device_0" / "sample.json").unlink()
    run = read_folder(root)
    assert run.meta.config.level is None and run.meta.rank == 0
    assert run.limitations[0].topic == "profiler-config" and "sample.json" in run.limitations[0].reason


def test_a_prof_folder_inside_a_mindspore_run_is_read_through_the_run(tmp_path: Path) -> None:
    """MindSpore keeps PROF_*/mindstudio_profiler_output when data_simplification is off."""
    run_root = Path(shutil.copytree(TRAIN, tmp_path / "train"))
    inner = next(run_root.iterdir()) / LITE_PROF
    shutil.copytree(LITE / LITE_PROF, inner)
    assert [c.layout for c in find_runs(run_root)] == ["ascend-ms"]


def test_an_op_summary_without_durations_names_the_file_and_the_known_headers(tmp_path: Path) -> None:
    root = copy(tmp_path)
    summary = root / LITE_PROF / OUT / SUMMARY
    text = summary.read_text().replace("Task Duration(us)", "Task Time", 1)
    summary.write_text(text)
    with pytest.raises(InputError) as caught:
        read_folder(root)
    assert caught.value.path == f"{LITE_PROF}/{OUT}/{SUMMARY}"
    assert caught.value.problem == "missing column 'Duration(us)'"
    assert "Task Duration(us)" in caught.value.expected


def test_a_broken_sample_json_is_one_input_error(tmp_path: Path) -> None:
    root = copy(tmp_path)
    (root / LITE_PROF / "device_0" / "sample.json").write_text("[1, 2]")
    with pytest.raises(InputError, match=r"sample\.json: is not a JSON object"):
        read_folder(root)


def test_a_prof_folder_without_op_summary_is_not_profiler_output(tmp_path: Path) -> None:
    root = copy(tmp_path)
    (root / LITE_PROF / OUT / SUMMARY).unlink()
    with pytest.raises(InputError, match=r"not profiler output \(found: PROF_") as caught:
        read_folder(root)
    assert "mindstudio_profiler_output/op_summary_*.csv" in caught.value.expected


def test_a_folder_upload_of_msprof_files_is_rebuilt(tmp_path: Path) -> None:
    """A browser folder upload hands over the files without their folders (raw slices included)."""
    files = [str(p) for p in LITE.rglob("*") if p.is_file()]
    with Workspace() as ws:
        run = read_folder(materialize(files, ws))
    assert (run.meta.layout, run.meta.rank, len(run.kernels), len(run.steps)) == ("cann-msprof", 0, 24, 3)
    assert run.limitations[-1].topic == "skipped" and run.limitations[-1].reason.startswith(
        "2 files"
    )  # info.json.<id> is placed


def test_training_on_mindspore_against_lite_inference_compares_on_the_cli(capsys) -> None:
    code = cli.main(["compare", str(TRAIN), str(LITE), "--format", "json"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert [(i["role"], i["layout"]) for i in report["inputs"]] == [
        ("baseline", "ascend-ms"),
        ("target", "cann-msprof"),
    ]
    assert [c["id"] for c in report["causes"][:2]] == ["precision-mismatch", "ai-cpu-fallback"]


@pytest.mark.slow
def test_an_ai_cpu_fallback_fires_alone_and_stays_quiet_when_both_runs_share_it(capsys) -> None:
    """Fires on the Lite run diagnosed alone; the shared-trait case (the same fallback in both runs)
    reports nothing."""
    code, out = cli.main(["compare", str(LITE), str(LITE), "--format", "json"]), capsys.readouterr().out
    assert code == 0
    shared = json.loads(out)
    assert (shared["verdict"]["status"], shared["causes"]) == ("nothing-found", [])
    alone = json.loads(render(diagnose(None, LITE, isolate=False), "json"))
    assert alone["causes"][0]["id"] == "ai-cpu-fallback"

"""Readers of MindSpore's older layouts: 2.3/2.4 (profiler/ + rank-*_ascend_ms), 2.0-2.2 flat Ascend, and
2.0-2.4 flat GPU and CPU folders: detection, units, aliases, steps, configuration and bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError
from diagnosis.readers import ascend, ascend_legacy, gpu, legacy_cpu, torch_npu
from diagnosis.readers.ascend_legacy import read_aicore_type
from diagnosis.readers.discover import discover

FIX = Path(__file__).parent / "fixtures" / "ascend"
MS23 = FIX / "ms23/profiler"
MS23_RANK = MS23 / "rank-0_20240601120000123_ascend_ms"
FLAT = FIX / "legacy_ascend/profiler"
FLAT20 = FIX / "legacy_ascend_20/profiler"
GPU = FIX / "legacy_gpu/profiler"
CPU = FIX / "legacy_cpu/profiler"


def only(reader, folder: Path):
    found = reader.candidates(folder)
    assert len(found) == 1, found
    return reader.read(found[0])


def csv_rows(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


# ------------------------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    ("folder", "layout", "root"),
    [
        (FIX / "ms23", "ascend-ms-2.3", MS23_RANK),
        (MS23, "ascend-ms-2.3", MS23_RANK),
        (MS23_RANK, "ascend-ms-2.3", MS23_RANK),
        (MS23_RANK / "ASCEND_PROFILER_OUTPUT", "ascend-ms-2.3", MS23_RANK),
        (FIX / "legacy_ascend", "legacy-ascend", FLAT),
        (FLAT20, "legacy-ascend", FLAT20),
        (FIX / "legacy_gpu", "legacy-gpu", GPU),  # its cpu_* host files do not make it a CPU run
        (CPU, "legacy-cpu", CPU),
    ],
)
def test_legacy_layouts_are_detected_from_their_files(folder: Path, layout: str, root: Path) -> None:
    assert [(c.layout, c.root, c.rank) for c in discover(folder)] == [(layout, root, 0)]


def test_flat_folder_with_several_ranks_gives_one_candidate_per_rank(tmp_path: Path) -> None:
    folder = tmp_path / "profiler"
    shutil.copytree(FLAT, folder)
    for path in list(folder.iterdir()):
        shutil.copyfile(path, folder / path.name.replace("_0", "_3", 1))
    assert sorted(c.rank for c in ascend_legacy.candidates(tmp_path)) == [0, 3]


def test_a_bare_rank_folder_of_23_is_still_23(tmp_path: Path) -> None:
    alone = tmp_path / MS23_RANK.name
    shutil.copytree(MS23_RANK, alone)
    found = ascend_legacy.candidates(tmp_path)
    assert [(c.layout, c.rank) for c in found] == [("ascend-ms-2.3", 0)]
    run = ascend_legacy.read(found[0])
    assert run.cannot_answer("profiler-config") is not None  # profiler_info lives in the missing parent
    assert run.cannot_answer("steps") is not None


# ------------------------------------------------------------------------------------------------ 2.3/2.4


def test_ms23_rank_folder_with_the_legacy_parent() -> None:
    run = only(ascend_legacy, FIX / "ms23")
    meta = run.meta
    assert (meta.layout, meta.framework_version, meta.jit_level, meta.execution_mode) == (
        "ascend-ms-2.3",
        "2.3.1",
        "O2",
        "graph",
    )
    config = meta.config
    assert config.aic_metrics == "ArithmeticUtilization" and config.profile_memory is False
    assert config.raw["training_trace"] == "on" and config.level is None
    assert meta.files[0] == "../profiler_info_0.json"
    rows = csv_rows(MS23_RANK / "ASCEND_PROFILER_OUTPUT/kernel_details.csv")
    assert "Device_id" in rows.columns and "Step ID" not in rows.columns
    k = run.kernels
    assert len(k) == len(rows) == 34
    assert k["name"].tolist() == rows["Name"].tolist()
    assert (k["scope"] == k["name"]).all()  # GE op names are the framework ops
    assert k["step"].isna().all()  # the step trace runs on another clock: no guessing
    raw = csv_rows(MS23 / "step_trace_raw_0_detail_time.csv")
    raw = raw[raw["step_num"] != "-"]
    assert run.steps["step"].tolist() == [1, 2]
    assert run.steps["duration_us"].tolist() == (raw["total"].astype(int) / 100).tolist()  # 10 ns ticks
    assert run.steps["free_us"].tolist() == (raw["iteration_interval"].astype(int) / 100).tolist()
    assert run.cannot_answer("steps") is None
    # ArithmeticUtilization counters only: no pipe ratios to bound operators with, and said
    assert [lim.topic for lim in run.limitations] == ["op-state", "aic-metrics"]
    assert "aic_mac_fp16_ratio" not in k.columns
    assert run.pipeline["op_type"].tolist() == ["Batch", "Map", "ImageFolder"]
    assert run.pipeline["parent_id"].tolist()[1:] == [0, 1] and run.pipeline["parent_id"].isna().iloc[0]
    assert meta.phase == "train"


# ------------------------------------------------------------------------------------------ 2.0-2.2


def test_flat_ascend_joins_timeline_and_framework_raw() -> None:
    run = only(ascend_legacy, FIX / "legacy_ascend")
    timeline = csv_rows(FLAT / "output_timeline_data_0.txt")
    k = run.kernels
    assert len(k) == len(timeline) == 51
    assert k["name"].tolist() == timeline["op_name"].tolist()
    assert k["start_us"].tolist() == timeline["start_time(us)"].astype(float).tolist()
    assert np.allclose(k["duration_us"].to_numpy(dtype=float), timeline["duration(ms)"].astype(float) * 1000)
    conv = k[k["op_type"] == "Conv2D"].iloc[0]
    assert conv["input_dtypes"] == "FLOAT16;FLOAT16"  # from framework_raw op_info
    assert conv["input_shapes"] == "32,1,32,32,16;4,1,16,16"
    assert conv["input_formats"] == "NC1HWC0;FRACTAL_Z"
    assert conv["core"] == "AI_CORE" and conv["block_dim"] == 32  # kernel_type TBE
    assert set(k.loc[k["op_type"] == "DropOutGenMask", "core"]) == {"AI_CPU"}
    # Same clock as the step trace: every step holds one launch of each of the 17 ops.
    assert k["step"].value_counts().sort_index().to_dict() == {1: 17, 2: 17, 3: 17}
    assert run.meta.execution_mode == "graph"  # context_mode 0
    assert run.meta.phase == "train"
    lim = run.cannot_answer("profiler-config")
    assert lim is not None and "records no profiler options" in lim.reason
    assert set(run.extras) == {"aicpu", "aicore_type"} and len(run.pipeline) == 3
    assert "minddata_pipeline_raw_0.csv" in run.meta.files and "profiler_info_0.json" in run.meta.files
    types = run.extras["aicore_type"]
    assert types.columns.tolist() == ["op_type", "total_ms", "count", "percent"]
    assert types.set_index("op_type").loc["ApplyMomentum", "count"] == 6


def test_flat_ascend_20_space_separated_timeline_in_ms() -> None:
    run = only(ascend_legacy, FIX / "legacy_ascend_20")
    lines = (FLAT20 / "output_timeline_data_0.txt").read_text().split("\n")[1:-1]
    starts_ms = [float(line.split()[2]) for line in lines]
    assert run.kernels["start_us"].tolist() == pytest.approx([s * 1000 for s in starts_ms], abs=0.25)
    assert run.kernels["duration_us"].iloc[0] == pytest.approx(55.0)
    assert run.kernels["input_dtypes"].iloc[0] == "DOUBLE"  # lower-case input_0 keys of 2.0
    assert run.cannot_answer("steps") is not None and run.steps.empty
    assert run.meta.phase == "inference" and run.meta.framework_version == "2.0.0"


def test_aicore_type_file_spellings_of_23() -> None:
    frame = read_aicore_type(MS23 / "aicore_intermediate_0_type.csv")  # kernel_type,task_time,...
    assert frame.columns.tolist() == ["op_type", "total_ms", "count", "percent"]
    raw = csv_rows(MS23 / "aicore_intermediate_0_type.csv")
    assert frame["op_type"].tolist() == raw["kernel_type"].tolist()
    assert frame["total_ms"].tolist() == raw["task_time"].astype(float).tolist()


def test_flat_ascend_without_timeline_falls_back_to_averages(tmp_path: Path) -> None:
    folder = tmp_path / "profiler"
    shutil.copytree(FLAT, folder)
    (folder / "output_timeline_data_0.txt").unlink()
    run = only(ascend_legacy, tmp_path)
    detail = csv_rows(FLAT / "aicore_intermediate_0_detail.csv")
    assert len(run.kernels) == detail["execution_frequency"].astype(int).sum()
    assert run.kernels["start_us"].isna().all()
    per_op = run.kernels.groupby("name")["duration_us"].first()
    expected = detail.set_index("full_op_name")["task_duration"].astype(float) * 1000
    assert np.allclose(per_op.loc[expected.index].to_numpy(dtype=float), expected.to_numpy())
    assert run.cannot_answer("launches") is not None


# --------------------------------------------------------------------------------------------------- GPU


def test_gpu_op_launches_host_ops_and_steps() -> None:
    run = only(gpu, FIX / "legacy_gpu")
    k = run.kernels
    assert run.meta.device == "GPU"
    assert k["core"].value_counts().to_dict() == {"GPU": 15, "CPU": 3}
    conv = k[k["op_type"] == "Conv2D"]
    assert conv["duration_us"].tolist() == [120.5] * 3  # µs, confirmed by op_total_time(us)
    assert conv["input_shapes"].tolist() == ["32,3,32,32"] * 3  # gpu_framework_0.txt
    assert conv["start_us"].iloc[0] == 1717300000000000.0  # ns -> µs
    assert k.loc[k["core"] == "CPU", "duration_us"].tolist() == [85.0] * 3  # cpu file: ms -> µs
    # The GPU step trace is in ns: the unit under which the kernels fall inside the steps.
    assert run.steps["duration_us"].tolist() == [248.0] * 3
    assert k.loc[k["core"] == "GPU", "step"].value_counts().to_dict() == {1: 5, 2: 5, 3: 5}
    assert {"op_detail", "op_type_info", "gpu_activity"} <= set(run.extras)
    assert run.cannot_answer("dtypes") is not None


def test_gpu_duration_unit_follows_the_detail_totals(tmp_path: Path) -> None:
    folder = tmp_path / "profiler"
    shutil.copytree(GPU, folder)
    stamps = folder / "gpu_op_execute_timestamp_0.txt"
    lines = []
    for line in stamps.read_text().splitlines():
        name, kind, launches = line.split(";")
        in_ms = [f"{s.split(',')[0]},{float(s.split(',')[1]) / 1000}" for s in launches.split()]
        lines.append(f"{name};{kind};{' '.join(in_ms)}")
    stamps.write_text("\n".join(lines) + "\n")
    run = only(gpu, tmp_path)
    assert run.kernels.loc[run.kernels["op_type"] == "Conv2D", "duration_us"].tolist() == [120.5] * 3


# --------------------------------------------------------------------------------------------------- CPU


def test_cpu_flat_folder() -> None:
    run = only(legacy_cpu, CPU)
    k = run.kernels
    assert len(k) == 28 and set(k["core"]) == {"CPU"}
    conv = k[k["op_type"] == "Conv2D"]
    assert conv["duration_us"].tolist() == [2450.0] * 4  # ms -> µs
    assert conv["input_shapes"].iloc[0] == "32,3,32,32"
    assert run.steps["step"].tolist() == [1, 2, 3, 4]
    assert k["step"].value_counts().to_dict() == {1: 7, 2: 7, 3: 7, 4: 7}
    assert run.meta.amp["cast_ops_per_step"] == 3.0
    assert (run.meta.device, run.meta.framework_version, run.meta.phase) == ("CPU", "2.4.1", "inference")
    assert run.cannot_answer("profiler-config") is not None


def test_cpu_mindspore_1x_column_names(tmp_path: Path) -> None:
    folder = tmp_path / "profiler"
    shutil.copytree(CPU, folder)
    detail = folder / "cpu_op_detail_info_0.csv"
    text = detail.read_text().replace("op_total_time(ms)", "compute_time(ms)")
    detail.write_text(text.replace("op_avg_time(ms)", "avg_execution_time(ms)"))
    run = only(legacy_cpu, tmp_path)
    assert run.kernels.loc[run.kernels["op_type"] == "Conv2D", "duration_us"].tolist() == [2450.0] * 4
    assert run.extras["op_detail"]["total_us"].iloc[1] == pytest.approx(2450.0 * 4)


# ------------------------------------------------------------------------------------------- bad input


def _copy(tmp_path: Path, source: Path) -> Path:
    folder = tmp_path / "profiler"
    shutil.copytree(source, folder)
    return folder


def test_bad_op_info_json(tmp_path: Path) -> None:
    folder = _copy(tmp_path, FLAT)
    raw = folder / "framework_raw_0.csv"
    raw.write_bytes(raw.read_bytes().replace(b'""Input_0"": {', b'""Input_0"" {', 1))
    with pytest.raises(InputError) as err:
        only(ascend_legacy, tmp_path)
    assert "framework_raw_0.csv" in str(err.value) and "op_info is not valid JSON" in err.value.problem


def test_bad_step_trace_value(tmp_path: Path) -> None:
    folder = _copy(tmp_path, FLAT)
    trace = folder / "step_trace_raw_0_detail_time.csv"
    trace.write_bytes(trace.read_bytes().replace(b"\r\n1,", b"\r\n1,abc", 1))
    with pytest.raises(InputError) as err:
        only(ascend_legacy, tmp_path)
    assert "step_trace_raw_0_detail_time.csv" in str(err.value) and "'start_point'" in err.value.problem


def test_missing_timeline_and_detail(tmp_path: Path) -> None:
    folder = _copy(tmp_path, FLAT)
    (folder / "output_timeline_data_0.txt").unlink()
    (folder / "aicore_intermediate_0_detail.csv").unlink()
    with pytest.raises(InputError) as err:
        only(ascend_legacy, tmp_path)
    assert "no output_timeline_data_0.txt" in err.value.problem


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"Default/Cast-op0;HostCpuOps\n", "line 1 has no launch list"),
        (b"Default/Cast-op0;HostCpuOps;1717,0.035,0 1718\n", "malformed launch entry"),
        (b"", "no operator launches recorded"),
        (b"Default/Cast-op0;HostCpuOps;\xff\n", "not UTF-8"),
    ],
)
def test_bad_cpu_timestamps(tmp_path: Path, content: bytes, problem: str) -> None:
    folder = _copy(tmp_path, CPU)
    (folder / "cpu_op_execute_timestamp_0.txt").write_bytes(content)
    with pytest.raises(InputError) as err:
        only(legacy_cpu, tmp_path)
    assert "cpu_op_execute_timestamp_0.txt" in str(err.value) and err.value.problem.startswith(problem)


def test_truncated_gpu_detail(tmp_path: Path) -> None:
    folder = _copy(tmp_path, GPU)
    detail = folder / "gpu_op_detail_info_0.csv"
    data = detail.read_bytes()
    detail.write_bytes(data[: len(data) - 30])
    with pytest.raises(InputError) as err:
        only(gpu, tmp_path)
    assert "gpu_op_detail_info_0.csv" in str(err.value) and "truncated" in err.value.problem


def test_legacy_readers_leave_ascend_ms_runs_alone() -> None:
    for reader in (ascend_legacy, gpu, legacy_cpu):
        assert reader.candidates(FIX / "level1") == []
    assert ascend.candidates(FIX / "ms23") == [] and torch_npu.candidates(FIX / "ms23") == []


def test_an_infinite_number_in_profiler_info_is_ignored_not_raised(tmp_path: Path) -> None:
    """JSON `1e309` is float infinity: no integer setting can come of it (found by the fuzzer)."""
    folder = Path(shutil.copytree(FIX / "legacy_ascend_20", tmp_path / "run"))
    info = folder / "profiler" / "profiler_info_0.json"
    info.write_text(
        info.read_text()
        .replace('"rank_size": 1', '"rank_size": 1e309')
        .replace('"rank_id": 0', '"rank_id": 1e309')
    )
    run = only(ascend_legacy, folder)
    assert len(run.kernels) and run.meta.framework_version == "2.0.0"


@pytest.mark.parametrize("cell", ["inf", "99999999999999999999", "1.5"])
def test_a_step_number_that_is_not_a_whole_number_drops_that_step(tmp_path: Path, cell: str) -> None:
    """step_trace_raw rows whose step_num is infinite, beyond int64 or fractional are not steps
    (found by the fuzzer: they were cast to int64 and raised)."""
    folder = Path(shutil.copytree(FIX / "legacy_ascend", tmp_path / "run"))
    trace = folder / "profiler" / "step_trace_raw_0_detail_time.csv"
    lines = trace.read_text().split("\n")
    good = only(ascend_legacy, FIX / "legacy_ascend")
    trace.write_text("\n".join([lines[0], cell + lines[1][1:], *lines[2:]]))
    run = only(ascend_legacy, folder)
    assert len(run.steps) == len(good.steps) - 1 and 1 not in run.steps["step"].tolist()


def test_a_quote_in_a_launch_list_is_a_malformed_entry(tmp_path: Path) -> None:
    """The launch file has no quoting: a stray `"` must not merge entries (found by the fuzzer)."""
    folder = Path(shutil.copytree(FIX / "legacy_cpu", tmp_path / "run"))
    path = folder / "profiler" / "cpu_op_execute_timestamp_0.txt"
    text = path.read_text()
    path.write_text(text[:91] + '"' + text[92:])
    with pytest.raises(InputError, match=r"cpu_op_execute_timestamp_0\.txt: malformed launch"):
        only(legacy_cpu, folder)

"""MindSpore 1.x Ascend profiles (flat profiler/ folder), told apart by their headers: framework_raw with
full_kernel_name / kernel_name / kernel_type, aicore detail with and without execution_frequency, the
`, `-separated timeline header and step_trace_raw with per-stream columns."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core import InputError
from diagnosis import read_folder
from tests.support.inputs import ASCEND

MS1 = ASCEND / "legacy_ascend_1x"
PROFILER = "profiler"


def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(MS1, tmp_path / "run"))


def test_a_1x_profile_reads_with_op_types_dtypes_and_steps() -> None:
    run = read_folder(MS1)
    assert run.meta.layout == "legacy-ascend" and run.meta.phase == "train"
    assert run.meta.files == (
        "output_timeline_data_0.txt",
        "framework_raw_0.csv",
        "step_trace_raw_0_detail_time.csv",
    )
    conv = run.kernels[run.kernels["name"].str.endswith("Conv2D-op0")].iloc[0]
    assert (conv["op_type"], conv["input_dtypes"], conv["input_formats"], conv["block_dim"]) == (
        "Conv2D",
        "FLOAT16;FLOAT16",
        "NC1HWC0;FRACTAL_Z",
        32,
    )
    cast = run.kernels.iloc[0]
    assert (cast["op_type"], cast["input_dtypes"], cast["output_dtypes"]) == ("Cast", "FLOAT", "FLOAT16")
    assert run.steps["step"].tolist() == [1, 2]  # the all-zero step-0 row and the `-` average are dropped
    assert run.kernels["step"].value_counts().to_dict() == {1: 17, 2: 17}
    assert run.kernels["duration_us"].iloc[0] == pytest.approx(6.2)  # duration(ms) in the `, ` header
    assert run.limitations[0].topic == "profiler-config"


def test_without_the_timeline_the_aicore_detail_without_frequency_stands_in(tmp_path: Path) -> None:
    root = copy(tmp_path)
    (root / PROFILER / "output_timeline_data_0.txt").unlink()
    run = read_folder(root)
    detail = (root / PROFILER / "aicore_intermediate_0_detail.csv").read_text().splitlines()
    assert detail[0] == "full_op_name,execution_time"
    assert len(run.kernels) == len(detail) - 1  # one launch per operator without execution_frequency
    assert run.kernels["start_us"].isna().all() and "launches" in [lim.topic for lim in run.limitations]


def test_the_detail_with_execution_frequency_repeats_each_operator(tmp_path: Path) -> None:
    root = copy(tmp_path)
    (root / PROFILER / "output_timeline_data_0.txt").unlink()
    detail = root / PROFILER / "aicore_intermediate_0_detail.csv"
    lines = detail.read_text().splitlines()
    detail.write_text(
        "\n".join(["full_op_time,execution_time,execution_frequency"] + [f"{x},2" for x in lines[1:]])
    )
    run = read_folder(root)
    assert len(run.kernels) == 2 * (len(lines) - 1)


def test_a_framework_raw_of_an_unknown_variant_is_a_clear_error(tmp_path: Path) -> None:
    root = copy(tmp_path)
    raw = root / PROFILER / "framework_raw_0.csv"
    raw.write_text(raw.read_text().replace("full_kernel_name", "kernel_full", 1))
    with pytest.raises(InputError) as caught:
        read_folder(root)
    assert caught.value.path == "run/profiler/framework_raw_0.csv"
    assert caught.value.problem == "missing column 'full_op_name'"

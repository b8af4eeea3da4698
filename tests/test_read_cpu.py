"""The MindSpore 2.10 CPU reader on real profiler output."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.errors import InputError
from core.model import KERNEL_SCHEMA
from diagnosis.ingest import find_runs, read_folder
from tests.support.inputs import CPU
from tests.support.runs import cpu_run


def _root(scenario: str) -> Path:
    return next((CPU / scenario).glob("*_ascend_ms"))


def test_layout_found_from_run_folder_parent_and_framework_folder():
    root = _root("infer_fp32_graph")
    for given in (CPU / "infer_fp32_graph", root, root / "FRAMEWORK"):
        cands = find_runs(given)
        assert [(c.layout, c.root.resolve(), c.rank) for c in cands] == [("cpu-ms", root.resolve(), 0)]


def test_kernels_follow_the_canonical_schema_and_match_the_detail_table():
    run = cpu_run("infer_fp32_graph")
    for col, dtype in KERNEL_SCHEMA.items():
        assert str(run.kernels[col].dtype) == dtype.replace("string[pyarrow]", "string"), col
    detail = run.extras["op_detail"]
    per_name = run.kernels.groupby("name").size()
    for name, occurrences in zip(detail["full_op_name"], detail["op_occurrences"], strict=True):
        assert per_name[name] == occurrences
    total_ms = run.kernels["duration_us"].sum() / 1000
    assert total_ms == pytest.approx(float(detail["op_total_time(ms)"].sum()), rel=1e-3)


def test_shapes_joined_per_launch_from_the_framework_file():
    run = cpu_run("infer_fp32_graph")
    conv = run.kernels.loc[run.kernels["op_type"] == "Conv2D", "input_shapes"]
    assert conv.notna().all()
    assert conv.str.startswith("8,").all()  # batch 8


def test_steps_derived_from_launches():
    run = cpu_run("infer_fp32_graph")
    assert run.step_count == 5
    assert run.steps["step"].tolist() == [1, 2, 3, 4, 5]
    assert run.steps["duration_us"].iloc[:-1].notna().all()
    assert (run.steps["busy_us"] > 0).all()
    assert run.kernels.groupby("step").size().nunique() == 1  # the same ops in every step


def test_recompiled_graph_renumbering_does_not_break_steps():
    run = cpu_run("infer_fp32_graph_dynamic_shapes")
    assert run.step_count == 5


@pytest.mark.parametrize(
    ("scenario", "mode", "phase"),
    [
        ("train_fp32_graph", "graph", "train"),
        ("infer_fp32_graph", "graph", "inference"),
        ("infer_fp32_pynative", "pynative", "inference"),
        ("train_fp32_pynative", "pynative", "train"),
        ("infer_trainmode_graph", "graph", "inference"),
    ],
)
def test_mode_and_phase_inferred(scenario, mode, phase):
    meta = cpu_run(scenario).meta
    assert (meta.execution_mode, meta.phase, meta.layout, meta.device) == (mode, phase, "cpu-ms", "CPU")


def test_amp_markers():
    assert cpu_run("infer_amp_o2_graph").meta.amp["cast_ops_per_step"] > 2
    assert cpu_run("infer_amp_o2_graph").meta.amp["output_to16_scopes"]
    assert cpu_run("infer_fp32_graph").meta.amp["cast_ops_per_step"] == 0


def test_cpu_limitations_say_what_cannot_be_answered():
    run = cpu_run("infer_fp32_graph")
    assert run.cannot_answer("profiler-config") is not None
    assert run.cannot_answer("dtypes") is not None
    assert run.cannot_answer("steps") is None  # derived exactly: every op runs once per step


def test_memory_record_read_when_profiled_with_memory():
    mem = cpu_run("infer_fp32_graph_profile_memory").memory
    assert len(mem) > 0 and mem.columns.tolist() == ["time_us", "mb"]
    assert mem["mb"].iloc[0] == pytest.approx(68096 / 2**20)  # Total Allocated(Byte) of the first sample


def _copy(tmp_path: Path, scenario: str = "infer_fp32_graph") -> Path:
    dest = tmp_path / "run"
    shutil.copytree(_root(scenario), dest / _root(scenario).name)
    return dest / _root(scenario).name


def test_missing_timestamp_file_is_a_clear_error(tmp_path):
    root = _copy(tmp_path)
    (root / "FRAMEWORK" / "cpu_op_execute_timestamp_0.txt").unlink()
    with pytest.raises(InputError, match=r"cpu_op_execute_timestamp_0\.txt: file missing"):
        read_folder(tmp_path / "run")


def test_truncated_timestamp_file_is_a_clear_error(tmp_path):
    root = _copy(tmp_path)
    path = root / "FRAMEWORK" / "cpu_op_execute_timestamp_0.txt"
    path.write_text(path.read_text()[:150].rsplit(",", 1)[0] + ",abc")
    with pytest.raises(InputError, match=r"cpu_op_execute_timestamp_0\.txt"):
        read_folder(tmp_path / "run")


def test_launches_over_the_row_budget_are_refused_before_parsing(tmp_path, monkeypatch):
    root = _copy(tmp_path)
    kernels = len(read_folder(tmp_path / "run").kernels)  # one kernel row per launch
    monkeypatch.setenv("PERF_DOCTOR_MAX_PROFILE_ROWS", str(kernels))  # every table is shorter
    assert len(read_folder(tmp_path / "run").kernels) == kernels
    monkeypatch.setenv("PERF_DOCTOR_MAX_PROFILE_ROWS", str(kernels - 1))
    with pytest.raises(InputError) as caught:
        read_folder(tmp_path / "run")
    assert caught.value.message == (
        f"{root.name}/FRAMEWORK/cpu_op_execute_timestamp_0.txt: has more than {kernels - 1:,} launches, "
        "the limit for one profile table; expected a profile of fewer steps (the operator can raise "
        "PERF_DOCTOR_MAX_PROFILE_ROWS)"
    )


def test_detail_table_without_required_columns(tmp_path):
    root = _copy(tmp_path)
    path = root / "FRAMEWORK" / "cpu_op_detail_info_0.csv"
    path.write_text("op_side,op_name\nHost,Conv2D-op0\n")
    with pytest.raises(InputError, match=r"missing columns \['op_type', 'full_op_name', 'op_occurrences'\]"):
        read_folder(tmp_path / "run")


def test_non_utf8_timestamp_file(tmp_path):
    root = _copy(tmp_path)
    (root / "FRAMEWORK" / "cpu_op_execute_timestamp_0.txt").write_bytes(b"\xff\xfe\x00bad;HostCpuOps;1,2,0")
    with pytest.raises(InputError, match="not UTF-8"):
        read_folder(tmp_path / "run")


def test_empty_folder_says_what_is_expected(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="not profiler output"):
        read_folder(tmp_path / "empty")


def test_unknown_rank_lists_the_ranks(tmp_path):
    _copy(tmp_path)
    with pytest.raises(InputError, match=r"rank 3 does not exist.*\[0\]"):
        read_folder(tmp_path / "run", rank=3)

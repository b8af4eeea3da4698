"""Bad input to the Ascend-family readers: every broken file ends in one InputError that names the file,
the problem and what was expected; optional tables that are broken only add a limitation."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from core.errors import InputError
from diagnosis.readers import ascend, torch_npu

FIX = Path(__file__).parent / "fixtures" / "ascend"
SAMPLES = Path(__file__).parents[1] / ".." / "shared" / "samples" / "ascend"
APO = "ASCEND_PROFILER_OUTPUT"
L1_TRAIN = FIX / "level1/train/ubuntu_2201_20251130080000123_ascend_ms"
L0_INFER = FIX / "level0/infer/ubuntu_2302_20251130110000012_ascend_ms"


def copy_run(tmp_path: Path, source: Path = L1_TRAIN) -> Path:
    root = tmp_path / source.name
    shutil.copytree(source, root)
    return root


def read(root: Path):
    found = ascend.candidates(root) + torch_npu.candidates(root)
    assert len(found) == 1, found
    return (torch_npu if found[0].layout == "torch-npu" else ascend).read(found[0])


def read_error(root: Path) -> InputError:
    with pytest.raises(InputError) as err:
        read(root)
    return err.value


# ------------------------------------------------------------------------------------ kernel_details


def test_truncated_kernel_details(tmp_path: Path) -> None:
    root = copy_run(tmp_path)
    kd = root / APO / "kernel_details.csv"
    data = kd.read_bytes()
    kd.write_bytes(data[: len(data) // 2])  # cut in the middle of a row
    err = read_error(root)
    assert "kernel_details.csv" in str(err)
    assert "truncated" in err.problem and "columns" in err.problem
    assert err.expected


def test_kernel_details_missing_a_required_column(tmp_path: Path) -> None:
    root = copy_run(tmp_path)
    kd = root / APO / "kernel_details.csv"
    lines = kd.read_bytes().decode().split("\r\n")
    col = lines[0].split(",").index("Duration(us)")
    kd.write_bytes("\r\n".join(",".join(_drop(line, col)) for line in lines).encode())
    err = read_error(root)
    assert "kernel_details.csv" in str(err)
    assert err.problem == "missing column 'Duration(us)'"
    assert err.expected == "a header with 'Duration(us)' or 'Task Duration(us)'"


def _drop(line: str, col: int) -> list[str]:
    """Drop one field of a CSV line whose quoted fields may hold commas."""
    fields, buf, quoted = [], "", False
    for char in line:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            fields.append(buf)
            buf = ""
        else:
            buf += char
    fields.append(buf)
    return fields[:col] + fields[col + 1 :] if line else []


def test_kernel_details_with_text_in_a_number_column(tmp_path: Path) -> None:
    root = copy_run(tmp_path)
    kd = root / APO / "kernel_details.csv"
    text = kd.read_bytes().decode()
    kd.write_bytes(text.replace(",6.2,0,8,", ",six,0,8,", 1).encode())
    err = read_error(root)
    assert "kernel_details.csv" in str(err)
    assert "'Duration(us)'" in err.problem and "'six'" in err.problem
    assert err.expected == "double values (or N/A) in that column"


def test_kernel_details_with_non_utf8_bytes(tmp_path: Path) -> None:
    root = copy_run(tmp_path)
    kd = root / APO / "kernel_details.csv"
    kd.write_bytes(kd.read_bytes().replace(b"Default/Cast-op0/Cast", b"Default/Cast-op0/\xff\xfeCast", 1))
    err = read_error(root)
    assert "kernel_details.csv" in str(err) and "UTF-8" in err.problem


def test_kernel_details_binary_garbage(tmp_path: Path) -> None:
    root = copy_run(tmp_path)
    (root / APO / "kernel_details.csv").write_bytes(bytes(range(256)) * 8)
    err = read_error(root)
    assert "kernel_details.csv" in str(err) and err.problem == "binary data, not CSV text"


def test_empty_kernel_details(tmp_path: Path) -> None:
    root = copy_run(tmp_path)
    (root / APO / "kernel_details.csv").write_bytes(b"")
    err = read_error(root)
    assert "kernel_details.csv" in str(err) and err.problem == "empty file"


def test_output_folder_without_kernel_tables(tmp_path: Path) -> None:
    root = copy_run(tmp_path)
    (root / APO / "kernel_details.csv").unlink()
    (root / APO / "trace_view.json").unlink()
    err = read_error(root)
    assert "ASCEND_PROFILER_OUTPUT" in str(err) and "no kernel_details.csv or trace_view.json" in err.problem


# ---------------------------------------------------------------------------- step table and config


def test_empty_step_trace_time(tmp_path: Path) -> None:
    root = copy_run(tmp_path)
    (root / APO / "step_trace_time.csv").write_bytes(b"\r\n")
    err = read_error(root)
    assert "step_trace_time.csv" in str(err) and err.problem == "empty file"


def test_step_trace_time_without_free(tmp_path: Path) -> None:
    root = copy_run(tmp_path)
    (root / APO / "step_trace_time.csv").write_bytes(b"Step,Computing\r\n1,238\r\n")
    err = read_error(root)
    assert "step_trace_time.csv" in str(err) and err.problem == "missing column 'Free'"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "empty file"),
        (b'{"profiler_parameters": {"profiler_level": "Level1",', "invalid or truncated JSON at line 1"),
        (b'{"ms_version": "2.10\xff"}', "not UTF-8 text"),
        (b"[1, 2, 3]", "not a JSON object"),
    ],
)
def test_broken_profiler_info(tmp_path: Path, content: bytes, problem: str) -> None:
    root = copy_run(tmp_path)
    (root / "profiler_info_0.json").write_bytes(content)
    err = read_error(root)
    assert "profiler_info_0.json" in str(err)
    assert err.problem.startswith(problem)
    assert err.expected


# ------------------------------------------------------------------------------------------ trace_view


def test_truncated_trace_view_when_steps_come_from_it(tmp_path: Path) -> None:
    root = copy_run(tmp_path, L0_INFER)  # no Step ID column: the ProfilerStep spans are needed
    trace = root / APO / "trace_view.json"
    data = trace.read_bytes()
    trace.write_bytes(data[: len(data) - 200])
    err = read_error(root)
    assert "trace_view.json" in str(err) and err.problem.startswith("truncated file")


def test_trace_view_that_is_not_a_list_when_steps_come_from_it(tmp_path: Path) -> None:
    root = copy_run(tmp_path, L0_INFER)
    (root / APO / "trace_view.json").write_bytes(b'{"traceEvents": []}')
    err = read_error(root)
    assert "trace_view.json" in str(err) and err.problem == "not a JSON list"


def test_broken_trace_view_only_needed_for_frequency_is_a_limitation(tmp_path: Path) -> None:
    root = copy_run(tmp_path)  # Step ID column and step_trace_time.csv: the trace only adds AI Core Freq
    trace = root / APO / "trace_view.json"
    trace.write_bytes(trace.read_bytes()[:-300])
    run = read(root)
    lim = run.cannot_answer("frequency")
    assert lim is not None and "trace_view.json" in lim.reason and "truncated" in lim.reason
    assert run.frequency.empty
    assert len(run.kernels) == 51 and len(run.steps) == 3


def test_corrupt_trace_view_as_the_only_kernel_source(tmp_path: Path) -> None:
    out = tmp_path / "h_1_2_ascend_pt" / APO
    out.mkdir(parents=True)
    data = (SAMPLES / "torch_npu_cnn_train_step/trace_view.json").read_bytes()
    middle = data.index(b'"name": "aclnnRelu_Relu_Relu"')
    (out / "trace_view.json").write_bytes(data[:middle] + b'"name" "broken", ' + data[middle:])
    err = read_error(out.parent)
    assert "trace_view.json" in str(err) and "invalid or truncated JSON" in err.problem
    assert err.expected.startswith("a JSON list of Chrome-trace events")


def test_empty_trace_view(tmp_path: Path) -> None:
    out = tmp_path / "h_1_2_ascend_pt" / APO
    out.mkdir(parents=True)
    (out / "trace_view.json").write_bytes(b"  \n")
    err = read_error(out.parent)
    assert "trace_view.json" in str(err) and err.problem == "empty file"


def test_cpu_only_trace_is_not_read_as_device_kernels(tmp_path: Path) -> None:
    out = tmp_path / "h_1_2_ascend_pt" / APO
    out.mkdir(parents=True)
    (out / "trace_view.json").write_bytes(b'[{"ph": "X", "name": "MatMul", "pid": 2, "ts": "1", "dur": "2"}]')
    err = read_error(out.parent)
    assert "no Ascend Hardware kernels" in err.problem


# ------------------------------------------------------------------------------------ optional tables


def test_broken_optional_tables_become_limitations(tmp_path: Path) -> None:
    root = copy_run(tmp_path)
    stats = root / APO / "op_statistic.csv"
    stats.write_bytes(stats.read_bytes()[:-40])  # last row cut short
    (root / "profiler_metadata.json").write_bytes(b"{not json")
    run = read(root)
    assert "op_statistic" not in run.extras
    reasons = [lim.reason for lim in run.limitations if lim.topic == "extras"]
    assert any("op_statistic.csv" in r for r in reasons)
    assert any("profiler_metadata.json" in r for r in reasons)
    assert len(run.kernels) == 51


# ------------------------------------------------------------------------------------ per-file budget


def test_kernel_details_over_the_per_file_budget_is_refused_before_parsing(tmp_path, monkeypatch) -> None:
    root = copy_run(tmp_path)
    size = (root / APO / "kernel_details.csv").stat().st_size
    monkeypatch.setenv("PERF_DOCTOR_MAX_PROFILE_FILE_BYTES", str(size - 1))
    err = read_error(root)
    assert err.path.endswith("kernel_details.csv")
    assert err.problem == "is 0 MiB, over the 0 MiB limit for one profile file"
    assert "PERF_DOCTOR_MAX_PROFILE_FILE_BYTES" in err.expected


def test_a_local_folder_is_not_held_to_the_default_budget(tmp_path, monkeypatch) -> None:
    # Uploads and archives are bounded while they are unpacked; a local folder is the user's own data.
    import diagnosis.readers.io as io_module

    root = copy_run(tmp_path)
    monkeypatch.delenv("PERF_DOCTOR_MAX_PROFILE_FILE_BYTES", raising=False)
    monkeypatch.delenv("PERF_DOCTOR_MAX_PROFILE_ROWS", raising=False)
    monkeypatch.setattr(io_module, "Limits", lambda **_: pytest.fail("the budget was consulted"))
    assert len(read(root).kernels) > 0


def test_kernel_details_at_the_budget_is_read(tmp_path, monkeypatch) -> None:
    root = copy_run(tmp_path)
    size = max(path.stat().st_size for path in root.rglob("*") if path.is_file())
    monkeypatch.setenv("PERF_DOCTOR_MAX_PROFILE_FILE_BYTES", str(size))  # the largest file is just within
    assert len(read(root).kernels) > 0


# ------------------------------------------------------------------------------------ row budget


def kd_rows(root: Path) -> int:
    """The rows of a run's kernel_details.csv (its lines after the header)."""
    return len((root / APO / "kernel_details.csv").read_bytes().splitlines()) - 1


def test_kernel_details_over_the_row_budget_is_refused_before_parsing(tmp_path, monkeypatch) -> None:
    import diagnosis.readers.io as io_module

    root = copy_run(tmp_path)
    monkeypatch.setenv("PERF_DOCTOR_MAX_PROFILE_ROWS", str(kd_rows(root) - 1))
    monkeypatch.setattr(io_module, "_arrow_read", lambda *_: pytest.fail("the table was parsed"))
    err = read_error(root)
    assert err.message == (
        f"{root.name}/{APO}/kernel_details.csv: has more than {kd_rows(root) - 1:,} rows, the limit for "
        "one profile table; expected a profile of fewer steps (the operator can raise "
        "PERF_DOCTOR_MAX_PROFILE_ROWS)"
    )


def test_kernel_details_at_the_row_budget_is_read(tmp_path, monkeypatch) -> None:
    root = copy_run(tmp_path)
    largest = max(kd_rows(root), *(len(p.read_bytes().splitlines()) - 1 for p in root.rglob("*.csv")))
    monkeypatch.setenv("PERF_DOCTOR_MAX_PROFILE_ROWS", str(largest))  # the longest table is just within
    assert len(read(root).kernels) == kd_rows(root)


def test_the_server_holds_local_files_to_the_default_row_budget(tmp_path, monkeypatch) -> None:
    import diagnosis.readers.io as io_module
    from diagnosis.limits import Limits

    root = copy_run(tmp_path)
    monkeypatch.delenv("PERF_DOCTOR_MAX_PROFILE_ROWS", raising=False)
    monkeypatch.setitem(io_module._HELD_TO_BUDGETS, "always", True)  # what doctor.facade.serve_uploads sets
    assert len(read(root).kernels) == kd_rows(root)  # well within the defaults
    table = root / APO / "kernel_details.csv"
    header = table.read_bytes().splitlines()[0]
    default = Limits().max_profile_rows
    table.write_bytes(header + b"\n" + b"x\n" * (default + 1))  # short rows: refused before parsing
    err = read_error(root)
    assert err.problem == f"has more than {default:,} rows, the limit for one profile table"


def test_trace_events_kept_over_the_row_budget_are_refused(tmp_path, monkeypatch) -> None:
    root = copy_run(tmp_path)
    (root / APO / "kernel_details.csv").unlink()  # the trace becomes the only source of kernels
    events = len(json.loads((root / APO / "trace_view.json").read_text()))
    monkeypatch.setenv("PERF_DOCTOR_MAX_PROFILE_ROWS", str(events))  # no more kept than there are events
    assert len(read(root).kernels) > 0
    monkeypatch.setenv("PERF_DOCTOR_MAX_PROFILE_ROWS", "1")
    err = read_error(root)
    assert (err.path, err.problem) == (
        f"{root.name}/{APO}/trace_view.json",
        "has more than 1 kernel, step and frequency events, the limit for one profile table",
    )


def test_a_named_pipe_in_place_of_profiler_info_is_refused_without_opening_it(tmp_path) -> None:
    root = copy_run(tmp_path)
    (root / "profiler_info_0.json").unlink()
    os.mkfifo(root / "profiler_info_0.json")
    err = read_error(root)  # opening the pipe would block until a writer came: the test would hang
    assert (err.path.endswith("profiler_info_0.json"), err.problem) == (True, "is not a regular file")

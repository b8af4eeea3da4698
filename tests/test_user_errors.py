"""Errors name the user's own file relative to what they uploaded (never the private folder an archive
was unpacked into), say which layouts and versions write that file, and what to do."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from core import InputError
from diagnosis.explain import known_versions
from doctor import diagnose
from tests.support.inputs import ASCEND

MS1 = ASCEND / "legacy_ascend_1x" / "profiler"


def broken_zip(tmp_path: Path) -> Path:
    """A flat 1.x profiler/ folder zipped at the archive root, its framework_raw of an unknown variant."""
    path = tmp_path / "my_run.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted(MS1.iterdir()):
            text = file.read_text()
            if file.name == "framework_raw_0.csv":
                text = text.replace("full_kernel_name", "kernel_full", 1)
            archive.writestr(f"profiler/{file.name}", text)
    return path


@pytest.mark.parametrize("isolate", [False, True])
def test_an_error_in_an_archive_names_the_file_inside_the_upload(tmp_path: Path, isolate: bool) -> None:
    with pytest.raises(InputError) as caught:
        diagnose(None, broken_zip(tmp_path), isolate=isolate)
    error = caught.value
    assert error.path == "target my_run.zip/profiler/framework_raw_0.csv"
    assert "input-" not in error.message and "perf-doctor-" not in error.message
    assert error.problem == "missing column 'full_op_name'"
    assert (
        "known: MindSpore 2.0-2.4 (task_id" in error.expected
        and "1.x (..., full_kernel_name" in error.expected
    )
    assert "perf-doctor pack RUN_FOLDER" in error.expected and "\n" not in error.message


def test_an_error_in_a_folder_keeps_its_path_and_gains_the_known_versions(tmp_path: Path) -> None:
    folder = tmp_path / "run" / "profiler"
    folder.mkdir(parents=True)
    for file in MS1.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    (folder / "output_timeline_data_0.txt").write_text("op_name,stream_id\nx,1\n")
    with pytest.raises(InputError) as caught:
        diagnose(None, tmp_path / "run", isolate=False)
    assert caught.value.path == "target run/profiler/output_timeline_data_0.txt"
    assert "known: MindSpore 1.x-2.2 (op_name, stream_id, start_time(ms|us)" in caught.value.expected


def test_files_no_reader_opens_have_no_known_versions() -> None:
    assert known_versions("readme.txt") is None
    assert known_versions("op_summary_20251130.csv").startswith("CANN msprof")
    assert known_versions("step_trace_20251130100000123.csv").startswith("CANN msprof")
    assert known_versions("step_trace_time.csv").startswith("MindSpore 2.3+")

"""SQLite exports in the msprof DB schema (MindSpore export_type=db, `msprof --type=db`): read with the
standard library, read-only, into the same canonical model as the text exports; another schema is a
clear error."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

import doctor.cli as cli
from core import InputError
from diagnosis import find_runs, read_folder
from tests.support.inputs import ASCEND

DB = ASCEND / "db"
MS_DB = DB / "ms_infer"
MSPROF_DB = DB / "msprof_infer"
MS_FILE = "ubuntu_2301_20251130090000456_ascend_ms/ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler.db"
CSV_TWIN = ASCEND / "level1" / "infer"  # the same run exported as text
LITE_TWIN = ASCEND / "msprof" / "lite_infer"
COMMON = ["name", "op_type", "core", "start_us", "duration_us", "block_dim", "input_dtypes", "input_shapes"]


def test_a_mindspore_db_only_export_reads_like_its_text_export() -> None:
    run = read_folder(MS_DB)
    assert (run.meta.layout, run.meta.rank, run.meta.config.level) == ("ascend-ms-db", 0, "Level1")
    assert run.meta.files == ("profiler_info_0.json", "ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler.db")
    text = read_folder(CSV_TWIN)
    assert run.kernels[COMMON].equals(text.kernels[COMMON])
    assert run.kernels["op_state"].unique().tolist() == ["static"]
    assert [lim.topic for lim in run.limitations] == ["aic-metrics", "steps"]
    assert run.step_count == 1 and run.steps.empty


def test_an_msprof_db_reads_like_the_op_summary_of_the_same_run() -> None:
    run = read_folder(MSPROF_DB)
    assert (run.meta.layout, run.meta.rank, run.meta.config.aic_metrics) == (
        "cann-msprof-db",
        0,
        "PipeUtilization",
    )
    assert run.meta.files[1] == "msprof_20251130120000789.db"
    assert run.kernels[COMMON].equals(read_folder(LITE_TWIN).kernels[COMMON])


def test_the_database_is_opened_read_only(tmp_path: Path) -> None:
    root = Path(shutil.copytree(MS_DB, tmp_path / "run"))
    db = root / MS_FILE
    db.chmod(stat.S_IRUSR)
    db.parent.chmod(stat.S_IRUSR | stat.S_IXUSR)  # not even a journal could be created beside it
    before = (db.read_bytes(), os.stat(db).st_mtime_ns)
    try:
        assert len(read_folder(root).kernels) == 24
    finally:
        db.parent.chmod(stat.S_IRWXU)
    assert (db.read_bytes(), os.stat(db).st_mtime_ns) == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["ascend_mindspore_profiler.db"]


def test_a_database_of_another_schema_is_a_clear_error(tmp_path: Path) -> None:
    root = Path(shutil.copytree(MS_DB, tmp_path / "run"))
    db = root / MS_FILE
    db.unlink()
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE kernels (name TEXT, duration REAL)")
    with pytest.raises(InputError) as caught:
        read_folder(root)
    error = caught.value
    assert error.path.endswith("ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler.db")
    assert error.problem == (
        "is a SQLite database of another schema (missing TASK, COMPUTE_TASK_INFO, STRING_IDS; holds kernels)"
    )
    assert "msprof DB schema (tables TASK, COMPUTE_TASK_INFO and STRING_IDS)" in error.expected


def test_a_file_that_is_not_sqlite_is_a_clear_error(tmp_path: Path) -> None:
    root = Path(shutil.copytree(MS_DB, tmp_path / "run"))
    (root / MS_FILE).write_bytes(b"this is not a database" * 100)
    with pytest.raises(InputError, match=r"ascend_mindspore_profiler\.db: cannot be read as SQLite"):
        read_folder(root)


def test_a_task_table_without_its_times_is_a_clear_error(tmp_path: Path) -> None:
    root = Path(shutil.copytree(MSPROF_DB, tmp_path / "run"))
    db = next(root.rglob("msprof_*.db"))
    with sqlite3.connect(db) as connection:
        connection.execute("ALTER TABLE TASK RENAME COLUMN endNs TO stopNs")
    with pytest.raises(InputError, match="table TASK has no column endNs"):
        read_folder(root)


def test_text_exports_win_over_a_database_beside_them(tmp_path: Path) -> None:
    root = Path(shutil.copytree(CSV_TWIN, tmp_path / "run"))
    shutil.copy(MS_DB / MS_FILE, next(root.iterdir()) / "ASCEND_PROFILER_OUTPUT")
    assert [c.layout for c in find_runs(root)] == ["ascend-ms"]


@pytest.mark.slow
def test_training_text_against_db_only_inference_compares_on_the_cli(capsys) -> None:
    code = cli.main(["compare", str(ASCEND / "level1" / "train"), str(MS_DB), "--format", "json"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert [i["layout"] for i in report["inputs"]] == ["ascend-ms", "ascend-ms-db"]
    assert report["causes"][0]["id"] == "precision-mismatch"

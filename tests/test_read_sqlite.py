"""SQLite exports in the msprof DB schema (MindSpore export_type=db, `msprof --type=db`): read with the
standard library, read-only, into the same canonical model as the text exports; another schema is a
clear error."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import time
from contextlib import closing
from pathlib import Path

import pytest

import cli.main as cli
from core import InputError
from diagnosis import find_runs, read_folder
from diagnosis.readers import sqlite_guard
from diagnosis.workspace import Workspace
from doctor import diagnose
from sandbox import isolation
from tests.bad_inputs import generate
from tests.support.inputs import ASCEND
from tests.support.isolated import cancel_while_running

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


# ------------------------------------------------------------------------------------------ hostile databases


def _damaged(tmp_path: Path, edit) -> Path:
    """A copy of the real db-only export with `edit(connection)` applied to its database."""
    root = Path(shutil.copytree(MS_DB, tmp_path / "run"))
    with closing(sqlite3.connect(root / MS_FILE)) as connection:
        edit(connection)
        connection.commit()
    return root


def _refusal(root: Path, seconds: float = 10.0) -> InputError:
    """The InputError reading `root` raises, within `seconds` (a join bomb would run for hours)."""
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        read_folder(root)
    assert time.monotonic() - started < seconds
    assert caught.value.path.endswith("ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler.db")
    return caught.value


def test_repeated_string_ids_are_refused_before_the_join(tmp_path: Path) -> None:
    error = _refusal(_damaged(tmp_path, generate._repeat_string_ids))
    assert error.problem == (
        "table STRING_IDS repeats id, which the schema makes unique (324 repeated rows); "
        "a join over it would multiply rows"
    )


def test_tasks_sharing_one_global_task_id_are_refused(tmp_path: Path) -> None:
    error = _refusal(_damaged(tmp_path, generate._share_task_id))
    assert "table COMPUTE_TASK_INFO repeats globalTaskId" in error.problem


def test_tasks_sharing_a_global_task_id_in_task_only_stay_one_row_each(tmp_path: Path) -> None:
    """TASK's globalTaskId is not declared unique: two launches of one task id join one compute row each."""
    root = _damaged(tmp_path, lambda c: c.execute("UPDATE TASK SET globalTaskId = 0 WHERE globalTaskId < 3"))
    kernels = read_folder(root).kernels
    assert len(kernels) == 24  # tasks 1 and 2 now name task 0's compute row: one row each, none multiplied
    first = kernels["name"].iloc[0]
    assert (kernels["name"] == first).sum() == (read_folder(MS_DB).kernels["name"] == first).sum() + 2


def test_one_huge_string_shared_by_many_tasks_is_refused(tmp_path: Path) -> None:
    error = _refusal(_damaged(tmp_path, generate._shared_big_string))
    assert error.problem.startswith("holds a text or blob value over 1 MiB")


def test_the_text_tasks_name_is_budgeted(tmp_path: Path, monkeypatch) -> None:
    """300 KiB under the value limit, named by 24 tasks: 7 MiB of text once copied per task."""
    big = generate.pseudo_text(300 * 1024)

    def edit(connection: sqlite3.Connection) -> None:
        connection.execute("UPDATE STRING_IDS SET value = ? WHERE id = 1", (big,))
        connection.execute("UPDATE COMPUTE_TASK_INFO SET name = 1")

    root = _damaged(tmp_path, edit)
    assert len(read_folder(root).kernels) == 24
    monkeypatch.setenv("PERF_DOCTOR_MAX_PROFILE_FILE_BYTES", str(4 * 1024 * 1024))
    error = _refusal(root)
    assert error.problem.startswith("its compute tasks name 7 MiB of text, more than the 4 MiB allowed")
    assert "PERF_DOCTOR_MAX_PROFILE_FILE_BYTES" in error.expected


def test_rows_are_counted_against_the_budget_before_reading(monkeypatch) -> None:
    monkeypatch.setenv("PERF_DOCTOR_MAX_PROFILE_ROWS", "30")
    error = _refusal(MS_DB)
    assert error.problem == "table STRING_IDS has 36 rows, more than the 30 allowed for one profile table"
    assert "PERF_DOCTOR_MAX_PROFILE_ROWS" in error.expected


def test_text_in_number_columns_is_a_report_not_a_crash(tmp_path: Path) -> None:
    """A text start time drops its task; a text block dim is a missing value (no ArrowInvalid)."""

    def edit(connection: sqlite3.Connection) -> None:
        connection.execute("UPDATE TASK SET startNs = 'soon' WHERE globalTaskId = 0")
        connection.execute("UPDATE COMPUTE_TASK_INFO SET blockNum = 'many' WHERE globalTaskId = 1")
        connection.execute("UPDATE COMPUTE_TASK_INFO SET name = 'text id' WHERE globalTaskId = 2")

    kernels = read_folder(_damaged(tmp_path, edit)).kernels
    assert len(kernels) == 23
    assert kernels["block_dim"].isna().sum() == 1 and kernels["name"].isna().sum() == 1


def test_a_query_past_its_deadline_is_interrupted(monkeypatch) -> None:
    monkeypatch.setenv("PERF_DOCTOR_MAX_QUERY_SECONDS", "0.5")
    database = MS_DB / MS_FILE
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n"
    started = time.monotonic()
    with sqlite_guard.guarded(database) as db, pytest.raises(InputError) as caught:
        db.scalar(endless)
    assert time.monotonic() - started < 5
    assert caught.value.problem == "could not be read within 0.5 s (stopped)"
    assert "PERF_DOCTOR_MAX_QUERY_SECONDS" in caught.value.expected


def test_sqlite_keeps_its_temporary_data_in_memory() -> None:
    with sqlite_guard.guarded(MS_DB / MS_FILE) as db:
        assert [db.scalar(f"PRAGMA {p}") for p in ("temp_store", "query_only", "trusted_schema")] == [2, 1, 0]
        assert db.scalar("PRAGMA cache_size") == -sqlite_guard.CACHE_KIB


def test_the_facade_decodes_a_database_in_the_isolated_child(monkeypatch) -> None:
    """With isolation (the default) the facade reads each profile, a database too, in a child process."""
    real = isolation.run_isolated
    calls: list[tuple[str, str, bool]] = []

    def recording(task, func, *args, **kwargs):
        calls.append((func.__name__, task.subject, task.warm))
        return real(task, func, *args, **kwargs)

    monkeypatch.setattr(isolation, "run_isolated", recording)
    report = diagnose(ASCEND / "level1" / "train", MS_DB)
    assert [i.layout for i in report.document.inputs] == ["ascend-ms", "ascend-ms-db"]
    assert sorted(calls) == [("_read_profile_child", "ms_infer", True),
                             ("_read_profile_child", "train", True)]  # fmt: skip


def test_the_isolated_readers_refusal_names_the_database(tmp_path: Path) -> None:
    """The refusal comes back from the isolated reader (the facade's path) naming the database."""
    root = _damaged(tmp_path, generate._repeat_string_ids)
    with Workspace(tmp_path) as space, pytest.raises(InputError) as caught:
        isolation.read_profile(root, rank=None, source="run", scheduler=None, workspace=space)
    assert caught.value.path.endswith("ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler.db")
    assert "table STRING_IDS repeats id" in caught.value.problem


def test_cancelling_a_request_kills_its_sqlite_decoder(tmp_path: Path) -> None:
    """A cancelled web request kills the child decoding its database at once (issue 33: cancelling did
    not stop the join bomb); 390,000 real-shaped tasks take seconds to decode, the kill far less."""

    def many_tasks(connection: sqlite3.Connection) -> None:
        rows = "WITH RECURSIVE n(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM n WHERE i < 390099) "
        connection.execute(
            rows + "INSERT INTO TASK SELECT i * 1000, i * 1000 + 500, 0, 0, i, 1, 0, 0, 2, i, 1 FROM n"
        )
        connection.execute(
            rows + "INSERT INTO COMPUTE_TASK_INFO SELECT 1, i, 8, 0, 0, 2, 3, 4, 5, 3, 6, 5, 7, 8, 9 FROM n"
        )

    root = _damaged(tmp_path, many_tasks)
    token = isolation.Cancellation()
    outcome: list[InputError] = []

    def work() -> None:
        try:
            with Workspace(tmp_path) as space:
                isolation.read_profile(root, rank=None, source="run", scheduler=None, workspace=space)
        except InputError as error:
            outcome.append(error)

    assert cancel_while_running(work, token) < 5
    assert [error.problem for error in outcome] == ["the request was cancelled"]

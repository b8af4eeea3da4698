"""`perf-doctor triage INBOX`: a mixed inbox of good, broken and ambiguous submissions diagnosed in
parallel processes; CSV (formula-safe) and JSON rows, stored cases, crashes and timeouts recorded."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

import cli.main as cli
import desk.triage.batch as batch
from desk.cases import SqliteCaseStore
from desk.triage.view import COLUMN_NAMES
from tests.support.inbox import FORMULA_NAME, MODEL, build_inbox

EXPECTED_KINDS = {
    FORMULA_NAME: "single",
    "broken.zip": "error",
    "empty": "ambiguous",
    "good_pair": "pair",
    "model_only.mindir": "model",
    "pair_and_model": "pair+model",
    "single_run.tar.gz": "single",
    "three_runs": "ambiguous",
}


@pytest.fixture(scope="module")
def inbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inbox(tmp_path_factory.mktemp("triage"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _check_rows(rows: list[dict]) -> dict[str, dict]:
    """One row per submission with the expected kind and, where it failed, the reason."""
    by_name = {row["submission"].lstrip("'"): row for row in rows}
    assert [row["submission"].lstrip("'") for row in rows] == list(EXPECTED_KINDS)
    assert {name: row["kind"] for name, row in by_name.items()} == EXPECTED_KINDS
    assert "broken.zip" in by_name["broken.zip"]["message"] and by_name["broken.zip"]["verdict"] == ""
    assert by_name["empty"]["message"].startswith("no profiler run and no .mindir found (found: readme.txt)")
    assert by_name["three_runs"]["message"].startswith("3 runs (a, b, c) and their names do not say")
    good = by_name["good_pair"]
    assert (good["top_cause"], good["severity"], good["layouts"]) == ("precision-mismatch", "high", "cpu-ms")
    assert good["message"] == "roles from names: baseline train_amp_o2_graph, target infer_fp32_graph"
    assert by_name["pair_and_model"]["layouts"] == "cpu-ms, mindir"
    assert all(
        row["status"] == "new" and row["verdict"] for row in rows if row["kind"] not in ("error", "ambiguous")
    )
    return by_name


@pytest.mark.slow
def test_a_mixed_inbox_gives_one_csv_row_per_submission_and_exit_code_0(inbox, tmp_path, capsys):
    out = tmp_path / "triage.csv"
    code, stdout, err = run(capsys, "triage", str(inbox), "--out", str(out), "--jobs", "2")
    assert code == 0 and stdout == ""
    assert "triage: 100%" in err and "8/8" in err  # the progress bar went to stderr
    assert err.rstrip().endswith("perf-doctor: 8 submissions: 5 diagnosed, 1 error, 2 ambiguous")
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert list(rows[0]) == list(COLUMN_NAMES)
    by_name = _check_rows(rows)
    assert by_name[FORMULA_NAME]["submission"] == "'" + FORMULA_NAME  # would run as a formula otherwise
    assert float(by_name["good_pair"]["confidence"]) > 0.5  # numbers stay numbers
    assert all(row["case"] == "" for row in rows)  # not stored without --store


@pytest.mark.slow
def test_json_rows_and_stored_cases_that_reopen(inbox, tmp_path, capsys):
    out, db = tmp_path / "triage.json", tmp_path / "cases.sqlite3"
    code, _, _ = run(
        capsys, "triage", str(inbox), "--out", str(out), "--db", str(db), "--quiet", "--jobs", "2"
    )
    assert code == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["columns"] == list(COLUMN_NAMES)
    by_name = _check_rows(document["rows"])
    assert by_name[FORMULA_NAME]["submission"] == FORMULA_NAME  # JSON keeps the raw value
    store = SqliteCaseStore(db)
    for name, row in by_name.items():
        case = store.get(row["case"])
        assert case is not None and case.summary.source == name and case.summary.kind == row["kind"]
        assert (case.report is None) == (row["kind"] in ("error", "ambiguous"))
        assert case.summary.message == row["message"]
    assert store.get(by_name["model_only.mindir"]["case"]).figure is not None


@pytest.mark.slow
def test_store_uses_the_configured_database(inbox, tmp_path, capsys, monkeypatch):
    db = tmp_path / "configured.sqlite3"
    monkeypatch.setenv("PERF_DOCTOR_CASE_DB", str(db))
    code, stdout, _ = run(capsys, "triage", str(inbox), "--store", "--quiet")
    assert code == 0 and stdout.startswith(",".join(COLUMN_NAMES))  # CSV on stdout without --out
    assert len(SqliteCaseStore(db).list()) == len(EXPECTED_KINDS)


def test_a_vanished_submission_is_an_error():
    result = batch.triage_submission("/nonexistent/perf-doctor/submission")
    assert result["kind"] == "error" and result["message"] == "submission: was not found"


def test_usage_problems_exit_2_before_any_work(tmp_path, capsys, monkeypatch):
    for argv, problem in [
        (["triage", str(tmp_path / "missing")], "is not a folder"),
        (["triage", str(tmp_path), "--jobs", "0"], "must be positive"),
        (["triage", str(tmp_path), "--out", str(tmp_path / "t.xlsx")], "unknown suffix"),
        (["triage", str(tmp_path), "--out", str(tmp_path / "no" / "t.csv")], "does not exist"),
    ]:
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and problem in err and err.count("\n") == 1, argv
    for name in ("PERF_DOCTOR_CASE_DB", "HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    code, _, err = run(capsys, "triage", str(tmp_path), "--store")
    assert code == 2 and "no case database is configured" in err


def test_an_empty_inbox_is_done_with_a_header_only(tmp_path, capsys):
    code, out, err = run(capsys, "triage", str(tmp_path), "--quiet")
    assert (code, out) == (0, ",".join(COLUMN_NAMES) + "\n") and "no submissions found" in err


def test_a_bug_on_one_submission_is_recorded_not_raised(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero\nsecond line")

    monkeypatch.setattr(batch, "diagnose", broken)
    model = Path(shutil.copy(MODEL, tmp_path / "model.mindir"))
    result = batch.triage_submission(str(model))
    assert result == {
        "kind": "error",
        "message": "internal error: ZeroDivisionError: division by zero",
        "report": None,
        "figure": None,
    }


# ------------------------------------------------------------------------------- crashes and timeouts


def flaky_work(item: str, lang: str) -> dict:
    """A worker (run in the child process) that crashes, hangs or answers, by item name."""
    if item == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    if item == "exit":
        os._exit(3)
    if item == "hang":
        time.sleep(120)
    return {"kind": "single", "message": f"{item} in {lang}", "report": None, "figure": None}


@pytest.mark.slow
def test_a_crash_or_timeout_of_one_submission_is_recorded_and_the_rest_go_on():
    items = ["ok1", "crash", "hang", "exit", "ok2"]
    done: list[int] = []
    started = time.monotonic()
    results = batch.run_parallel(
        items, jobs=2, timeout=3.0, lang="zh", work=flaky_work, on_done=lambda i, _: done.append(i)
    )
    assert time.monotonic() - started < 60
    assert [r["message"] for r in results] == [
        "ok1 in zh",
        "the worker process crashed (SIGKILL)",
        "no result within 3 s: stopped",
        "the worker process ended without a result (exit code 3)",
        "ok2 in zh",
    ]
    assert [r["kind"] for r in results] == ["single", "error", "error", "error", "single"]
    assert sorted(done) == list(range(len(items)))

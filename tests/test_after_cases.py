"""Cases receive their after-the-fix run: the store keeps resolved and remaining causes and both gains,
the Triage table shows them, a version-1 database gains the columns, and the CLI and the Triage tab's
handler attach an after run to an existing case. Real MindSpore CPU fixtures throughout."""

from __future__ import annotations

import sqlite3
import zipfile
from functools import cache
from pathlib import Path

import pytest

import cli.main as cli
from core import InputError
from desk.cases import CaseBook, CaseMeta, SqliteCaseStore, summarize
from desk.cases.sqlite import SCHEMA_VERSION
from desk.triage import view as triage
from doctor import Report, diagnose
from doctor.model import ReportDocument
from tests.support.inputs import CPU

TRAIN, TARGET, AFTER = CPU / "train_fp32_graph", CPU / "infer_fp32_pynative", CPU / "infer_fp32_graph"


@cache
def first() -> Report:
    return diagnose(TRAIN, TARGET, isolate=False)


@cache
def looped() -> Report:
    return diagnose(TRAIN, TARGET, after=AFTER, isolate=False)


def zipped(folder: Path, dest: Path) -> Path:
    """A real profile folder as the .zip a user uploads."""
    archive = dest / f"{folder.name}.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                out.write(path, path.relative_to(folder.parent).as_posix())
    return archive


@pytest.mark.slow
def test_summary_of_a_report_with_an_after_run_names_resolved_and_remaining():
    facts = summarize(looped().document)
    section = looped().data["after"]
    assert (facts["resolved"], facts["remaining"]) == ("execution-mode-mismatch", "")
    assert facts["gain_ms"] == section["gain_ms_per_step"]
    assert facts["predicted_gain_ms"] == section["predicted_gain_ms_per_step"]
    plain = summarize(first().document)
    assert (plain["resolved"], plain["remaining"], plain["gain_ms"], plain["predicted_gain_ms"]) == (
        "",
        "",
        None,
        None,
    )


def test_remaining_and_worse_causes_are_listed_as_remaining():
    data = looped().to_dict()
    cause = data["after"]["causes"][0]
    data["after"]["causes"] = [
        {**cause, "status": "remaining"},
        {**cause, "id": "missing-warmup", "status": "worse"},
    ]
    facts = summarize(ReportDocument.model_validate(data))
    assert (facts["resolved"], facts["remaining"]) == ("", "execution-mode-mismatch, missing-warmup (worse)")


def test_a_case_receives_its_after_run_and_the_triage_row_shows_it(tmp_path):
    book = CaseBook(SqliteCaseStore(tmp_path / "cases.sqlite3"))
    case_id = book.record(first())
    before = book.list()[0]
    assert (before.resolved, before.remaining, before.gain_ms) == ("", "", None)
    summary = book.attach_after(case_id, looped())
    assert (summary.case_id, summary.resolved, summary.remaining) == (case_id, "execution-mode-mismatch", "")
    assert summary.gain_ms == looped().data["after"]["gain_ms_per_step"]
    assert book.open(case_id).report["after"]["causes"][0]["status"] == "resolved"
    row = triage.triage_table(book.list()).frame.iloc[0]
    assert (row["resolved"], row["remaining"]) == ("execution-mode-mismatch", "")
    assert row["gain_ms"] == pytest.approx(summary.gain_ms, abs=1e-3)
    assert row["predicted_gain_ms"] == pytest.approx(summary.predicted_gain_ms, abs=1e-3)


def test_an_after_run_of_other_inputs_or_without_after_is_refused(tmp_path):
    book = CaseBook(SqliteCaseStore(tmp_path / "cases.sqlite3"))
    case_id = book.record(diagnose(TRAIN, CPU / "infer_trainmode_graph", isolate=False))
    with pytest.raises(InputError, match="not of the case's baseline and target"):
        book.attach_after(case_id, looped())
    with pytest.raises(InputError, match="no after-the-fix run"):
        book.attach_after(case_id, first())


def test_a_version_1_database_gains_the_after_columns(tmp_path):
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE cases (id TEXT PRIMARY KEY, created REAL NOT NULL, updated REAL NOT NULL,"
        " source TEXT NOT NULL, kind TEXT NOT NULL, layouts TEXT NOT NULL, verdict TEXT NOT NULL,"
        " top_cause TEXT, severity TEXT, confidence REAL, recoverable_ms REAL,"
        " status TEXT NOT NULL DEFAULT 'new', note TEXT NOT NULL DEFAULT '',"
        " message TEXT NOT NULL DEFAULT '', report BLOB, figure BLOB);"
        "INSERT INTO cases (id, created, updated, source, kind, layouts, verdict) VALUES"
        " ('AAAAAAAAAAAAAAAAAAAAAA', 1.0, 1.0, 'old', 'pair', 'cpu-ms', 'an old verdict');"
        "PRAGMA user_version = 1;"
    )
    conn.close()
    store = SqliteCaseStore(path)
    old = store.list()[0]
    assert (old.verdict, old.resolved, old.remaining, old.gain_ms) == ("an old verdict", "", "", None)
    new = store.get(store.put(looped().data, CaseMeta()))
    assert new.summary.resolved == "execution-mode-mismatch"
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


@pytest.mark.slow
def test_the_triage_tab_attaches_an_after_run_to_a_case_with_kept_uploads(tmp_path):
    book = CaseBook(SqliteCaseStore(tmp_path / "cases.sqlite3"), keep_uploads=True)
    base, target = zipped(TRAIN, tmp_path), zipped(TARGET, tmp_path)
    report = diagnose([str(base)], [str(target)], isolate=False)
    case_id = book.record(report, given=[("baseline", [str(base)]), ("target", [str(target)])])
    message = triage.attach_after(book, case_id, [str(zipped(AFTER, tmp_path))], "en")
    assert case_id in message and "resolved execution-mode-mismatch" in message
    summary = book.list()[0]
    assert (summary.resolved, summary.remaining) == ("execution-mode-mismatch", "")


def test_attaching_without_kept_uploads_says_why(tmp_path):
    book = CaseBook(SqliteCaseStore(tmp_path / "cases.sqlite3"))
    case_id = book.record(first())
    with pytest.raises(InputError, match="kept no copy of its baseline and target"):
        triage.attach_after(book, case_id, [str(AFTER)], "en")


@pytest.mark.slow
def test_cli_compare_after_case_stores_the_after_run_on_the_case(tmp_path, capsys):
    db = tmp_path / "cases.sqlite3"
    book = CaseBook(SqliteCaseStore(db))
    case_id = book.record(first())
    code = cli.main(
        [
            "compare",
            str(TRAIN),
            str(TARGET),
            "--after",
            str(AFTER),
            "--case",
            case_id,
            "--db",
            str(db),
            "-o",
            str(tmp_path / "r.md"),
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0 and f"case {case_id}: resolved execution-mode-mismatch" in err
    assert book.list()[0].resolved == "execution-mode-mismatch"


@pytest.mark.slow
def test_cli_case_without_after_is_exit_2(tmp_path, capsys):
    code = cli.main(["compare", str(TRAIN), str(TARGET), "--case", "A" * 22, "--db", str(tmp_path / "c.db")])
    _, err = capsys.readouterr()
    assert code == 2 and "--case needs --after" in err

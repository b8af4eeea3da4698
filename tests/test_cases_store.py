"""The case store and book: create, reopen by id, list and filter, update, delete, retention, kept
uploads, links, id validation and several writers (threads and processes) on one SQLite file."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat
import threading
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import desk.cases.book as book_module
from core.errors import InputError
from desk.cases import (
    NO_CAUSE,
    CaseBook,
    CaseFilter,
    CaseMeta,
    CaseNotFound,
    SqliteCaseStore,
    Upload,
    new_case_id,
    parse_case_id,
    summarize,
)
from doctor import diagnose
from doctor.config import AppConfig
from tests.support.inputs import CPU, MINDIR
from tests.support.reports import NOW, model_report, pair_report, single_report


@pytest.fixture
def store(tmp_path: Path) -> SqliteCaseStore:
    return SqliteCaseStore(tmp_path / "cases" / "cases.sqlite3")


# --------------------------------------------------------------------------------- create and reopen


def test_a_case_reopens_by_id_with_the_full_report_and_its_summary(store):
    report = pair_report()
    case_id = store.put(report.data, CaseMeta())
    case = store.get(case_id)
    assert case is not None and case.report == report.to_dict()
    summary = case.summary
    assert summary.case_id == case_id and summary.status == "new" and summary.note == ""
    assert (summary.kind, summary.layouts, summary.top_cause) == ("pair", "cpu-ms", "precision-mismatch")
    assert (summary.severity, summary.confidence) == (
        report.causes[0].severity,
        report.causes[0].confidence,
    )
    assert summary.verdict == report.verdict
    assert summary.source == "baseline: train_amp_o2_graph · target: infer_fp32_graph"
    assert abs((summary.created - datetime.now(timezone.utc)).total_seconds()) < 60


def test_the_store_survives_reopening_the_file(tmp_path):
    path = tmp_path / "cases.sqlite3"
    case_id = SqliteCaseStore(path).put(single_report().data, CaseMeta(source="user 42"))
    again = SqliteCaseStore(path).get(case_id)
    assert again is not None and again.summary.source == "user 42" and again.summary.kind == "single"


@pytest.mark.slow
def test_a_model_case_keeps_its_chain_figure(store):
    report = model_report()
    case_id = CaseBook(store).record(report)
    case = store.get(case_id)
    assert case.summary.kind == "model" and case.summary.layouts == "mindir"
    assert case.figure == report.chain_figure.to_json()


def test_an_undiagnosed_submission_is_kept_with_its_reason(store):
    case_id = store.put(None, CaseMeta(source="broken.zip", kind="error", message="not a zip"))
    case = store.get(case_id)
    assert case.report is None and case.summary.kind == "error" and case.summary.message == "not a zip"
    assert case.summary.top_cause is None and case.summary.verdict == ""


def test_unknown_ids_are_none_and_ids_are_unguessable(store):
    assert store.get(new_case_id()) is None
    ids = {store.put(None, CaseMeta(kind="error")) for _ in range(20)}
    assert len(ids) == 20 and all(len(i) == 22 for i in ids)


def test_the_database_is_private_and_in_wal_mode(store):
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# ---------------------------------------------------------------------------------- list and filter


def _three_cases(store: SqliteCaseStore) -> list[str]:
    """Oldest first: a pair (precision-mismatch), a single run and an error without a cause."""
    return [
        store.put(pair_report().data, CaseMeta(created=NOW - timedelta(hours=3))),
        store.put(single_report().data, CaseMeta(created=NOW - timedelta(hours=2))),
        store.put(None, CaseMeta(kind="error", message="broken", created=NOW - timedelta(hours=1))),
    ]


def test_list_is_newest_first_limited_and_filtered(store):
    pair, single, broken = _three_cases(store)
    assert [s.case_id for s in store.list()] == [broken, single, pair]
    assert [s.case_id for s in store.list(limit=2)] == [broken, single]
    assert [s.case_id for s in store.list(CaseFilter(top_cause="precision-mismatch"))] == [pair]
    assert [s.case_id for s in store.list(CaseFilter(top_cause=NO_CAUSE))] == [
        s.case_id for s in store.list() if s.top_cause is None
    ]
    assert broken in [s.case_id for s in store.list(CaseFilter(top_cause=NO_CAUSE))]
    high = store.list(CaseFilter(severity="high"))
    assert pair in [s.case_id for s in high] and all(s.severity == "high" for s in high)
    store.update(single, status="answered")
    assert [s.case_id for s in store.list(CaseFilter(status="answered"))] == [single]
    assert store.list(CaseFilter(status="answered", top_cause="precision-mismatch")) == []


def test_filter_values_are_data_not_sql(store):
    _three_cases(store)
    assert store.list(CaseFilter(top_cause="x' OR '1'='1")) == []
    assert store.list(CaseFilter(status="new' --")) == []
    assert len(store.list()) == 3


# -------------------------------------------------------------------------------- update and delete


def test_update_sets_note_and_status_and_keeps_what_is_not_given(store):
    case_id = store.put(pair_report().data, CaseMeta())
    hostile = "'); DROP TABLE cases; --\n<img src=x onerror=alert(1)>"
    summary = store.update(case_id, note=hostile, status="in progress")
    assert (summary.note, summary.status) == (hostile, "in progress")
    summary = store.update(case_id, status="answered")
    assert (summary.note, summary.status) == (hostile, "answered")
    assert summary.updated >= summary.created
    assert len(store.list()) == 1


def test_update_refuses_bad_values_and_unknown_cases(store):
    case_id = store.put(None, CaseMeta(kind="error"))
    with pytest.raises(InputError, match="unknown case status"):
        store.update(case_id, status="closed")
    with pytest.raises(InputError, match="at most 2000"):
        store.update(case_id, note="x" * 2001)
    with pytest.raises(CaseNotFound):
        store.update(new_case_id(), status="answered")
    assert store.update(case_id, note="a\x00b\r\nc").note == "ab\nc"


def test_delete_removes_the_case_and_its_uploads(store):
    meta = CaseMeta(kind="error", uploads=(Upload("submission", "a.zip", b"PK\x05\x06" + bytes(18)),))
    case_id = store.put(None, meta)
    assert store.read_upload(case_id, "submission", "a.zip") is not None
    assert store.delete(case_id) is True
    assert store.get(case_id) is None and store.read_upload(case_id, "submission", "a.zip") is None
    assert store.delete(case_id) is False
    book = CaseBook(store)
    with pytest.raises(CaseNotFound):
        book.delete(case_id)


# ------------------------------------------------------------------------------------------ retention


def test_purge_older_than_removes_only_older_cases(store):
    old = store.put(None, CaseMeta(kind="error", created=NOW - timedelta(days=40)))
    recent = store.put(None, CaseMeta(kind="error", created=NOW - timedelta(days=1)))
    assert store.purge_older_than(NOW - timedelta(days=30)) == 1
    assert store.get(old) is None and store.get(recent) is not None


def test_retention_is_applied_when_the_book_opens_and_then_periodically(tmp_path, monkeypatch):
    path = tmp_path / "cases.sqlite3"
    store = SqliteCaseStore(path)
    old = store.put(None, CaseMeta(kind="error", created=NOW - timedelta(days=31)))
    book = CaseBook.from_config(AppConfig(case_db=str(path), case_retention_days=30))
    with pytest.raises(CaseNotFound):
        book.open(old)
    later = store.put(None, CaseMeta(kind="error", created=NOW - timedelta(days=31)))
    assert book.purge_due() == 0  # purged less than an hour ago
    monkeypatch.setattr(book_module, "PURGE_EVERY_S", 0.0)
    assert [s.case_id for s in book.list()] == []
    assert store.get(later) is None


def test_retention_zero_keeps_cases(tmp_path):
    path = tmp_path / "cases.sqlite3"
    old = SqliteCaseStore(path).put(None, CaseMeta(kind="error", created=NOW - timedelta(days=3650)))
    book = CaseBook.from_config(AppConfig(case_db=str(path), case_retention_days=0))
    assert book.purge_expired() == 0 and book.open(old).summary.case_id == old


# ------------------------------------------------------------------------------------ ids and links


def test_book_validates_ids_before_the_store_sees_them(store):
    book = CaseBook(store)
    case_id = book.record(pair_report())
    assert book.open(f"  {case_id}\n").summary.case_id == case_id
    for bad in ("", None, case_id[:-1], case_id + "A", "<script>alert(1)</script>", "../" * 8, 42):
        with pytest.raises(InputError) as error:
            book.open(bad)
        assert "script" not in error.value.message
    with pytest.raises(CaseNotFound, match="expired or been deleted"):
        book.open(new_case_id())


@given(st.text(max_size=40))
def test_only_22_url_safe_characters_are_a_case_id(raw):
    valid = len(raw.strip()) == 22 and all(c.isascii() and (c.isalnum() or c in "-_") for c in raw.strip())
    if valid:
        assert parse_case_id(raw) == raw.strip()
    else:
        with pytest.raises(InputError):
            parse_case_id(raw)


def test_links_use_the_public_url_else_the_request_url_else_a_relative_one(store):
    case_id = new_case_id()
    assert CaseBook(store).link(case_id, "http://host:7860/") == f"http://host:7860/?case={case_id}"
    assert CaseBook(store).link(case_id, None) == f"?case={case_id}"
    public = CaseBook(store, public_url="https://doctor.example.org/app/")
    assert public.link(case_id, "http://internal:7860") == f"https://doctor.example.org/app/?case={case_id}"


# -------------------------------------------------------------------------------------------- uploads


def _zip(path: Path, size: int) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("run/kernel_details.csv", os.urandom(size))
    return path


def test_uploads_are_not_kept_unless_the_operator_turns_it_on(store, tmp_path):
    archive = _zip(tmp_path / "run.zip", 100)
    case_id = CaseBook(store).record(pair_report(), given=[("baseline", [str(archive)])])
    assert store.get(case_id).uploads == ()


def test_kept_uploads_are_archives_and_models_within_the_cap(store, tmp_path):
    small, big = _zip(tmp_path / "small.zip", 1000), _zip(tmp_path / "big.zip", 50_000)
    loose = [tmp_path / "a.csv", tmp_path / "b.csv"]
    for path in loose:
        path.write_text("x", encoding="utf-8")
    model = MINDIR / "conv_bn_relu_eval.mindir"
    book = CaseBook(store, keep_uploads=True, upload_max_bytes=20_000 + model.stat().st_size)
    given = [
        ("baseline", [str(small)]),
        ("target", [str(p) for p in loose]),  # a folder upload: loose files, not an archive
        ("mindir", str(model)),
        ("other", [str(big)]),  # over what is left of the cap
    ]
    case_id = book.record(pair_report(), given=given)
    kept = store.get(case_id).uploads
    assert [(role, name) for role, name, _ in kept] == [("baseline", "small.zip"), ("mindir", model.name)]
    assert store.read_upload(case_id, "baseline", "small.zip") == small.read_bytes()


# ---------------------------------------------------------------------------------- bad store paths


def test_a_folder_or_a_foreign_file_as_database_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match=r"PERF_DOCTOR_CASE_DB.*is a folder"):
        SqliteCaseStore(tmp_path)
    foreign = tmp_path / "notes.txt"
    foreign.write_bytes(b"this is not a database at all, just text " * 50)
    with pytest.raises(InputError, match=r"PERF_DOCTOR_CASE_DB.*case database"):
        SqliteCaseStore(foreign)


def test_a_database_from_a_newer_version_is_refused(tmp_path):
    path = tmp_path / "cases.sqlite3"
    SqliteCaseStore(path)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(InputError, match="newer than this perf-doctor"):
        SqliteCaseStore(path)


# ------------------------------------------------------------------------------ concurrent writers


def _write_cases(path: str, worker: int, count: int, report: dict | None) -> list[str]:
    """Writer body for threads and processes: `count` cases, each updated once."""
    store = SqliteCaseStore(path)
    ids = []
    for i in range(count):
        case_id = store.put(report, CaseMeta(source=f"w{worker}-{i}", kind=None if report else "error"))
        store.update(case_id, note=f"note {worker}-{i}", status="in progress")
        ids.append(case_id)
    return ids


def _process_writer(path: str, worker: int, count: int, report: dict | None, queue) -> None:
    queue.put(_write_cases(path, worker, count, report))


def _check_all_written(path: Path, ids: list[str], total: int) -> None:
    store = SqliteCaseStore(path)
    assert len(ids) == len(set(ids)) == total
    listed = store.list(limit=total + 10)
    assert {s.case_id for s in listed} == set(ids)
    assert all(s.status == "in progress" and s.note == f"note {s.source[1:]}" for s in listed)


@pytest.mark.slow
def test_threads_writing_one_file_lose_nothing(tmp_path):
    path = tmp_path / "cases.sqlite3"
    SqliteCaseStore(path)
    results: list[list[str]] = []
    report = pair_report().to_dict()
    threads = [
        threading.Thread(target=lambda w=w: results.append(_write_cases(str(path), w, 15, report)))
        for w in range(8)
    ]
    reader = SqliteCaseStore(path)
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        reader.list(limit=50)  # readers are not blocked by writers in WAL mode
    for thread in threads:
        thread.join()
    _check_all_written(path, [i for ids in results for i in ids], 8 * 15)


@pytest.mark.slow
def test_processes_writing_one_file_lose_nothing(tmp_path):
    path = tmp_path / "cases.sqlite3"
    SqliteCaseStore(path)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    workers = [ctx.Process(target=_process_writer, args=(str(path), w, 20, None, queue)) for w in range(4)]
    for worker in workers:
        worker.start()
    ids = [i for _ in workers for i in queue.get(timeout=120)]
    for worker in workers:
        worker.join(30)
        assert worker.exitcode == 0
    _check_all_written(path, ids, 4 * 20)


# ------------------------------------------------------------------------------------------ summary


@pytest.mark.slow
def test_summary_names_the_kind_with_a_model_and_the_layouts():
    report = diagnose(
        CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", MINDIR / "conv_bn_relu_eval.mindir"
    )
    facts = summarize(report.document)
    assert facts["kind"] == "pair+model" and facts["layouts"] == "cpu-ms, mindir"
    assert summarize(single_report().document)["kind"] == "single"
    assert summarize(None)["kind"] == "error"

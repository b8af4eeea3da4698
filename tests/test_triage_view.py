"""The triage table, the counts per top cause, filters, banners and reopened reports (no server)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from core.errors import InputError
from desk.cases import NO_CAUSE, CaseBook, CaseFilter, CaseMeta, SqliteCaseStore
from desk.triage import view
from desk.triage.output import output_format, rows_csv, rows_json
from desk.triage.view import COLUMN_NAMES, TABLE_COLUMNS, TRIAGE_COLUMNS
from tests.support.inputs import XSS
from tests.support.reports import NOW, model_report, pair_report, single_report


@pytest.fixture
def book(tmp_path) -> CaseBook:
    return CaseBook(SqliteCaseStore(tmp_path / "cases.sqlite3"))


def _fill(book: CaseBook) -> dict[str, str]:
    """Five cases: two pairs (one answered), a single run, a model and a broken submission."""
    store, figure = book.store, model_report().chain_figure.to_json()
    ids = {
        "pair1": store.put(pair_report().data, CaseMeta(created=NOW - timedelta(hours=5))),
        "pair2": store.put(pair_report().data, CaseMeta(created=NOW - timedelta(hours=4))),
        "single": store.put(single_report().data, CaseMeta(created=NOW - timedelta(hours=3))),
        "model": store.put(model_report().data, CaseMeta(figure=figure, created=NOW - timedelta(hours=2))),
        "broken": store.put(None, CaseMeta(kind="error", message=XSS, created=NOW - timedelta(hours=1))),
    }
    store.update(ids["pair2"], status="answered", note="sent the AMP fix")
    return ids


@pytest.mark.slow
def test_triage_table_has_the_columns_with_text_and_number_types_only(book):
    ids = _fill(book)
    table, _ = view.list_cases(book, "", "", "", 100)
    kinds = dict(TRIAGE_COLUMNS)
    assert sorted(TABLE_COLUMNS) == sorted(COLUMN_NAMES), "the tab shows every column, in its own order"
    assert list(table.frame.columns) == list(TABLE_COLUMNS) and table.datatype == [
        kinds[name] for name in TABLE_COLUMNS
    ]
    assert set(table.datatype) == {"str", "number"}
    rows = {row["case"]: row for row in table.frame.to_dict(orient="records")}
    assert list(table.frame["case"]) == [ids[k] for k in ("broken", "model", "single", "pair2", "pair1")]
    pair = rows[ids["pair2"]]
    assert (pair["kind"], pair["layouts"], pair["top_cause"], pair["severity"]) == (
        "pair",
        "cpu-ms",
        "precision-mismatch",
        "high",
    )
    assert (pair["status"], pair["note"]) == ("answered", "sent the AMP fix")
    assert pair["confidence"] == round(pair_report().causes[0].confidence, 3)
    assert pair["recoverable_ms"] is None  # missing numbers are empty, not NaN
    broken = rows[ids["broken"]]
    assert (broken["kind"], broken["message"], broken["top_cause"]) == ("error", XSS, "")
    assert pair["when"].endswith("Z") and len(pair["when"]) == len("2026-01-31 14:05:09Z")


@pytest.mark.slow
def test_groups_count_cases_per_top_cause_by_status(book):
    _fill(book)
    _, groups = view.list_cases(book, None, None, None, None)
    assert set(groups.datatype) == {"str", "number"}
    rows = groups.frame.to_dict(orient="records")
    first = rows[0]
    assert first["top_cause"] == "precision-mismatch" and first["cases"] >= 2
    assert first["answered"] == 1 and first["new"] == first["cases"] - 1 and first["worst_severity"] == "high"
    assert sum(row["cases"] for row in rows) == 5
    counts = [row["cases"] for row in rows]
    assert counts == sorted(counts, reverse=True)
    no_cause = next(row for row in rows if row["top_cause"] == NO_CAUSE)  # the broken submission at least
    assert no_cause["cases"] >= 1 and no_cause["worst_severity"] == ""


def test_filters_narrow_the_table_and_refuse_unknown_values(book):
    ids = _fill(book)
    table, groups = view.list_cases(book, "precision-mismatch", "high", "answered", 10)
    assert list(table.frame["case"]) == [ids["pair2"]]
    assert groups.frame.to_dict(orient="records")[0]["cases"] == 1
    table, _ = view.list_cases(book, NO_CAUSE, "", "", 10)
    assert ids["broken"] in list(table.frame["case"])
    assert len(view.list_cases(book, "", "", "", 2)[0].frame) == 2
    for cause, severity, status, limit, problem in [
        ("no-such-rule", "", "", 10, "unknown cause"),
        ("", "severe", "", 10, "unknown severity"),
        ("", "", "closed", 10, "unknown status"),
        ("", "", "", 0, "positive whole number"),
        ("", "", "", 2.5, "positive whole number"),
    ]:
        with pytest.raises(InputError, match=problem):
            view.list_cases(book, cause, severity, status, limit)
    assert view.read_filters(None, None, None) == CaseFilter()


def test_a_clicked_row_gives_its_case_status_and_note(book):
    ids = _fill(book)
    table, _ = view.list_cases(book, "", "", "answered", 10)
    row = list(table.frame.iloc[0])
    assert view.selection(row) == (ids["pair2"], "answered", "sent the AMP fix")
    assert view.selection(None) == ("", "new", "")
    assert view.selection(["too", "short"]) == ("", "new", "")


def test_save_and_delete_confirm_with_escaped_values(book):
    ids = _fill(book)
    message = view.save_case(book, ids["single"], "in progress", XSS, "en")
    assert message == f"Case `{ids['single']}` saved: in progress."
    assert book.open(ids["single"]).summary.note == XSS
    assert view.delete_case(book, ids["single"], "zh") == f"案例 `{ids['single']}` 已删除。"
    with pytest.raises(InputError, match="no case has this id"):
        view.delete_case(book, ids["single"], "en")


def test_a_reopened_case_is_the_stored_report_with_its_figure_and_a_banner(book):
    ids = _fill(book)
    book.update(ids["model"], note=XSS)
    report, banner, link = view.reopen_case(book, ids["model"], "en", "http://host:7860", staff=True)
    assert report.to_dict() == model_report().to_dict() and report.chain_figure is not None
    assert link == f"http://host:7860/?case={ids['model']}"
    assert banner.startswith(f"Case `{ids['model']}` of ") and "status: new" in banner
    assert "<img" not in banner and "&lt;img" in banner
    _, public, _ = view.reopen_case(
        book, ids["model"], "en", "http://host:7860"
    )  # not staff: no triage words
    assert public.startswith(f"Case `{ids['model']}` of ") and "status" not in public and "img" not in public


def test_an_undiagnosed_or_foreign_case_cannot_be_shown_but_says_why(book):
    ids = _fill(book)
    with pytest.raises(InputError, match="was not diagnosed"):
        view.reopen_case(book, ids["broken"], "en", None)
    case = book.open(ids["pair1"])
    old = replace(case, report={**case.report, "schema_version": "0.1"})
    with pytest.raises(InputError, match=r"schema 0\.1"):
        view.case_report(old)
    causes = [{**case.report["causes"][0], "confidence": "high"}, *case.report["causes"][1:]]
    damaged = replace(case, report={**case.report, "causes": causes})
    with pytest.raises(
        InputError, match=r"does not match report schema 1\.0 .*first at causes\.0\.confidence"
    ):
        view.case_report(damaged)
    for bad in ("nope", "", XSS):
        with pytest.raises(InputError, match="case id"):
            view.reopen_case(book, bad, "en", None)


def test_a_fresh_case_banner_and_a_store_failure_that_does_not_hide_the_diagnosis(book):
    banner, link = view.record_case(book, pair_report(), [("baseline", None)], "http://h")
    case_id = link.rsplit("=", 1)[1]
    assert banner == f"Case `{case_id}` saved: the link below reopens this report for 30 days."
    assert book.open(case_id).summary.top_cause == "precision-mismatch"

    class FullStore:
        def put(self, report, meta):
            raise InputError("database or disk is full", path="PERF_DOCTOR_CASE_DB")

        def purge_older_than(self, cutoff):
            return 0

    banner, link = view.record_case(CaseBook(FullStore()), pair_report(), [], None)
    assert link == "" and banner.startswith("This diagnosis could not be saved as a case")
    assert "disk is full" in banner


# --------------------------------------------------------------------------------------------- output


def _rows() -> list[dict]:
    base = {name: "" for name in COLUMN_NAMES}
    return [
        {**base, "submission": "=HYPERLINK(\"http://x\",\"y\")", "kind": "single", "confidence": 0.5,
         "recoverable_ms": 1.25, "note": "@SUM(A1)", "message": "-1+2"},
        {**base, "submission": "plain", "kind": "error", "confidence": None, "recoverable_ms": None,
         "message": "+cmd|' /C calc'!A0", "verdict": "tab\tinside"},
    ]  # fmt: skip


def test_csv_rows_cannot_run_as_formulas_and_keep_numbers_numeric():
    text = rows_csv(_rows())
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == list(COLUMN_NAMES)
    assert rows[0]["submission"].startswith("'=HYPERLINK")
    assert (rows[0]["note"], rows[0]["message"]) == ("'@SUM(A1)", "'-1+2")
    assert rows[1]["message"] == "'+cmd|' /C calc'!A0" and rows[1]["verdict"] == "tab\tinside"
    assert (rows[0]["confidence"], rows[0]["recoverable_ms"]) == ("0.5", "1.25")
    assert (rows[1]["confidence"], rows[1]["recoverable_ms"]) == ("", "")


def test_json_rows_keep_the_columns_and_raw_values():
    document = json.loads(rows_json(_rows()))
    assert document["columns"] == list(COLUMN_NAMES)
    assert document["rows"][0]["submission"] == '=HYPERLINK("http://x","y")'
    assert document["rows"][1]["confidence"] is None and document["rows"][0]["confidence"] == 0.5
    assert output_format(Path("t.JSON")) == "json"
    with pytest.raises(InputError, match="unknown suffix"):
        output_format(Path("t.xlsx"))


def test_a_case_reopened_in_the_other_language_draws_its_graph_figure_in_that_language(book):
    """Issue 31: a case kept in English and reopened after the switch to 中文 shows the fusion-chain
    figure's title and legend in Chinese (and the English ones when reopened in English)."""
    case_id = book.record(model_report())
    legends = {}
    for lang in ("en", "zh"):
        report, _, _ = view.reopen_case(book, case_id, lang, None)
        figure = report.chain_figure
        legends[lang] = ({trace.name for trace in figure.data}, figure.layout.title.text)
    names, title = legends["zh"]
    assert "连线" in names and "edges" not in names and "条融合链" in title
    names, title = legends["en"]
    assert "edges" in names and "连线" not in names and "fusion chains" in title
    fresh = model_report().in_lang("zh")  # a diagnosis switched in place, before it is kept
    assert "连线" in {trace.name for trace in fresh.chain_figure.data}
    assert "edges" in {trace.name for trace in fresh.in_lang("zh").in_lang("en").chain_figure.data}

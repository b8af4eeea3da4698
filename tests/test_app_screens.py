"""Issue 31 without a browser: what the app and its reports say to a Chinese reader, to support staff
(the triage list) and after a fix; the browser half is tests/test_browser_screens.py."""

from __future__ import annotations

import os
import re
from pathlib import Path

import gradio as gr
import pytest

import app
from core import InputError
from desk.cases import CaseBook, CaseFilter, SqliteCaseStore
from desk.triage import view as triage_view
from doctor import diagnose
from doctor.config import AppConfig
from doctor.facade import FolderFiles
from doctor.i18n import LANGS
from doctor.problems import problems_markdown
from doctor.render import render
from graph.loader import decode
from tests.support.inputs import CPU, EXAMPLE, files_of
from tests.support.language import chinese, english_sentences
from webapp.examples import available_pairs
from webapp.views import report_view


def test_a_random_bytes_model_error_names_no_internal_type_and_the_inspect_button() -> None:
    """No decoder English, no `perf_doctor.mind_ir.ModelProto`; the Inspect tab says 检查, not 诊断."""
    with pytest.raises(InputError) as caught:
        decode(os.urandom(256), "random.mindir")
    english = problems_markdown(caught.value, "en", "inspect")
    assert "ModelProto" not in english and "Wire format" not in english and "mind_ir" not in english
    assert "press Inspect again" in english
    chinese = problems_markdown(caught.value, "zh", "inspect")
    assert "“检查”" in chinese and "“诊断”" not in chinese
    assert english_sentences(chinese.replace("mindspore.export(..., file\\_format='MINDIR')", "")) == []


# ------------------------------------------------------------------------------------- the triage desk


class _Request:
    """What app handlers read of a browser request: its headers and query (no session)."""

    def __init__(self, lang: str = "en") -> None:
        self.headers = {"accept-language": "zh-CN" if lang == "zh" else "en-US"}
        self.query_params: dict[str, str] = {}


@pytest.fixture
def book(tmp_path: Path) -> CaseBook:
    return CaseBook(SqliteCaseStore(tmp_path / "cases.sqlite3"))


def _rows(book: CaseBook, **filters: object) -> list[dict]:
    table = triage_view.triage_table(book.list(CaseFilter(**filters)))  # type: ignore[arg-type]
    return table.frame.to_dict("records")


def test_a_failed_diagnosis_is_listed_as_failed_with_its_error_line(book: CaseBook, tmp_path: Path) -> None:
    bad = tmp_path / "train_run.zip"
    bad.write_bytes(b"this is not a zip archive")
    with pytest.raises(gr.Error):
        app.compare([str(bad)], None, None, None, "auto", _Request(), cases=book)
    [row] = _rows(book)
    assert row["kind"] == "error" and row["submission"] == "baseline: train_run.zip"
    assert row["verdict"].startswith("FAILED: ") and "is not a zip archive" in row["verdict"]


def test_a_single_run_in_the_baseline_box_is_recorded_as_the_baseline(book: CaseBook) -> None:
    app.compare(files_of(CPU / "train_amp_o2_graph"), None, None, None, "auto", _Request(), cases=book)
    [row] = _rows(book)
    assert row["submission"].startswith("baseline: ") and "target" not in row["submission"]
    assert row["ranks"] == 1


def test_the_triage_list_says_verdicts_in_english_for_a_chinese_diagnosis(book: CaseBook) -> None:
    report = diagnose(EXAMPLE / "baseline", EXAMPLE / "target", lang="zh", isolate=False)
    triage_view.record_case(book, report, [("baseline", str(EXAMPLE / "baseline"))], None)
    [row] = _rows(book)
    assert row["verdict"] and chinese(row["verdict"]) == [], row["verdict"]


def test_example_clicks_are_marked_and_kept_out_of_the_case_list(book: CaseBook) -> None:
    demo = app.build_demo(AppConfig())
    handlers = [fn.fn.__name__ for fn in demo.fns.values() if fn.fn is not None]
    assert available_pairs(), "the bundled examples are part of the app"
    assert handlers.count("compare_example") == len(LANGS), "a click on any example is marked"
    assert handlers.count("inspect_example") == len(LANGS)
    given = [("baseline", files_of(EXAMPLE / "baseline")), ("target", files_of(EXAMPLE / "target"))]
    app.compare(*[v for _, v in given], None, None, "auto", _Request(), cases=book, example=True)
    app.compare(*[v for _, v in given], None, None, "auto", _Request(), cases=book)
    assert len(_rows(book)) == 1
    [example] = book.list(CaseFilter(examples=True))
    assert example.example and not book.list()[0].example


def test_the_triage_table_shows_what_support_reads_first(book: CaseBook) -> None:
    """Input names, verdict, top cause, severity, status and rank count come first (1366 px: browser)."""
    report = diagnose(EXAMPLE / "baseline", EXAMPLE / "target", isolate=False)
    triage_view.record_case(book, report, [("baseline", str(EXAMPLE / "baseline"))], None)
    table = triage_view.triage_table(book.list())
    first = ["case", "submission", "verdict", "top_cause", "severity", "status", "ranks"]
    assert list(table.frame.columns)[:7] == first
    row = table.frame.iloc[0].tolist()
    assert triage_view.selection(row)[0] == table.frame.iloc[0]["case"]


def test_downloaded_reports_carry_the_case_id_link_and_real_input_names(book: CaseBook) -> None:
    given = (files_of(EXAMPLE / "baseline"), FolderFiles(files_of(EXAMPLE / "target"), "infer_run"))
    values = app.compare(*given, None, None, "auto", _Request(), cases=book)
    link = values["case_link"].value
    case_id = link.rsplit("=", 1)[1]
    for fmt in ("html", "md", "json"):
        text = Path(values[f"dl_{fmt}"]).read_text(encoding="utf-8")
        assert case_id in text and link in text, fmt
        assert "infer_run" in text and "cpu_framework_0.txt +4" in text and "5 files" not in text, fmt
    [row] = _rows(book)
    assert row["submission"] == "baseline: cpu_framework_0.txt +4 · target: infer_run"


def test_the_chinese_html_report_has_chinese_table_headers() -> None:
    report = diagnose(EXAMPLE / "baseline", EXAMPLE / "target", lang="zh", isolate=False)
    page = render(report, "html")
    headers = re.findall(r"<th>([^<]*)</th>", page)
    assert headers and not [h for h in headers if re.fullmatch(r"[a-z ]+", h)], headers


def test_chinese_warning_kinds_and_runs_cells() -> None:
    report = diagnose(EXAMPLE / "baseline", EXAMPLE / "target", lang="zh", isolate=False)
    view = report_view(report)
    kinds = re.findall(r"^- \*\*([^*]+)\*\*", view.warnings, flags=re.M)
    assert kinds and not [k for k in kinds if k in ("undecided", "limitation", "note", "model")], kinds
    cells = [str(v) for v in view.runs.frame.to_numpy().ravel()]
    assert "graph" not in cells and "5 files" not in cells, cells
    page = render(report, "html")
    assert not re.search(r"<b>(undecided|limitation|note|model)</b>", page)

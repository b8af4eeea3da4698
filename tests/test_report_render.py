"""Renderers (JSON, Markdown, HTML, CSV), plots, display tables and escaping, on real reports."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from functools import cache

import pandas as pd
import plotly.graph_objects as go
import pytest
from jinja2 import UndefinedError

from doctor import Report, diagnose
from doctor.model import OPERATOR_COLUMNS
from doctor.plots import (
    breakdown_data,
    delta_by_type_data,
    operator_time_data,
    report_figures,
    step_time_data,
)
from doctor.render import RENDERERS, render, write
from doctor.render.csv import render_csv
from doctor.render.html import CSP, render_html, render_page
from doctor.render.markdown import render_markdown
from tests.support.inputs import CPU, RESNET, XSS, poison_profile
from webapp.views import report_view


@cache
def pair() -> Report:
    return diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", RESNET)


@cache
def single() -> Report:
    return diagnose(CPU / "infer_fp32_graph_nowarmup")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Report:
    """A pair whose target has an operator named like an HTML payload and one named like a formula."""
    base = tmp_path_factory.mktemp("hostile")
    target = poison_profile(CPU / "infer_fp32_graph", base / "xss")
    formula = poison_profile(
        target,
        base / "both",
        new_name="=HYPERLINK(evil)",
        old_name="Default/block2-Block/conv-Conv2d/Conv2D-op0",
    )
    return diagnose(CPU / "train_amp_o2_graph", formula)


# ----------------------------------------------------------------------------------------- formats


@pytest.mark.slow
def test_json_is_exactly_the_report_document():
    report = pair()
    assert json.loads(render(report, "json")) == report.to_dict()


@pytest.mark.slow
def test_every_format_renders_and_writes(tmp_path):
    for fmt in RENDERERS:
        path = write(pair(), fmt, tmp_path / f"report.{fmt}")
        assert path.stat().st_size > 200, fmt
    with pytest.raises(ValueError, match="unknown format"):
        render(pair(), "pdf")


def test_markdown_has_verdict_causes_fix_tables_and_warnings():
    report = pair()
    text = render_markdown(report)
    assert text.startswith("# Perf Doctor report\n")
    top = report.causes[0]
    assert "### 1. " in text
    assert f"`{top.id}`" in text
    assert f"```{top.fix.language}\n{top.fix.code.rstrip()}\n```" in text
    assert "## Operator comparison" in text and "## Top operators" in text and "## Model graph" in text
    assert "| `conv-bn-act` | 33 | 33 | 0 |" in text
    assert "**undecided**: Cannot decide, because" in text


def test_html_is_standalone_and_loads_nothing_from_the_network():
    page = render_html(pair())
    assert page.startswith("<!DOCTYPE html>")
    assert f'http-equiv="Content-Security-Policy" content="{html.escape(CSP)}"' in page
    assert CSP.startswith("default-src 'none';")
    assert not re.search(r"<script[^>]+src=", page), "scripts must be inline"
    assert not re.search(r"<link[^>]+href=[\"']?https?:", page)
    assert len(re.findall(r"plotly\.js v\d", page)) == 1, "the plotly.js bundle is embedded exactly once"
    assert page.count("Plotly.newPlot") == len(report_figures(pair())) == 5
    assert "id='verdict'" in page and "id='cause-precision-mismatch'" in page


@pytest.mark.slow
def test_single_run_report_renders_target_only_sections():
    report = single()
    md, page = render_markdown(report), render_html(report)
    assert "## Operators" in md and "## Operator comparison" not in md
    assert "Top 10 of the target" in md and "of the baseline" not in md
    assert set(report_figures(report)) == {"ops", "steps", "breakdown"}
    assert "<h2>Operators</h2>" in page


@pytest.mark.slow
def test_chinese_report_uses_chinese_headings():
    report = diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", lang="zh")
    assert render_markdown(report).startswith("# Perf Doctor 诊断报告")
    assert '<html lang="zh-CN">' in render_html(report)


# ----------------------------------------------------------------------------------------- escaping


def test_hostile_operator_name_is_escaped_in_markdown(hostile):
    text = render_markdown(hostile)
    assert XSS in hostile.operators()["operator"].tolist()
    assert "<img" not in text.replace(f"`{XSS}`", ""), "raw HTML only inside code spans"
    for line in text.splitlines():
        assert not line.lstrip().startswith("<"), line  # no line may open a raw HTML block


def test_hostile_operator_name_is_escaped_in_html(hostile):
    page = render_html(hostile)
    assert "<img" not in page
    assert "&lt;img src=x onerror=window.__xss=1&gt;" in page


def test_template_escapes_a_hostile_file_name_as_html_escape_does():
    report = single()
    name = XSS + "\"'&"
    named = report.document.inputs[0].model_copy(update={"name": name})
    doc = report.document.model_copy(update={"inputs": [named]})
    page = render_page(doc)
    assert "<img" not in page
    assert f"<td>{html.escape(name)}</td>" in page  # &#x27; and &quot;, not &#39; &#34;


def test_template_refuses_a_document_missing_a_field():
    doc = single().document
    fields = {key: value for key, value in doc.verdict.__dict__.items() if key != "text"}
    doc = doc.model_copy(update={"verdict": type(doc.verdict).model_construct(**fields)})
    with pytest.raises(UndefinedError, match="text"):
        render_page(doc)


def test_csv_neutralises_formulas_and_keeps_numbers_numeric(hostile):
    rows = list(csv.DictReader(io.StringIO(render_csv(hostile))))
    names = [row["operator"] for row in rows]
    assert "'=HYPERLINK(evil)" in names and "=HYPERLINK(evil)" not in names
    assert XSS in names  # not a formula: left as it is
    numeric = [name for name, kind in OPERATOR_COLUMNS if kind in ("number", "integer")]
    negatives = 0
    for row in rows:
        for column in numeric:
            if row[column]:
                value = float(row[column])  # raises if a number was prefixed
                negatives += value < 0
    assert negatives > 0, "negative deltas must stay numbers, not be treated as formulas"
    assert list(rows[0]) == [name for name, _ in OPERATOR_COLUMNS]


@pytest.mark.slow
def test_plot_labels_and_hover_text_are_escaped(hostile):
    for name, fig in report_figures(hostile).items():
        blob = fig.to_json()
        assert "<img" not in blob and "\\u003cimg" not in blob, name


def test_display_tables_use_only_text_and_number_columns(hostile):
    view = report_view(hostile)
    for table in (view.operators, view.top_baseline, view.top_target, view.chains, view.runs):
        assert set(table.datatype) <= {"str", "number"}
        assert len(table.datatype) == table.frame.shape[1]
        for column, kind in zip(table.frame.columns, table.datatype, strict=True):
            values = table.frame[column].tolist()
            if kind == "number":
                # whole-number columns (counts, indices) show as int, the others as rounded floats
                assert all(v is None or (type(v) in (int, float) and v == v) for v in values), column
            else:
                assert all(isinstance(v, str) for v in values), column
    assert XSS in view.operators.frame.iloc[:, 0].tolist()  # plain text: the Dataframe escapes it
    assert "<img" not in view.causes + view.warnings + view.verdict


# -------------------------------------------------------------------------------------------- plots


def test_operator_time_data_is_the_top_n_by_peak_time():
    report = pair()
    data = operator_time_data(report, n=5)
    ops = report.operators().fillna({"baseline_us_per_step": 0.0, "target_us_per_step": 0.0})
    peak = ops[["baseline_us_per_step", "target_us_per_step"]].max(axis=1)
    assert set(data["operator"]) == set(ops.loc[peak.nlargest(5).index, "operator"])
    assert data["target_us"].is_monotonic_increasing  # drawn bottom-up: slowest at the top
    assert data["label"].is_unique


def test_delta_by_type_adds_up_to_the_total_difference():
    report = pair()
    data = delta_by_type_data(report)
    timing = report.data["timing"]
    total = (timing["target_ms_per_step"] - timing["baseline_ms_per_step"]) * 1000
    assert data["delta_us"].sum() == pytest.approx(total, rel=1e-3, abs=1.0)
    assert data["delta_us"].abs().is_monotonic_decreasing
    assert delta_by_type_data(single()).empty


def test_step_time_data_prefers_wall_time_and_keeps_gaps():
    data = step_time_data(pair())
    assert set(data["role"]) == {"baseline", "target"} and (data["measure"] == "wall").all()
    recorded = data.dropna(subset=["wall_ms"])
    assert (recorded["ms"] == recorded["wall_ms"]).all()
    assert data["ms"].isna().sum() == data["wall_ms"].isna().sum()


def test_breakdown_totals_match_each_side():
    report = pair()
    ops = report.operators()
    for by in ("dtype", "core"):
        data = breakdown_data(report, by)
        for side in ("baseline", "target"):
            total = ops[f"{side}_us_per_step"].fillna(0).sum()
            assert data.loc[data["side"] == side, "us"].sum() == pytest.approx(total)
    assert set(breakdown_data(report, "core")["group"]) == {"CPU"}


@pytest.mark.slow
def test_report_figures_are_plotly_figures_with_data():
    figures = report_figures(pair())
    assert set(figures) == {"ops", "delta", "steps", "breakdown", "chains"}
    for name, fig in figures.items():
        assert isinstance(fig, go.Figure) and len(fig.data) > 0, name
    zh = report_figures(diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", lang="zh"))
    assert zh["ops"].layout.title.text == "各算子耗时（耗时最多的算子）"


def test_report_operators_frame_has_numeric_dtypes():
    ops = pair().operators()
    for name, kind in OPERATOR_COLUMNS:
        if kind in ("number", "integer"):
            assert pd.api.types.is_float_dtype(ops[name]), name

"""Report -> the values the app's components show (Markdown strings, display tables, figures).

Kept out of app.py so that the app only wires components, and so these conversions are tested without
a browser. Display tables use only text and number columns (never HTML), rounded for reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from doctor.i18n import t
from doctor.plots import report_figures
from doctor.render.markdown import (
    below_threshold_section,
    causes_markdown,
    graph_summary_markdown,
    verdict_markdown,
    warnings_markdown,
)
from doctor.report import Report
from doctor.text import is_missing

DISPLAY_DIGITS = 3


@dataclass
class Table:
    """A display table and the Gradio datatype of each of its columns ("str" or "number")."""

    frame: pd.DataFrame
    datatype: list[str]


@dataclass
class ReportView:
    """Everything the results panel shows for one report."""

    verdict: str
    causes: str  # the significant causes only
    below: str  # the causes below the reporting threshold ("" when none)
    warnings: str
    operators: Table
    top_baseline: Table
    top_target: Table
    chains: Table
    graph: str
    figures: dict[str, Any]


def report_view(report: Report) -> ReportView:
    """All display values of a report."""
    return ReportView(
        verdict=verdict_markdown(report),
        causes=causes_markdown(report, below=False),
        below=below_threshold_section(report),
        warnings=warnings_markdown(report),
        operators=operator_table(report),
        top_baseline=leaderboard_table(report, "baseline"),
        top_target=leaderboard_table(report, "target"),
        chains=chain_table(report),
        graph=graph_summary_markdown(report),
        figures=_integer_step_ticks(report_figures(report)),
    )


def _integer_step_ticks(figures: dict[str, Any]) -> dict[str, Any]:
    """Step numbers are whole: the step plot's x ticks at integers (about ten of them), not 1.5."""
    figure = figures.get("steps")
    if figure is not None:
        steps = [x for trace in figure.data for x in (trace.x if trace.x is not None else ())]
        span = (max(steps) - min(steps)) if steps else 0
        figure.update_xaxes(tickmode="linear", tick0=min(steps, default=0), dtick=max(1, -(-span // 10)))
    return figures


def operator_table(report: Report) -> Table:
    """The operator comparison for gr.Dataframe: the columns a reader sorts and searches on."""
    ops = report.operators()
    lang = report.lang
    if report.kind == "pair":
        columns = [
            ("col_operator", ops["operator"], "str"),
            ("col_type", ops["op_type"], "str"),
            ("col_match", ops["match"], "str"),
            ("col_baseline_us", ops["baseline_us_per_step"], "number"),
            ("col_target_us", ops["target_us_per_step"], "number"),
            ("col_delta_us", ops["delta_us_per_step"], "number"),
            ("col_ratio", ops["ratio"], "number"),
            ("col_significant", ops["significant"].map({True: "yes", False: ""}), "str"),
            ("col_shapes", ops["target_input_shapes"].fillna(ops["baseline_input_shapes"]), "str"),
            ("col_reason", ops["one_side_reason"], "str"),
        ]
    else:
        columns = [
            ("col_operator", ops["operator"], "str"),
            ("col_type", ops["op_type"], "str"),
            ("col_us", ops["target_us_per_step"], "number"),
            ("col_share_pct", ops["target_share"] * 100.0, "number"),
            ("col_launches", ops["target_launches_per_step"], "number"),
            ("col_shapes", ops["target_input_shapes"], "str"),
        ]
    return _table([(t(key, lang), values, kind) for key, values, kind in columns])


def leaderboard_table(report: Report, role: str) -> Table:
    """Top-10 operators of one side."""
    rows = report.data["leaderboards"][role]
    frame = pd.DataFrame(rows, columns=["rank", "operator", "op_type", "us_per_step", "share"])
    lang = report.lang
    return _table(
        [
            (t("col_rank", lang), frame["rank"], "number"),
            (t("col_operator", lang), frame["operator"], "str"),
            (t("col_type", lang), frame["op_type"], "str"),
            (t("col_us", lang), frame["us_per_step"], "number"),
            (t("col_share_pct", lang), pd.to_numeric(frame["share"], errors="coerce") * 100.0, "number"),
        ]
    )


def chain_table(report: Report) -> Table:
    """Fusion chains per pattern (empty without a model)."""
    graph = report.data.get("graph") or {"chains": {"by_pattern": []}}
    frame = pd.DataFrame(graph["chains"]["by_pattern"], columns=["pattern", "count", "fusible", "blocked"])
    lang = report.lang
    return _table(
        [
            (t("col_pattern", lang), frame["pattern"], "str"),
            (t("col_count", lang), frame["count"], "number"),
            (t("col_fusible", lang), frame["fusible"], "number"),
            (t("col_blocked", lang), frame["blocked"], "number"),
        ]
    )


def _table(columns: list[tuple[str, pd.Series, str]]) -> Table:
    """A display frame: numbers rounded (missing -> None), text as str (missing -> "")."""
    data = {}
    for name, values, kind in columns:
        series = pd.Series(values).reset_index(drop=True)
        if kind == "number":
            numbers = pd.to_numeric(series, errors="coerce").astype("float64").round(DISPLAY_DIGITS)
            data[name] = numbers.astype(object).where(numbers.notna(), None)
        else:
            data[name] = series.astype(object).map(lambda v: "" if is_missing(v) else str(v))
    return Table(pd.DataFrame(data), [kind for _, _, kind in columns])

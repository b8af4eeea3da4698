"""The presenter: one report as the values of a tab's result components (`present`), and as what the
named API endpoints return (`api_result`: the report document and its download files).

The app's handlers call only these, so a new plot or table changes this module and the layout, never
the API, whose outputs are the report and its files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gradio as gr
from gradio.components import Component

from core import JsonObject
from doctor import Report
from webapp.files import ReportFiles, case_id_of
from webapp.views import ReportView, Table, baseline_note, baseline_slot, report_view

FILES = ReportFiles()
NO_CASE = ("", "")  # (banner, link) when no case was kept
API_FORMATS = ("html", "md", "json", "csv")  # the download files the API returns, in this order
BOXES = ("verdict", "notice")  # framed Markdown boxes, hidden while they have nothing to say
# The result components of each tab by name, in the order of its event's outputs (a private event: the
# API is `api_result`). Handlers return {component: value}.
COMPARE_OUTPUTS = (
    "verdict",
    "causes",
    "below_box",
    "below",
    "warnings",
    "operators",
    "top_baseline",
    "top_target",
    "plot_ops",
    "plot_delta",
    "plot_steps",
    "plot_breakdown",
    "plot_chains",
    "chains",
    "dl_html",
    "dl_md",
    "dl_json",
    "dl_csv",
    "after",
    "plot_waterfall",
    "fixes",
    "dl_reprofile",
    "case_info",
    "case_link",
    "runs",
    "baseline_note",
    "notice",
    "plot_ranks",
    "report_json",
)
# The Compare tab's plots in the order its Plots tab shows them; the chain graph is made by _shared_values.
COMPARE_PLOTS = (
    "plot_waterfall",
    "plot_ops",
    "plot_delta",
    "plot_steps",
    "plot_breakdown",
    "plot_chains",
    "plot_ranks",
)
PAIR_PLOTS = tuple(name.removeprefix("plot_") for name in COMPARE_PLOTS if name != "plot_chains")
INSPECT_OUTPUTS = (
    "verdict",
    "causes",
    "below_box",
    "below",
    "warnings",
    "graph",
    "chains",
    "plot_chains",
    "dl_html",
    "dl_md",
    "dl_json",
    "case_info",
    "case_link",
    "notice",
    "report_json",
)


class Results:
    """A tab's result components by name (COMPARE_OUTPUTS, INSPECT_OUTPUTS); `outputs` is their order
    in the event."""

    def __init__(self, names: Sequence[str], components: Mapping[str, Component]) -> None:
        if set(names) != set(components):
            raise ValueError(f"result components {sorted(components)} are not the outputs {sorted(names)}")
        self.parts = {name: components[name] for name in names}

    @property
    def outputs(self) -> list[Component]:
        return list(self.parts.values())

    def keyed(self, values: Mapping[str, object]) -> dict[Component, object]:
        """Values by name as Gradio's {component: value} return; every output must have one."""
        if set(values) != set(self.parts):
            raise ValueError(f"values for {sorted(values)}, outputs are {sorted(self.parts)}")
        return {self.parts[name]: value for name, value in values.items()}


def present(
    report: Report, case: tuple[str, str] = NO_CASE, choice: str | None = None, first: str | None = None
) -> dict[str, object]:
    """The UI update of a report: the values of its tab's result components by name (the Inspect tab's
    for a model-only report, else the Compare tab's); `case` is the (banner, link) of the case it is
    kept as, `choice` the baseline option and `first` the name of the Baseline box's upload."""
    if report.kind == "mindir":
        return inspect_values(report, case)
    return compare_values(report, case, choice, first)


def api_result(report: Report, case: tuple[str, str] = NO_CASE) -> tuple[JsonObject, list[str]]:
    """What the named API endpoints return: the report document (carrying its case when one was kept)
    and the paths of its download files (HTML, Markdown, JSON and, for runs, CSV)."""
    kept = _with_case(report, case)
    paths = FILES.write(kept, case_id_of(case[1]))
    formats = API_FORMATS if report.kind != "mindir" else API_FORMATS[:-1]  # a model has no operator CSV
    return kept.to_dict(), [str(paths[fmt]) for fmt in formats]


def _with_case(report: Report, case: tuple[str, str]) -> Report:
    """The report carrying the case it is kept as (the downloads' form), unchanged without one."""
    case_id = case_id_of(case[1])
    return report.with_case(case_id, case[1]) if case_id else report


def cleared_values(names: Sequence[str]) -> dict[str, object]:
    """An empty result area: no verdict, causes, tables, plots, downloads or case link."""
    values: dict[str, Any] = {}
    for name in names:
        if name.startswith("plot_"):
            values[name] = gr.Plot(value=None, visible=False)
        elif name == "below_box":
            values[name] = gr.Accordion(visible=False)
        elif name == "case_link":
            values[name] = gr.Textbox(value="", visible=False)
        elif name in BOXES:
            values[name] = gr.Markdown(value="", visible=False)
        elif name in {"causes", "below", "warnings", "graph", "case_info", "baseline_note"}:
            values[name] = ""
        else:
            values[name] = None
    return values


def dataframe(table: Table) -> gr.Dataframe:
    """A table as a Dataframe update with its column types."""
    return gr.Dataframe(value=table.frame, datatype=table.datatype)  # pyright: ignore[reportArgumentType]  # gradio: datatype names as Literals


def _plot(view: ReportView, key: str) -> gr.Plot:
    figure = view.figures.get(key)
    return gr.Plot(value=figure, visible=figure is not None)


def _shared_values(report: Report, view: ReportView, case: tuple[str, str]) -> dict[str, object]:
    """What both tabs show of a report: verdict, causes (those below the threshold in a box shown only
    when it has some), warnings, chains, report files, the case banner and link, and the JSON report."""
    banner, link = case
    case_id = case_id_of(link)
    paths = FILES.write(_with_case(report, case), case_id)
    return {
        "verdict": gr.Markdown(value=view.verdict, visible=True),
        "causes": view.causes,
        "below_box": gr.Accordion(visible=bool(view.below), open=False),
        "below": view.below,
        "warnings": view.warnings,
        "chains": dataframe(view.chains),
        "plot_chains": _plot(view, "chains"),
        **{f"dl_{fmt}": str(paths[fmt]) for fmt in ("html", "md", "json", "csv")},
        "case_info": banner,
        "case_link": gr.Textbox(value=link, visible=bool(link)),
        "notice": gr.Markdown(value="", visible=False),
        "report_json": report.to_dict(),
    }


def compare_values(
    report: Report, case: tuple[str, str] = NO_CASE, choice: str | None = None, first: str | None = None
) -> dict[str, object]:
    """Values of the Compare tab's result components by name (COMPARE_OUTPUTS); `case` is the
    (banner, link) of the case the report is kept as, `choice` the baseline option and `first` the name
    of the Baseline box's upload (which run became the baseline, and why)."""
    view = report_view(report)
    sources = [run.source for run in report.document.runs]
    slot = baseline_slot(sources, first) if first is not None else None
    if slot is None and len(sources) == 2:
        slot = "first"  # a reopened case: the report's baseline stands for the first upload
    return {
        **_shared_values(report, view, case),
        "runs": dataframe(view.runs),
        "baseline_note": "\n\n".join(p for p in (baseline_note(report, choice, slot), view.ranks) if p),
        "operators": dataframe(view.operators),
        "top_baseline": dataframe(view.top_baseline),
        "top_target": dataframe(view.top_target),
        **{
            f"plot_{key}": _plot(view, key)
            for key in ("ops", "delta", "steps", "breakdown", "waterfall", "ranks")
        },
        "after": view.after,
        "fixes": gr.CheckboxGroup(choices=view.fixes, value=view.ticked, visible=bool(view.fixes)),
        "dl_reprofile": script_button(FILES.write_script(report, view.ticked)),
    }


def script_button(path: Path | None) -> gr.DownloadButton:
    """The reprofile.py download button, hidden without a script."""
    return gr.DownloadButton(value=None if path is None else str(path), visible=path is not None)


def inspect_values(report: Report, case: tuple[str, str] = NO_CASE) -> dict[str, object]:
    """Values of the Inspect tab's result components by name (INSPECT_OUTPUTS; no CSV download)."""
    view = report_view(report)
    values = {**_shared_values(report, view, case), "graph": view.graph}
    del values["dl_csv"]
    return values

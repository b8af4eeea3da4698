"""Report -> the values the app's components show (Markdown strings, display tables, figures).

Kept out of app.py so that the app only wires components, and so these conversions are tested without
a browser. Display tables use only text and number columns (never HTML), rounded for reading.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from core import JsonObject
from doctor.chain_rows import chain_records
from doctor.i18n import UI_TEXT, t, word
from doctor.model import BoardRow, RunInfo
from doctor.plots import report_figures
from doctor.render.markdown import (
    after_markdown,
    below_threshold_section,
    causes_markdown,
    graph_summary_markdown,
    ranks_markdown,
    verdict_markdown,
    warnings_markdown,
)
from doctor.report import Report
from doctor.table import Table
from doctor.text import is_missing, md_code

if TYPE_CHECKING:
    import plotly.graph_objects as go

DISPLAY_DIGITS = 3


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
    figures: dict[str, go.Figure]
    runs: Table
    after: str = ""  # the after-the-fix section ("" without an after run)
    fixes: list[tuple[str, str]] = field(default_factory=list)  # (label, cause id) reprofile.py can apply
    ticked: list[str] = field(default_factory=list)  # the fixes ticked at first: the ranked causes
    ranks: str = ""  # every rank of a multi-rank input ("" for one rank)


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
        runs=runs_table(report),
        figures={key: themed(figure) for key, figure in report_figures(report).items()},
        after=after_markdown(report),
        ranks=ranks_markdown(report),
        fixes=fix_choices(report),
        ticked=[c.id for c in report.document.causes if c.section == "ranked"]
        if report.kind == "pair"
        else [],
    )


def fix_choices(report: Report) -> list[tuple[str, str]]:
    """The causes whose fix reprofile.py can apply, as (label, id) choices; none unless two profiles
    were compared (the script needs the baseline's profiler settings)."""
    if report.kind != "pair":
        return []
    return [(f"{c.title} ({c.id})", c.id) for c in report.document.causes]


def operator_table(report: Report) -> Table:
    """The operator comparison for gr.Dataframe: the operator, then its timings (visible without
    scrolling sideways), then type, match and shapes."""
    ops = report.operators()
    lang = report.lang
    if report.kind == "pair":
        columns = [
            ("col_operator", ops["operator"], "str"),
            ("col_baseline_us", ops["baseline_us_per_step"], "number"),
            ("col_target_us", ops["target_us_per_step"], "number"),
            ("col_delta_us", ops["delta_us_per_step"], "number"),
            ("col_ratio", ops["ratio"], "number"),
            ("col_significant", ops["significant"].map({True: t("yes", lang), False: ""}), "str"),
            ("col_type", ops["op_type"], "str"),
            ("col_match", ops["match"], "str"),
            ("col_shapes", ops["target_input_shapes"].fillna(ops["baseline_input_shapes"]), "str"),
            ("col_reason", ops["one_side_reason"], "str"),
        ]
    else:
        columns = [
            ("col_operator", ops["operator"], "str"),
            ("col_us", ops["target_us_per_step"], "number"),
            ("col_share_pct", ops["target_share"] * 100.0, "number"),
            ("col_launches", ops["target_launches_per_step"], "number"),
            ("col_type", ops["op_type"], "str"),
            ("col_shapes", ops["target_input_shapes"], "str"),
        ]
    return _table([(t(key, lang), values, kind) for key, values, kind in columns])


def leaderboard_table(report: Report, role: str) -> Table:
    """Top-10 operators of one side."""
    rows = getattr(report.document.leaderboards, role)
    frame = pd.DataFrame([row.__dict__ for row in rows], columns=list(BoardRow.model_fields))
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
    """Every fusion chain (chain_records) for gr.Dataframe; empty without a model. The reason and the
    measured time are left out when no chain has one (a model without a profile, nothing blocked): an
    empty column only squeezes the others and spells its header letter by letter."""
    records = chain_records(report.document)
    frame = pd.DataFrame(
        records, columns=["index", "pattern", "scope", "ops", "status", "reason", "separate_us"]
    )
    lang = report.lang
    columns = [
        (t("col_rank", lang), frame["index"], "number"),
        (t("col_pattern", lang), frame["pattern"], "str"),
        (t("col_status", lang), frame["status"].map(lambda s: t(f"chain_{s}", lang)), "str"),
        (t("col_blocked_reason", lang), frame["reason"], "str"),
        (t("col_separate_us", lang), frame["separate_us"], "number"),
        (t("col_ops", lang), frame["ops"], "str"),
        (t("col_scope", lang), frame["scope"], "str"),
    ]
    optional = {t("col_blocked_reason", lang), t("col_separate_us", lang)}
    return _table([c for c in columns if c[0] not in optional or not _all_missing(c[1])])


def _all_missing(values: pd.Series) -> bool:
    """True when a column holds no value at all (None, NaN or empty text)."""
    return all(is_missing(v) or v == "" for v in values)


def runs_table(report: Report) -> Table:
    """What was read of each run: role, input, layout, device, mode, phase, steps, batch, ms/step and
    profiler level; empty for a model-only report."""
    lang = report.lang
    frame = pd.DataFrame(
        [
            {
                "role": t(run.role, lang),
                "source": run.source,
                "layout": run.layout,
                "device": run.device,
                "mode": word("mode_", str(run.execution_mode), lang),
                "phase": t(f"phase_{run.phase}", lang),
                "steps": run.steps,
                "batch": run.batch,
                "ms": run.ms_per_step,
                "level": run.profiler_config.level or t("not_recorded", lang),
            }
            for run in report.document.shown_runs()
        ],
        columns=["role", "source", "layout", "device", "mode", "phase", "steps", "batch", "ms", "level"],
    )
    keys = ["col_role", "col_source", "col_layout", "col_device", "col_mode", "col_phase", "col_steps"]
    keys += ["col_batch", "col_ms_per_step", "col_profiler_level"]
    kinds = ["str"] * 6 + ["number"] * 3 + ["str"]
    columns = [
        (t(key, lang), frame[column], kind)
        for key, column, kind in zip(keys, frame.columns, kinds, strict=True)
    ]
    runs = report.document.shown_runs()
    if any(len(run.ranks_available) > 1 for run in runs):  # which rank was read, of how many
        ranks = report.document.ranks
        whole = {job.role for job in ranks.jobs} if ranks is not None else set()
        shown = pd.Series([_rank_read(run, run.role in whole, lang) for run in runs], dtype=object)
        columns.insert(2, (t("col_rank_id", lang), shown, "str"))
    return _table(columns)


def _rank_read(run: RunInfo, whole: bool, lang: str) -> str:
    """What the Runs table says of a run's ranks: "every rank (n)" for a job read whole, "r / n" for the
    one rank of n the user drilled into."""
    available = run.ranks_available
    if whole:
        return f"{UI_TEXT[lang]['rank_every']} ({len(available)})"
    return f"{run.rank} / {len(available)}" if len(available) > 1 else str(run.rank or "")


def baseline_slot(sources: Sequence[str], first_upload: str | None) -> str | None:
    """Which upload ("first" = the Baseline box, "second" = the Target box) a report took as its
    baseline, from its runs' sources in order (baseline first); None for a report without two runs."""
    if len(sources) != 2:
        return None
    return "first" if first_upload is not None and sources[0] == first_upload else "second"


def baseline_note(report: Report, choice: str | None, slot: str | None) -> str:
    """Which run was taken as the baseline and why (the user's choice, or the training run)."""
    if slot is None:
        return ""
    lang = report.lang
    first = report.document.runs[0]
    name, phase = first.source, first.phase
    if choice in ("first", "second"):
        why = t("why_chosen", lang)
    elif slot == "second":
        why = t("why_swapped_train", lang)
    elif phase == "train":
        why = t("why_train", lang)
    else:
        why = t("why_first", lang)
    return t("baseline_is", lang, name=md_code(name), why=why)


def swapped_choice(slot: str | None) -> str:
    """The baseline choice that makes the other run the baseline."""
    return "first" if slot == "second" else "second"


def _table(columns: list[tuple[str, pd.Series, str]]) -> Table:
    """A display frame: numbers rounded (missing -> None), text as str (missing -> "")."""
    data = {}
    for name, values, kind in columns:
        series = pd.Series(values).reset_index(drop=True)
        if kind == "number":
            numbers = pd.to_numeric(series, errors="coerce").astype("float64").round(DISPLAY_DIGITS)
            shown = numbers.astype(object)
            if ((numbers.dropna() % 1) == 0).all():  # counts and indices show as 5, not 5.0
                shown = numbers.map(_as_int)
            data[name] = shown.where(numbers.notna(), None)
        else:
            data[name] = series.astype(object).map(lambda v: "" if is_missing(v) else str(v))
    return Table(pd.DataFrame(data), [kind for _, _, kind in columns])


def _as_int(value: float) -> int | None:
    return None if pd.isna(value) else int(value)


def rank_choices(data: JsonObject | None, lang: str) -> list[tuple[str, str]]:
    """The rank field's choices after a report (its JSON data): "every rank" (the empty value), then
    each rank either run holds, so one click drills into that rank; none for a one-rank report."""
    runs = (data or {}).get("runs") or []
    ranks = sorted({int(rank) for run in runs for rank in run.get("ranks_available") or []})
    if len(ranks) < 2:
        return []
    return [(UI_TEXT[lang]["rank_every"], ""), *((str(rank), str(rank)) for rank in ranks)]


def themed(figure: go.Figure) -> go.Figure:
    """A copy of a figure for the page: transparent backgrounds, so a plot follows the page's light or dark
    theme (the app's CSS lightens its text and grid in dark mode); report files keep their white plots."""
    shown = copy.deepcopy(figure)
    shown.update_layout(paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)")
    return shown

"""Plots of a report: the numbers are computed from the report document by small pure functions
(`*_data`, returning DataFrames that tests check), and drawn by separate `*_figure` functions.

Figures: per-operator time side by side (top N), where the time went (delta by operator type), step times
over the run, time by dtype and by core, and the fusion-chain graph (graph.view). Operator names are
user data: they are HTML-escaped before they become labels or hover text.
"""

from __future__ import annotations

import html
import textwrap
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from doctor.i18n import REPORT_TEXT, UI_TEXT
from doctor.model import Step
from doctor.report import Report

if TYPE_CHECKING:
    from graph import Chain, MindirModel

TOP_N = 15
COLORS = {"baseline": "#1f77b4", "target": "#d62728"}
LABEL_CHARS = 48
FIGURE_KEYS = ("ops", "delta", "steps", "breakdown", "chains", "waterfall", "ranks")
# Legends, axes and hover text of the figures in each report language (titles are UI_TEXT's plot_*).
WORDS = {
    "en": {
        "baseline": "baseline",
        "target": "target",
        "us_step": "µs/step",
        "us_per_step": "µs per step",
        "delta_axis": "target − baseline, µs per step",
        "step": "step",
        "wall": "wall",
        "operators": "operators",
        "compared": "compared operators",
        "by_dtype": "by input dtype",
        "by_core": "by core",
        "unknown": "unknown",
        "predicted": "predicted",
        "after": "measured after the fix",
        "ms_per_step": "ms per step",
        "rank": "rank",
        "computing": "computing",
        "communication": "communication (not overlapped)",
        "free": "free",
        "step_wall": "step wall time (ms)",
        "partial_step": "{role} step {step}",
        "partial_join": ", ",
        "partial_note": "Left out: {steps}, a partial capture (the last step, under half the median: "
        "the profiler stopped during it)",
    },
    "zh": {
        "baseline": "基线",
        "target": "目标",
        "us_step": "µs/步",
        "us_per_step": "每步 µs",
        "delta_axis": "目标 − 基线，每步 µs",
        "step": "步",
        "wall": "墙钟时间",
        "operators": "算子时间",
        "compared": "比较的算子",
        "by_dtype": "按输入数据类型",
        "by_core": "按计算单元",
        "unknown": "未知",
        "predicted": "预测",
        "after": "修复后实测",
        "ms_per_step": "每步 ms",
        "rank": "rank",
        "computing": "计算",
        "communication": "通信（未掩盖）",
        "free": "空闲",
        "step_wall": "每步墙钟时间（ms）",
        "partial_step": "{role}第 {step} 步",
        "partial_join": "、",
        "partial_note": "未画出：{steps}，只采集到一部分"
        "（最后一步，不到中位数的一半：性能分析在该步中途停止）",
    },
}


def _suffix(name: str, segments: int) -> str:
    """The last `segments` scope segments of an operator name, shortened from the left to LABEL_CHARS."""
    parts = [p for p in str(name).split("/") if p] or [str(name)]
    short = "/".join(parts[-segments:])
    return short if len(short) <= LABEL_CHARS else "…" + short[-(LABEL_CHARS - 1) :]


def _layout(fig: go.Figure, title: str, height: int = 420) -> go.Figure:
    fig.update_layout(
        title=title, height=height, template="plotly_white", margin={"l": 10, "r": 10, "t": 50, "b": 10}
    )
    return fig


# ---------------------------------------------------------------------------------- operator times


def operator_time_data(report: Report, n: int = TOP_N) -> pd.DataFrame:
    """The n operators with the largest time per step on either side, slowest target first."""
    ops = report.operators()
    if ops.empty:
        return pd.DataFrame(columns=["operator", "label", "op_type", "baseline_us", "target_us"])
    ops = ops.assign(
        baseline_us=ops["baseline_us_per_step"].fillna(0.0),
        target_us=ops["target_us_per_step"].fillna(0.0),
    )
    ops["peak"] = ops[["baseline_us", "target_us"]].max(axis=1)
    top = ops.nlargest(n, "peak").sort_values("target_us", ascending=True, kind="stable")
    top = top.assign(label=_unique_labels(top["operator"]))
    return top[["operator", "label", "op_type", "baseline_us", "target_us"]].reset_index(drop=True)


def _unique_labels(names: pd.Series) -> list[str]:
    """Escaped tick labels: the shortest scope suffix (two segments at least) that tells the operators
    apart, numbered when even the full names collide (plotly merges equal category labels)."""
    names = [str(n) for n in names]  # pyright: ignore[reportAssignmentType]  # rebinds to the labels
    depth = max((len([p for p in n.split("/") if p]) for n in names), default=1)
    best = len({_suffix(n, depth) for n in names})  # the most distinct labels any depth can give
    segments = 2
    labels = [_suffix(n, segments) for n in names]
    while len(set(labels)) < best and segments < depth:
        segments += 1
        labels = [_suffix(n, segments) for n in names]
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(html.escape(label if seen[label] == 1 else f"{label} ({seen[label]})"))
    return out


def operator_time_figure(data: pd.DataFrame, kind: str, title: str, lang: str = "en") -> go.Figure:
    """Horizontal bars: baseline and target µs per step for each top operator."""
    w = WORDS[lang]
    fig = go.Figure()
    hover = [html.escape(str(v)) for v in data["operator"]]
    sides = ("baseline", "target") if kind == "pair" else ("target",)
    for side in sides:
        fig.add_bar(
            y=data["label"],
            x=data[f"{side}_us"],
            name=w[side],
            orientation="h",
            marker_color=COLORS[side],
            customdata=hover,
            hovertemplate="%{customdata}<br>%{x:.1f} " + w["us_step"] + "<extra>" + w[side] + "</extra>",
        )
    fig.update_layout(barmode="group", xaxis_title=w["us_per_step"])
    return _layout(fig, title, height=max(360, 28 * len(data) + 120))


# ----------------------------------------------------------------------------------- delta by type


def delta_by_type_data(report: Report) -> pd.DataFrame:
    """Time per step gained (+) or saved (-) on the target, summed by operator type, largest first."""
    ops = report.operators()
    if ops.empty or report.kind != "pair":
        return pd.DataFrame(columns=["op_type", "baseline_us", "target_us", "delta_us"])
    ops = ops.assign(
        op_type=ops["op_type"].fillna("?"),
        baseline_us=ops["baseline_us_per_step"].fillna(0.0),
        target_us=ops["target_us_per_step"].fillna(0.0),
    )
    grouped = ops.groupby("op_type", sort=False)[["baseline_us", "target_us"]].sum()
    grouped["delta_us"] = grouped["target_us"] - grouped["baseline_us"]
    grouped = grouped.reindex(grouped["delta_us"].abs().sort_values(ascending=False).index)
    return grouped.reset_index()


def delta_by_type_figure(data: pd.DataFrame, title: str, n: int = TOP_N, lang: str = "en") -> go.Figure:
    """Bars of the per-type delta: red where the target spends more time, green where less."""
    top = data.head(n).iloc[::-1]
    colors = ["#d62728" if d > 0 else "#2ca02c" for d in top["delta_us"]]
    fig = go.Figure(
        go.Bar(
            y=[html.escape(str(v)) for v in top["op_type"]],
            x=top["delta_us"],
            orientation="h",
            marker_color=colors,
            hovertemplate="%{y}<br>Δ %{x:.1f} " + WORDS[lang]["us_step"] + "<extra></extra>",
        )
    )
    fig.update_layout(xaxis_title=WORDS[lang]["delta_axis"])
    return _layout(fig, title, height=max(320, 28 * len(top) + 120))


# --------------------------------------------------------------------------------------- step times


PARTIAL_SHARE = 0.5  # a run's last step under this share of its other steps' median is a partial capture
NOTE_CHARS = {"en": 60, "zh": 30}  # a subtitle line that fits a phone's plot width
PARTIAL_MIN_STEPS = 3  # with fewer other steps a short last step cannot be told from a real one


def step_time_data(report: Report) -> pd.DataFrame:
    """Per role and step, in ms: the wall time when the run records it (steps without one stay gaps),
    else the compared operators' time; `measure` says which. `partial` marks a run's last step when it
    is a partial capture (see `_partial_last`): the profiler stopped inside it."""
    columns = list(Step.model_fields)
    steps = pd.DataFrame([step.__dict__ for step in report.document.steps], columns=columns)
    for column in columns[2:]:
        steps[column] = pd.to_numeric(steps[column], errors="coerce").astype("float64")
    has_wall = steps.groupby("role")["wall_ms"].transform(lambda s: s.notna().any()).astype(bool)
    steps["ms"] = steps["wall_ms"].where(has_wall, steps["op_ms"])
    steps["measure"] = has_wall.map({True: "wall", False: "operators"})
    steps = steps.sort_values(["role", "step"], kind="stable").reset_index(drop=True)
    steps["partial"] = False
    for _, group in steps.groupby("role", sort=False):
        if _partial_last(group):
            steps.loc[group.index[-1], "partial"] = True
    return steps


def _partial_last(group: pd.DataFrame) -> bool:
    """Whether a run's last step is a partial capture: steps are cut at the step markers, so the
    profiler stopping inside the last step leaves it with a fraction of the work (no wall time, and
    operator time far under the other steps'). Judged on the operator time when the run has it, else
    on the plotted time: under PARTIAL_SHARE of the other steps' median, with PARTIAL_MIN_STEPS others."""
    basis = group["op_ms"] if group["op_ms"].notna().any() else group["ms"]
    last, others = basis.iloc[-1], basis.iloc[:-1].dropna()
    if pd.isna(last) or len(others) < PARTIAL_MIN_STEPS:
        return False
    return bool(last < PARTIAL_SHARE * float(others.median()))


def step_time_figure(data: pd.DataFrame, title: str, lang: str = "en") -> go.Figure:
    """Lines of step time per role; markers make first-step outliers and drift visible. A partial last
    step is left out (it would read as a step of about 0 ms) and the subtitle says so."""
    w = WORDS[lang]
    fig = go.Figure()
    partial = data["partial"] if "partial" in data else pd.Series(False, index=data.index)
    for role, group in data[~partial].groupby("role", sort=True):
        name = w.get(str(role), str(role))
        fig.add_scatter(
            x=group["step"],
            y=group["ms"],
            mode="lines+markers",
            name=f"{name} ({w[group['measure'].iloc[0]]})",
            line={"color": COLORS.get(str(role), "#555")},
            hovertemplate=w["step"] + " %{x}<br>%{y:.2f} ms<extra>" + name + "</extra>",
        )
        ops = group["op_ms"]
        if group["measure"].iloc[0] == "wall" and ops.notna().any():
            fig.add_scatter(
                x=group["step"],
                y=ops,
                mode="lines",
                name=f"{name} ({w['compared']})",
                line={"color": COLORS.get(str(role), "#555"), "dash": "dot"},
                hovertemplate=w["step"] + " %{x}<br>%{y:.2f} ms<extra>" + w["operators"] + "</extra>",
            )
    fig.update_layout(xaxis_title=w["step"], yaxis_title="ms", yaxis_rangemode="tozero")
    _integer_step_axis(fig, data["step"])
    cut = data[partial]
    left_out = [
        w["partial_step"].format(role=w.get(str(role), str(role)), step=int(step))
        for role, step in zip(cut["role"].tolist(), cut["step"].tolist(), strict=True)
    ]
    if not left_out:
        return _layout(fig, title)
    note = w["partial_note"].format(steps=w["partial_join"].join(left_out))
    lines = textwrap.wrap(note, NOTE_CHARS[lang])  # a plot title never wraps by itself: fit a phone
    fig = _layout(fig, title + "".join(f"<br><sup>{html.escape(line)}</sup>" for line in lines))
    fig.update_layout(margin={"t": 50 + 16 * len(lines)})
    return fig


def _integer_step_axis(fig: go.Figure, steps: pd.Series) -> None:
    """Step numbers are whole: x ticks at integers (about ten of them) printed without decimals, in
    the app and in the HTML report alike, never 1.5."""
    known = pd.to_numeric(steps, errors="coerce").dropna()
    first = int(known.min()) if len(known) else 0
    span = int(known.max()) - first if len(known) else 0
    fig.update_xaxes(tickmode="linear", tick0=first, dtick=max(1, -(-span // 10)), tickformat="d")


# ----------------------------------------------------------------------------------- dtype / core


def breakdown_data(report: Report, by: str) -> pd.DataFrame:
    """Time per step of each side summed by the first input dtype (`by="dtype"`) or by core ("core")."""
    column = {"dtype": "input_dtypes", "core": "core"}[by]
    ops = report.operators()
    rows = []
    for side in ("baseline", "target"):
        times = ops[f"{side}_us_per_step"].fillna(0.0)
        if times.sum() <= 0:
            continue
        values = ops[f"{side}_{column}"].fillna("unknown").astype(str)
        if by == "dtype":
            values = values.str.split(";").str[0].replace("", "unknown")
        summed = times.groupby(values).sum()
        rows += [{"side": side, "group": g, "us": float(us)} for g, us in summed.items() if us > 0]
    return pd.DataFrame(rows, columns=["side", "group", "us"])


def breakdown_figure(dtype: pd.DataFrame, core: pd.DataFrame, title: str, lang: str = "en") -> go.Figure:
    """Two stacked-bar panels: time per step by dtype and by core, one bar per side."""
    w = WORDS[lang]
    fig = make_subplots(rows=1, cols=2, subplot_titles=(w["by_dtype"], w["by_core"]))
    for col, data in ((1, dtype), (2, core)):
        for group, part in data.groupby("group", sort=True):
            shown = html.escape(w["unknown"] if group == "unknown" else str(group))
            fig.add_bar(
                x=part["side"].map(lambda side: w.get(side, side)),  # pyright: ignore[reportCallIssue, reportArgumentType]  # sides are str
                y=part["us"],
                name=shown,
                legendgroup=str(col),
                hovertemplate="%{x}: %{y:.1f} " + w["us_step"] + "<extra>" + shown + "</extra>",
                row=1,
                col=col,
            )
    fig.update_layout(barmode="stack", yaxis_title=w["us_per_step"])
    return _layout(fig, title)


# ------------------------------------------------------------------------------------ chain graph


def chain_graph_figure(model: MindirModel, chains: list[Chain], lang: str = "en") -> go.Figure:
    """The model graph with fusion chains highlighted, its texts in `lang` (graph.view does the layout
    and escaping)."""
    from graph import overview_figure

    return overview_figure(model, chains, lang=lang)


# -------------------------------------------------------------------------------------- waterfall

WATERFALL_COLUMNS = ["label", "kind", "ms", "start_ms", "end_ms"]


def waterfall_data(report: Report) -> pd.DataFrame:
    """The after section's waterfall as bars: the measured target step, one gain per ranked cause (the
    overlap-free part doctor.followup counted), the predicted step, and the measured after-fix step."""
    after = report.document.after
    if after is None:
        return pd.DataFrame(columns=WATERFALL_COLUMNS)
    text = REPORT_TEXT[report.lang]
    rows = [(text["waterfall_target"], "measured", after.target_ms_per_step, 0.0, after.target_ms_per_step)]
    rows += [(html.escape(w.cause), "gain", -w.counted_ms, w.start_ms, w.end_ms) for w in after.waterfall]
    rows.append(
        (
            text["waterfall_predicted"],
            "predicted",
            after.predicted_ms_per_step,
            0.0,
            after.predicted_ms_per_step,
        )
    )
    rows.append((text["waterfall_after"], "after", after.after_ms_per_step, 0.0, after.after_ms_per_step))
    return pd.DataFrame(rows, columns=WATERFALL_COLUMNS)


def waterfall_figure(data: pd.DataFrame, title: str, lang: str = "en") -> go.Figure:
    """A plotly waterfall from the measured target step to the predicted one, the measured after-fix
    step as a separate bar beside it."""
    chain = data[data["kind"] != "after"]
    measure = chain["kind"].map({"measured": "absolute", "gain": "relative", "predicted": "total"})
    fig = go.Figure()
    fig.add_waterfall(
        x=chain["label"],
        y=chain["ms"].where(chain["kind"] != "predicted", 0.0),
        measure=measure,
        name=WORDS[lang]["predicted"],
        connector={"line": {"color": "#888"}},
        decreasing={"marker": {"color": "#2ca02c"}},
        totals={"marker": {"color": "#1f77b4"}},
        hovertemplate="%{x}: %{y:.2f} ms<extra></extra>",
    )
    after = data[data["kind"] == "after"]
    fig.add_bar(
        x=after["label"],
        y=after["ms"],
        name=WORDS[lang]["after"],
        marker={"color": "#9467bd"},
        hovertemplate="%{x}: %{y:.2f} ms<extra></extra>",
    )
    fig.update_layout(yaxis_title=WORDS[lang]["ms_per_step"], yaxis_rangemode="tozero", showlegend=False)
    return _layout(fig, title)


# ---------------------------------------------------------------------------------------------- ranks


def rank_step_data(report: Report) -> pd.DataFrame:
    """One row per job, rank and step from the typed Ranks section: wall, computing, exposed communication
    and free time (ms); empty without a multi-rank input."""
    ranks = report.document.ranks
    if ranks is None:
        return pd.DataFrame(
            columns=["role", "rank", "step", "wall_ms", "computing_ms", "communication_ms", "free_ms"]
        )
    rows = [
        {
            "role": job.role,
            "rank": r.rank,
            **s.model_dump(include={"step", "wall_ms", "computing_ms", "communication_ms", "free_ms"}),
        }
        for job in ranks.jobs
        for r in job.rows
        for s in r.steps
    ]
    return pd.DataFrame(rows)


def ranks_figure(data: pd.DataFrame, title: str, lang: str = "en") -> go.Figure:
    """Per job: a rank x step heat map of the step wall time, and a stacked bar of median computing,
    exposed communication and free time per rank (the slow rank computes longer, the others wait)."""
    from plotly.subplots import make_subplots

    w = WORDS[lang]
    roles = list(dict.fromkeys(data["role"]))
    fig = make_subplots(
        rows=len(roles),
        cols=2,
        subplot_titles=[
            f"{w.get(r, r)}: {name}" for r in roles for name in (w["step_wall"], w["ms_per_step"])
        ],
        horizontal_spacing=0.12,
    )
    parts = (
        ("computing_ms", "computing", "#2ca02c"),
        ("communication_ms", "communication", "#d62728"),
        ("free_ms", "free", "#bbbbbb"),
    )
    for i, role in enumerate(roles, start=1):
        job = data[data["role"] == role]
        heat = job.pivot_table(index="rank", columns="step", values="wall_ms", aggfunc="median")
        fig.add_heatmap(
            z=heat.to_numpy(),
            x=[str(c) for c in heat.columns],
            y=[str(r) for r in heat.index],
            colorscale="Reds",
            showscale=i == 1,
            colorbar={
                "x": 0.44,
                "xanchor": "left",
                "thickness": 10,
                "len": 1 / len(roles),
                "y": 1,
                "yanchor": "top",
            },
            hovertemplate=w["rank"] + " %{y}, " + w["step"] + " %{x}: %{z:.2f} ms<extra></extra>",
            row=i,
            col=1,
        )
        medians = job.groupby("rank")[[p[0] for p in parts]].median()
        for column, word, color in parts:
            fig.add_bar(
                x=[str(r) for r in medians.index],
                y=medians[column],
                name=w[word],
                marker_color=color,
                legendgroup=word,
                showlegend=i == 1,
                hovertemplate=w["rank"] + " %{x}: %{y:.2f} ms<extra>" + w[word] + "</extra>",
                row=i,
                col=2,
            )
        fig.update_xaxes(title_text=w["step"], type="category", row=i, col=1)
        fig.update_yaxes(title_text=w["rank"], type="category", row=i, col=1)
        fig.update_xaxes(title_text=w["rank"], type="category", row=i, col=2)
    # The legend below the panels: at the right it would cover the heat map's colour bar.
    fig.update_layout(barmode="stack", legend={"orientation": "h", "x": 0, "y": -0.18, "yanchor": "top"})
    return _layout(fig, title, height=320 * len(roles) + 140)


# -------------------------------------------------------------------------------------- all of them


def report_figures(report: Report, titles: dict[str, str] | None = None) -> dict[str, go.Figure]:
    """Every figure that applies to the report, keyed by FIGURE_KEYS, titled in the report's language."""
    names = {key: UI_TEXT[report.lang][f"plot_{key}"] for key in FIGURE_KEYS}
    names.update(titles or {})
    figures: dict[str, go.Figure] = {}
    ops = operator_time_data(report)
    if not ops.empty:
        figures["ops"] = operator_time_figure(ops, report.kind, names["ops"], report.lang)
    delta = delta_by_type_data(report)
    if not delta.empty:
        figures["delta"] = delta_by_type_figure(delta, names["delta"], lang=report.lang)
    steps = step_time_data(report)
    if not steps.empty:
        figures["steps"] = step_time_figure(steps, names["steps"], report.lang)
    dtype, core = breakdown_data(report, "dtype"), breakdown_data(report, "core")
    if not (dtype.empty and core.empty):
        figures["breakdown"] = breakdown_figure(dtype, core, names["breakdown"], report.lang)
    if report.chain_figure is not None:
        figures["chains"] = report.chain_figure
    if report.document.after is not None:
        figures["waterfall"] = waterfall_figure(waterfall_data(report), names["waterfall"], report.lang)
    ranks = rank_step_data(report)
    if not ranks.empty:
        figures["ranks"] = ranks_figure(ranks, names["ranks"], report.lang)
    return figures

"""`perf-doctor outputs A B`: two runs' dumps compared layer by layer, as the typed OutputsSection, rendered
to JSON, Markdown, CSV or HTML (with the divergence-along-depth plot) in English or Chinese."""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import outputs
from core import Symptom, in_lang, say
from diagnosis import Limits, Workspace
from doctor.build import cause_records, symptom_records
from doctor.config import public_folders
from doctor.i18n import check_lang
from doctor.model import ReportDocument
from doctor.model.outputs import (
    DeterministicCost,
    DumpInfo,
    FirstDivergence,
    LayerPoint,
    OutputsSection,
    UnexplainedDivergence,
)
from doctor.report import Report
from doctor.text import md_code
from doctor.wording import unexplained_text
from knowledge import Diagnosis, evaluate
from sandbox import isolation

if TYPE_CHECKING:
    import plotly.graph_objects as go

FORMATS = ("md", "json", "csv", "html")
Source = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


@dataclass(frozen=True)
class OutputsReport:
    """The typed section and the language it was said in."""

    section: OutputsSection
    lang: str


def compare_outputs(
    baseline: Source,
    target: Source,
    *,
    mapping: str | os.PathLike[str] | None = None,
    lang: str = "en",
    budget: Limits | None = None,
    isolate: bool = True,
) -> OutputsReport:
    """Read both dumps (folders or archives) in one private workspace, compare them and rank causes. With
    `isolate` (the default) archives are unpacked and dumps and mapping parsed in child processes under
    limits, as profiles are."""
    check_lang(lang)
    found = _analyse(baseline, target, mapping, budget, isolate)
    return OutputsReport(build_section(*found, lang), lang)


def attach_outputs(
    report: Report,
    baseline: Source,
    target: Source,
    *,
    mapping: str | os.PathLike[str] | None = None,
    budget: Limits | None = None,
    isolate: bool = True,
) -> Report:
    """The report with an `outputs` section (in its language and in each translation): one report that
    covers the latency (the profiles) and the results (the dumps)."""
    found = _analyse(baseline, target, mapping, budget, isolate)
    cost = deterministic_cost(report.document)

    def with_section(document: ReportDocument) -> ReportDocument:
        section = build_section(*found, document.lang).model_copy(update={"deterministic_cost": cost})
        return document.model_copy(update={"outputs": section})

    translated = {lang: with_section(doc) for lang, doc in report.translated.items()}
    return Report(with_section(report.document), report.chain_figure, translated, report.translated_figures)


def _read_dump(
    source: Source, ws: Workspace, budget: Limits | None, names: dict[str, str] | None, isolate: bool
) -> Any:
    """One dump. With `isolate` every decoder of it runs in a child process under limits: an archive or a
    list of files is unpacked by one, then the dump is parsed by another (a fork of the warm reader)."""
    if not isolate:
        return outputs.read_dump(source, ws, budget=budget, mapping=names)
    from doctor.facade import display_name  # the facade imports this module on use

    limits = budget if budget is not None else Limits.from_env()  # resolved here: the child is a fork
    if outputs.reads_in_place(source):  # a folder or a lone dump file: nothing to unpack
        given = os.fspath(source if isinstance(source, (str, os.PathLike)) else next(iter(source)))
        path, label = os.path.abspath(given), Path(given).name or str(given)  # named as in this process
    else:
        path, label = str(isolation.materialize(source, ws, budget=limits)), display_name(source)
    # plain str values: web frameworks pass str subclasses, whose pickles would import them in the child
    return isolation.decode_dump(
        label, outputs.read_dump_at, path, str(label), limits, names, watch=isolation.say_reading
    )


def _mapping(
    baseline: Source, target: Source, mapping: str | os.PathLike[str] | None, isolate: bool
) -> dict[str, str] | None:
    """msprobe's layer mapping: the one given, else (or when it maps nothing) one found beside the dumps;
    parsed in a child process under limits when `isolate`."""
    names = _load_mapping(Path(os.fspath(mapping)), isolate) if mapping else None
    found = None if names else outputs.mapping_file(baseline, target)
    return names or (None if found is None else _load_mapping(found, isolate))


def _load_mapping(path: Path, isolate: bool) -> dict[str, str]:
    """One layer_mapping.yaml, named by its file name."""
    if not isolate:
        return outputs.load_mapping(path, path.name)
    return isolation.decode_mapping(path.name, outputs.load_mapping, Path(os.path.abspath(path)), path.name)


def deterministic_cost(document: ReportDocument) -> DeterministicCost | None:
    """What the fix for run-to-run differences can slow, from a profile report's operator table: on Ascend
    and GPU (ms.set_deterministic) the target's reduction and atomic operators; on CPU (one kernel thread,
    as outputs-nondeterministic's fix does there) every operator. None without a timed target."""
    step = None if document.timing is None else document.timing.target_ms_per_step
    if not step:
        return None
    records = document.operators.records
    reductions = [r for r in records if outputs.op_family(str(r.op_type or "")) == "reduction"]
    ms = sum(float(r.target_us_per_step or 0.0) for r in reductions) / 1000.0
    every = sum(float(r.target_us_per_step or 0.0) for r in records) / 1000.0
    on_cpu = any(run.role == "target" and run.device == "CPU" for run in document.runs)
    return DeterministicCost(
        setting="threads_num" if on_cpu else "set_deterministic",
        reduction_ms_per_step=round(ms, 4),
        operator_ms_per_step=round(every, 4),
        step_ms=round(float(step), 4),
        share=round((every if on_cpu else ms) / step, 4),
        operators=len(reductions),
    )


def _analyse(
    baseline: Source,
    target: Source,
    mapping: str | os.PathLike[str] | None,
    budget: Limits | None,
    isolate: bool = True,
) -> tuple[Any, list[Any], Any]:
    """(comparison, symptoms, ranked causes) of two dumps."""
    names = _mapping(baseline, target, mapping, isolate)
    with Workspace(forbidden=public_folders()) as ws:
        sides = [_read_dump(source, ws, budget, names, isolate) for source in (baseline, target)]
    comparison = outputs.compare_dumps(*sides)
    symptoms = outputs.output_symptoms(comparison)
    return comparison, symptoms, evaluate(symptoms, [], ["pair"])


def build_section(
    comparison: outputs.OutputsComparison, symptoms: Sequence[Symptom], diagnosis: Diagnosis, lang: str
) -> OutputsSection:
    """The typed section from a comparison, its symptoms and the engine's ranked causes."""
    return OutputsSection(
        baseline=_dump_info(comparison.baseline),
        target=_dump_info(comparison.target),
        tolerances=dict(outputs.TOLERANCES),
        matched=len(comparison.layers),
        only_baseline=[layer.name for layer in comparison.alignment.only_baseline],
        only_target=[layer.name for layer in comparison.alignment.only_target],
        first_divergence=_first(comparison),
        depth=[_point(i, d) for i, d in enumerate(comparison.layers)],
        symptoms=symptom_records(symptoms, lang),
        causes=cause_records(diagnosis.causes, lang),
        nothing_found=diagnosis.nothing_found,
        unexplained=_unexplained(comparison, diagnosis),
    )


def _unexplained(comparison: outputs.OutputsComparison, diagnosis: Diagnosis) -> UnexplainedDivergence | None:
    """The first divergence when no cause is significant, with what would decide it."""
    first = comparison.first
    if first is None or not diagnosis.nothing_found:
        return None
    return UnexplainedDivergence(layer=first.baseline.name, asks=list(outputs.divergence_asks(comparison)))


def _dump_info(dump: Any) -> DumpInfo:
    return DumpInfo(
        source=dump.source,
        layout=dump.layout,
        framework=dump.framework,
        layers=len(dump.layers),
        files=dump.files,
        bytes_read=dump.bytes_read,
    )


UNBOUNDED = 1e30  # the model's stand-in for a difference with no finite size (shapes or inf/nan differ)


def _finite(value: float) -> float:
    return value if value < UNBOUNDED else UNBOUNDED


def _point(depth: int, diff: Any) -> LayerPoint:
    out = diff.output
    return LayerPoint(
        depth=depth,
        layer=diff.baseline.name,
        target_layer=diff.target.name,
        op_type=diff.baseline.op_type,
        rel_diff=None if out is None else _finite(float(out.rel_diff)),
        stat=None if out is None else out.stat,
        tolerance=None if out is None else out.tolerance,
        dtype=None if out is None else out.dtype,
        diverged=diff.diverged,
    )


def _first(comparison: Any) -> FirstDivergence | None:
    first = comparison.first
    if first is None or first.output is None:
        return None
    return FirstDivergence(
        layer=first.baseline.name,
        target_layer=first.target.name,
        op_type=first.baseline.op_type,
        depth=comparison.layers.index(first),
        rel_diff=_finite(float(first.output.rel_diff)),
        stat=first.output.stat,
        tolerance=first.output.tolerance,
        dtype=first.output.dtype,
        inputs_differ=first.inputs_diverged,
        call_site=first.baseline.call_site or None,
        target_call_site=first.target.call_site or None,
    )


# ------------------------------------------------------------------------------------------ rendering


def render_outputs(report: OutputsReport, fmt: str) -> str:
    """The report in one format (md, json, csv, html)."""
    if fmt == "json":
        return report.section.model_dump_json(indent=2) + "\n"
    if fmt == "csv":
        from doctor.render.csv import outputs_csv

        return outputs_csv(report.section)
    if fmt == "html":
        return _html(report)
    return _markdown(report)


def _t(key: str, lang: str, **values: Any) -> str:
    return in_lang(say(key, **values), lang)


def _markdown(report: OutputsReport) -> str:
    return section_markdown(report.section, report.lang, level=1)


def section_markdown(section: OutputsSection, lang: str, level: int = 2) -> str:
    """The section as Markdown, its title at heading `level` (1: a report of its own; 2: inside the
    profile report)."""
    head = "#" * level
    lines = [f"{head} {_t('outputs.md-title', lang)}", ""]
    for role, info in (("baseline", section.baseline), ("target", section.target)):
        lines.append(
            f"- {_t('outputs.md-' + role, lang)}: `{_md(info.source)}` ({info.layout}, {info.framework}, "
            f"{info.layers} {_t('outputs.md-layers', lang)})"
        )
    lines += ["", f"{head}# {_t('outputs.md-first', lang)}", ""]
    first = section.first_divergence
    if first is None:
        lines.append(_t("outputs.md-no-divergence", lang, n=section.matched))
    else:
        lines.append(
            _t(
                "outputs.md-first-shape" if first.stat == "shape" else "outputs.md-first-line",
                lang,
                layer=_md(first.layer),
                op_type=_md(first.op_type),
                depth=first.depth + 1,
                n=section.matched,
                stat=first.stat,
                rel=first.rel_diff,
                dtype=first.dtype,
                tol=first.tolerance,
            )
        )
        lines += _call_sites_markdown(first, lang)
    lines += ["", f"{head}# {_t('outputs.md-causes', lang)}", ""]
    ranked = [c for c in section.causes if c.significant]
    if section.unexplained is not None:
        lines.append(unexplained_text(section.unexplained, lang, layer=md_code(section.unexplained.layer)))
    elif not ranked:
        lines.append(_t("outputs.md-nothing", lang))
    for cause in ranked:
        lines += [f"{cause.rank}. **{cause.title}** ({cause.severity}, {cause.confidence:.2f})", ""]
        code = [f"   {line}" for line in cause.fix.code.splitlines()]
        lines += [f"   ```{cause.fix.language}", *code, "   ```"]
    if section.deterministic_cost is not None:
        cost = section.deterministic_cost
        lines += [
            "",
            _t(
                f"outputs.md-deterministic-cost-{cost.setting}",
                lang,
                every=cost.operator_ms_per_step,
                ms=cost.reduction_ms_per_step,
                step=cost.step_ms,
                share=cost.share * 100,
                n=cost.operators,
            ),
        ]
    columns = " | ".join(_t(f"outputs.md-col-{c}", lang) for c in ("layer", "op", "rel", "stat", "tol"))
    lines += ["", f"{head}# {_t('outputs.md-depth', lang)}", "", f"| # | {columns} |"]
    lines.append("|---|---|---|---|---|---|")
    for p in section.depth:
        mark = " ⚠" if p.diverged else ""
        rel = "—" if p.rel_diff is None else "∞" if p.rel_diff >= UNBOUNDED else f"{p.rel_diff:.3g}"
        tol = "—" if p.tolerance is None else f"{p.tolerance:g} ({p.dtype})"
        row = (
            f"| {p.depth + 1} | `{_md(p.layer)}`{mark} | {_md(p.op_type)} | {rel} | {p.stat or '—'} | {tol} |"
        )
        lines.append(row)
    if section.only_baseline or section.only_target:
        lines += ["", f"{head}# {_t('outputs.md-one-sided', lang)}", ""]
        lines += [f"- baseline: `{_md(n)}`" for n in section.only_baseline]
        lines += [f"- target: `{_md(n)}`" for n in section.only_target]
    return "\n".join(lines) + "\n"


def _call_sites_markdown(first: FirstDivergence, lang: str) -> list[str]:
    """Where each run's first divergent call was made (msprobe stack.json), as list items; [] if unknown."""
    sites = [
        ("outputs.md-call-site", first.call_site),
        ("outputs.md-target-call-site", first.target_call_site),
    ]
    items = [f"- {_t(key, lang)}: {md_code(site)}" for key, site in sites if site]
    return ["", *items] if items else []


def _md(text: str) -> str:
    """User data in Markdown: no table breaks, no backticks, no HTML."""
    return html.escape(str(text).replace("|", "\\|").replace("`", "'"))


def depth_figure(section: OutputsSection, lang: str = "en") -> go.Figure:
    """The divergence along depth: relative difference per matched layer (log scale) and the tolerance.
    A layer whose difference has no finite size (1e30 in the model: shapes or inf/nan counts differ) is
    not drawn at 1e30, which would squash every real difference to the axis floor: it is a distinct
    marker at the top of the axis, saying why on hover."""
    import plotly.graph_objects as go

    xs = [p.depth + 1 for p in section.depth]
    unbounded = [p for p in section.depth if _unbounded(p)]
    finite = [max(p.rel_diff or 0.0, FLOOR) for p in section.depth if not _unbounded(p)]
    top = _axis_top(finite + [p.tolerance or FLOOR for p in section.depth])
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=xs,
            y=[None if _unbounded(p) else max(p.rel_diff or 0.0, FLOOR) for p in section.depth],
            mode="lines+markers",
            name=_t("outputs.md-rel", lang),
            text=[p.layer for p in section.depth],
            marker={"color": ["#c0392b" if p.diverged else "#2e86c1" for p in section.depth]},
        )
    )
    figure.add_trace(
        go.Scatter(x=xs, y=[p.tolerance or FLOOR for p in section.depth], mode="lines", name="tolerance")
    )
    if unbounded:
        figure.add_trace(
            go.Scatter(
                x=[p.depth + 1 for p in unbounded],
                y=[top] * len(unbounded),
                mode="markers+text",
                name=_t("outputs.plot-unbounded", lang),
                text=["∞"] * len(unbounded),
                textposition="bottom center",
                hovertext=[f"{p.layer}: {_t(_unbounded_reason(p), lang)}" for p in unbounded],
                hoverinfo="text+x",
                marker={"symbol": "triangle-up", "size": 13, "color": "#c0392b", "line": {"width": 1}},
            )
        )
    low = math.log10(min(finite + [p.tolerance or FLOOR for p in section.depth] + [top]))
    span = [low - 0.5, math.log10(top) + 0.5]  # log10 units: the markers at `top` stay inside
    figure.update_layout(
        title=_t("outputs.md-depth", lang),
        xaxis_title=_t("outputs.md-layer-depth", lang),
        yaxis={"type": "log", "title": _t("outputs.md-rel", lang), "range": span},
        height=360,
    )
    return figure


FLOOR = 1e-12  # where an exact match is drawn on the log axis


def _unbounded(point: LayerPoint) -> bool:
    """A difference with no finite size (the model's 1e30 stand-in)."""
    return point.rel_diff is not None and point.rel_diff >= UNBOUNDED


def _unbounded_reason(point: LayerPoint) -> str:
    """The message id saying why a difference has no finite size."""
    return "outputs.plot-shape" if point.stat == "shape" else "outputs.plot-non-finite"


def _axis_top(values: list[float]) -> float:
    """A power of ten above every finite value drawn: where the unbounded markers sit."""
    return 10.0 ** (math.floor(math.log10(max(values, default=1.0))) + 1)


def _html(report: OutputsReport) -> str:
    """A standalone page: the Markdown report's facts and the depth plot (plotly, inline JS)."""
    body = html.escape(_markdown(report))
    plot = depth_figure(report.section, report.lang).to_html(full_html=False, include_plotlyjs="cdn")
    first = report.section.first_divergence
    data = html.escape(json.dumps(first.model_dump() if first else None))
    return (
        f"<!doctype html><html lang='{report.lang}'><meta charset='utf-8'><title>Perf Doctor</title>"
        f"<body><pre>{body}</pre>{plot}"
        f"<script type='application/json' id='first'>{data}</script></body></html>\n"
    )

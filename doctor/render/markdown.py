"""Markdown rendering of a report, whole or in parts (the app shows the parts in gr.Markdown).

It reads the typed document (doctor.model), so a renamed or retyped field fails here, not in a reader's
browser.

Every user string is escaped with doctor.text (HTML-escaped and Markdown punctuation backslash-escaped,
or put in a code span); rule text and fix code come from the packaged knowledge base.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from doctor.chain_rows import chain_records
from doctor.i18n import t, word
from doctor.report import Report
from doctor.text import (
    fenced,
    fmt_ms,
    fmt_number,
    fmt_percent,
    fmt_ratio,
    md_cell,
    md_code,
    md_text,
    strip_control,
)
from doctor.wording import evidence_line, severity_word, status_text

if TYPE_CHECKING:
    from doctor.model import Cause, Reference

MAX_TABLE_ROWS = 50


def render_markdown(report: Report) -> str:
    """The full report as one Markdown document."""
    lang = report.lang
    parts = [
        f"# {t('title', lang)}",
        case_markdown(report),
        verdict_markdown(report),
        inputs_markdown(report),
        f"## {t('causes', lang)}",
        causes_markdown(report),
        after_markdown(report),
        ranks_markdown(report),
        outputs_markdown(report),
        f"## {t('warnings', lang)}",
        warnings_markdown(report),
        operators_markdown(report),
        leaderboards_markdown(report),
        steps_markdown(report),
        graph_markdown(report),
        symptoms_markdown(report),
        footer_markdown(report),
    ]
    return strip_control("\n\n".join(p for p in parts if p).rstrip() + "\n")


def case_markdown(report: Report) -> str:
    """The case id and link of a kept case's download ("" otherwise)."""
    case = report.document.case
    return t("case_line", report.lang, case=md_code(case.id), link=case.link) if case else ""


def verdict_markdown(report: Report) -> str:
    """The verdict line, bold, with its status."""
    v = report.document.verdict
    status = status_text(v.status, report.lang)
    return f"**{t('verdict', report.lang)}** ({md_text(status)}): {md_text(v.text)}"


def inputs_markdown(report: Report) -> str:
    """Inputs with detected layouts, then one row per run."""
    lang = report.lang
    rows = [
        [t(i.role, lang), md_code(i.name), md_cell(i.kind), md_cell(i.layout)] for i in report.document.inputs
    ]
    out = [f"## {t('inputs', lang)}", _table(["role", "name", "kind", "layout"], rows)]
    runs = report.document.shown_runs()
    if runs:
        head = ["role", "device", "mode", "phase", "steps", "batch", "ms/step", "operators"]
        rows = [
            [
                t(r.role, lang),
                md_cell(r.device),
                md_cell(r.execution_mode),
                md_cell(r.phase),
                md_cell(r.steps),
                md_cell(r.batch),
                fmt_number(r.ms_per_step),
                md_cell(r.operators),
            ]
            for r in runs
        ]
        out += [f"### {t('runs', lang)}", _table(head, rows)]
    return "\n\n".join(out)


def causes_markdown(report: Report, limit: int | None = None, below: bool = True) -> str:
    """One numbered card per significant cause, then (with `below`) the causes below the reporting
    threshold, unnumbered with their confidence: they are not findings. The app shows those apart."""
    lang = report.lang
    ranked = [c for c in report.document.causes if c.section == "ranked"]
    shown = ranked[:limit] if limit else ranked
    parts = ["\n\n---\n\n".join(cause_card(c, lang) for c in shown) if shown else t("no_causes", lang)]
    rest = below_threshold_section(report) if below else ""
    return "\n\n".join(p for p in (*parts, rest) if p)


def below_threshold_section(report: Report) -> str:
    """The causes below the reporting threshold as Markdown, or "" when every cause is significant."""
    below = [c for c in report.document.causes if c.section != "ranked"]
    return below_threshold_markdown(below, report.lang) if below else ""


def below_threshold_markdown(causes: Sequence[Cause], lang: str) -> str:
    """The causes that did not reach the reporting threshold, unnumbered, each with its confidence.

    A heading and a list, not an HTML <details>: a Markdown line that starts with "<" opens a raw HTML
    block, which the renderers never emit (the HTML report and the app collapse this section)."""
    items = [
        f"- {md_text(c.title)} ({md_code(c.id)}) · {t('confidence', lang)} {c.confidence:.2f} · "
        f"{t('severity', lang)} {md_text(severity_word(c.severity_label, lang))}"
        for c in causes
    ]
    return "\n".join([f"#### {md_text(t('below_threshold', lang, n=len(causes)))}", "", *items])


def cause_card(cause: Cause, lang: str) -> str:
    """A Markdown card for one cause; the fix is a fenced block (Gradio gives it a copy button)."""
    head = f"### {cause.rank}. {md_text(cause.title)}"
    facts = [
        md_code(cause.id),
        f"{t('severity', lang)} **{md_text(severity_word(cause.severity_label, lang))}**",
        f"{t('confidence', lang)} **{cause.confidence:.2f}**",
    ]
    if cause.recoverable_ms_per_step is not None:
        facts.append(
            f"{t('recoverable', lang)} **{fmt_ms(cause.recoverable_ms_per_step)}** {t('per_step', lang)}"
        )
    if cause.basis == "lone":
        facts.append(t("basis_lone", lang))
    lines = [head, " · ".join(facts), "", f"**{t('evidence', lang)}**", ""]
    lines += [
        f"- {md_text(evidence_line(e.role, e.summary, e.baseline_summary, lang))}" for e in cause.evidence
    ]
    fix = cause.fix
    lines += ["", f"**{t('fix', lang)}**", "", fenced(fix.code, fix.language)]
    if fix.notes:
        lines += ["", md_text(fix.notes)]
    why = cause.explanation.why_it_matters
    if why:
        lines += ["", f"**{t('why', lang)}**: {md_text(why)}"]
    if cause.caveats:
        lines += ["", f"**{t('caveats', lang)}**: " + " ".join(md_text(c) for c in cause.caveats)]
    if cause.references:
        refs = ", ".join(_link(r) for r in cause.references)
        lines += ["", f"**{t('references', lang)}**: {refs}"]
    return "\n".join(lines)


def _link(reference: Reference) -> str:
    """A Markdown link for http(s) URLs; anything else is shown as text."""
    title, url = reference.title, reference.url
    if url.startswith(("https://", "http://")) and not any(c in url for c in " ()<>\"'"):
        return f"[{md_text(title)}]({url})"
    return f"{md_text(title)} ({md_code(url)})"


def outputs_markdown(report: Report) -> str:
    """The outputs section (two runs' dumps compared layer by layer); empty when no dumps were given."""
    section = report.document.outputs
    if section is None:
        return ""
    from doctor.outputs_report import section_markdown

    return section_markdown(section, lang=report.lang, level=2).rstrip()


def after_markdown(report: Report) -> str:
    """The after-the-fix section: measured vs predicted gain, each cause's status, new causes and the
    waterfall; empty when no after run was given."""
    after = report.document.after
    if after is None:
        return ""
    lang = report.lang
    gain = t(
        "after_gain",
        lang,
        gain=fmt_ms(after.gain_ms_per_step),
        target=fmt_ms(after.target_ms_per_step),
        after=fmt_ms(after.after_ms_per_step),
        predicted=fmt_ms(after.predicted_gain_ms_per_step),
        ratio=fmt_ratio(after.measured_to_predicted),
    )
    out = [f"## {t('after_title', lang)}", md_text(gain)]
    if after.step_basis == "wall":
        out.append(md_text(t("after_basis_wall", lang, gain=fmt_ms(after.operator_gain_ms_per_step))))
    if after.per_sample:
        out.append(
            md_text(
                t(
                    "after_per_sample",
                    lang,
                    target_batch=after.target_batch,
                    after_batch=after.after_batch,
                    per_sample=fmt_ms(after.gain_ms_per_sample),
                )
            )
        )
    head = [
        t(k, lang) for k in ("col_cause", "col_status", "col_before_ms", "col_after_ms", "col_counted_ms")
    ]
    rows = [
        [
            f"{md_cell(c.title)} ({_code_cell(c.id)})",
            md_cell(t(f"status_{c.status}", lang)),
            fmt_number(c.before_ms_per_step),
            fmt_number(c.after_ms_per_step),
            fmt_number(c.predicted_gain_ms_per_step),
        ]
        for c in after.causes
    ]
    if rows:
        out.append(_table(head, rows))
    if after.new_causes:
        lines = [
            f"- {md_text(c.title)} ({md_code(c.id)}): {md_text(severity_word(c.severity, lang))}, "
            f"{fmt_ms(c.recoverable_ms_per_step)}"
            for c in after.new_causes
        ]
        out += [f"### {t('after_new', lang)}", "\n".join(lines)]
    if after.waterfall:
        head = [t(k, lang) for k in ("col_cause", "col_claimed_ms", "col_counted_ms", "col_pool")]
        rows = [
            [_code_cell(w.cause), fmt_number(w.claimed_ms), fmt_number(w.counted_ms), md_cell(w.pool)]
            for w in after.waterfall
        ]
        out += [f"### {t('after_waterfall', lang)}", _table(head, rows)]
    return "\n\n".join(out)


def ranks_markdown(report: Report) -> str:
    """Every rank of the multi-rank inputs: per job a table of ranks (median per step), the slow rank and
    why, slow links; then rank by rank when both jobs hold the same ranks. Empty for one-rank inputs."""
    ranks = report.document.ranks
    if ranks is None:
        return ""
    lang = report.lang
    out = (
        [f"## {t('ranks_title', lang)}", md_text(ranks.comparison)]
        if ranks.comparison
        else [f"## {t('ranks_title', lang)}"]
    )
    for job in ranks.jobs:
        title = t("ranks_job", lang, role=t(job.role, lang), n=job.ranks, chosen=job.chosen_rank)
        out.append(f"### {md_text(title)}")
        head = [
            t(k, lang)
            for k in (
                "col_rank_id",
                "col_status",
                "col_wall_ms",
                "col_computing_ms",
                "col_comm_ms",
                "col_free_ms",
            )
        ]
        rows = [
            [
                str(r.rank),
                t("rank_ok", lang) if r.status == "ok" else f"{t('rank_broken', lang)}: {md_cell(r.error)}",
                fmt_number(r.wall_ms),
                fmt_number(r.computing_ms),
                fmt_number(r.communication_ms),
                fmt_number(r.free_ms),
            ]
            for r in job.rows[:MAX_TABLE_ROWS]
        ]
        out.append(_table(head, rows))
        out += _slow_rank_lines(job, lang)
        if job.note:
            out.append(md_text(job.note))
        if job.slow_links:
            head = [t(k, lang) for k in ("col_rank_id", "col_link", "col_gbps", "col_median_gbps")]
            links = [
                [
                    str(x.rank),
                    md_cell(x.link if x.pair is None else f"{x.link} {x.pair}"),
                    fmt_number(x.gbps),
                    fmt_number(x.median_gbps),
                ]
                for x in job.slow_links
            ]
            out += [f"#### {t('ranks_links', lang)}", _table(head, links)]
    if ranks.by_rank:
        keys = (
            "col_rank_id",
            "col_base_computing",
            "col_target_computing",
            "col_base_wall",
            "col_target_wall",
        )
        rows = [
            [
                str(d.rank),
                *(
                    fmt_number(v)
                    for v in (
                        d.baseline_computing_ms,
                        d.target_computing_ms,
                        d.baseline_wall_ms,
                        d.target_wall_ms,
                    )
                ),
            ]
            for d in ranks.by_rank[:MAX_TABLE_ROWS]
        ]
        out += [f"### {t('ranks_by_rank', lang)}", _table([t(k, lang) for k in keys], rows)]
    return "\n\n".join(out)


def _slow_rank_lines(job: Any, lang: str) -> list[str]:
    """The slow rank's sentence and its causes against the typical rank (or that none stands out)."""
    slow = job.slow_rank
    if slow is None:
        return [] if job.note else [md_text(t("ranks_none", lang))]
    text = t(
        "ranks_slow",
        lang,
        rank=slow.rank,
        ratio=f"{slow.ratio:.2f}",
        extra=fmt_ms(slow.extra_ms_per_step),
        flagged=slow.steps_flagged,
        steps=slow.steps_total,
        victims=", ".join(str(v) for v in slow.victims) or "-",
        wait=fmt_ms(slow.wait_ms_per_step),
    )
    lines = [md_text(text)]
    if slow.why:
        items = [
            f"- {md_text(c.title)} ({md_code(c.id)}, {fmt_ms(c.recoverable_ms_per_step)})" for c in slow.why
        ]
        lines.append(md_text(t("ranks_why", lang, typical=slow.typical_rank)) + "\n\n" + "\n".join(items))
    return lines


def warnings_markdown(report: Report) -> str:
    """'Cannot decide' questions, input limitations, notes and model notes as a list."""
    items = report.document.warnings
    if not items:
        return "—"
    lines = []
    for w in items:
        text = md_text(w.text)
        if w.roles and w.kind == "limitation":
            text = f"({', '.join(t(r, report.lang) for r in w.roles)}) {text}"
        if w.remedy:
            text += f" → {md_text(w.remedy)}"
        lines.append(f"- **{md_text(word('warning_', w.kind, report.lang))}**: {text}")
    return "\n".join(lines)


def operators_markdown(report: Report, limit: int = MAX_TABLE_ROWS) -> str:
    """The operator table (largest change first), capped at `limit` rows."""
    lang = report.lang
    records = report.document.operators.records
    if not records:
        return ""
    pair = report.kind == "pair"
    title = t("operators" if pair else "operators_single", lang)
    if pair:
        head = [
            t(k, lang)
            for k in (
                "col_operator",
                "col_type",
                "col_match",
                "col_baseline_us",
                "col_target_us",
                "col_delta_us",
                "col_ratio",
                "col_reason",
            )
        ]
        rows = [
            [
                _code_cell(r.operator),
                md_cell(r.op_type),
                md_cell(r.match),
                fmt_number(r.baseline_us_per_step),
                fmt_number(r.target_us_per_step),
                fmt_number(r.delta_us_per_step),
                fmt_ratio(r.ratio),
                md_cell(r.one_side_reason or ""),
            ]
            for r in records[:limit]
        ]
    else:
        head = [t(k, lang) for k in ("col_operator", "col_type", "col_us", "col_share")]
        rows = [
            [
                _code_cell(r.operator),
                md_cell(r.op_type),
                fmt_number(r.target_us_per_step),
                fmt_percent(r.target_share),
            ]
            for r in records[:limit]
        ]
    out = [f"## {title}", _table(head, rows)]
    if len(records) > limit:
        out.append(md_text(t("rows_cut", lang, shown=limit, total=len(records))))
    return "\n\n".join(out)


def leaderboards_markdown(report: Report) -> str:
    """Top-10 operators of each side."""
    lang = report.lang
    out = []
    boards = report.document.leaderboards
    for role, board in (("baseline", boards.baseline), ("target", boards.target)):
        if not board:
            continue
        rows = [
            [
                str(r.rank),
                _code_cell(r.operator),
                md_cell(r.op_type),
                fmt_number(r.us_per_step),
                fmt_percent(r.share),
            ]
            for r in board
        ]
        head = [t(k, lang) for k in ("col_rank", "col_operator", "col_type", "col_us", "col_share")]
        out += [f"### {t('leaderboard_of', lang, n=len(board), role=t(role, lang))}", _table(head, rows)]
    return "\n\n".join([f"## {t('leaderboards', lang)}", *out]) if out else ""


def steps_markdown(report: Report) -> str:
    """Step times per role."""
    lang = report.lang
    steps = report.document.steps
    if not steps:
        return ""
    head = ["role", t("col_step", lang), t("col_wall_ms", lang), t("col_op_ms", lang)]
    rows = [[t(s.role, lang), str(s.step), fmt_number(s.wall_ms), fmt_number(s.op_ms)] for s in steps]
    return f"## {t('steps', lang)}\n\n{_table(head, rows)}"


def graph_summary_markdown(report: Report) -> str:
    """One line on the model: file, exporter version, op count, inputs and chain totals."""
    graph = report.document.graph
    if graph is None:
        return ""
    chains = graph.chains
    inputs = ", ".join(f"{md_code(i.name)} {md_text(i.dtype)} {md_text(i.shape)}" for i in graph.inputs)
    return (
        f"{md_code(graph.file)}: MindSpore {md_text(graph.model_version)}, {graph.op_nodes} ops, "
        f"inputs {inputs or '—'}; {chains.total} chains "
        f"({chains.fusible} fusible, {chains.blocked} blocked)"
    )


def _pattern_cell(p: Any) -> str:
    """The pattern name, and for a decomposed pattern the fused op that replaces it."""
    return md_code(p.pattern) + (f" → {md_code(p.replaced_by)}" if p.replaced_by else "")


def graph_markdown(report: Report) -> str:
    """The model summary and its fusion chains by pattern."""
    graph = report.document.graph
    if graph is None:
        return ""
    lang = report.lang
    head = [t(k, lang) for k in ("col_pattern", "col_count", "col_fusible", "col_blocked")]
    rows = [[_pattern_cell(p), str(p.count), str(p.fusible), str(p.blocked)] for p in graph.chains.by_pattern]
    parts = [
        f"## {t('graph', lang)}",
        graph_summary_markdown(report),
        f"### {t('chains', lang)}",
        _table(head, rows),
    ]
    records = chain_records(report.document)
    if records:
        keys = ["col_rank", "col_pattern", "col_status", "col_blocked_reason", "col_separate_us", "col_ops"]
        keys.append("col_scope")
        chain_rows = [
            [
                str(r["index"]),
                md_code(r["pattern"]),
                t(f"chain_{r['status']}", lang),
                md_cell(r["reason"] or None),
                md_cell(r["separate_us"]),
                md_text(r["ops"]),
                md_code(r["scope"]) if r["scope"] else "—",
            ]
            for r in records
        ]
        parts += [f"### {t('chain_list', lang)}", _table([t(k, lang) for k in keys], chain_rows)]
    return "\n\n".join(parts)


def symptoms_markdown(report: Report) -> str:
    """Every symptom the analyzers and graph checks found."""
    symptoms = report.document.symptoms
    if not symptoms:
        return ""
    lines = [f"- {md_code(s.kind)} ({md_text(s.source)}): {md_text(s.summary)}" for s in symptoms]
    return f"## {t('symptoms', report.lang)}\n\n" + "\n".join(lines)


def footer_markdown(report: Report) -> str:
    """Who made the report and when."""
    d = report.document
    when, schema = d.created_utc, d.schema_version
    return (
        "_"
        + md_text(t("generated", report.lang, version=d.generator.version, when=when, schema=schema))
        + "_"
    )


def _code_cell(value: Any) -> str:
    """A code span inside a table cell (pipes must be escaped even inside code in GFM tables)."""
    return md_code(value).replace("|", "\\|")


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)

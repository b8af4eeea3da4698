"""A standalone HTML report that works offline: inline CSS, plotly.js embedded once, no external URL loaded.

All text goes through html.escape (doctor.text.h). A Content-Security-Policy forbids loading anything
from the network, so even a mistake elsewhere cannot make the file fetch or run remote code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from doctor.i18n import t
from doctor.plots import report_figures
from doctor.report import Report
from doctor.text import fmt_ms, fmt_number, fmt_percent, fmt_ratio, h
from doctor.wording import evidence_text, severity_text

MAX_HTML_ROWS = 300
CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data: blob:; font-src data:"
)
STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:1.5rem;
color:#1f2328}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #d0d7de;padding-bottom:.3rem}
.verdict{font-size:1.15rem;padding:1rem;border-radius:8px;background:#fff8c5;border:1px solid #d4a72c}
.verdict.ok{background:#dafbe1;border-color:#4ac26b}
.card{border:1px solid #d0d7de;border-radius:8px;padding:1rem 1.2rem;margin:1rem 0}
.card h3{margin-top:0}.facts span{margin-right:1.2rem}.sev{font-weight:bold;text-transform:uppercase}
.sev-critical,.sev-high{color:#cf222e}.sev-medium{color:#9a6700}.sev-low,.sev-info{color:#0969da}
pre{background:#f6f8fa;padding:.8rem;border-radius:6px;overflow-x:auto}code{font-family:ui-monospace,monospace}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f6f8fa}
.scroll{max-height:600px;overflow:auto}.muted{color:#656d76;font-size:.85rem}
"""


def render_html(report: Report) -> str:
    """The full report as one self-contained HTML page."""
    lang = report.lang
    body = [
        f"<h1>{h(t('title', lang))}</h1>",
        _verdict(report),
        _inputs(report),
        f"<h2>{h(t('causes', lang))}</h2>",
        _causes(report),
        f"<h2>{h(t('warnings', lang))}</h2>",
        _warnings(report),
        _plots(report),
        _operators(report),
        _leaderboards(report),
        _graph(report),
        _symptoms(report),
        f"<p class='muted'>{h(_generated(report))}</p>",
    ]
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{"zh-CN" if lang == "zh" else "en"}"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{h(CSP)}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{h(t('title', lang))}</title><style>{STYLE}</style></head><body>\n"
        + "\n".join(part for part in body if part)
        + "\n</body></html>\n"
    )


def _generated(report: Report) -> str:
    d = report.data
    return t(
        "generated",
        report.lang,
        version=d["generator"]["version"],
        when=d["created_utc"],
        schema=d["schema_version"],
    )


def _verdict(report: Report) -> str:
    v = report.data["verdict"]
    cls = {"problem": "verdict", "findings": "verdict findings"}.get(v["status"], "verdict ok")
    return f"<p class='{cls}' id='verdict'><b>{h(t('verdict', report.lang))}:</b> {h(v['text'])}</p>"


def _inputs(report: Report) -> str:
    lang = report.lang
    rows = [[t(i["role"], lang), i["name"], i["kind"], i["layout"]] for i in report.data["inputs"]]
    out = [f"<h2>{h(t('inputs', lang))}</h2>", _table(["role", "name", "kind", "layout"], rows)]
    if report.data["runs"]:
        head = ["role", "device", "mode", "phase", "steps", "batch", "ms/step", "operators"]
        rows = [
            [
                t(r["role"], lang),
                r["device"],
                r["execution_mode"],
                r["phase"],
                r["steps"],
                r["batch"],
                r["ms_per_step"],
                r["operators"],
            ]
            for r in report.data["runs"]
        ]
        out.append(_table(head, rows))
    return "\n".join(out)


def _causes(report: Report) -> str:
    """Numbered cards for the significant causes; the rest collapsed below the reporting threshold."""
    lang = report.lang
    ranked = [c for c in report.causes if c["section"] == "ranked"]
    below = [c for c in report.causes if c["section"] != "ranked"]
    out = [_card(c, lang) for c in ranked] or [f"<p>{h(t('no_causes', lang))}</p>"]
    if below:
        items = "".join(
            f"<li>{h(c['title'])} (<code>{h(c['id'])}</code>) · {h(t('confidence', lang))} "
            f"{c['confidence']:.2f} · {h(t('severity', lang))} {h(severity_text(c, lang))}</li>"
            for c in below
        )
        summary = h(t("below_threshold", lang, n=len(below)))
        out.append(
            f"<details class='below' id='below-threshold'><summary>{summary}</summary>"
            f"<ul>{items}</ul></details>"
        )
    return "\n".join(out)


def _card(cause: dict[str, Any], lang: str) -> str:
    severity = h(cause["severity_label"])
    facts = [
        f"<code>{h(cause['id'])}</code>",
        f"{h(t('severity', lang))} <span class='sev sev-{severity}'>{h(severity_text(cause, lang))}</span>",
        f"{h(t('confidence', lang))} <b>{cause['confidence']:.2f}</b>",
    ]
    if cause["basis"] == "lone":
        facts.append(h(t("basis_lone", lang)))
    recoverable = cause["recoverable_ms_per_step"]
    if recoverable is not None:
        facts.append(f"{h(t('recoverable', lang))} <b>{h(fmt_ms(recoverable))}</b> {h(t('per_step', lang))}")
    evidence = "".join(f"<li>{h(evidence_text(e, lang))}</li>" for e in cause["evidence"])
    fix = cause["fix"]
    parts = [
        f"<div class='card' id='cause-{h(cause['id'])}'><h3>{cause['rank']}. {h(cause['title'])}</h3>",
        "<div class='facts'>" + "".join(f"<span>{f}</span>" for f in facts) + "</div>",
        f"<h4>{h(t('evidence', lang))}</h4><ul>{evidence}</ul>",
        f"<h4>{h(t('fix', lang))}</h4>",
        f"<pre><code class='language-{h(fix['language'])}'>{h(fix['code'])}</code></pre>",
    ]
    if fix.get("notes"):
        parts.append(f"<p>{h(fix['notes'])}</p>")
    why = cause["explanation"].get("why_it_matters")
    if why:
        parts.append(f"<p><b>{h(t('why', lang))}:</b> {h(why)}</p>")
    if cause["caveats"]:
        parts.append(f"<p><b>{h(t('caveats', lang))}:</b> {h(' '.join(cause['caveats']))}</p>")
    if cause["references"]:
        refs = ", ".join(_ref(r) for r in cause["references"])
        parts.append(f"<p><b>{h(t('references', lang))}:</b> {refs}</p>")
    parts.append("</div>")
    return "\n".join(parts)


def _ref(ref: dict[str, str]) -> str:
    """A link for http(s) URLs (opened in a new tab, no referrer), text for anything else."""
    url = ref["url"]
    if url.startswith(("https://", "http://")):
        return f"<a href='{h(url)}' rel='noopener noreferrer' target='_blank'>{h(ref['title'])}</a>"
    return f"{h(ref['title'])} (<code>{h(url)}</code>)"


def _warnings(report: Report) -> str:
    items = report.data["warnings"]
    if not items:
        return "<p>—</p>"
    lis = []
    for w in items:
        remedy = f" → {h(w['remedy'])}" if w["remedy"] else ""
        roles = (
            f"({h(', '.join(t(r, report.lang) for r in w['roles']))}) " if w["kind"] == "limitation" else ""
        )
        lis.append(f"<li><b>{h(w['kind'])}</b>: {roles}{h(w['text'])}{remedy}</li>")
    return "<ul id='warnings'>" + "".join(lis) + "</ul>"


def _plots(report: Report) -> str:
    figures = report_figures(report)
    if not figures:
        return ""
    parts = [f"<h2>{h(t('plots', report.lang))}</h2>"]
    for index, fig in enumerate(figures.values()):
        parts.append(_figure_html(fig, first=index == 0))
    return "\n".join(parts)


def _figure_html(fig: go.Figure, first: bool) -> str:
    """A figure div; the first one carries the whole plotly.js bundle inline (no CDN)."""
    return fig.to_html(
        full_html=False,
        include_plotlyjs=first,
        include_mathjax=False,
        config={"displaylogo": False, "responsive": True},
    )


def _operators(report: Report) -> str:
    records = report.data["operators"]["records"]
    if not records:
        return ""
    lang = report.lang
    shown = records[:MAX_HTML_ROWS]
    if report.kind == "pair":
        keys = (
            "col_operator",
            "col_type",
            "col_match",
            "col_baseline_us",
            "col_target_us",
            "col_delta_us",
            "col_ratio",
            "col_reason",
        )
        rows = [
            [
                r["operator"],
                r["op_type"],
                r["match"],
                r["baseline_us_per_step"],
                r["target_us_per_step"],
                r["delta_us_per_step"],
                fmt_ratio(r["ratio"]),
                r["one_side_reason"],
            ]
            for r in shown
        ]
    else:
        keys = ("col_operator", "col_type", "col_us", "col_share")
        rows = [
            [r["operator"], r["op_type"], r["target_us_per_step"], fmt_percent(r["target_share"])]
            for r in shown
        ]
    out = [
        f"<h2>{h(t('operators' if report.kind == 'pair' else 'operators_single', lang))}</h2>",
        "<div class='scroll'>" + _table([t(k, lang) for k in keys], rows, table_id="operators") + "</div>",
    ]
    if len(records) > len(shown):
        out.append(f"<p class='muted'>{h(t('rows_cut', lang, shown=len(shown), total=len(records)))}</p>")
    return "\n".join(out)


def _leaderboards(report: Report) -> str:
    lang = report.lang
    out = []
    for role in ("baseline", "target"):
        board = report.data["leaderboards"][role]
        if board:
            head = [t(k, lang) for k in ("col_rank", "col_operator", "col_type", "col_us", "col_share")]
            rows = [
                [r["rank"], r["operator"], r["op_type"], r["us_per_step"], fmt_percent(r["share"])]
                for r in board
            ]
            out += [
                f"<h3>{h(t('leaderboard_of', lang, n=len(board), role=t(role, lang)))}</h3>",
                _table(head, rows),
            ]
    return "\n".join([f"<h2>{h(t('leaderboards', lang))}</h2>", *out]) if out else ""


def _graph(report: Report) -> str:
    graph = report.data["graph"]
    if not graph:
        return ""
    lang = report.lang
    chains = graph["chains"]
    head = [t(k, lang) for k in ("col_pattern", "col_count", "col_fusible", "col_blocked")]
    rows = [[p["pattern"], p["count"], p["fusible"], p["blocked"]] for p in chains["by_pattern"]]
    summary = (
        f"{graph['file']}: MindSpore {graph['model_version']}, {graph['op_nodes']} ops; "
        f"{chains['total']} chains ({chains['fusible']} fusible, {chains['blocked']} blocked)"
    )
    return "\n".join(
        [
            f"<h2>{h(t('graph', lang))}</h2>",
            f"<p>{h(summary)}</p>",
            f"<h3>{h(t('chains', lang))}</h3>",
            _table(head, rows, table_id="chains"),
        ]
    )


def _symptoms(report: Report) -> str:
    symptoms = report.data["symptoms"]
    if not symptoms:
        return ""
    lis = "".join(
        f"<li><code>{h(s['kind'])}</code> ({h(s['source'])}): {h(s['summary'])}</li>" for s in symptoms
    )
    return f"<h2>{h(t('symptoms', report.lang))}</h2><ul>{lis}</ul>"


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]], table_id: str = "") -> str:
    """An HTML table; numbers right-aligned and formatted, everything else escaped text."""
    ident = f" id='{h(table_id)}'" if table_id else ""
    out = [f"<table{ident}><thead><tr>" + "".join(f"<th>{h(c)}</th>" for c in head) + "</tr></thead><tbody>"]
    for row in rows:
        cells = []
        for value in row:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                cells.append(f"<td class='n'>{h(fmt_number(value))}</td>")
            else:
                cells.append(f"<td>{h('—' if value is None else value)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)

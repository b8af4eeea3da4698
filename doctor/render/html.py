"""A standalone HTML report that works offline: inline CSS, plotly.js embedded once, no external URL loaded.

The page comes from the Jinja2 templates in doctor/render/templates, rendered from the typed report
document (`Report.document`) with autoescape on: every ``{{ value }}`` is escaped unless it is markup, and the
only markup that is not made by the templates is the plotly figure HTML (`_figure_html`). A
Content-Security-Policy forbids loading anything from the network, so even a mistake elsewhere cannot
make the file fetch or run remote code.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

import plotly.graph_objects as go
from jinja2 import Environment, PackageLoader, StrictUndefined, pass_context
from jinja2.runtime import Context
from markupsafe import Markup

from doctor.chain_rows import chain_records
from doctor.i18n import t
from doctor.plots import report_figures
from doctor.report import Report
from doctor.text import fmt_ms, fmt_number, fmt_percent, fmt_ratio, h
from doctor.wording import evidence_text, severity_text, unexplained_text

if TYPE_CHECKING:
    from doctor.model import ReportDocument

MAX_HTML_ROWS = 300
CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data: blob:; font-src data:"
)
TEMPLATE = "report.html.j2"


def render_html(report: Report) -> str:
    """The full report as one self-contained HTML page."""
    figures = list(report_figures(report).values())
    if report.document.outputs is not None:  # two runs' dumps: the divergence along depth
        from doctor.outputs_report import depth_figure

        figures.append(depth_figure(report.document.outputs, report.lang))
    return render_page(report.document, [_figure_html(fig, first=i == 0) for i, fig in enumerate(figures)])


def render_page(doc: ReportDocument, figures: Iterable[Markup] = ()) -> str:
    """The page of a report document and its figure divs; a field the templates need that the document
    lacks raises jinja2.UndefinedError instead of rendering as empty text."""
    template = environment().get_template(TEMPLATE)
    return template.render(
        doc=doc,
        lang=doc.lang,
        figures=list(figures),
        csp=CSP,
        max_rows=MAX_HTML_ROWS,
        chain_rows=chain_records(doc),
    )


@cache
def environment() -> Environment:
    """The templates' environment: autoescape, strict undefined, and the report's text helpers."""
    env = Environment(
        loader=PackageLoader("doctor.render", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        finalize=_escaped,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        t=_translated,
        severity=_in_lang(severity_text),
        evidence=_in_lang(evidence_text),
        unexplained=_in_lang(unexplained_text),
        number=fmt_number,
        ms=fmt_ms,
        ratio=fmt_ratio,
        percent=fmt_percent,
    )
    env.tests["numeric"] = _numeric
    return env


def _escaped(value: object) -> Markup:
    """Each ``{{ value }}`` as markup: markup unchanged, anything else through html.escape.

    Jinja's own escape (markupsafe) writes ' and " as &#39; and &#34;; html.escape, which the report
    has always used, writes &#x27; and &quot;. Escaping here, before autoescape sees the value (which
    then leaves markup alone), keeps the page byte-identical to the reports pinned in tests/golden.
    Autoescape stays on underneath, so nothing reaches the page unescaped if this is bypassed; only
    constant expressions in a template skip it, and the templates have none with quotes.
    """
    if isinstance(value, Markup):
        return value
    return Markup(h(value))


@pass_context
def _translated(context: Context, key: str, **values: object) -> str:
    """Report text `key` in the page's language (the `t` filter)."""
    return t(key, context["lang"], **values)


def _in_lang(text: Any) -> Any:
    """A filter of `text(item, lang)` in the page's language."""

    @pass_context
    def in_lang(context: Context, item: Any) -> str:
        return str(text(item, context["lang"]))

    return in_lang


def _numeric(value: object) -> bool:
    """Numbers (not booleans) are right-aligned and formatted in tables."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _figure_html(fig: go.Figure, first: bool) -> Markup:
    """A figure div; the first one carries the whole plotly.js bundle inline (no CDN).

    The one trusted markup on the page: plotly writes it (figure data as JSON inside a script, the
    operator names in it JSON-escaped), so it is marked safe here and nowhere else.
    """
    return Markup(
        fig.to_html(
            full_html=False,
            include_plotlyjs=first,
            include_mathjax=False,
            config={"displaylogo": False, "responsive": True},
        )
    )

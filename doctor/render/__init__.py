"""Renderers of the report model: JSON (the schema), Markdown, standalone HTML and the operator CSV."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from doctor.render.csv import render_csv
from doctor.render.json import render_json
from doctor.render.markdown import render_markdown
from doctor.report import Report


def render_html(report: Report) -> str:
    """The standalone HTML page (doctor.render.html, imported on first use: it loads plotly)."""
    from doctor.render.html import render_html as html

    return html(report)


RENDERERS: dict[str, Callable[[Report], str]] = {
    "json": render_json,
    "md": render_markdown,
    "html": render_html,
    "csv": render_csv,
}
SUFFIXES = {"json": ".json", "md": ".md", "html": ".html", "csv": ".csv"}


def render(report: Report, fmt: str) -> str:
    """The report in one of RENDERERS' formats."""
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(RENDERERS)}")
    return RENDERERS[fmt](report)


def write(report: Report, fmt: str, path: str | os.PathLike[str]) -> Path:
    """Render and write one file (UTF-8); returns its path."""
    target = Path(path)
    target.write_text(render(report, fmt), encoding="utf-8")
    return target


__all__ = [
    "RENDERERS",
    "SUFFIXES",
    "render",
    "render_csv",
    "render_html",
    "render_json",
    "render_markdown",
    "write",
]

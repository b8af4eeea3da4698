"""Renderers of the report model: JSON (the schema), Markdown, standalone HTML and the operator CSV."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from core import InputError, say
from doctor.render.csv import render_csv
from doctor.render.json import render_json
from doctor.render.markdown import render_markdown
from doctor.report import Report

if TYPE_CHECKING:
    from diagnosis import Source


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


def write(
    report: Report, fmt: str, path: str | os.PathLike[str], *, inputs: Iterable[Source | None] = ()
) -> Path:
    """Render and write one file (UTF-8); returns its path. `inputs`, the files and folders the report
    was made from, are never overwritten (check_output)."""
    target = Path(path)
    check_output(target, inputs)
    target.write_text(render(report, fmt), encoding="utf-8")
    return target


def check_output(target: str | os.PathLike[str], inputs: Iterable[Source | None]) -> None:
    """Refuse an output path that is one of the command's inputs (also through a link) or lies inside an
    input folder: writing the report there would destroy or change what it was made from."""
    out = Path(target).resolve()
    for given in inputs:
        paths = [given] if given is None or isinstance(given, (str, os.PathLike)) else list(given)
        for item in paths:
            if item is None or not os.path.exists(item):
                continue
            source = Path(item).resolve()
            inside = source.is_dir() and out.is_relative_to(source)
            if out == source or inside or (out.exists() and os.path.samefile(out, source)):
                raise InputError(
                    say("cli.output-is-input", input=Path(item).name or str(item)),
                    path=str(target),
                    expected=say("pack.elsewhere"),
                )


__all__ = [
    "RENDERERS",
    "SUFFIXES",
    "check_output",
    "render",
    "render_csv",
    "render_html",
    "render_json",
    "render_markdown",
    "write",
]

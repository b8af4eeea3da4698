"""Perf Doctor's facade, report model and renderers: the only layer the app and the CLI talk to.

Public API: `diagnose`, `inspect_model`, `reprofile_script`, `Report`, `compare_outputs`,
`render_outputs`; for the app also its settings (`AppConfig`), folder uploads (`FolderFiles`,
`display_name`, `serve_uploads`), the UI languages (`LANGS`, `LANGUAGE_NAMES`, `UI_TEXT`, `page_lang`,
`t`) and the problem texts (`problems_markdown`, `failure_markdown`).
"""

from doctor.config import AppConfig
from doctor.facade import FolderFiles, diagnose, display_name, inspect_model, reprofile_script, serve_uploads
from doctor.i18n import LANGS, LANGUAGE_NAMES, UI_TEXT, page_lang, t
from doctor.problems import failure_markdown, problems_markdown
from doctor.report import SCHEMA_VERSION, Report

__all__ = [
    "LANGS",
    "LANGUAGE_NAMES",
    "SCHEMA_VERSION",
    "UI_TEXT",
    "AppConfig",
    "FolderFiles",
    "Report",
    "compare_outputs",
    "diagnose",
    "display_name",
    "failure_markdown",
    "inspect_model",
    "page_lang",
    "problems_markdown",
    "render_outputs",
    "reprofile_script",
    "serve_uploads",
    "t",
]


def __getattr__(name: str) -> object:
    """compare_outputs and render_outputs on first use: their typed model loads pydantic, which a JSON
    report from the command line never needs."""
    if name in ("compare_outputs", "render_outputs"):
        from doctor import outputs_report

        return getattr(outputs_report, name)
    raise AttributeError(f"module 'doctor' has no attribute {name!r}")

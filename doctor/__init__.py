"""Perf Doctor's facade, report model and renderers: the only layer the app and the CLI talk to."""

from doctor.facade import diagnose, inspect_model, reprofile_script
from doctor.report import SCHEMA_VERSION, Report

__all__ = [
    "SCHEMA_VERSION",
    "Report",
    "compare_outputs",
    "diagnose",
    "inspect_model",
    "render_outputs",
    "reprofile_script",
]


def __getattr__(name: str) -> object:
    """compare_outputs and render_outputs on first use: their typed model loads pydantic, which a JSON
    report from the command line never needs."""
    if name in ("compare_outputs", "render_outputs"):
        from doctor import outputs_report

        return getattr(outputs_report, name)
    raise AttributeError(f"module 'doctor' has no attribute {name!r}")

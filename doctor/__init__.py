"""Perf Doctor's facade, report model and renderers: the only layer the app and the CLI talk to."""

from doctor.facade import diagnose, inspect_model, reprofile_script
from doctor.outputs_report import compare_outputs, render_outputs
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

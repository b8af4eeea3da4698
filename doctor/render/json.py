"""The report as JSON: the model's document exactly as docs/report.schema.json describes it."""

from __future__ import annotations

import json

from doctor.report import Report


def render_json(report: Report, indent: int | None = None) -> str:
    """UTF-8 JSON text of the report document; NaN and infinities are refused (they are not JSON).

    Compact by default: without `indent` the standard library uses its C encoder (4x faster on a
    big report); pass an indent for a human-readable file. The document is serialised as it is
    (json.dumps never mutates it), so no defensive copy is made."""
    return json.dumps(report.data, ensure_ascii=False, indent=indent, allow_nan=False) + "\n"

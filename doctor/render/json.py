"""The report as JSON: exactly the document docs/report.schema.json describes, nothing added."""

from __future__ import annotations

import json

from doctor.report import Report


def render_json(report: Report, indent: int | None = 2) -> str:
    """UTF-8 JSON text of the report document; NaN and infinities are refused (they are not JSON)."""
    return json.dumps(report.to_dict(), ensure_ascii=False, indent=indent, allow_nan=False) + "\n"

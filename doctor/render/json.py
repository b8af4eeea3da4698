"""The report as JSON: the model's document exactly as docs/report.schema.json describes it."""

from __future__ import annotations

import json

from doctor.report import Report


def render_json(report: Report, indent: int | None = None) -> str:
    """UTF-8 JSON text of the report document; NaN and infinities are refused (they are not JSON).

    Compact by default: without `indent` the standard library uses its C encoder (4x faster on a
    big report); pass an indent for a human-readable file. The typed document is written through its
    records' own serialisation (`json_default`: each record's fields in declaration order, the C encoder
    doing the rest), which builds no pydantic core schema and copies nothing."""
    from doctor.model.base import json_default  # the model loads with the report, not when the CLI starts

    text = json.dumps(
        report.document, ensure_ascii=False, indent=indent, allow_nan=False, default=json_default
    )
    return text + "\n"

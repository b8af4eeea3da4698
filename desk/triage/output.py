"""Triage rows written out: CSV that a spreadsheet will not run as formulas, or JSON.

Both have exactly the Triage tab's columns (desk.triage.view.TRIAGE_COLUMNS), one row per submission.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core import InputError, say
from desk.triage.view import COLUMN_NAMES, rows_frame
from doctor.render.csv import safe_frame
from doctor.version import VERSION

FORMATS = {".csv": "csv", ".json": "json"}


def output_format(path: Path) -> str:
    """'csv' or 'json' from the output file's suffix; InputError for anything else."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(say("triage.unknown-suffix"), path=path.name, expected=say("triage.csv-or-json"))
    return fmt


def rows_csv(rows: Sequence[Mapping[str, object]]) -> str:
    """The rows as CSV: text cells formula-safe, numbers left numeric, empty cells for missing values."""
    return safe_frame(rows_frame(rows)).to_csv(index=False, lineterminator="\n")


def rows_json(rows: Sequence[Mapping[str, object]]) -> str:
    """The rows as a JSON document {generator, columns, rows}; missing values are null."""
    clean = [{name: _plain(row.get(name)) for name in COLUMN_NAMES} for row in rows]
    generator = {"name": "perf-doctor", "version": VERSION}
    document = {"generator": generator, "columns": list(COLUMN_NAMES), "rows": clean}
    return json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def render_rows(rows: Sequence[Mapping[str, object]], fmt: str) -> str:
    """The rows in `fmt` ('csv' or 'json')."""
    return rows_json(rows) if fmt == "json" else rows_csv(rows)


def _plain(value: Any) -> Any:
    """JSON-safe: NaN becomes null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value

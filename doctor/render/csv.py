"""The operator table as CSV, safe to open in a spreadsheet.

Text cells that a spreadsheet would run as a formula (starting with = + - @ TAB or CR) get a leading
apostrophe; numeric columns are written as numbers, so sorting and sums still work, rounded to
CSV_DIGITS decimals (54.8, not the float sum 54.800000000000004); integer columns (ranks, block dims)
as whole numbers (3, not 3.0), empty where missing.

A report that also compares two runs' outputs (`--dumps`) holds a second table after one empty line: the
outputs section's divergence along depth (one row per matched layer, the columns of LayerPoint), written
the same way. A report without dumps is the operator table alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from doctor.report import Report
from doctor.text import csv_safe

if TYPE_CHECKING:  # the report model (pydantic) loads when a report is rendered, not when the CLI starts
    from doctor.model.outputs import OutputsSection

CSV_DIGITS = 3


def render_csv(report: Report) -> str:
    """Every operator row with the report's columns; empty cells for missing values."""
    from doctor.model.tables import OPERATOR_COLUMNS  # the model loads when a report is rendered

    frame = report.operators()
    integers = [name for name, kind in OPERATOR_COLUMNS if kind == "integer" and name in frame]
    frame[integers] = frame[integers].round().astype("Int64")
    floats = frame.select_dtypes("float").columns
    frame[floats] = frame[floats].round(CSV_DIGITS)
    table = safe_frame(frame).to_csv(index=False, lineterminator="\n")
    section = report.document.outputs
    return table if section is None else table + "\n" + outputs_csv(section)


def outputs_csv(section: OutputsSection) -> str:
    """The outputs section's divergence along depth, one row per matched layer (LayerPoint's columns):
    formula-safe text, whole-number depths, relative differences and tolerances as numbers (not rounded:
    they span 1e-9 to 1e30)."""
    from doctor.model.outputs import LayerPoint

    columns = list(LayerPoint.model_fields)
    frame = pd.DataFrame([point.model_dump() for point in section.depth], columns=columns)
    frame["depth"] = frame["depth"].astype("Int64")
    for column in ("layer", "target_layer", "op_type", "stat", "dtype"):
        frame[column] = frame[column].map(lambda v: csv_safe(v) if isinstance(v, str) else v)
    return frame.to_csv(index=False, lineterminator="\n")


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text columns are formula-safe; number and boolean columns are left as they are."""
    from doctor.model.tables import OPERATOR_COLUMNS

    kinds = dict(OPERATOR_COLUMNS)
    out = frame.copy()
    for column in out.columns:
        if kinds.get(column, "string") == "string" or out[column].dtype == object:
            out[column] = out[column].map(lambda v: csv_safe(v) if isinstance(v, str) else v)
    return out

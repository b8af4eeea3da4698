"""The operator table as CSV, safe to open in a spreadsheet.

Text cells that a spreadsheet would run as a formula (starting with = + - @ TAB or CR) get a leading
apostrophe; numeric columns are written as numbers, so sorting and sums still work, rounded to
CSV_DIGITS decimals (54.8, not the float sum 54.800000000000004); integer columns (ranks, block dims)
as whole numbers (3, not 3.0), empty where missing.
"""

from __future__ import annotations

import pandas as pd

from doctor.report import Report
from doctor.shape import OPERATOR_COLUMNS
from doctor.text import csv_safe

CSV_DIGITS = 3


def render_csv(report: Report) -> str:
    """Every operator row with the report's columns; empty cells for missing values."""
    frame = report.operators()
    integers = [name for name, kind in OPERATOR_COLUMNS if kind == "integer" and name in frame]
    frame[integers] = frame[integers].round().astype("Int64")
    floats = frame.select_dtypes("float").columns
    frame[floats] = frame[floats].round(CSV_DIGITS)
    return safe_frame(frame).to_csv(index=False, lineterminator="\n")


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text columns are formula-safe; number and boolean columns are left as they are."""
    kinds = dict(OPERATOR_COLUMNS)
    out = frame.copy()
    for column in out.columns:
        if kinds.get(column, "string") == "string" or out[column].dtype == object:
            out[column] = out[column].map(lambda v: csv_safe(v) if isinstance(v, str) else v)
    return out

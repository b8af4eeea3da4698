"""The two columns of a rank's kernel table that a quick rank summary reads (diagnosis.ranks): the
pyarrow side of the summary, beside the other readers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from diagnosis.readers.io import Col, read_csv

STATISTIC_COLUMNS = (  # op_statistic.csv
    Col("op_type", ("OP Type",)),
    Col("count", ("Count",), pa.float64()),
    Col("total_us", ("Total Time(us)",), pa.float64()),
)
QUICK_COLUMNS = (  # the kernel_details.csv columns a quick summary reads (spellings as ascend.KD_COLUMNS)
    Col("name", ("Name", "Op Name")),
    Col("op_type", ("Type", "OP Type")),
    Col("duration_us", ("Duration(us)", "Task Duration(us)"), pa.float64()),
)


def kernel_type_totals(path: Path) -> tuple[dict[str, float], int]:
    """Device time per op type (the name when the table has no type column) and the launch count of a
    kernel_details.csv, from two of its columns."""
    table = read_csv(path, QUICK_COLUMNS, required=("duration_us",))
    dur = table.column("duration_us").to_numpy(zero_copy_only=False).astype("float64")
    names = table.column("op_type") if "op_type" in table.column_names else table.column("name")
    totals = (
        pd.Series(np.nan_to_num(dur))
        .groupby(names.fill_null(pa.scalar("")).to_numpy(zero_copy_only=False))
        .sum()
    )
    return {str(k): float(v) for k, v in totals.items()}, len(dur)

"""The optional tables analyzers use, turned from the files' own columns into the canonical tables of
core.model: the memory series, dataset stages, the minddata pipeline, API statistics, AI Core frequency.

Readers read an optional file whole (so that an unreadable one costs a limitation, not the run) and
hand the frames here by key (the keys of catalog.OUTPUT_TABLES / LEGACY_TABLES). Vendor column names
live in this module only; an analyzer never sees one. Damaged cells become <NA>: the tables are
optional evidence, not input.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
import pandas as pd

from core.model import (
    API_SCHEMA,
    DATASET_STAGE_SCHEMA,
    FREQUENCY_SCHEMA,
    MEMORY_SCHEMA,
    PIPELINE_SCHEMA,
    conform_table,
    empty_table,
)

# memory_record.csv components, most specific total first (MindSpore / torch_npu spellings).
MEMORY_COMPONENTS = ("MindSpore+GE", "PTA+GE", "MindSpore", "PTA", "GE", "APP")
DATASET_COLUMNS = {
    "operation": "Operation",
    "stage": "Stage",
    "occurrences": "Occurrences",
    "avg_us": "Avg. time (us)",
    "info": "Custom Info",
}
API_COLUMNS = {"api": "API Name", "count": "Count", "time_us": "Time(us)"}
REQUIRED_API = ("API Name", "Count")  # without them the file says nothing about synchronisation
# Keys of the vendor tables that become canonical tables (they leave Run.extras).
CANONICAL_KEYS = ("memory_record", "npu_module_mem", "dataset", "minddata_pipeline", "api_statistic")


class RunTables(TypedDict):
    """The optional tables of a Run, as keyword arguments (`Run(..., **run_tables(raw))`)."""

    memory: pd.DataFrame
    dataset_stages: pd.DataFrame
    pipeline: pd.DataFrame
    api_calls: pd.DataFrame
    frequency: pd.DataFrame
    extras: dict[str, pd.DataFrame]


def run_tables(raw: dict[str, pd.DataFrame], frequency: pd.DataFrame | None = None) -> RunTables:
    """Run keyword arguments from the optional tables a reader read as written: the canonical tables,
    and `extras` with the tables no analyzer reads."""
    return {
        "memory": memory_of_components(raw),
        "dataset_stages": renamed(raw.get("dataset"), DATASET_COLUMNS, DATASET_STAGE_SCHEMA),
        "pipeline": renamed(raw.get("minddata_pipeline"), {c: c for c in PIPELINE_SCHEMA}, PIPELINE_SCHEMA),
        "api_calls": api_calls(raw.get("api_statistic")),
        "frequency": canonical(frequency if frequency is not None else pd.DataFrame(), FREQUENCY_SCHEMA),
        "extras": {key: frame for key, frame in raw.items() if key not in CANONICAL_KEYS},
    }


def canonical(frame: pd.DataFrame, schema: dict[str, str]) -> pd.DataFrame:
    """The schema's columns of `frame` (already under canonical names) with values that do not convert
    to the column's type as <NA>."""
    out: dict[str, pd.Series] = {}
    for name, dtype in schema.items():
        if name not in frame.columns:
            continue
        column = frame[name]
        out[name] = column.astype("string") if dtype.startswith("string") else numbers(column, dtype)
    return conform_table(pd.DataFrame(out, index=frame.index), schema)


def numbers(column: pd.Series, dtype: str) -> pd.Series:
    """A column as float64 (unparsable cells NaN); for an integer dtype, non-whole values NaN too."""
    text = column if pd.api.types.is_numeric_dtype(column) else column.astype("string")
    values = pd.to_numeric(text, errors="coerce").astype("float64")
    if dtype.startswith("int"):
        values = values.where(np.isfinite(values) & (values == np.floor(values)) & (values.abs() < 2**53))
    return values


def renamed(frame: pd.DataFrame | None, columns: dict[str, str], schema: dict[str, str]) -> pd.DataFrame:
    """A vendor table under canonical names (`columns`: canonical -> header); empty when absent."""
    if frame is None:
        return empty_table(schema)
    present = {header.strip(): header for header in frame.columns}
    picked = {name: frame[present[h]] for name, h in columns.items() if h in present}
    return canonical(pd.DataFrame(picked, index=frame.index), schema)


def api_calls(frame: pd.DataFrame | None) -> pd.DataFrame:
    """api_statistic.csv -> API_SCHEMA; empty without its API Name and Count columns."""
    if frame is None or not set(REQUIRED_API) <= {c.strip() for c in frame.columns}:
        return empty_table(API_SCHEMA)
    return renamed(frame, API_COLUMNS, API_SCHEMA)


def memory_of_components(raw: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The allocated total of memory_record.csv, else the reserved total of npu_module_mem.csv."""
    if "memory_record" in raw:
        return component_series(raw["memory_record"], "Total Allocated")
    if "npu_module_mem" in raw:
        return component_series(raw["npu_module_mem"], "Total Reserved")
    return empty_table(MEMORY_SCHEMA)


def component_series(table: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """One component's `<prefix>(MB|KB)` over time: the most specific framework total present (see
    MEMORY_COMPONENTS), else the component with the largest peak."""
    value_col = next((c for c in table.columns if str(c).startswith(prefix)), None)
    if value_col is None or "Timestamp(us)" not in table.columns:
        return empty_table(MEMORY_SCHEMA)
    scale = 1 / 1024 if "(KB)" in str(value_col) else 1.0
    frame = pd.DataFrame(
        {
            "component": table["Component"].astype(str) if "Component" in table.columns else "",
            "time_us": pd.to_numeric(table["Timestamp(us)"], errors="coerce").astype("float64"),
            "mb": pd.to_numeric(table[value_col], errors="coerce").astype("float64") * scale,
        }
    ).dropna()
    if frame.empty:
        return empty_table(MEMORY_SCHEMA)
    present = set(frame["component"])
    chosen = next((c for c in MEMORY_COMPONENTS if c in present), None)
    if chosen is None:
        chosen = frame.groupby("component")["mb"].max().idxmax()
    series = frame.loc[frame["component"] == chosen, ["time_us", "mb"]].sort_values("time_us")
    return conform_table(series, MEMORY_SCHEMA)


def memory_of_host_record(table: pd.DataFrame) -> pd.DataFrame:
    """A CPU memory record (``Timestamp(ns),Total Allocated(Byte),...``) -> allocated MB over time."""
    cols = {c.split("(")[0].strip().lower().replace(" ", "_"): c for c in table.columns}
    if "timestamp" not in cols or "total_allocated" not in cols:
        return empty_table(MEMORY_SCHEMA)
    frame = pd.DataFrame(
        {
            "time_us": pd.to_numeric(table[cols["timestamp"]], errors="coerce").astype("float64") / 1000.0,
            "mb": pd.to_numeric(table[cols["total_allocated"]], errors="coerce").astype("float64") / 2**20,
        }
    ).dropna()
    return conform_table(frame, MEMORY_SCHEMA)

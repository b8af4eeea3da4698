"""Step tables: step_trace_time.csv, steps derived from kernel step ids or spans, and the interval
helpers (union of kernel intervals, step of a start time) the Ascend-family readers share.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.model import STEP_SCHEMA, conform_steps
from diagnosis.readers.arrow import AnyArray, Column
from diagnosis.readers.io import Col, read_csv

# ----------------------------------------------------------------------------------------- step tables


def no_steps() -> pd.DataFrame:
    """An empty step table with the schema (zero rows; model.empty_steps() yields one <NA> row)."""
    return conform_steps(
        pd.DataFrame({name: pd.Series([], dtype=dtype) for name, dtype in STEP_SCHEMA.items()})
    )


def read_step_trace_time(path: Path) -> pd.DataFrame:
    """`step_trace_time.csv` -> step table. Wall time = Computing + Communication(Not Overlapped) + Free."""
    cols = (
        Col("step", ("Step",), pa.string()),
        Col("computing", ("Computing",), pa.float64()),
        Col("comm_exposed", ("Communication(Not Overlapped)",), pa.float64()),
        Col("free", ("Free",), pa.float64()),
        Col("overlapped", ("Overlapped",), pa.float64()),
    )
    table = read_csv(path, cols, required=("computing", "free"))
    busy = _np(table, "computing")
    free = _np(table, "free")
    comm = _np(table, "comm_exposed") if "comm_exposed" in table.column_names else np.zeros(len(busy))
    has_overlap = "overlapped" in table.column_names
    overlapped = _np(table, "overlapped") if has_overlap else np.full(len(busy), np.nan)
    steps = _step_numbers(table.column("step") if "step" in table.column_names else None, len(busy))
    frame = pd.DataFrame(
        {
            "step": steps,
            "busy_us": busy,
            "free_us": free,
            "communication_us": comm,
            "overlapped_us": overlapped,
            "duration_us": busy + np.nan_to_num(comm) + np.nan_to_num(free),
        }
    )
    return conform_steps(frame)


def _np(table: pa.Table, name: str) -> np.ndarray:
    return table.column(name).to_numpy().astype("float64", copy=False)


def _step_numbers(column: Column | None, n: int) -> np.ndarray:
    """Step ids as written (`0`, `3`, `step3`); row order when missing or empty."""
    if column is None:
        return np.arange(n, dtype="int64")
    filled = column.fill_null("")  # pyright: ignore[reportArgumentType]  # pyarrow-stubs: fill_null takes a Python value too
    digits = pc.extract_regex(filled, r"(?P<n>\d+)\s*$")
    values = (
        cast(AnyArray, pc.struct_field(digits, "n"))  # pyright: ignore[reportUnknownMemberType]  # pyarrow-stubs: unparametrised values
        if len(digits)
        else pa.array([], pa.string())
    )
    parsed = pd.to_numeric(pd.Series(values.to_pylist(), dtype="object"), errors="coerce")
    if parsed.isna().any():
        return np.arange(n, dtype="int64")
    return parsed.to_numpy(dtype="int64")


def steps_from_kernels(kernels: pd.DataFrame) -> pd.DataFrame:
    """Per-step start, wall, busy (union of kernel intervals) and free time from kernels' step ids."""
    if "step" not in kernels or kernels["step"].isna().all():
        return no_steps()
    frame = _intervals(kernels)
    frame = frame[frame["step"].notna()]
    if frame.empty:
        return no_steps()
    grouped = frame.groupby("step", sort=True)
    first = grouped["start"].min()
    last = grouped["end"].max()
    busy = union_lengths(frame, "step")
    steps = pd.DataFrame(
        {
            "step": first.index.to_numpy(dtype="int64"),
            "start_us": first.to_numpy(),
            "duration_us": (last - first).to_numpy(),
            "busy_us": busy.reindex(first.index).to_numpy(),
        }
    )
    steps["free_us"] = (steps["duration_us"] - steps["busy_us"]).clip(lower=0)
    return conform_steps(steps)


def _intervals(kernels: pd.DataFrame) -> pd.DataFrame:
    start: npt.NDArray[np.float64] = kernels["start_us"].to_numpy(dtype="float64", na_value=np.nan)
    dur = kernels["duration_us"].to_numpy(dtype="float64", na_value=np.nan)
    step = kernels["step"].to_numpy(dtype="float64", na_value=np.nan) if "step" in kernels else np.nan
    frame = pd.DataFrame({"step": step, "start": start, "end": start + np.nan_to_num(dur)})
    return frame[np.isfinite(start)]


def union_lengths(frame: pd.DataFrame, key: str) -> pd.Series:
    """Length of the union of [start, end) intervals per `key` group (overlapping streams count once)."""
    ordered = frame.sort_values([key, "start"], kind="stable")
    reach: pd.Series[float] = ordered.groupby(key, sort=False)["end"].cummax()
    keys: np.ndarray = ordered[key].to_numpy()
    prev_reach = reach.groupby(keys, sort=False).shift(1)
    gaps = (ordered["start"] - prev_reach).clip(lower=0).fillna(0)
    span = ordered.groupby(key)["end"].max() - ordered.groupby(key)["start"].min()
    return span - gaps.groupby(keys).sum()


def assign_steps(start_us: np.ndarray, spans: pd.DataFrame) -> np.ndarray:
    """Step id of each start time: the latest step span that began at or before it (NaN before the first).

    Device kernels run after their host launch, so a kernel past a span's end still belongs to the
    last step that had started; this mirrors how MindSpore attributes kernels to ProfilerStep spans.
    """
    order = np.argsort(spans["start_us"].to_numpy(dtype="float64"))
    starts = spans["start_us"].to_numpy(dtype="float64")[order]
    ids = spans["step"].to_numpy(dtype="float64")[order]
    pos = np.searchsorted(starts, start_us, side="right") - 1
    out = np.where(pos >= 0, ids[np.clip(pos, 0, None)], np.nan)
    return np.where(np.isfinite(start_us), out, np.nan)


def first_start_by_step(kernels: pd.DataFrame) -> pd.Series:
    """Earliest kernel start per step id (a hash aggregation over numpy arrays, no sort)."""
    step: npt.NDArray[np.float64] = kernels["step"].to_numpy(dtype="float64", na_value=np.nan)
    start: npt.NDArray[np.float64] = kernels["start_us"].to_numpy(dtype="float64", na_value=np.nan)
    known = ~np.isnan(step)
    return pd.Series(start[known]).groupby(step[known]).min()


# ----------------------------------------------------------------------------------------- step starts


def fill_step_starts(steps: pd.DataFrame, kernels: pd.DataFrame) -> pd.DataFrame:
    """Give steps without a start time the first kernel start of that step (when kernels have steps)."""
    if steps.empty or "step" not in kernels or kernels["step"].isna().all():
        return steps
    if steps["start_us"].notna().all():
        return steps
    first = first_start_by_step(kernels)
    starts = pd.Series(steps["step"].to_numpy(dtype="float64", na_value=np.nan)).map(first)
    filled = steps["start_us"].astype("float64").fillna(pd.Series(starts.to_numpy(), index=steps.index))
    steps = steps.copy()
    steps["start_us"] = filled.astype(STEP_SCHEMA["start_us"])  # pyright: ignore[reportCallIssue, reportArgumentType]  # pandas-stubs: literal dtype names only
    return steps


def step_ids(start_us: pd.Series, spans: pd.DataFrame) -> pd.Series:
    """The step of each kernel start (assign_steps) as a canonical step column (<NA> before the first)."""
    step = pd.Series(
        assign_steps(start_us.to_numpy(dtype="float64", na_value=np.nan), spans), dtype="float64"
    )
    return cast(
        pd.Series,
        step.astype("Int64").astype(STEP_SCHEMA["step"]),  # pyright: ignore[reportCallIssue, reportArgumentType]  # pandas-stubs: literal dtype names only
    )

"""Reader for torch_npu's SQLite export (layout "torch-npu-db": ``*_ascend_pt`` profiled with
``export_type=db``, no kernel_details.csv or trace_view.json).

Tree::

    <name>_ascend_pt/
      profiler_info_<rank>.json               the configuration (as for the text export)
      ASCEND_PROFILER_OUTPUT/
        ascend_pytorch_profiler_<rank>.db     the msprof DB schema written by torch_npu
        analysis.db                           StepTraceTime (the step_trace_time.csv figures)

Tables read, each with one plain ``SELECT`` (no join in SQL, so no query multiplies rows; the tables are
joined here on their keys, a duplicated key counted once). Text columns are ids into STRING_IDS; times
are ns of the Unix clock:

- ``TASK``: startNs, endNs, deviceId, globalTaskId; ``COMPUTE_TASK_INFO``: globalTaskId, name, opType,
  taskType, blockDim, input/output shapes, dtypes, formats (, opState, waitNs) -> kernels;
- ``COMMUNICATION_OP``: opName, opType, startNs, endNs -> kernels on core HCCL (``hcom_*`` rows of
  kernel_details.csv);
- ``STEP_TIME``: id, startNs, endNs -> steps; ``analysis.db`` ``StepTraceTime`` (µs): computing,
  communication_not_overlapped, free -> the step breakdown, wall = their sum (as step_trace_time.csv);
- ``TASK_PMU_INFO``: globalTaskId, name, value -> the pipe-utilisation ratios (core.model.PIPE_COUNTERS)
  of each compute task (aic_metrics=PipeUtilization);
- ``AICORE_FREQ``: deviceId, timestampNs, freq (MHz) -> the frequency table;
- ``RANK_DEVICE_MAP``: rankId, deviceId (which device's rows belong to the rank).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd
import pyarrow as pa

from core.errors import InputError
from core.model import PIPE_COUNTERS, Limitation, ProfilerConfig, Run, conform_kernels, conform_steps
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.arrow import NamedColumns
from diagnosis.readers.ascend import (
    Output,
    build_meta,
    complete,
    kernel_limitations,
    no_config_limitation,
    output_dir,
    read_info,
)
from diagnosis.readers.discover import discover
from diagnosis.readers.io import budget, display, rows_error, to_frame
from diagnosis.readers.sqlite_guard import STRING_COLUMNS
from diagnosis.readers.steps import no_steps, step_ids
from diagnosis.readers.torch_npu import TORCH
from diagnosis.readers.values import map_unique, normalise_columns, op_type_of_kernel, scope_of

LAYOUT = catalog.TORCH_NPU_DB.name
LAYOUTS = (LAYOUT,)
SCHEMA = say("torchdb.schema")
REQUIRED = {
    "TASK": ("startNs", "endNs", "globalTaskId"),
    "COMPUTE_TASK_INFO": ("globalTaskId", "name"),
    "STRING_IDS": ("id", "value"),
}
STEP_TRACE = ("step", "computing", "communication_not_overlapped", "free")
HCCL = "HCCL"


# ---------------------------------------------------------------------------------------------- protocol


def candidates(folder: Path) -> list[Candidate]:
    """torch_npu db-only run roots at or below `folder` (one per rank)."""
    return [c for c in discover(folder) if c.layout == LAYOUT]


def read(candidate: Candidate) -> Run:
    """Read one rank's ascend_pytorch_profiler_<rank>.db (and analysis.db) into the canonical model."""
    root = candidate.root
    apo = output_dir(root)
    path = profiler_db(apo, candidate.rank)
    info, info_path = read_info(root, candidate.rank)
    config = info.config if info else ProfilerConfig()
    db = Database(path)
    try:
        device = db.device(candidate.rank)
        kernels, present = db.kernels(device)
        spans = db.step_spans()
        frequency = db.frequency(device)
    finally:
        db.close()
    files = [p for p in (info_path, path) if p is not None]
    breakdown, analysis = step_breakdown(apo / "analysis.db")
    files += [analysis] if analysis is not None else []
    steps = steps_of(spans, breakdown)
    if len(steps):
        kernels["step"] = step_ids(kernels["start_us"], steps).set_axis(kernels.index)
    out = Output(TORCH, kernels, steps, present, files=files, frequency=frequency)
    out.limitations = kernel_limitations(present, kernels, config.level, TORCH, path.name)
    if not len(steps):
        out.limitations.append(Limitation("steps", say("torchdb.no-steps", name=path.name), TORCH.steps))
    if info is None:
        out.limitations.insert(0, no_config_limitation(TORCH))
    return out.to_run(build_meta(LAYOUT, root, candidate, info, out, {}))


def profiler_db(apo: Path, rank: int | None) -> Path:
    """ascend_pytorch_profiler_<rank>.db, else the only ascend_pytorch_profiler*.db of the folder."""
    names = sorted(e.name for e in os.scandir(apo) if e.is_file() and catalog.TORCH_DB.match(e.name))
    wanted = [n for n in names if rank is not None and n == f"ascend_pytorch_profiler_{rank}.db"]
    return apo / (wanted or names)[0]


# ------------------------------------------------------------------------------------------- database


def connect(path: Path) -> sqlite3.Connection:
    """The database opened read-only (a file that is not SQLite is an InputError naming it)."""
    try:
        connection = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
        connection.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        raise InputError(
            say("sqlite.cannot-open", error=str(exc)), path=display(path), expected=SCHEMA
        ) from None
    return connection


class Database:
    """One ascend_pytorch_profiler_<rank>.db: its table columns, and one SELECT per table read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.connection = connect(path)
        try:
            names = [
                r[0] for r in self.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            self.columns = {
                n: [r[1] for r in self.connection.execute(f'PRAGMA table_info("{n}")')] for n in names
            }
        except sqlite3.Error as exc:
            self.close()
            raise InputError(
                say("sqlite.cannot-read", error=str(exc)), path=display(path), expected=SCHEMA
            ) from None
        for table, wanted in REQUIRED.items():
            if table not in self.columns:
                self.close()
                raise InputError(say("torchdb.no-table", table=table), path=display(path), expected=SCHEMA)
            absent = [c for c in wanted if c not in self.columns[table]]
            if absent:
                self.close()
                raise InputError(
                    say("sqlite.no-column", table=table, column=absent[0]),
                    path=display(path),
                    expected=SCHEMA,
                )

    def close(self) -> None:
        self.connection.close()

    def select(self, table: str, columns: list[str]) -> pd.DataFrame:
        """Every row of `table` (documented names, checked against the database, never user text),
        within the row budget when one applies."""
        limit = budget("max_profile_rows")
        query = f'SELECT {", ".join(columns)} FROM "{table}"'
        try:
            cursor = self.connection.execute(query + (f" LIMIT {limit + 1}" if limit is not None else ""))
            rows = cursor.fetchall()
        except sqlite3.Error as exc:
            raise InputError(
                say("sqlite.cannot-read", error=str(exc)), path=display(self.path), expected=SCHEMA
            ) from None
        if limit is not None and len(rows) > limit:
            raise rows_error(self.path, limit, say("io.what-rows"))
        return pd.DataFrame.from_records(rows, columns=columns)

    def has(self, table: str, *columns: str) -> bool:
        return table in self.columns and all(c in self.columns[table] for c in columns)

    def strings(self) -> dict[int, str]:
        frame = self.select("STRING_IDS", ["id", "value"]).drop_duplicates("id")
        return dict(zip(frame["id"].tolist(), frame["value"].astype(str).tolist(), strict=True))

    def device(self, rank: int | None) -> int | None:
        """The device id of `rank` (RANK_DEVICE_MAP), else the only device of TASK, else None (all rows)."""
        if rank is not None and self.has("RANK_DEVICE_MAP", "rankId", "deviceId"):
            mapping = self.select("RANK_DEVICE_MAP", ["rankId", "deviceId"])
            hit = mapping.loc[mapping["rankId"] == rank, "deviceId"]
            if len(hit):
                return int(hit.iloc[0])
        return None

    def kernels(self, device: int | None) -> tuple[pd.DataFrame, frozenset[str]]:
        """Compute tasks and communication ops as canonical kernels, and the columns the tables had."""
        strings = self.strings()
        info_cols = self.columns["COMPUTE_TASK_INFO"]
        wanted = {c: col for c, col in STRING_COLUMNS.items() if col in info_cols}
        block = "blockDim" if "blockDim" in info_cols else ("blockNum" if "blockNum" in info_cols else None)
        extra = [c for c in (block, "waitNs") if c is not None and c in info_cols]
        info = self.select("COMPUTE_TASK_INFO", ["globalTaskId", *wanted.values(), *extra])
        info = info.drop_duplicates("globalTaskId")  # a repeated key is one task, never a product
        task_cols = ["globalTaskId", "startNs", "endNs"] + (
            ["deviceId"] if "deviceId" in self.columns["TASK"] else []
        )
        task = self.select("TASK", task_cols)
        if device is not None and "deviceId" in task and task["deviceId"].nunique() > 1:
            task = task.loc[task["deviceId"] == device]
        task = task.drop_duplicates("globalTaskId")
        joined = info.merge(task, on="globalTaskId", how="inner", validate="one_to_one")
        frame = pd.DataFrame({c: joined[col].map(strings) for c, col in wanted.items()})
        frame["start_ns"], frame["end_ns"] = joined["startNs"], joined["endNs"]
        if block:
            frame["block_dim"] = pd.to_numeric(joined[block], errors="coerce")
        if "waitNs" in extra:
            frame["wait_us"] = pd.to_numeric(joined["waitNs"], errors="coerce") / 1000.0
        for name, values in self.counters(strings).items():
            frame[name] = joined["globalTaskId"].map(values).astype("float64")
        frame = pd.concat([frame, self.communication(strings)], ignore_index=True)
        if frame.empty:
            raise InputError(say("sqlite.no-tasks"), path=display(self.path), expected=SCHEMA)
        return _canonical(frame)

    def counters(self, strings: dict[int, str]) -> dict[str, pd.Series]:
        """TASK_PMU_INFO's pipe-utilisation ratios (PIPE_COUNTERS, aic_metrics=PipeUtilization) by task."""
        if not self.has("TASK_PMU_INFO", "globalTaskId", "name", "value"):
            return {}
        rows = self.select("TASK_PMU_INFO", ["globalTaskId", "name", "value"])
        rows["name"] = rows["name"].map(strings)
        rows = rows.loc[rows["name"].isin(PIPE_COUNTERS)].drop_duplicates(["globalTaskId", "name"])
        rows["value"] = pd.to_numeric(rows["value"], errors="coerce")
        return {name: group.set_index("globalTaskId")["value"] for name, group in rows.groupby("name")}  # pyright: ignore[reportReturnType]  # pandas-stubs: group keys are Scalar; names are str

    def communication(self, strings: dict[int, str]) -> pd.DataFrame:
        """COMMUNICATION_OP rows as kernels on core HCCL (kernel_details.csv lists them as hcom_* rows)."""
        if not self.has("COMMUNICATION_OP", "opName", "startNs", "endNs"):
            return pd.DataFrame()
        cols = ["opName", "startNs", "endNs"] + (["opType"] if self.has("COMMUNICATION_OP", "opType") else [])
        ops = self.select("COMMUNICATION_OP", cols)
        frame = pd.DataFrame(
            {"name": ops["opName"].map(strings), "start_ns": ops["startNs"], "end_ns": ops["endNs"]}
        )
        frame["core"] = HCCL
        if "opType" in ops:
            frame["op_type"] = ops["opType"].map(strings)
        return frame

    def step_spans(self) -> pd.DataFrame:
        """STEP_TIME: step id, start and end (µs); empty without the table."""
        if not self.has("STEP_TIME", "id", "startNs", "endNs"):
            return pd.DataFrame(columns=["step", "start_us", "end_us"])
        rows = self.select("STEP_TIME", ["id", "startNs", "endNs"]).dropna()
        return pd.DataFrame(
            {
                "step": rows["id"].astype("int64"),
                "start_us": _us(rows["startNs"]),
                "end_us": _us(rows["endNs"]),
            }
        )

    def frequency(self, device: int | None) -> pd.DataFrame:
        """AICORE_FREQ samples of the device (MHz from each timestamp on)."""
        if not self.has("AICORE_FREQ", "timestampNs", "freq"):
            return pd.DataFrame()
        cols = ["timestampNs", "freq"] + (["deviceId"] if self.has("AICORE_FREQ", "deviceId") else [])
        rows = self.select("AICORE_FREQ", cols)
        if device is not None and "deviceId" in rows and rows["deviceId"].nunique() > 1:
            rows = rows.loc[rows["deviceId"] == device]
        frame = pd.DataFrame(
            {"ts_us": _us(rows["timestampNs"]), "mhz": pd.to_numeric(rows["freq"], errors="coerce")}
        )
        return frame.dropna().sort_values("ts_us", kind="stable").reset_index(drop=True)


def read_frequency(path: Path, rank: int | None) -> pd.DataFrame:
    """The AICORE_FREQ samples of any database in the msprof DB schema (also MindSpore's and msprof's
    exports, read by readers.sqlite_db), of the rank's device; empty without the table."""
    db = Database(path)
    try:
        return db.frequency(db.device(rank))
    finally:
        db.close()


def _us(ns: pd.Series) -> np.ndarray:
    """ns -> µs, exact to the ns: the integer part is divided in int64 before the float (an epoch in ns,
    about 1.7e18, is beyond float64's exact integers; a float division would lose up to 256 ns)."""
    values = pd.to_numeric(ns, errors="coerce")
    whole = values.notna() & (values == values.round())
    exact = values.where(whole, 0).astype("int64").to_numpy()
    out = (exact // 1000).astype("float64") + (exact % 1000) / 1000.0
    return np.where(whole.to_numpy(), out, values.astype("float64").to_numpy() / 1000.0)


def _ns_span(frame: pd.DataFrame) -> np.ndarray:
    """end - start in ns, subtracted as integers where both are whole."""
    start, end = (
        pd.to_numeric(frame["start_ns"], errors="coerce"),
        pd.to_numeric(frame["end_ns"], errors="coerce"),
    )
    try:
        return (end.astype("int64") - start.astype("int64")).to_numpy(dtype="float64")
    except (TypeError, ValueError):  # a non-whole time: float subtraction
        return (end - start).to_numpy(dtype="float64")


def _canonical(frame: pd.DataFrame) -> tuple[pd.DataFrame, frozenset[str]]:
    """Kernel rows (ns times, string columns) -> canonical kernels in start order, and the canonical
    columns that hold any value (a column of N/A only, as at Level0, counts as absent)."""
    start, end = _us(frame["start_ns"]), _us(frame["end_ns"])
    keep = np.isfinite(start) & np.isfinite(end)
    frame = frame.loc[keep].assign(start_us=start[keep], duration_us=_ns_span(frame.loc[keep]) / 1000.0)
    frame = frame.drop(columns=["start_ns", "end_ns"]).sort_values("start_us", kind="stable")
    columns: NamedColumns = {}
    for name in frame.columns:
        values = frame[name]
        if name in ("start_us", "duration_us", "wait_us", *PIPE_COUNTERS):
            columns[name] = pa.array(values.to_numpy(dtype="float64"), type=pa.float64(), from_pandas=True)
        elif name == "block_dim":
            columns[name] = pa.array(values.astype("Int64"), type=pa.int64())
        else:
            columns[name] = pa.array([None if pd.isna(v) else str(v) for v in values], type=pa.string())
    table = normalise_columns(pa.Table.from_pydict(columns))
    present = frozenset(n for n in table.column_names if table.column(n).null_count < table.num_rows)
    table = table.append_column("scope", map_unique(table.column("name"), scope_of))
    if "op_type" not in present:
        table = table.drop(["op_type"]) if "op_type" in table.column_names else table
        table = table.append_column("op_type", map_unique(table.column("name"), op_type_of_kernel))
    return conform_kernels(to_frame(complete(table))), present


# ------------------------------------------------------------------------------------------------ steps


def step_breakdown(path: Path) -> tuple[pd.DataFrame, Path | None]:
    """analysis.db StepTraceTime (µs) by step id, and the file when it was read; empty without it."""
    if not path.is_file():
        return pd.DataFrame(), None
    connection = connect(path)
    try:
        cols = [r[1] for r in connection.execute('PRAGMA table_info("StepTraceTime")')]
        if not all(c in cols for c in STEP_TRACE):
            return pd.DataFrame(), None
        rows = connection.execute(f"SELECT {', '.join(STEP_TRACE)} FROM StepTraceTime").fetchall()
    except sqlite3.Error as exc:
        raise InputError(
            say("sqlite.cannot-read", error=str(exc)), path=display(path), expected=SCHEMA
        ) from None
    finally:
        connection.close()
    frame = pd.DataFrame.from_records(rows, columns=list(STEP_TRACE))
    frame["step"] = pd.to_numeric(frame["step"].astype(str).str.extract(r"(\d+)\s*$")[0], errors="coerce")
    for col in STEP_TRACE[1:]:
        frame[col] = pd.to_numeric(frame[col], errors="coerce")
    return frame.dropna(subset=["step"]).drop_duplicates("step").set_index("step"), path


def steps_of(spans: pd.DataFrame, breakdown: pd.DataFrame) -> pd.DataFrame:
    """Steps of STEP_TIME; with the StepTraceTime row of a step, its wall time is Computing +
    Communication(Not Overlapped) + Free (as step_trace_time.csv is read), else end - start."""
    if spans.empty:
        return no_steps()
    row = breakdown.reindex(spans["step"].to_numpy(dtype="float64")) if len(breakdown) else None
    wall = (spans["end_us"] - spans["start_us"]).to_numpy(dtype="float64")
    frame = pd.DataFrame({"step": spans["step"].to_numpy(), "start_us": spans["start_us"].to_numpy()})
    if row is not None:
        busy, comm, free = (row[c].to_numpy(dtype="float64") for c in STEP_TRACE[1:])
        total = busy + np.nan_to_num(comm) + np.nan_to_num(free)
        frame["duration_us"] = np.where(np.isfinite(busy), total, wall)
        frame["busy_us"], frame["communication_us"], frame["free_us"] = busy, comm, free
    else:
        frame["duration_us"] = wall
    return conform_steps(frame)

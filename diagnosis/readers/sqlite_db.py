"""Reader for SQLite exports in the msprof DB schema: MindSpore's db-only export ("ascend-ms-db":
``*_ascend_ms/ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler[_<rank>].db``, export_type=db) and CANN's
``msprof --type=db`` ("cann-msprof-db": ``PROF_*/msprof_<ts>.db``).

Tables read (documented by CANN's "Profile Data File Reference (DB)"; every text column is an id into
STRING_IDS, every time is ns of the local Unix clock):

- ``TASK``: startNs, endNs, deviceId, globalTaskId (, streamId, taskId, modelId)
- ``COMPUTE_TASK_INFO``: globalTaskId, name, opType, taskType, blockNum (or blockDim), inputShapes,
  inputDataTypes, inputFormats, outputShapes, outputDataTypes, outputFormats, opState
- ``STRING_IDS``: id, value

The database is opened read-only (``mode=ro`` URI); a file that is not SQLite, or a database without
these tables, is an InputError naming the file. The schema carries no step boundaries: the profiled
window counts as one step, with a limitation.
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
from core.model import FREQUENCY_SCHEMA, Limitation, ProfilerConfig, Run, RunMeta, conform_kernels
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.ascend import MINDSPORE, complete, kernel_limitations, output_dir, read_info
from diagnosis.readers.cann_msprof import CANN, devices_of, op_summaries, prof_folders, read_sample
from diagnosis.readers.discover import classify, discover
from diagnosis.readers.io import display, to_frame
from diagnosis.readers.steps import no_steps
from diagnosis.readers.tables import canonical as canonical_table
from diagnosis.readers.torch_npu_db import read_frequency
from diagnosis.readers.traits import amp_of, infer_execution_mode, name_pairs, phase_of
from diagnosis.readers.values import map_unique, normalise_columns, op_type_of_kernel, scope_of

LAYOUT_MS = "ascend-ms-db"
LAYOUT_CANN = "cann-msprof-db"
LAYOUTS = (LAYOUT_MS, LAYOUT_CANN)
TABLES = ("TASK", "COMPUTE_TASK_INFO", "STRING_IDS")
SCHEMA = say("sqlite.schema")
# Canonical kernel column <- COMPUTE_TASK_INFO column (each an id into STRING_IDS), when the table has it.
_STRING_COLUMNS = {
    "name": "name",
    "op_type": "opType",
    "core": "taskType",
    "input_shapes": "inputShapes",
    "input_dtypes": "inputDataTypes",
    "input_formats": "inputFormats",
    "output_shapes": "outputShapes",
    "output_dtypes": "outputDataTypes",
    "output_formats": "outputFormats",
    "op_state": "opState",
}
_BLOCK = ("blockNum", "blockDim")


# ---------------------------------------------------------------------------------------------- protocol


def candidates(folder: Path) -> list[Candidate]:
    """MindSpore db-only run folders and PROF_* folders holding only an msprof_*.db."""
    found = [c for c in discover(folder) if c.layout == LAYOUT_MS]
    for prof in prof_folders(Path(folder), 0):
        if op_summaries(prof / catalog.MSPROF_OUTPUT) or classify(prof.parent) or not _msprof_dbs(prof):
            continue
        devices = devices_of(prof)
        found.append(Candidate(LAYOUT_CANN, prof, devices[0] if len(devices) == 1 else None))
    return found


def read(candidate: Candidate) -> Run:
    """Read the kernels of one SQLite export into the canonical model."""
    info = None
    if candidate.layout == LAYOUT_MS:
        path = _ms_db(output_dir(candidate.root), candidate.rank)
        info, config_path = read_info(candidate.root, candidate.rank)
        config, tool = (info.config if info else ProfilerConfig()), MINDSPORE
    else:
        path = _msprof_dbs(candidate.root)[0]
        config, config_path = read_sample(candidate.root, candidate.rank)
        tool = CANN
    kernels, present = read_db(path, candidate.rank)
    limitations = kernel_limitations(present, kernels, config.level, tool, path.name)
    limitations.append(
        Limitation(
            "steps",
            say("sqlite.no-steps", name=path.name),
            say("sqlite.export-text"),
        )
    )
    if config_path is None:
        limitations.insert(0, Limitation("profiler-config", say("sqlite.no-config"), tool.config))
    files = [p for p in (config_path, path) if p is not None]
    pairs = name_pairs(kernels)
    scopes = kernels["scope"].dropna()
    meta = RunMeta(
        layout=candidate.layout,
        source=candidate.root.name,
        framework=info.framework if info else tool.framework,
        framework_version=info.framework_version if info else None,
        device="Ascend",
        rank=candidate.rank,
        config=config,
        execution_mode=infer_execution_mode(scopes.drop_duplicates()) if len(scopes) else "graph",
        phase=phase_of(kernels, pairs),
        amp=amp_of(kernels, 1, pairs),
        files=tuple(os.path.relpath(p, candidate.root).replace(os.sep, "/") for p in files),
    )
    frequency = canonical_table(
        read_frequency(path, candidate.rank), FREQUENCY_SCHEMA
    )  # the AICORE_FREQ table
    return Run(meta=meta, kernels=kernels, steps=no_steps(), limitations=limitations, frequency=frequency)


def _ms_db(apo: Path, rank: int | None) -> Path:
    """ascend_mindspore_profiler_<rank>.db, else the only ascend_mindspore_profiler*.db (rank 0: bare)."""
    names = sorted(e.name for e in os.scandir(apo) if e.is_file() and catalog.MS_DB.match(e.name))
    wanted = [n for n in names if n == f"ascend_mindspore_profiler_{rank}.db"] if rank is not None else []
    return apo / (wanted or names)[0]


def _msprof_dbs(prof: Path) -> list[Path]:
    """msprof_*.db in a PROF_* folder (or its mindstudio_profiler_output/), in name order."""
    found = []
    for folder in (prof, prof / catalog.MSPROF_OUTPUT):
        try:
            found += sorted(
                Path(e.path) for e in os.scandir(folder) if e.is_file() and catalog.MSPROF_DB.match(e.name)
            )
        except OSError:
            continue
    return found


# ------------------------------------------------------------------------------------------- database


def read_db(path: Path, rank: int | None) -> tuple[pd.DataFrame, frozenset[str]]:
    """Canonical kernels of the compute tasks (of device `rank` when the database holds several)."""
    try:
        connection = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InputError(
            say("sqlite.cannot-open", error=str(exc)), path=display(path), expected=SCHEMA
        ) from None
    try:
        columns = _schema(connection, path)
        rows = connection.execute(_query(columns, rank, _devices(connection))).fetchall()
    except sqlite3.Error as exc:
        raise InputError(
            say("sqlite.cannot-read", error=str(exc)), path=display(path), expected=SCHEMA
        ) from None
    finally:
        connection.close()
    if not rows:
        raise InputError(
            say("sqlite.no-tasks"),
            path=display(path),
            expected=SCHEMA,
        )
    return _kernels(rows, columns)


def _schema(connection: sqlite3.Connection, path: Path) -> dict[str, list[str]]:
    """Columns of the three tables; another schema is an InputError naming what it holds."""
    names = [
        r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
    ]
    missing = [t for t in TABLES if t not in names]
    if missing:
        listed = ", ".join(names[:8])
        more = say("sqlite.more", listed=listed, n=len(names) - 8) if len(names) > 8 else listed
        held = more or say("sqlite.no-tables")
        raise InputError(
            say("sqlite.other-schema", missing=", ".join(missing), held=held),
            path=display(path),
            expected=SCHEMA,
        )
    columns = {t: [r[1] for r in connection.execute(f'PRAGMA table_info("{t}")')] for t in TABLES}
    needed = {
        "TASK": ("startNs", "endNs", "globalTaskId"),
        "COMPUTE_TASK_INFO": ("globalTaskId", "name"),
        "STRING_IDS": ("id", "value"),
    }
    for table, wanted in needed.items():
        absent = [c for c in wanted if c not in columns[table]]
        if absent:
            raise InputError(
                say("sqlite.no-column", table=table, column=absent[0]), path=display(path), expected=SCHEMA
            )
    return columns


def _devices(connection: sqlite3.Connection) -> int:
    try:
        return int(connection.execute("SELECT COUNT(DISTINCT deviceId) FROM TASK").fetchone()[0])
    except sqlite3.Error:
        return 1


def _query(columns: dict[str, list[str]], rank: int | None, devices: int) -> str:
    """One SELECT joining TASK, COMPUTE_TASK_INFO and STRING_IDS (table and column names are the
    documented ones, checked against the database, never user text)."""
    info = columns["COMPUTE_TASK_INFO"]
    select, joins = ["T.startNs", "T.endNs"], []
    for i, (canonical, column) in enumerate(_STRING_COLUMNS.items()):
        if column in info:
            select.append(f"S{i}.value AS {canonical}")
            joins.append(f"LEFT JOIN STRING_IDS S{i} ON S{i}.id = C.{column}")
    block = next((c for c in _BLOCK if c in info), None)
    if block:
        select.append(f"C.{block} AS block_dim")
    where = ""
    if rank is not None and devices > 1 and "deviceId" in columns["TASK"]:
        where = f" WHERE T.deviceId = {int(rank)}"
    return (
        f"SELECT {', '.join(select)} FROM COMPUTE_TASK_INFO C JOIN TASK T ON T.globalTaskId = C.globalTaskId "
        f"{' '.join(joins)}{where} ORDER BY T.startNs"
    )


def _kernels(rows: list[tuple], columns: dict[str, list[str]]) -> tuple[pd.DataFrame, frozenset[str]]:
    """Rows -> canonical kernels (µs, exact to the ns: the integer part is divided before the float),
    and the canonical columns the table had. Tasks without a start or end time are dropped."""
    info = columns["COMPUTE_TASK_INFO"]
    names = [c for c, col in _STRING_COLUMNS.items() if col in info]
    names += ["block_dim"] if any(c in info for c in _BLOCK) else []
    rows = [r for r in rows if isinstance(r[0], int) and isinstance(r[1], int)]
    data = list(zip(*rows, strict=True)) if rows else [()] * (len(names) + 2)
    start = np.asarray(data[0], dtype="int64")
    end = np.asarray(data[1], dtype="int64")
    table = pa.table({name: pa.array(values) for name, values in zip(names, data[2:], strict=True)})
    table = table.append_column(
        "start_us", pa.array((start // 1000).astype("float64") + (start % 1000) / 1000.0)
    )
    table = table.append_column("duration_us", pa.array((end - start) / 1000.0))
    present = frozenset(table.column_names)
    table = normalise_columns(table)
    table = table.append_column("scope", map_unique(table.column("name"), scope_of))
    if "op_type" not in table.column_names:
        table = table.append_column("op_type", map_unique(table.column("name"), op_type_of_kernel))
    return conform_kernels(to_frame(complete(table))), present

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
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pyarrow as pa

from core.errors import InputError
from core.model import FREQUENCY_SCHEMA, Limitation, ProfilerConfig, Run, RunMeta, conform_kernels
from core.text import say
from diagnosis.limits import MIB, Limits, env_name
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.ascend import MINDSPORE, complete, kernel_limitations, output_dir, read_info
from diagnosis.readers.cann_msprof import CANN, devices_of, op_summaries, prof_folders, read_sample
from diagnosis.readers.discover import classify, discover
from diagnosis.readers.io import display, to_frame
from diagnosis.readers.sqlite_guard import STRING_COLUMNS, Guarded, SqlValue, guarded
from diagnosis.readers.steps import no_steps
from diagnosis.readers.tables import canonical as canonical_table
from diagnosis.readers.torch_npu_db import read_frequency
from diagnosis.readers.traits import amp_of, infer_execution_mode, name_pairs, phase_of
from diagnosis.readers.values import map_unique, normalise_columns, op_type_of_kernel, scope_of

LAYOUT_MS = catalog.ASCEND_MS_DB.name
LAYOUT_CANN = catalog.CANN_MSPROF_DB.name
LAYOUTS = (LAYOUT_MS, LAYOUT_CANN)
TABLES = ("TASK", "COMPUTE_TASK_INFO", "STRING_IDS")
SCHEMA = say("sqlite.schema")
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
    found: list[Path] = []
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
    """Canonical kernels of the compute tasks (of device `rank` when the database holds several),
    decoded under the SQLite budgets (sqlite_guard).

    The row and text budgets always apply, also to a local file: unlike a text table, a database's rows
    cannot be counted while an archive is unpacked, and a row of a 2 KB database can stand for any
    number of joined rows."""
    limits = Limits.from_env()
    rows, text = limits.max_profile_rows, limits.max_profile_file_bytes
    data = decode_db(str(path), rank, rows, text)
    return _kernels(pa.ipc.open_stream(data).read_all())


def decode_db(name: str, rank: int | None, row_limit: int | None, text_limit: int | None) -> bytes:
    """The compute tasks as an Arrow IPC stream (plain bytes: safe to return from a child process).

    Every table is counted against the row budget before a row is read and the keys the schema makes
    unique (COMPUTE_TASK_INFO.globalTaskId, STRING_IDS.id) are checked, so the join yields at most one
    row per TASK row; strings are read once and shared, and the text they add up to is budgeted."""
    path = Path(name)
    with guarded(path, expected=SCHEMA) as db:
        try:
            columns = _schema(db.connection, path)
        except sqlite3.Error as exc:
            raise db.translate(exc) from None
        for table in TABLES:
            db.check_rows(table, row_limit)
        db.refuse_duplicates("COMPUTE_TASK_INFO", "globalTaskId")
        db.refuse_duplicates("STRING_IDS", "id")
        found = _task_columns(db.rows(_query(columns, rank, _devices(db)), row_limit), columns)
        if not found["start_ns"]:
            raise db.error(say("sqlite.no-tasks"))
        strings = {key: value for key, value in db.rows("SELECT id, value FROM STRING_IDS", row_limit)}
        table = _task_table(found, strings, text_limit, db)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


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


def _devices(db: Guarded) -> int:
    """Distinct devices of TASK (1 when the column is missing)."""
    try:
        return int(db.connection.execute("SELECT COUNT(DISTINCT deviceId) FROM TASK").fetchone()[0])
    except sqlite3.Error as exc:
        if db.timed_out:
            raise db.translate(exc) from None
        return 1


def _query(columns: dict[str, list[str]], rank: int | None, devices: int) -> str:
    """One SELECT of TASK joined with COMPUTE_TASK_INFO on its unique key: times, the string ids and the
    block dim, never the strings themselves (table and column names are the documented ones, checked
    against the database, never user text)."""
    info = columns["COMPUTE_TASK_INFO"]
    select = ["T.startNs", "T.endNs"]
    select += [f"C.{column}" for column in STRING_COLUMNS.values() if column in info]
    block = next((c for c in _BLOCK if c in info), None)
    if block:
        select.append(f"C.{block}")
    where = ""
    if rank is not None and devices > 1 and "deviceId" in columns["TASK"]:
        where = f" WHERE T.deviceId = {int(rank)}"
    return (
        f"SELECT {', '.join(select)} FROM COMPUTE_TASK_INFO C JOIN TASK T ON T.globalTaskId = C.globalTaskId"
        f"{where} ORDER BY T.startNs"
    )


def _task_columns(
    rows: Iterable[tuple[SqlValue, ...]], columns: dict[str, list[str]]
) -> dict[str, list[SqlValue]]:
    """The query's rows as columns: tasks whose start or end is not a whole number are dropped, a block
    dim that is not one is missing (a database may hold text in a number column)."""
    info = columns["COMPUTE_TASK_INFO"]
    names = [c for c, col in STRING_COLUMNS.items() if col in info]
    names += ["block_dim"] if any(c in info for c in _BLOCK) else []
    found: dict[str, list[SqlValue]] = {name: [] for name in ["start_ns", "end_ns", *names]}
    lists = list(found.values())
    for row in rows:
        if type(row[0]) is int and type(row[1]) is int:
            for values, value in zip(lists, row, strict=True):
                values.append(value)
    if "block_dim" in found:
        found["block_dim"] = [b if type(b) is int else None for b in found["block_dim"]]
    return found


def _task_table(
    found: dict[str, list[SqlValue]], strings: dict[SqlValue, SqlValue], text_limit: int | None, db: Guarded
) -> pa.Table:
    """Columns with each string id replaced by its STRING_IDS value (missing, or not text: null). The
    text this adds up to (a value is copied once per task that names it) is held to `text_limit`."""
    texts = {key: value for key, value in strings.items() if isinstance(value, str)}
    string_names = [c for c in STRING_COLUMNS if c in found]
    if text_limit is not None:
        sizes = {key: len(value.encode("utf-8", "replace")) for key, value in texts.items()}
        total = sum(sizes.get(key, 0) for name in string_names for key in found[name] if _hashable(key))
        if total > text_limit:
            raise db.error(
                say("sqlite.text-over", mib=total / MIB, limit=text_limit / MIB),
                say("archive.smaller-override", variable=env_name("max_profile_file_bytes")),
            )
    columns: dict[str, tuple[list[SqlValue], pa.DataType]] = {
        "start_ns": (found["start_ns"], pa.int64()),
        "end_ns": (found["end_ns"], pa.int64()),
    }
    for name in string_names:
        columns[name] = ([texts.get(k) if _hashable(k) else None for k in found[name]], pa.string())
    if "block_dim" in found:
        columns["block_dim"] = (found["block_dim"], pa.int64())
    return pa.table({name: pa.array(values, kind) for name, (values, kind) in columns.items()})


def _hashable(key: object) -> bool:
    """A value SQLite can return (int, float, str, bytes, None) that can be looked up in a dict."""
    return not isinstance(key, (list, dict, set))


def _kernels(table: pa.Table) -> tuple[pd.DataFrame, frozenset[str]]:
    """Decoded tasks -> canonical kernels (µs, exact to the ns: the integer part is divided before the
    float), and the canonical columns the table had."""
    start = table.column("start_ns").to_numpy()
    end = table.column("end_ns").to_numpy()
    table = table.drop_columns(["start_ns", "end_ns"])
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

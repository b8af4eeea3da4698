"""Shared reader helpers: CSV/JSON reading with user-facing errors, column aliases, value normalisation,
profiler_info parsing and the step tables every Ascend-family reader builds.

CSV files are read with pyarrow, only the columns a reader asks for, and normalised column-wise
(string values through their few distinct values), never one Python object per row.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from core.errors import InputError
from core.model import PIPE_COUNTERS, STEP_SCHEMA, ProfilerConfig, conform_steps
from diagnosis.readers.traits import amp_markers, infer_phase
from diagnosis.unique import factorize

NULL_VALUES = ["N/A", ""]
_HEADER_PROBE = 1 << 16  # bytes read to find the header line


def prefer_jemalloc() -> None:
    """Give Arrow buffers to jemalloc unless the user chose a pool (ARROW_DEFAULT_MEMORY_POOL).

    pyarrow's default, mimalloc, returns freed pages to the kernel at once, so the many short-lived
    million-row buffers of a comparison are faulted in again and again (on a 1M+1M-row pair about
    3 s of system time); jemalloc keeps them for reuse at the same peak RSS. Builds without jemalloc
    keep their default.
    """
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except (NotImplementedError, pa.ArrowException):
        return


prefer_jemalloc()


# --------------------------------------------------------------------------------------------- errors


def display(path: Path) -> str:
    """How a file is named in messages: its last three path parts (enough to tell runs apart)."""
    return "/".join(path.parts[-3:])


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:240] if text else type(exc).__name__


# ------------------------------------------------------------------------------------------ CSV reading


@dataclass(frozen=True)
class Col:
    """A canonical column, the header spellings it appears under (first = documented) and its type."""

    name: str
    aliases: tuple[str, ...]
    type: pa.DataType = field(default_factory=pa.string)


def read_header(path: Path) -> list[str]:
    """The header fields of a CSV file as written; InputError when the file is empty, binary or not UTF-8."""
    try:
        with open(path, "rb") as fh:
            probe = fh.read(_HEADER_PROBE)
    except OSError as exc:
        raise InputError(f"cannot open ({exc.strerror})", path=display(path)) from None
    if not probe.strip():
        raise InputError("empty file", path=display(path), expected="a CSV header line and rows")
    if b"\x00" in probe:
        raise InputError("binary data, not CSV text", path=display(path), expected="a UTF-8 CSV file")
    _check_utf8(probe, path)
    line = re.split(rb"\r\n|\r|\n", probe, maxsplit=1)[0]  # any line ending, old Mac `\r` too
    try:
        return next(csv.reader([line.decode("utf-8-sig")]))
    except csv.Error as exc:  # e.g. a stray quote: the header cannot be read as CSV
        problem = f"unreadable header line ({exc})"
        raise InputError(problem, path=display(path), expected="a CSV header") from None


def _check_utf8(probe: bytes, path: Path) -> None:
    """The start of the file must be UTF-8 (a character cut by the probe's end is fine)."""
    try:
        probe.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data" and exc.start >= len(probe) - 3:
            return
        raise InputError(
            f"not UTF-8 text (byte {exc.start})", path=display(path), expected="a UTF-8 CSV file"
        ) from None


def resolve(header: Sequence[str], cols: Iterable[Col]) -> dict[str, str]:
    """Map canonical name -> header field actually present (first alias that matches, spaces ignored)."""
    present = {h.strip(): h for h in header}
    found = {}
    for col in cols:
        hit = next((a for a in col.aliases if a in present), None)
        if hit is not None:
            found[col.name] = present[hit]
    return found


def require(found: dict[str, str], cols: Sequence[Col], required: Iterable[str], path: Path) -> None:
    """InputError naming the first missing required column and the spellings that would do."""
    by_name = {c.name: c for c in cols}
    for name in required:
        if name not in found:
            spellings = " or ".join(repr(a) for a in by_name[name].aliases)
            raise InputError(
                f"missing column {by_name[name].aliases[0]!r}",
                path=display(path),
                expected=f"a header with {spellings}",
            )


def counter_name(header: str) -> str:
    """`aic_mte2_time(us)` -> `aic_mte2_time_us`, `cube_utilization(%)` -> `cube_utilization_pct`."""
    text = header.strip().lower().replace("(%)", "_pct").replace("%", "_pct")
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


def read_csv(
    path: Path,
    cols: Sequence[Col],
    *,
    required: Iterable[str] = (),
    counters: bool = False,
    nulls: Sequence[str] = NULL_VALUES,
) -> pa.Table:
    """Read the named columns of a CSV file (plus, with `counters`, the PIPE_COUNTERS it has) under
    canonical names.

    Cells `N/A` and empty become null. Errors (bad rows, wrong types, bad encoding) become InputError
    naming the file and, where pyarrow says which, the column.
    """
    header = read_header(path)
    found = resolve(header, cols)
    require(found, cols, required, path)
    types = {found[c.name]: c.type for c in cols if c.name in found}
    rename = {found[c.name]: c.name for c in cols if c.name in found}
    if counters:
        for raw in header:
            name = counter_name(raw)
            if name in PIPE_COUNTERS and raw not in types:
                types[raw] = pa.float64()
                rename[raw] = name
    table = _arrow_read(path, header, types, list(nulls))
    return table.rename_columns([rename[c] for c in table.column_names])


def _arrow_read(path: Path, header: list[str], types: dict[str, pa.DataType], nulls: list[str]) -> pa.Table:
    convert = pacsv.ConvertOptions(
        include_columns=list(types),
        column_types=types,
        null_values=nulls,
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
    )
    try:
        return pacsv.read_csv(
            path,
            convert_options=convert,
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise InputError(
            _explain_arrow(exc, header), path=display(path), expected=_expectation(exc)
        ) from None


def _explain_arrow(exc: BaseException, header: list[str]) -> str:
    """Turn pyarrow's message into one line naming the column ("In CSV column #7: ..." -> its name)."""
    msg = _first_line(exc)
    hit = re.search(r"CSV column #(\d+)", msg)
    if hit and int(hit.group(1)) < len(header):
        col = header[int(hit.group(1))].strip()
        msg = msg.replace(hit.group(0), f"column {col!r}")
    if "invalid UTF8" in msg or "UTF8" in msg:
        return f"not UTF-8 text ({msg})"
    if "Expected" in msg and "columns" in msg:
        return f"malformed or truncated row ({msg})"
    return msg


def _expectation(exc: BaseException) -> str:
    msg = str(exc)
    if "conversion error to" in msg:
        kind = msg.split("conversion error to", 1)[1].split(":", 1)[0].strip()
        return f"{kind} values (or N/A) in that column"
    if "UTF8" in msg:
        return "UTF-8 text"
    return "comma-separated rows with as many fields as the header"


def read_table(path: Path) -> pd.DataFrame:
    """A small auxiliary CSV (op_statistic, memory, dataset ...) with every column, types inferred."""
    read_header(path)
    try:
        table = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(null_values=NULL_VALUES))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise InputError(
            _explain_arrow(exc, read_header(path)),
            path=display(path),
            expected="comma-separated rows with as many fields as the header",
        ) from None
    keep = [c for c in table.column_names if c.strip() != "Device_id"]
    return to_frame(table.select(keep))


def to_frame(table: pa.Table) -> pd.DataFrame:
    """pyarrow table -> pandas with the model's dtypes (string[pyarrow], int64/double[pyarrow]); zero-copy."""
    return table.to_pandas(types_mapper=_types_mapper)


def _types_mapper(arrow_type: pa.DataType) -> Any:
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return pd.StringDtype("pyarrow")
    return pd.ArrowDtype(arrow_type)


# --------------------------------------------------------------------------------------- JSON and text


def load_json(path: Path, expected: str = "a JSON document") -> Any:
    """Parse a (small) JSON file; empty, non-UTF-8 or invalid content raises InputError."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot open ({exc.strerror})", path=display(path)) from None
    if not raw.strip():
        raise InputError("empty file", path=display(path), expected=expected)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (byte {exc.start})", path=display(path), expected=expected
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"invalid or truncated JSON at line {exc.lineno} column {exc.colno} ({exc.msg})"
        raise InputError(problem, path=display(path), expected=expected) from None


def read_text(path: Path) -> str:
    """A text file as str; non-UTF-8 raises InputError naming the byte offset."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (byte {exc.start})", path=display(path), expected="UTF-8 text"
        ) from None
    except OSError as exc:
        raise InputError(f"cannot open ({exc.strerror})", path=display(path)) from None


# ------------------------------------------------------------------------------------ value normalisation

# Spellings seen across CANN versions, legacy MindSpore enums and torch; canonical names on the right.
_DTYPE_ALIASES = {
    "HALF": "FLOAT16",
    "FP16": "FLOAT16",
    "BFLOAT16": "BF16",
    "FLOAT32": "FLOAT",
    "FP32": "FLOAT",
    "FLOAT64": "DOUBLE",
    "FP64": "DOUBLE",
    "N/A": "UNDEFINED",
    "UNKNOWN": "UNDEFINED",
}
_FORMAT_ALIASES = {"FRAC_Z": "FRACTAL_Z", "FRAC_NZ": "FRACTAL_NZ"}


def canonical_dtype(token: str) -> str:
    """`DT_BF16` -> `BF16`, `float32` -> `FLOAT`, `FLOAT16` stays; unknown names upper-cased."""
    name = token.strip().upper()
    name = name.removeprefix("DT_").removeprefix("MINDSPORE.")
    return _DTYPE_ALIASES.get(name, name)


def canonical_format(token: str) -> str:
    """`FORMAT_ND` -> `ND`, `FRAC_Z` -> `FRACTAL_Z`."""
    name = token.strip().upper().removeprefix("FORMAT_")
    return _FORMAT_ALIASES.get(name, name)


def _each(fn: Callable[[str], str]) -> Callable[[str], str]:
    """Apply a token normaliser to every `;`-separated entry of a cell."""
    return lambda cell: ";".join(fn(part) if part.strip() else "" for part in cell.split(";"))


def clean_shapes(cell: str) -> str:
    """`"8192,512;8;"` (literal quotes, tabs, brackets) -> `8192,512;8;`."""
    text = cell.replace('"', "").replace("[", "").replace("]", "").replace(" ", "").strip()
    return text


NORMALISERS: dict[str, Callable[[str], str]] = {
    "input_dtypes": _each(canonical_dtype),
    "output_dtypes": _each(canonical_dtype),
    "input_formats": _each(canonical_format),
    "output_formats": _each(canonical_format),
    "input_shapes": clean_shapes,
    "output_shapes": clean_shapes,
    "op_state": lambda v: v.strip().lower(),
    "core": lambda v: v.strip().upper(),
    "op_type": lambda v: v.strip(),
    "name": lambda v: v.strip(),
}


def map_unique(values: pa.ChunkedArray | pa.Array, fn: Callable[[str], str | None]) -> pa.ChunkedArray:
    """Apply a Python function to each distinct string only, then scatter the results back.

    When `fn` changes no value the column is returned as is (no copy): most kernel columns are
    already canonical, and scattering a million strings costs more than finding their few values.
    """
    if isinstance(values, pa.Array):
        values = pa.chunked_array([values])
    if not pa.types.is_string(values.type):
        values = values.cast(pa.string())
    uniq = pc.unique(values)
    before = uniq.to_pylist()
    after = [None if v is None else fn(v) for v in before]
    if after == before:
        return values
    index = pc.index_in(values, value_set=uniq)
    mapped = pa.array(after, type=pa.string())
    return pa.chunked_array([pc.take(mapped, chunk) for chunk in index.chunks], type=pa.string())


def normalise_columns(table: pa.Table) -> pa.Table:
    """Apply NORMALISERS to the string columns of a kernel table that has them, once per distinct value
    (the literal quotes of shape cells go with the rest of clean_shapes: a column-wise replace first
    cost two passes over every cell)."""
    for name, fn in NORMALISERS.items():
        if name in table.column_names:
            column = map_unique(table.column(name), fn)
            table = table.set_column(table.column_names.index(name), name, column)
    return table


_OP_SCOPE_RE = re.compile(r"^(.*?-op\d+)(?:/[^/]*)?$")


def scope_of(name: str) -> str | None:
    """Framework op (full_op_name) behind a kernel name.

    `<scope>/<Op>-opN/<kernel>` -> `<scope>/<Op>-opN`; a name ending in `-opN` is its own scope; any
    other `<launch op>/<kernel>` -> `<launch op>`; a bare kernel name has none.
    """
    hit = _OP_SCOPE_RE.match(name)
    if hit and "/" in hit.group(1):
        return hit.group(1)
    if "/" in name:
        return name.rsplit("/", 1)[0]
    return None


_ACLNN_RE = re.compile(r"^aclnn[A-Za-z0-9]+_[A-Za-z0-9]+_([A-Za-z][A-Za-z0-9]*)$")
_TRANS_RE = re.compile(r"^trans_([A-Za-z][A-Za-z0-9]*)_\d+$")


def op_type_of_kernel(name: str) -> str | None:
    """Operator type recoverable from a bare kernel name (no Type column): torch_npu `aclnnX_Impl_Kernel`
    -> `Kernel`, CANN `trans_Cast_3` -> `Cast`, MindSpore `<scope>/Conv2D-op1` -> `Conv2D`; else None."""
    kernel = name.rsplit("/", 1)[-1]
    for pattern in (_ACLNN_RE, _TRANS_RE):
        hit = pattern.match(kernel)
        if hit:
            return hit.group(1)
    hit = re.match(r"^([A-Za-z][A-Za-z0-9]*)-op\d+$", kernel)
    return hit.group(1) if hit else None


# --------------------------------------------------------------------------------- profiler_info records

_AIC_METRICS = {
    "ACL_AICORE_PIPE_UTILIZATION": "PipeUtilization",
    "ACL_AICORE_ARITHMETIC_UTILIZATION": "ArithmeticUtilization",
    "ACL_AICORE_MEMORY_BANDWIDTH": "Memory",
    "ACL_AICORE_L0B_AND_WIDTH": "MemoryL0",
    "ACL_AICORE_MEMORY_UB": "MemoryUB",
    "ACL_AICORE_RESOURCE_CONFLICT_RATIO": "ResourceConflictRatio",
    "ACL_AICORE_L2_CACHE": "L2Cache",
    "ACL_AICORE_MEMORY_ACCESS": "MemoryAccess",
    "ACL_AICORE_NONE": "None",
    "AICORENONE": "None",
}
_LEVELS = {"level0": "Level0", "level1": "Level1", "level2": "Level2", "levelnone": "LevelNone"}


@dataclass
class InfoRecord:
    """What a profiler_info file says about the run, normalised across MindSpore and torch_npu."""

    config: ProfilerConfig
    framework: str = "mindspore"
    framework_version: str | None = None
    cann_version: str | None = None
    jit_level: str | None = None
    rank: int | None = None
    execution_mode: str = "unknown"
    options_recorded: bool = True  # False for MindSpore 2.0-2.2 records (no profiler options)


def canonical_aic_metrics(value: Any) -> str | None:
    """`ACL_AICORE_PIPE_UTILIZATION` / `PipeUtilization` -> `PipeUtilization`; None stays None."""
    if value is None:
        return None
    text = str(value).strip()
    key = text.upper().replace(" ", "_")
    return _AIC_METRICS.get(key, text if text.lower() not in ("none", "") else "None")


def canonical_level(value: Any) -> str | None:
    """`ProfilerLevel.Level1` / `level1` -> `Level1`."""
    if value is None or str(value).strip() == "":
        return None
    text = str(value).strip().rsplit(".", 1)[-1]
    return _LEVELS.get(text.lower(), text)


def as_bool(value: Any) -> bool | None:
    """Booleans as profilers write them: true/false, "on"/"off", 1/0."""
    if isinstance(value, bool) or value is None:
        return value
    text = str(value).strip().lower()
    if text in ("true", "on", "1", "yes"):
        return True
    if text in ("false", "off", "0", "no"):
        return False
    return None


def _activities(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list | tuple):
        return None
    return tuple(sorted(str(v).rsplit(".", 1)[-1].upper() for v in value))


def _schedule(value: Any) -> dict[str, Any] | None:
    return dict(value) if isinstance(value, dict) and value else None


def _int_or_none(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: JSON `1e309` is float infinity
        return None
    return number if number >= 0 else None


def parse_profiler_info(data: Any, path: Path) -> InfoRecord:
    """Normalise any profiler_info record: MindSpore 2.5+ `profiler_parameters`, torch_npu `config`,
    MindSpore 2.3/2.4 `profiling_options`, or MindSpore 2.0-2.2 (no options recorded)."""
    if not isinstance(data, dict):
        raise InputError("not a JSON object", path=display(path), expected="a profiler_info JSON object")
    if isinstance(data.get("profiler_parameters"), dict):
        return _ms_info(data)
    if isinstance(data.get("config"), dict):
        return _torch_info(data)
    return _legacy_info(data)


def _ms_info(data: dict[str, Any]) -> InfoRecord:
    params = data["profiler_parameters"]
    config = ProfilerConfig(
        level=canonical_level(params.get("profiler_level")),
        aic_metrics=canonical_aic_metrics(params.get("aic_metrics")),
        activities=_activities(params.get("activities")),
        with_stack=as_bool(params.get("with_stack")),
        profile_memory=as_bool(params.get("profile_memory")),
        data_process=as_bool(params.get("data_process")),
        record_shapes=as_bool(params.get("record_shapes")),
        data_simplification=as_bool(params.get("data_simplification")),
        schedule=_schedule(params.get("schedule")),
        raw=dict(params),
    )
    ms_info = data.get("ms_profiler_info") if isinstance(data.get("ms_profiler_info"), dict) else {}
    jit = str(data.get("jit_level") or "").strip() or None
    return InfoRecord(
        config=config,
        framework_version=_str_or_none(data.get("ms_version")),
        cann_version=_str_or_none(data.get("cann_version")),
        jit_level=jit,
        rank=_int_or_none(ms_info.get("rank_id")),
        execution_mode="graph" if jit == "O2" else "unknown",
    )


def _torch_info(data: dict[str, Any]) -> InfoRecord:
    common = data["config"].get("common_config") or {}
    experimental = data["config"].get("experimental_config") or {}
    config = ProfilerConfig(
        level=canonical_level(experimental.get("_profiler_level")),
        aic_metrics=canonical_aic_metrics(experimental.get("_aic_metrics")),
        activities=_activities(common.get("activities")),
        with_stack=as_bool(common.get("with_stack")),
        profile_memory=as_bool(common.get("profile_memory")),
        data_process=None,
        record_shapes=as_bool(common.get("record_shapes")),
        data_simplification=as_bool(experimental.get("_data_simplification")),
        schedule=_schedule(common.get("schedule")),
        raw=dict(data["config"]),
    )
    return InfoRecord(
        config=config,
        framework="torch_npu",
        framework_version=_str_or_none(data.get("torch_npu_version")),
        cann_version=_str_or_none(data.get("cann_version")),
        rank=_int_or_none(data.get("rank_id")),
    )


def _legacy_info(data: dict[str, Any]) -> InfoRecord:
    options = data.get("profiling_options")
    if isinstance(options, str):
        try:
            options = json.loads(options)
        except json.JSONDecodeError:
            options = {"raw": options}
    jit = str(data.get("jit_level") or "").strip() or None
    mode = _context_mode(data.get("context_mode"))
    if mode == "unknown" and jit == "O2":
        mode = "graph"
    record = InfoRecord(
        config=ProfilerConfig(),
        framework_version=_str_or_none(data.get("ms_version")),
        jit_level=jit,
        rank=_int_or_none(data.get("rank_id")),
        execution_mode=mode,
        options_recorded=isinstance(options, dict) and bool(options),
    )
    if record.options_recorded:
        record.config = _options_config(options)
    return record


def _options_config(options: dict[str, Any]) -> ProfilerConfig:
    """MindSpore 2.3/2.4 msprof options (free-form; on/off strings)."""
    level = options.get("profiler_level") or options.get("profile_level")
    return ProfilerConfig(
        level=canonical_level(level),
        aic_metrics=canonical_aic_metrics(options.get("aic_metrics")),
        activities=None,
        with_stack=as_bool(options.get("with_stack")),
        profile_memory=as_bool(options.get("profile_memory")),
        data_process=as_bool(options.get("data_process")),
        record_shapes=as_bool(options.get("record_shapes")),
        schedule=None,
        raw=dict(options),
    )


def _context_mode(value: Any) -> str:
    """Legacy `context_mode`: 0 / "graph" / GRAPH_MODE -> graph, 1 / "pynative" -> pynative."""
    text = str(value).strip().lower() if value is not None else ""
    if text in ("0", "graph", "graph_mode"):
        return "graph"
    if text in ("1", "pynative", "pynative_mode"):
        return "pynative"
    return "unknown"


def _str_or_none(value: Any) -> str | None:
    return str(value).strip() or None if value is not None else None


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
    )
    table = read_csv(path, cols, required=("computing", "free"))
    busy = _np(table, "computing")
    free = _np(table, "free")
    comm = _np(table, "comm_exposed") if "comm_exposed" in table.column_names else np.zeros(len(busy))
    steps = _step_numbers(table.column("step") if "step" in table.column_names else None, len(busy))
    frame = pd.DataFrame(
        {
            "step": steps,
            "busy_us": busy,
            "free_us": free,
            "communication_us": comm,
            "duration_us": busy + np.nan_to_num(comm) + np.nan_to_num(free),
        }
    )
    return conform_steps(frame)


def _np(table: pa.Table, name: str) -> np.ndarray:
    return table.column(name).to_numpy().astype("float64", copy=False)


def _step_numbers(column: pa.ChunkedArray | None, n: int) -> np.ndarray:
    """Step ids as written (`0`, `3`, `step3`); row order when missing or empty."""
    if column is None:
        return np.arange(n, dtype="int64")
    digits = pc.extract_regex(column.fill_null(""), r"(?P<n>\d+)\s*$")
    values = pc.struct_field(digits, "n") if len(digits) else pa.array([], pa.string())
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
    start = kernels["start_us"].to_numpy(dtype="float64", na_value=np.nan)
    dur = kernels["duration_us"].to_numpy(dtype="float64", na_value=np.nan)
    step = kernels["step"].to_numpy(dtype="float64", na_value=np.nan) if "step" in kernels else np.nan
    frame = pd.DataFrame({"step": step, "start": start, "end": start + np.nan_to_num(dur)})
    return frame[np.isfinite(start)]


def union_lengths(frame: pd.DataFrame, key: str) -> pd.Series:
    """Length of the union of [start, end) intervals per `key` group (overlapping streams count once)."""
    ordered = frame.sort_values([key, "start"], kind="stable")
    reach = ordered.groupby(key, sort=False)["end"].cummax()
    prev_reach = reach.groupby(ordered[key].to_numpy(), sort=False).shift(1)
    gaps = (ordered["start"] - prev_reach).clip(lower=0).fillna(0)
    span = ordered.groupby(key)["end"].max() - ordered.groupby(key)["start"].min()
    return span - gaps.groupby(ordered[key].to_numpy()).sum()


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
    step = kernels["step"].to_numpy(dtype="float64", na_value=np.nan)
    start = kernels["start_us"].to_numpy(dtype="float64", na_value=np.nan)
    known = ~np.isnan(step)
    return pd.Series(start[known]).groupby(step[known]).min()


# --------------------------------------------------------------------------------------------- traits


def name_pairs(kernels: pd.DataFrame) -> pd.DataFrame:
    """Distinct (name, op_type) pairs (a missing value is a value) with their launch counts, in order
    of first launch.

    Both columns go through the shared factorization (the analyzers reuse it) and the two codes are
    combined into one integer, so counting is one NumPy pass (pyarrow's group_by would load its
    query engine, ~25 ms of every start)."""
    names, name_codes = _values_and_codes(kernels["name"])
    types, type_codes = _values_and_codes(kernels["op_type"])
    pair_ids, pairs = pd.factorize(name_codes * len(types) + type_codes)  # in order of first launch
    return pd.DataFrame(
        {
            "name": pd.array(names[pairs // len(types)], dtype="string[pyarrow]"),
            "op_type": pd.array(types[pairs % len(types)], dtype="string[pyarrow]"),
            "count": pd.array(np.bincount(pair_ids, minlength=len(pairs)), dtype="int64[pyarrow]"),
        }
    )


def _values_and_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values with a last entry for "missing", int64 code of each row into them)."""
    codes, uniques = factorize(column)
    values = np.append(np.asarray(uniques, dtype=object), None)
    return values, np.where(codes >= 0, codes, len(values) - 1).astype("int64")


def phase_of(kernels: pd.DataFrame, pairs: pd.DataFrame | None = None) -> str:
    """traits.infer_phase ("is there any backward or optimizer kernel") decided on distinct names: exact."""
    if kernels.empty:
        return "unknown"
    pairs = name_pairs(kernels) if pairs is None else pairs
    return infer_phase(pairs["name"], pairs["op_type"])


def amp_of(kernels: pd.DataFrame, steps: int, pairs: pd.DataFrame | None = None) -> dict[str, Any]:
    """traits.amp_markers evaluated once per distinct (name, op_type), each weighted by its launches:
    the same answer as per launch (all launches of a pair look alike) without the per-launch string
    matching (~0.7 s per million launches)."""
    pairs = name_pairs(kernels) if pairs is None else pairs
    return amp_markers(pairs[["name", "op_type"]], steps, launches=pairs["count"])


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
    steps["start_us"] = filled.astype(STEP_SCHEMA["start_us"])
    return steps


# ------------------------------------------------------------------------------------------ extras


def communication_summary(data: Any, path: Path) -> pd.DataFrame:
    """communication.json -> one row per (step, collective|p2p, op): time info and per-link bandwidth."""
    if not isinstance(data, dict):
        raise InputError(
            "not a JSON object", path=display(path), expected="{step: {collective|p2p: {op: ...}}}"
        )
    rows = []
    for step_key, kinds in data.items():
        if not isinstance(kinds, dict):
            continue
        step = re.search(r"(\d+)$", str(step_key))
        for kind, ops in kinds.items():
            if not isinstance(ops, dict):
                continue
            for op, info in ops.items():
                if isinstance(info, dict) and not op.startswith("Total Op Info"):
                    rows.append(_comm_row(int(step.group(1)) if step else None, kind, op, info))
    return pd.DataFrame(rows).convert_dtypes(dtype_backend="pyarrow") if rows else pd.DataFrame()


def _comm_row(step: int | None, kind: str, op: str, info: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"step": step, "kind": kind, "op": op}
    for key, value in (info.get("Communication Time Info") or {}).items():
        if isinstance(value, int | float):
            row[counter_name(key)] = float(value)
    for link, stats in (info.get("Communication Bandwidth Info") or {}).items():
        if isinstance(stats, dict):
            for key in ("Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)"):
                if isinstance(stats.get(key), int | float):
                    row[f"{link.lower()}_{counter_name(key)}"] = float(stats[key])
    return row


# ------------------------------------------------------------------- legacy host/GPU operator files

OP_DETAIL_COLS = (
    Col("full_op_name", ("full_op_name", "op_full_name")),
    Col("op_type", ("op_type",)),
    Col("occurrences", ("op_occurrences",), pa.int64()),
    Col("total_ms", ("op_total_time(ms)", "compute_time(ms)"), pa.float64()),
    Col("total_us", ("op_total_time(us)",), pa.float64()),
)


def read_op_detail(path: Path) -> pa.Table:
    """`cpu_op_detail_info` / `gpu_op_detail_info`: per-op type, occurrences and total time (as total_us)."""
    table = read_csv(path, OP_DETAIL_COLS, required=("full_op_name", "op_type"))
    if "total_ms" in table.column_names:
        total = pc.multiply(table.column("total_ms"), 1000.0)
        table = table.drop_columns(["total_ms"])
        table = table.append_column("total_us", total) if "total_us" not in table.column_names else table
    return table


def read_op_timestamps(path: Path) -> pa.Table:
    """`<op name>;<type>;<start_ns>,<duration>[,<tid>] <start_ns>,<duration> ...` -> one row per launch:
    name, type, start_ns, duration (raw unit: ms on CPU, µs on GPU)."""
    names, kinds, counts, chunks = _timestamp_lines(path)
    body = "\n".join(chunks)
    width = body.split("\n", 1)[0].count(",") + 1
    columns = ["start_ns", "duration", "tid"][:width]
    expected = "<start_ns>,<duration>[,<tid>] entries separated by spaces"
    if width < 2:  # a launch without its duration (a file cut after a start time)
        problem = f"launch entry {chunks[0][:40]!r} has no duration"
        raise InputError(problem, path=display(path), expected=expected)
    try:
        launches = pacsv.read_csv(
            io.BytesIO(body.encode()),
            read_options=pacsv.ReadOptions(column_names=columns),
            parse_options=pacsv.ParseOptions(quote_char=False),  # the format has no quoting
            convert_options=pacsv.ConvertOptions(
                column_types={"start_ns": pa.int64(), "duration": pa.float64()}, include_columns=columns[:2]
            ),
        )
    except pa.ArrowInvalid as exc:
        raise InputError(
            f"malformed launch entry ({_first_line(exc)})",
            path=display(path),
            expected=expected,
        ) from None
    if launches.num_rows != sum(counts):  # e.g. an entry split or merged by a damaged separator
        raise InputError("malformed launch list", path=display(path), expected=expected)
    index = pa.array(np.repeat(np.arange(len(names)), counts))
    return pa.table(
        {
            "name": pa.array(names, pa.string()).take(index),
            "type": pa.array(kinds, pa.string()).take(index),
            "start_ns": launches.column("start_ns"),
            "duration": launches.column("duration"),
        }
    )


def _timestamp_lines(path: Path) -> tuple[list[str], list[str], list[int], list[str]]:
    """Split the per-op lines (one Python object per operator, not per launch)."""
    names, kinds, counts, chunks = [], [], [], []
    for lineno, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        parts = line.strip().split(";")
        launches = parts[-1].split() if len(parts) >= 3 else []
        if not launches:
            raise InputError(
                f"line {lineno} has no launch list",
                path=display(path),
                expected="<op name>;<type>;<start_ns>,<duration>,... per line",
            )
        names.append(parts[0])
        kinds.append(parts[1])
        counts.append(len(launches))
        chunks.append("\n".join(launches))
    if not names:
        raise InputError("no operator launches recorded", path=display(path), expected="at least one line")
    return names, kinds, counts, chunks


def duration_scale(launches: pa.Table, detail: pa.Table | None, default: float) -> float:
    """µs per raw duration unit: whichever of 1 (µs) or 1000 (ms) makes per-op launch sums match the
    detail file's totals; `default` when the two files share no operator."""
    if detail is None or "total_us" not in detail.column_names:
        return default
    sums = pd.DataFrame({"name": launches.column("name"), "d": launches.column("duration")}).groupby("name")[
        "d"
    ]
    totals = pd.Series(
        detail.column("total_us").to_numpy(zero_copy_only=False), index=detail.column("full_op_name")
    )
    raw = sums.sum()
    common = raw.index.intersection(totals.index)
    ratio = (totals[common] / raw[common]).replace([np.inf, -np.inf], np.nan).dropna()
    ratio = ratio[ratio > 0]
    if ratio.empty:
        return default
    middle = float(np.median(np.log10(ratio.to_numpy(dtype="float64"))))
    return 1.0 if abs(middle) < abs(middle - 3.0) else 1000.0

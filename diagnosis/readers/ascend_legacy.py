"""Readers for MindSpore's older Ascend layouts: 2.3/2.4 ("ascend-ms-2.3") and 2.0-2.2 ("legacy-ascend").

MindSpore 2.0-2.2 writes everything flat in ``<out>/profiler/*_<rank>.*``: per-launch times in
``output_timeline_data_<r>.txt``; op type, block dim and per-input dtype / format / shape in
``framework_raw_<r>.csv`` (its ``op_info`` JSON); steps in ``step_trace_raw_<r>_detail_time.csv`` (sys-count
ticks of 10 ns). When the timeline is missing, the per-operator averages of
``aicore_intermediate_<r>_detail.csv`` stand in (no start times).

MindSpore 2.3/2.4 keeps those files in ``profiler/`` (with ``profiler_info_<r>.json`` holding a free-form
``profiling_options`` dict and ``jit_level``) and adds ``profiler/rank-<r>_<ts>_ascend_ms/
ASCEND_PROFILER_OUTPUT/``, whose kernel_details.csv is a plain merge of CANN op_summary files (keeps
``Device_id``, no ``Step ID``). Its candidate root is the rank folder; the parent supplies the
configuration and, when the output folder has no step table, the legacy step trace.

One module, two layouts: ``LAYOUTS`` lists both and :func:`read` dispatches on the candidate's layout.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from core.errors import InputError, error_line
from core.jsontypes import JsonObject
from core.model import (
    Limitation,
    ProfilerConfig,
    Run,
    RunMeta,
    conform_kernels,
    conform_steps,
)
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.arrow import Column, NamedColumns, sorted_by
from diagnosis.readers.ascend import (
    MINDSPORE,
    Output,
    build_meta,
    complete,
    no_config_limitation,
    output_dir,
    read_info,
    read_metadata,
    read_output,
)
from diagnosis.readers.catalog import of_rank
from diagnosis.readers.discover import discover
from diagnosis.readers.io import (
    Col,
    arrow_frame,
    display,
    read_csv,
    read_header,
    read_table,
    read_text,
    to_frame,
)
from diagnosis.readers.profiler_info import InfoRecord, duplicate_key_limitations, read_profiler_info
from diagnosis.readers.steps import assign_steps, no_steps
from diagnosis.readers.tables import run_tables
from diagnosis.readers.traits import amp_of, infer_execution_mode, phase_of
from diagnosis.readers.values import (
    canonical_dtype,
    canonical_format,
    map_unique,
    normalise_columns,
    scope_of,
)

LAYOUT = catalog.LEGACY_ASCEND_FLAT.name
LAYOUT_23 = catalog.ASCEND_MS_23.name
LAYOUTS = (LAYOUT_23, LAYOUT)
SYSCNT_US = 0.01  # step_trace_raw values are sys-count ticks of 10 ns
LEGACY_REMEDY = say("legacy.remedy")


def candidates(folder: Path) -> list[Candidate]:
    """MindSpore 2.3/2.4 rank folders and 2.0-2.2 flat folders (one per rank) at or below `folder`."""
    return [c for c in discover(folder) if c.layout in LAYOUTS]


def read(candidate: Candidate) -> Run:
    """Read one rank of either layout."""
    return read_ms23(candidate) if candidate.layout == LAYOUT_23 else read_flat(candidate)


def read_flat(candidate: Candidate) -> Run:
    """Read one rank of a flat MindSpore 2.0-2.2 Ascend folder."""
    folder = candidate.root
    rank = candidate.rank if candidate.rank is not None else 0
    files: list[Path] = []
    limitations: list[Limitation] = []
    kernels = legacy_kernels(folder, rank, files, limitations)
    steps = read_step_trace_raw(folder / of_rank(catalog.STEP_TRACE_RAW, rank), files)
    kernels = steps_onto_kernels(kernels, steps)
    if steps.empty:
        limitations.append(Limitation("steps", say("legacy.no-steps"), LEGACY_REMEDY))
    info, info_path = read_legacy_info(folder, rank, files)
    limitations[:0] = legacy_config_limitations(info, info_path)
    limitations += legacy_kernel_limitations(kernels)
    extras = legacy_extras(folder, rank, files, limitations, catalog.FLAT_ASCEND_TABLES)
    meta = RunMeta(
        layout=LAYOUT,
        source=folder.name,
        framework_version=info.framework_version if info else None,
        device="Ascend",
        rank=rank,
        config=info.config if info else ProfilerConfig(),
        jit_level=info.jit_level if info else None,
        execution_mode=_mode(info, kernels),
        phase=phase_of(kernels),
        amp=amp_of(kernels, max(len(steps), 1)),
        files=tuple(p.relative_to(folder).as_posix() for p in files),
    )
    return Run(meta=meta, kernels=kernels, steps=steps, limitations=limitations, **run_tables(extras))


def _mode(info: InfoRecord | None, kernels: pd.DataFrame) -> str:
    if info and info.execution_mode != "unknown":
        return info.execution_mode
    return infer_execution_mode(kernels["name"])


# --------------------------------------------------------------------------------------------- kernels


def legacy_kernels(folder: Path, rank: int, files: list[Path], limitations: list[Limitation]) -> pd.DataFrame:
    """Per-launch kernels from the timeline (or per-op averages), joined with framework_raw op info."""
    timeline = folder / of_rank(catalog.OUTPUT_TIMELINE, rank)
    detail = folder / of_rank(catalog.AICORE_DETAIL, rank)
    if timeline.is_file():
        launches = read_timeline(timeline)
        files.append(timeline)
    elif detail.is_file():
        launches = read_aicore_detail(detail)
        files.append(detail)
        limitations.append(
            Limitation(
                "launches",
                say("legacy.no-timeline"),
                say("legacy.include-timeline"),
            )
        )
    else:
        raise InputError(
            say("legacy.no-files", timeline=timeline.name, detail=detail.name),
            path=display(folder),
            expected=say("legacy.expected-folder"),
        )
    framework = folder / of_rank(catalog.FRAMEWORK_RAW, rank)
    ops = read_framework_raw(framework) if framework.is_file() else None
    if ops is not None:
        files.append(framework)
    return join_ops(launches, ops)


_TIMELINE_COLS = (
    Col("name", ("op_name",)),
    Col("stream", ("stream_id",)),
    Col("start", ("start_time(us)", "start_time(ms)", "start_time"), pa.float64()),
    Col("duration", ("duration(ms)", "duration(us)", "duration"), pa.float64()),
)


def read_timeline(path: Path) -> pa.Table:
    """output_timeline_data: `op_name,stream_id,start_time(<unit>),duration(<unit>)`; units from the header
    (a header without units, as in 2.0's space-separated file, means milliseconds)."""
    header = read_header(path)
    if len(header) == 1 and " " in header[0].strip():
        table, header = _read_spaced(path)
    else:
        table = read_csv(path, _TIMELINE_COLS, required=("name", "start", "duration"))
    scale = _unit_scale(header, "start_time")
    start_us = pc.multiply(table.column("start"), scale)
    _refuse_overflowing_starts(path, table.column("start"), start_us, scale)
    columns: NamedColumns = {
        "name": table.column("name"),
        "start_us": start_us,
        "duration_us": pc.multiply(table.column("duration"), _unit_scale(header, "duration")),
    }
    return pa.Table.from_pydict(columns)


def _read_spaced(path: Path) -> tuple[pa.Table, list[str]]:
    """2.0 style: fields separated by runs of spaces."""
    text = read_text(path)
    body = re.sub(r"[ \t]+", ",", text.strip())
    header = body.split("\n", 1)[0].split(",")
    names = ["name", "stream", "start", "duration"][: len(header)]
    try:
        table = pacsv.read_csv(
            io.BytesIO(body.encode()),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1),
            convert_options=pacsv.ConvertOptions(
                column_types={"name": pa.string(), "start": pa.float64(), "duration": pa.float64()}
            ),
        )
    except pa.ArrowInvalid as exc:
        raise InputError(
            say("legacy.bad-row", error=str(exc).splitlines()[0][:200]),
            path=display(path),
            expected=say("legacy.row-format"),
        ) from None
    return table, header


def _refuse_overflowing_starts(path: Path, raw: Column, start_us: Column, scale: float) -> None:
    """A file whose every start is finite as written but infinite once in µs (1e308 ms) is an InputError
    saying so, not 'every value is infinite'; when only some overflow, ingest drops them with a warning."""
    written = raw.to_numpy().astype("float64")
    converted = start_us.to_numpy().astype("float64")
    overflow = np.isfinite(written) & np.isinf(converted)
    if overflow.any() and not np.isfinite(converted[~np.isnan(converted)]).any():
        unit = "ms" if scale > 1 else "us"
        raise InputError(
            say("ingest.starts-overflow", value=float(np.abs(written[overflow]).min()), unit=unit),
            path=path.name,
            expected=say("ingest.finite-starts"),
        )


def _unit_scale(header: list[str], field: str) -> float:
    """Microseconds per unit of `field` as written in the header: (us) -> 1, (ms) or none -> 1000."""
    spelled = next((h.strip() for h in header if h.strip().startswith(field)), "")
    return 1.0 if spelled.endswith("(us)") else 1000.0


_DETAIL_COLS = (
    Col("name", ("full_op_name", "full_kernel_name", "full_op_time")),  # full_op_time: a 1.x misspelling
    Col("avg_ms", ("task_duration", "execution_time"), pa.float64()),
    Col("count", ("execution_frequency",), pa.int64()),
    Col("core", ("task_type",)),
)


def read_aicore_detail(path: Path) -> pa.Table:
    """Per-op averages (ms) -> one row per launch with the average duration and no start time."""
    table = read_csv(path, _DETAIL_COLS, required=("name", "avg_ms"))
    counts = (
        table.column("count").fill_null(1).to_numpy()  # pyright: ignore[reportArgumentType]  # pyarrow-stubs: fill_null takes a Python value too
        if "count" in table.column_names
        else None
    )
    counts = np.ones(table.num_rows, dtype="int64") if counts is None else counts.clip(min=1)
    rows = table.take(pa.array(np.repeat(np.arange(table.num_rows), counts), type=pa.int64()))
    columns: NamedColumns = {
        "name": rows.column("name"),
        "start_us": pa.nulls(rows.num_rows, pa.float64()),
        "duration_us": pc.multiply(rows.column("avg_ms"), 1000.0),
    }
    if "core" in rows.column_names:
        columns["core"] = rows.column("core")
    return pa.Table.from_pydict(columns)


_FRAMEWORK_COLS = (
    Col("full_op_name", ("full_op_name",)),
    Col("op_name", ("op_name",)),
    Col("op_type", ("op_type",)),
    Col("block_dim", ("block_dim",), pa.int64()),
    Col("op_info", ("op_info",)),
    Col("kernel_type", ("kernel_type",)),
)
_KERNEL_TYPES = {"TBE": "AI_CORE", "AKG": "AI_CORE", "AICORE": "AI_CORE", "AICPU": "AI_CPU", "HOST": "CPU"}
TENSOR_COLUMNS = (
    "input_shapes",
    "input_dtypes",
    "input_formats",
    "output_shapes",
    "output_dtypes",
    "output_formats",
)


# MindSpore 1.x: full_kernel_name is the full op name, kernel_name the short one and kernel_type the op
# type (not the core): `task_id,stream_id,block_dim,full_kernel_name,op_name,kernel_name,kernel_type,...`.
_FRAMEWORK_1X_COLS = (
    Col("full_op_name", ("full_kernel_name",)),
    Col("op_name", ("kernel_name",)),
    Col("op_type", ("kernel_type",)),
    Col("block_dim", ("block_dim",), pa.int64()),
    Col("op_info", ("op_info",)),
)


def _framework_cols(path: Path) -> tuple[Col, ...]:
    """The framework_raw variant, told by its header (never by a version): 1.x spells full_kernel_name."""
    header = {h.strip() for h in read_header(path)}
    return (
        _FRAMEWORK_1X_COLS
        if "full_kernel_name" in header and "full_op_name" not in header
        else _FRAMEWORK_COLS
    )


def read_framework_raw(path: Path) -> pa.Table:
    """framework_raw: one row per op (its first task): type, block dim, core, tensor dtypes/formats/shapes."""
    table = read_csv(path, _framework_cols(path), required=("full_op_name", "op_type"))
    _, first = np.unique(table.column("full_op_name").to_numpy(zero_copy_only=False), return_index=True)
    table = table.take(pa.array(np.sort(first), type=pa.int64()))
    infos = [_op_info(text, path) for text in _column_or_nulls(table, "op_info").to_pylist()]
    columns: NamedColumns = {
        name: table.column(name)
        for name in ("full_op_name", "op_name", "op_type", "block_dim")
        if name in table.column_names
    }
    for key in TENSOR_COLUMNS:
        columns[key] = pa.array([info.get(key) for info in infos], type=pa.string())
    if "kernel_type" in table.column_names:
        columns["core"] = pa.array(
            [_core_of_kernel_type(v) for v in table.column("kernel_type").to_pylist()], pa.string()
        )
    return pa.Table.from_pydict(columns)


def _column_or_nulls(table: pa.Table, name: str) -> Column:
    if name in table.column_names:
        return table.column(name)
    return pa.chunked_array([pa.nulls(table.num_rows, pa.string())])


def _core_of_kernel_type(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    key = value.strip().upper().replace("_", "").replace(" ", "")
    return _KERNEL_TYPES.get(key, value.strip().upper())


def _op_info(text: Any, path: Path) -> dict[str, str]:
    """`{"Input_0": {"format", "data_type", "shape"}, "Output_0": ...}` -> `;`-joined canonical strings."""
    if not isinstance(text, str) or not text.strip():
        return {}
    try:
        info = json.loads(text)
    except json.JSONDecodeError:
        raise InputError(
            say("legacy.bad-op-info"), path=display(path), expected=say("legacy.op-info-like")
        ) from None
    if not isinstance(info, dict):
        return {}
    tensors_of = cast(JsonObject, info)
    out: dict[str, str] = {}
    for side in ("input", "output"):
        tensors = [
            _tensor(tensors_of[k])
            for k in sorted(tensors_of, key=_tensor_index)
            if k.lower().startswith(side)
        ]
        if tensors:
            out[f"{side}_dtypes"] = ";".join(t[0] for t in tensors)
            out[f"{side}_formats"] = ";".join(t[1] for t in tensors)
            out[f"{side}_shapes"] = ";".join(t[2] for t in tensors)
    return out


def _tensor_index(key: str) -> int:
    digits = re.search(r"(\d+)$", key)
    return int(digits.group(1)) if digits else 0


def _tensor(entry: Any) -> tuple[str, str, str]:
    if not isinstance(entry, dict):
        return "UNDEFINED", "", ""
    tensor = cast(JsonObject, entry)
    shape = tensor.get("shape", "")
    dims = (
        ",".join(str(d) for d in cast(list[Any], shape))
        if isinstance(shape, list)
        else str(shape).strip('[]" ')
    )
    return (
        canonical_dtype(str(tensor.get("data_type", "UNDEFINED"))),
        canonical_format(str(tensor.get("format", ""))),
        dims.replace(" ", ""),
    )


def join_ops(launches: pa.Table, ops: pa.Table | None) -> pd.DataFrame:
    """Attach framework_raw columns to launches (hash joins on the full op name, then the short name)."""
    table = launches.append_column("_row", pa.array(np.arange(launches.num_rows)))
    if ops is not None and ops.num_rows:
        table = _join_by(table, ops, "full_op_name", table.column("name"))
        short = map_unique(table.column("name"), lambda n: n.rsplit("/", 1)[-1])
        if "op_name" in ops.column_names:
            table = _join_by(table, ops, "op_name", short)
    table = sorted_by(table, "_row").drop_columns(["_row"])
    table = table.append_column("scope", map_unique(table.column("name"), scope_of))
    return conform_kernels(to_frame(complete(normalise_columns(table))))


def _join_by(table: pa.Table, ops: pa.Table, key: str, values: Column) -> pa.Table:
    """Left-join `ops` on `values` == ops[key], filling only columns that are still null."""
    right_cols = [c for c in ops.column_names if c not in ("full_op_name", "op_name")]
    right = ops.select([key, *right_cols]).rename_columns(["_key", *[f"_r_{c}" for c in right_cols]])
    right = right.take(
        pa.array(
            np.unique(right.column("_key").to_numpy(zero_copy_only=False), return_index=True)[1],
            type=pa.int64(),
        )
    )
    joined = table.append_column("_key", values).join(right, "_key", join_type="left outer")
    for col in right_cols:
        incoming = joined.column(f"_r_{col}")
        merged = pc.coalesce(joined.column(col), incoming) if col in joined.column_names else incoming
        joined = joined.drop_columns([f"_r_{col}"])
        if col in joined.column_names:
            joined = joined.set_column(joined.column_names.index(col), col, merged)
        else:
            joined = joined.append_column(col, merged)
    return joined.drop_columns(["_key"])


# ----------------------------------------------------------------------------------------------- steps

_STEP_COLS = (
    Col("step", ("step_num",)),
    Col("start", ("start_point",), pa.float64()),
    Col("end", ("end_point",), pa.float64()),
    Col("total", ("total",), pa.float64()),
    Col("interval", ("iteration_interval",), pa.float64()),
    Col("fp_and_bp", ("fp_and_bp",), pa.float64()),
    Col("tail", ("tail",), pa.float64()),
)


def read_step_trace_raw(path: Path, files: list[Path]) -> pd.DataFrame:
    """step_trace_raw detail: sys-count (10 ns) columns -> µs; the final `-` row (average) is dropped."""
    if not path.is_file():
        return no_steps()
    table = read_csv(path, _STEP_COLS, required=("step", "start", "total"), nulls=["N/A", "", "-"])
    files.append(path)
    frame = arrow_frame(table)
    # Step numbers must be whole and finite (the average row's `-` and damaged cells are dropped).
    number = pd.to_numeric(frame["step"], errors="coerce").astype("float64")
    frame = frame[np.isfinite(number) & (number.abs() < 2**53) & (number == np.floor(number))]
    frame = frame[~((frame["start"] == 0) & (frame["total"] == 0))]  # 1.x writes an all-zero step 0 row
    busy = frame.get("fp_and_bp", pd.Series(np.nan, index=frame.index)).fillna(0) + frame.get(
        "tail", pd.Series(0.0, index=frame.index)
    ).fillna(0)
    steps = pd.DataFrame(
        {
            "step": pd.to_numeric(frame["step"]).astype("int64"),
            "start_us": frame["start"] * SYSCNT_US,
            "duration_us": frame["total"] * SYSCNT_US,
            "busy_us": busy * SYSCNT_US if {"fp_and_bp", "tail"} & set(frame) else np.nan,
            "free_us": frame["interval"] * SYSCNT_US if "interval" in frame else np.nan,
        }
    )
    return conform_steps(steps)


def steps_onto_kernels(kernels: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """Give kernels step ids when their start times fall inside the step spans (same clock)."""
    if steps.empty or kernels["start_us"].isna().all():
        return kernels
    starts: npt.NDArray[np.float64] = kernels["start_us"].to_numpy(dtype="float64", na_value=np.nan)
    begins: pd.Series[float] = steps["start_us"]
    ends: pd.Series[float] = begins + steps["duration_us"]
    first = float(begins.min())
    last = float(ends.max())
    inside = np.mean((starts >= first) & (starts <= last))
    if not inside >= 0.5:  # another clock: leave steps unknown rather than guess
        return kernels
    ids = assign_steps(starts, steps[["step", "start_us"]].astype("float64"))
    kernels = kernels.copy()
    kernels["step"] = pd.array(pd.Series(ids).astype("Int64"), dtype="int64[pyarrow]")  # pyright: ignore[reportCallIssue, reportArgumentType]  # pandas-stubs omits pyarrow dtype names
    return kernels


# ---------------------------------------------------------------------------------- config and extras


def read_legacy_info(folder: Path, rank: int, files: list[Path]) -> tuple[InfoRecord | None, Path | None]:
    """profiler_info_<rank>.json of a legacy folder, if present."""
    path = folder / of_rank(catalog.PROFILER_INFO, rank)
    if not path.is_file():
        return None, None
    files.insert(0, path)
    return read_profiler_info(path), path


def legacy_config_limitations(info: InfoRecord | None, path: Path | None) -> list[Limitation]:
    """Legacy records hold no profiler options before 2.3; without the file nothing is known."""
    if info is None:
        return [Limitation("profiler-config", say("legacy.no-info"), LEGACY_REMEDY)]
    duplicates = duplicate_key_limitations(path, info.duplicate_keys, "profiler-config") if path else []
    if not info.options_recorded:
        return [
            *duplicates,
            Limitation(
                "profiler-config",
                say("legacy.no-options", name=path.name if path else "profiler_info"),
                LEGACY_REMEDY,
            ),
        ]
    return duplicates


def legacy_kernel_limitations(kernels: pd.DataFrame) -> list[Limitation]:
    """Dtype/shape/format gaps of a legacy kernel table, plus the always-missing OP State and counters."""
    lims: list[Limitation] = []
    for topic, col in (("dtypes", "input_dtypes"), ("shapes", "input_shapes"), ("formats", "input_formats")):
        if kernels[col].isna().all():
            lims.append(
                Limitation(
                    topic,
                    say("legacy.no-topic", topic=topic),
                    say("legacy.include-framework-raw"),
                )
            )
    lims.append(Limitation("op-state", say("legacy.no-op-state")))
    lims.append(Limitation("aic-metrics", say("legacy.no-counters"), LEGACY_REMEDY))
    return lims


_TYPE_COLS = (
    Col("op_type", ("op_type", "kernel_type")),
    Col("total_ms", ("total_time", "task_time", "execution_time"), pa.float64()),
    Col("count", ("execution_frequency",), pa.int64()),
    Col("percent", ("percent",), pa.float64()),
)


def read_aicore_type(path: Path) -> pd.DataFrame:
    """aicore_intermediate_<r>_type.csv, one spelling for 2.0-2.4: op_type, total_ms, count, percent."""
    return to_frame(read_csv(path, _TYPE_COLS, required=("op_type", "total_ms")))


def legacy_extras(
    folder: Path,
    rank: int,
    files: list[Path],
    limitations: list[Limitation],
    patterns: dict[str, str] = catalog.LEGACY_TABLES,
) -> dict[str, pd.DataFrame]:
    """Optional per-rank tables of a legacy folder; unreadable ones become limitations, not failures."""
    extras: dict[str, pd.DataFrame] = {}
    for key, pattern in patterns.items():
        path = folder / of_rank(pattern, rank)
        if not path.is_file():
            continue
        try:
            frame = read_aicore_type(path) if key == "aicore_type" else read_table(path)
        except InputError as exc:
            limitations.append(
                Limitation("extras", say("error.ignored", line=error_line(exc)), say("remedy.reexport"))
            )
            continue
        files.append(path)
        if len(frame):
            extras[key] = frame
    return extras


# ------------------------------------------------------------------------------------ MindSpore 2.3/2.4


def read_ms23(candidate: Candidate) -> Run:
    """Read one 2.3/2.4 rank folder, with the legacy files of its parent `profiler/` folder when present."""
    root = candidate.root
    info, info_path = _ms23_info(root, candidate.rank)
    config = info.config if info else ProfilerConfig()
    out = read_output(output_dir(root), candidate.rank, config.level, MINDSPORE)
    if info and info_path:
        out.files.insert(0, info_path)
        out.limitations.extend(duplicate_key_limitations(info_path, info.duplicate_keys, "profiler-config"))
    else:
        out.limitations.insert(0, no_config_limitation(MINDSPORE))
    rank = candidate.rank if candidate.rank is not None else (info.rank if info else None)
    if rank is not None:
        _ms23_steps(out, root.parent, rank)
        _ms23_minddata(out, root.parent, rank)
    environment = read_metadata(root, out)
    return out.to_run(build_meta(LAYOUT_23, root, candidate, info, out, environment))


def _ms23_info(root: Path, rank: int | None) -> tuple[InfoRecord | None, Path | None]:
    """profiler_info_<rank>.json sits in the parent `profiler/` folder (older builds: in the rank folder)."""
    if rank is not None and (root.parent / of_rank(catalog.PROFILER_INFO, rank)).is_file():
        return read_info(root.parent, rank)
    return read_info(root, rank)


def _ms23_steps(out: Output, profiler_dir: Path, rank: int) -> None:
    """Steps from the parent's step_trace_raw file when the output folder had none."""
    if len(out.steps):
        return
    steps = read_step_trace_raw(profiler_dir / of_rank(catalog.STEP_TRACE_RAW, rank), out.files)
    if steps.empty:
        return
    out.steps = steps
    out.kernels = steps_onto_kernels(out.kernels, steps)
    out.limitations = [lim for lim in out.limitations if lim.topic != "steps"]


def _ms23_minddata(out: Output, profiler_dir: Path, rank: int) -> None:
    path = profiler_dir / of_rank(catalog.MINDDATA_PIPELINE, rank)
    if "minddata_pipeline" in out.extras or not path.is_file():
        return
    try:
        out.extras["minddata_pipeline"] = read_table(path)
    except InputError as exc:
        out.limitations.append(
            Limitation("extras", say("error.ignored", line=error_line(exc)), say("remedy.reexport"))
        )
        return
    out.files.append(path)

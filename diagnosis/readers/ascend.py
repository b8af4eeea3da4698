"""Reader for MindSpore 2.5+ Ascend output (layout "ascend-ms"), plus the ASCEND_PROFILER_OUTPUT/ pipeline
that the torch_npu and MindSpore 2.3/2.4 readers share.

Sources, cheapest first: ``kernel_details.csv`` (kernels; only the needed columns), ``step_trace_time.csv``
(steps), ``profiler_info_<rank>.json`` (configuration), then one byte-level scan of ``trace_view.json`` for
ProfilerStep spans and AI Core Freq samples. The trace is decoded in full only when kernel_details.csv is
missing (its "Ascend Hardware" events are then the kernels).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.errors import InputError, error_line
from core.jsontypes import JsonObject
from core.model import (
    KERNEL_SCHEMA,
    PIPE_COUNTERS,
    Limitation,
    ProfilerConfig,
    Run,
    RunMeta,
    conform_kernels,
    conform_steps,
)
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.arrow import AnyArray, Column, NamedColumns, sorted_by
from diagnosis.readers.catalog import APO
from diagnosis.readers.communication import communication_summary, matrix_table
from diagnosis.readers.discover import discover
from diagnosis.readers.io import (
    Col,
    display,
    load_json,
    read_csv,
    read_header,
    read_table,
    resolve,
    to_frame,
)
from diagnosis.readers.profiler_info import InfoRecord, duplicate_key_limitations, read_profiler_info
from diagnosis.readers.steps import (
    assign_steps,
    fill_step_starts,
    no_steps,
    read_step_trace_time,
    steps_from_kernels,
    union_lengths,
)
from diagnosis.readers.tables import run_tables
from diagnosis.readers.trace import DeviceTimeline, Markers, read_device_timeline, scan_markers
from diagnosis.readers.traits import amp_of, infer_execution_mode, name_pairs, phase_of
from diagnosis.readers.values import map_unique, normalise_columns, op_type_of_kernel, scope_of

LAYOUT = catalog.ASCEND_MS.name
LAYOUTS = (LAYOUT,)

# kernel_details.csv columns: canonical name, spellings (documented first, then CANN op_summary / older).
KD_COLUMNS = (
    Col("step", ("Step ID", "Step Id"), pa.int64()),
    Col("name", ("Name", "Op Name")),
    Col("op_type", ("Type", "OP Type")),
    Col("op_state", ("OP State",)),
    Col("core", ("Accelerator Core", "Task Type")),
    Col("start_us", ("Start Time(us)", "Task Start Time(us)"), pa.float64()),
    Col("duration_us", ("Duration(us)", "Task Duration(us)"), pa.float64()),
    Col("wait_us", ("Wait Time(us)", "Task Wait Time(us)"), pa.float64()),
    Col("block_dim", ("Block Num", "Block Dim"), pa.int64()),
    Col("input_shapes", ("Input Shapes",)),
    Col("input_dtypes", ("Input Data Types",)),
    Col("input_formats", ("Input Formats",)),
    Col("output_shapes", ("Output Shapes",)),
    Col("output_dtypes", ("Output Data Types",)),
    Col("output_formats", ("Output Formats",)),
)
KD_REQUIRED = ("name", "start_us", "duration_us")


@dataclass(frozen=True)
class Tool:
    """Framework-specific wording of remedies (MindSpore vs torch_npu API spellings)."""

    framework: str
    level1: str
    aic_metrics: str
    op_state: str
    scopes: str
    steps: str
    config: str


MINDSPORE = Tool(
    framework="mindspore",
    level1=say("ms.level1"),
    aic_metrics=say("ms.aic-metrics"),
    op_state=say("remedy.op-state"),
    scopes=say("ms.scopes"),
    steps=say("ms.steps"),
    config=say("ms.config"),
)


# ---------------------------------------------------------------------------------------------- protocol


def candidates(folder: Path) -> list[Candidate]:
    """MindSpore 2.5+ Ascend run roots at or below `folder`."""
    return [c for c in discover(folder) if c.layout == LAYOUT]


def read(candidate: Candidate) -> Run:
    """Read one `*_ascend_ms` run (or a bare ASCEND_PROFILER_OUTPUT) into the canonical model."""
    return read_run(candidate, LAYOUT, MINDSPORE)


def read_run(candidate: Candidate, layout: str, words: Tool) -> Run:
    """Read a run whose text exports sit in ASCEND_PROFILER_OUTPUT (MindSpore's `*_ascend_ms` and
    torch_npu's `*_ascend_pt` share this layout); `words` is the framework's advice vocabulary."""
    root = candidate.root
    info, info_path = read_info(root, candidate.rank)
    config = info.config if info else ProfilerConfig()
    out = read_output(output_dir(root), candidate.rank, config.level, words)
    if info and info_path:
        out.files.insert(0, info_path)
        out.limitations.extend(duplicate_key_limitations(info_path, info.duplicate_keys, "profiler-config"))
    else:
        out.limitations.insert(0, no_config_limitation(words))
    environment = read_metadata(root, out)
    meta = build_meta(layout, root, candidate, info, out, environment)
    return out.to_run(meta)


def output_dir(root: Path) -> Path:
    """ASCEND_PROFILER_OUTPUT of a run root, or the root itself when it is that folder."""
    inner = root / APO
    return inner if inner.is_dir() else root


def read_info(root: Path, rank: int | None) -> tuple[InfoRecord | None, Path | None]:
    """The run's profiler_info record: `profiler_info_<rank>.json`, else the only one present."""
    named = root / catalog.of_rank(catalog.PROFILER_INFO, rank) if rank is not None else None
    paths = [named] if named and named.is_file() else sorted(root.glob("profiler_info*.json"))
    if not paths:
        return None, None
    return read_profiler_info(paths[0]), paths[0]


def no_config_limitation(tool: Tool) -> Limitation:
    """The run carries no profiler configuration record."""
    return Limitation(
        "profiler-config",
        say("ascend.no-config"),
        tool.config,
    )


def read_metadata(root: Path, out: Output) -> JsonObject:
    """profiler_metadata.json (user metadata, parallel_group_info) -> meta.environment."""
    path = root / catalog.PROFILER_METADATA
    if not path.is_file():
        return {}
    duplicates: list[str] = []
    try:
        data = load_json(path, expected="a JSON object", duplicates=duplicates)
    except InputError as exc:
        out.limitations.append(Limitation("extras", say("error.ignored", line=error_line(exc))))
        return {}
    out.files.append(path)
    out.limitations.extend(duplicate_key_limitations(path, list(dict.fromkeys(duplicates)), "extras"))
    return data if isinstance(data, dict) else {"metadata": data}


def build_meta(
    layout: str,
    root: Path,
    candidate: Candidate,
    info: InfoRecord | None,
    out: Output,
    environment: JsonObject,
) -> RunMeta:
    """RunMeta from the info record and the kernels (phase, AMP markers and mode are inferred)."""
    kernels = out.kernels
    steps = max(len(out.steps), int(kernels["step"].nunique()) if kernels["step"].notna().any() else 1)
    mode = info.execution_mode if info and info.execution_mode != "unknown" else _mode_from_scopes(kernels)
    pairs = name_pairs(kernels)
    if info and info.cann_version:
        environment = {**environment, "cann_version": info.cann_version}
    return RunMeta(
        layout=layout,
        source=root.name,
        framework=info.framework if info else out.tool.framework,
        framework_version=info.framework_version if info else None,
        device="Ascend",
        rank=candidate.rank if candidate.rank is not None else (info.rank if info else None),
        config=info.config if info else ProfilerConfig(),
        jit_level=info.jit_level if info else None,
        execution_mode=mode,
        phase=phase_of(kernels, pairs),
        amp=amp_of(kernels, steps, pairs),
        environment=environment,
        files=tuple(_relative(p, root) for p in out.files),
    )


def _mode_from_scopes(kernels: pd.DataFrame) -> str:
    scopes = kernels["scope"].dropna()
    return (
        infer_execution_mode(pd.Series(scopes.unique(), dtype="string[pyarrow]"))
        if len(scopes)
        else "unknown"
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return Path("..", path.relative_to(root.parent)).as_posix()


# ------------------------------------------------------------------------------ ASCEND_PROFILER_OUTPUT/


@dataclass
class Output:
    """What one ASCEND_PROFILER_OUTPUT folder holds, in canonical form."""

    tool: Tool
    kernels: pd.DataFrame
    steps: pd.DataFrame
    kd_columns: frozenset[str]  # canonical kernel columns kernel_details.csv had (empty: kernels from trace)
    extras: dict[str, pd.DataFrame] = field(default_factory=dict[str, pd.DataFrame])  # optional tables
    limitations: list[Limitation] = field(default_factory=list[Limitation])
    files: list[Path] = field(default_factory=list[Path])
    frequency: pd.DataFrame | None = None  # AI Core Freq samples of the trace (ts_us, mhz)

    def to_run(self, meta: RunMeta) -> Run:
        """Assemble the Run, with the optional tables in canonical form."""
        return Run(
            meta=meta,
            kernels=self.kernels,
            steps=self.steps,
            limitations=self.limitations,
            **run_tables(self.extras, self.frequency),
        )


def read_output(apo: Path, rank: int | None, level: str | None, tool: Tool) -> Output:
    """Kernels, steps, extras and limitations of one ASCEND_PROFILER_OUTPUT folder."""
    kd_path, trace_path = apo / catalog.KERNEL_DETAILS, apo / catalog.TRACE_VIEW
    if kd_path.is_file():
        kernels, kd_columns, markers, problems = _kernels_and_markers(
            kd_path, trace_path, apo / catalog.STEP_TRACE_TIME
        )
        out = Output(tool, kernels, no_steps(), kd_columns, limitations=problems, files=[kd_path])
    elif trace_path.is_file():
        timeline = read_device_timeline(trace_path)
        computing = timeline.overlap[timeline.overlap["kind"] == "Computing"]
        markers = Markers(steps=timeline.steps, freq=timeline.freq, computing=computing)
        out = Output(tool, kernels_from_trace(timeline, trace_path), no_steps(), frozenset())
    else:
        raise InputError(
            say("ascend.no-files"),
            path=display(apo),
            expected=say("ascend.expected-apo"),
        )
    if trace_path.is_file():
        out.files.append(trace_path)
    _attach_steps(out, apo, markers)
    out.limitations.extend(kernel_limitations(out.kd_columns, out.kernels, level, tool))
    _attach_extras(out, apo, rank, markers)
    return out


def _kernels_and_markers(
    kd_path: Path, trace_path: Path, step_trace: Path
) -> tuple[pd.DataFrame, frozenset[str], Markers, list[Limitation]]:
    """kernel_details.csv, and meanwhile (in a thread: pyarrow parses without the GIL) the trace marker scan.

    ProfilerStep spans are scanned for only when neither a Step ID column nor step_trace_time.csv gives
    steps; a Step ID column that turns out empty costs a second, spans-only scan. A broken trace fails
    the read only when steps depend on it; otherwise it costs the AI Core frequency, as a limitation.
    """
    if not trace_path.is_file():
        kernels, kd_columns = read_kernel_details(kd_path)
        return kernels, kd_columns, Markers(), []
    has_step_column = "step" in resolve(read_header(kd_path), KD_COLUMNS)
    want_spans = not (has_step_column and step_trace.is_file())
    with ThreadPoolExecutor(max_workers=1) as pool:
        scan = pool.submit(scan_markers, trace_path, want_spans)
        kernels, kd_columns = read_kernel_details(kd_path)
        try:
            markers, problems = scan.result(), []
        except InputError as exc:
            if want_spans:
                raise
            markers, problems = Markers(), [_frequency_lost(exc)]
    if not want_spans and kernels["step"].isna().all():
        markers.steps = scan_markers(trace_path, steps=True, freq=False).steps
    return kernels, kd_columns, markers, problems


def _frequency_lost(exc: InputError) -> Limitation:
    return Limitation(
        "frequency",
        say("ascend.frequency-lost", line=error_line(exc)),
        say("ascend.recopy-trace"),
    )


def _attach_steps(out: Output, apo: Path, markers: Markers) -> None:
    """Steps from step_trace_time.csv, else ProfilerStep spans, else the kernels' step ids."""
    kernels = out.kernels
    spans = markers.steps
    if kernels["step"].isna().all() and len(spans):
        ids = assign_steps(kernels["start_us"].to_numpy(dtype="float64", na_value=np.nan), spans)
        kernels["step"] = pd.array(pd.Series(ids).astype("Int64"), dtype="int64[pyarrow]")  # pyright: ignore[reportCallIssue, reportArgumentType]  # pandas-stubs omits pyarrow dtype names
    step_trace = apo / catalog.STEP_TRACE_TIME
    if step_trace.is_file():
        steps = read_step_trace_time(step_trace)
        out.files.append(step_trace)
    elif len(spans):
        steps = steps_from_spans(spans, kernels, markers.computing)
    else:
        steps = steps_from_kernels(kernels)
    out.steps = fill_step_starts(_starts_from_spans(steps, spans), kernels)
    if out.steps.empty:
        out.limitations.append(
            Limitation(
                "steps",
                say("ascend.no-steps"),
                out.tool.steps,
            )
        )


def steps_from_spans(spans: pd.DataFrame, kernels: pd.DataFrame, computing: pd.DataFrame) -> pd.DataFrame:
    """Steps from ProfilerStep spans; free = wall - busy, where busy is the step's Overlap Analysis
    "Computing" time when the trace has it, else the union of the step's kernel intervals."""
    if len(computing):
        starts = computing["start_us"].to_numpy(dtype="float64")
        ids = assign_steps(starts, spans)
        busy = pd.Series(computing["duration_us"].to_numpy(dtype="float64")).groupby(ids).sum()
    else:
        busy = _kernel_union_by_step(kernels)
    steps = spans.copy()
    steps["busy_us"] = steps["step"].astype("float64").map(busy).fillna(0.0).to_numpy()
    steps["free_us"] = (steps["duration_us"] - steps["busy_us"]).clip(lower=0)
    return conform_steps(steps)


def _kernel_union_by_step(kernels: pd.DataFrame) -> pd.Series:
    frame = pd.DataFrame(
        {
            "step": kernels["step"].to_numpy(dtype="float64", na_value=np.nan),
            "start": kernels["start_us"].to_numpy(dtype="float64", na_value=np.nan),
        }
    )
    frame["end"] = frame["start"] + kernels["duration_us"].to_numpy(dtype="float64", na_value=0.0)
    frame = frame.dropna(subset=["step", "start"])
    return union_lengths(frame, "step") if len(frame) else pd.Series(dtype="float64")


def _starts_from_spans(steps: pd.DataFrame, spans: pd.DataFrame) -> pd.DataFrame:
    if steps.empty or not len(spans) or steps["start_us"].notna().all():
        return steps
    by_step = pd.Series(spans["start_us"].to_numpy(), index=spans["step"].to_numpy())
    found = steps["step"].astype("float64").map(by_step)
    steps = steps.copy()
    steps["start_us"] = steps["start_us"].astype("float64").fillna(found).astype("double[pyarrow]")
    return steps


def _attach_extras(out: Output, apo: Path, rank: int | None, markers: Markers) -> None:
    """Optional tables; an unreadable optional file becomes a limitation, not a failure."""
    for key, name in catalog.OUTPUT_TABLES.items():
        _try_extra(out, key, apo / name, read_table)
    minddata = sorted(apo.glob(catalog.MINDDATA_PIPELINE.format(r=rank if rank is not None else "*")))
    if minddata:
        _try_extra(out, "minddata_pipeline", minddata[0], read_table)
    comm = apo / catalog.COMMUNICATION
    _try_extra(out, "communication", comm, lambda p: communication_summary(load_json(p), p))
    matrix = apo / catalog.COMMUNICATION_MATRIX
    _try_extra(out, "communication_matrix", matrix, lambda p: matrix_table(load_json(p), p))
    out.frequency = markers.freq


def _try_extra(out: Output, key: str, path: Path, reader: Callable[[Path], pd.DataFrame]) -> None:
    if not path.is_file():
        return
    try:
        frame = reader(path)
    except InputError as exc:
        out.limitations.append(
            Limitation("extras", say("error.ignored", line=error_line(exc)), say("remedy.reexport"))
        )
        return
    out.files.append(path)
    if len(frame):
        out.extras[key] = frame


# ------------------------------------------------------------------------------------------ kernel table


def read_kernel_details(path: Path) -> tuple[pd.DataFrame, frozenset[str]]:
    """kernel_details.csv (or a CANN op_summary) -> canonical kernels and the columns it had."""
    table = read_csv(path, KD_COLUMNS, required=KD_REQUIRED, counters=True)
    present = frozenset(table.column_names) & KERNEL_SCHEMA.keys()
    table = normalise_columns(table)
    names = table.column("name")
    table = _with(table, "scope", map_unique(names, scope_of))
    if "op_type" not in table.column_names or table.column("op_type").null_count:
        derived = map_unique(names, op_type_of_kernel)
        current = table.column("op_type") if "op_type" in table.column_names else derived
        table = _with(table, "op_type", pc.coalesce(current, derived))
    return conform_kernels(to_frame(complete(table))), present


def _with(table: pa.Table, name: str, column: Column) -> pa.Table:
    if name in table.column_names:
        return table.set_column(table.column_names.index(name), name, column)
    return table.append_column(name, column)


_ARROW_TYPES = {"string[pyarrow]": pa.string(), "int64[pyarrow]": pa.int64(), "double[pyarrow]": pa.float64()}


def complete(table: pa.Table) -> pa.Table:
    """Schema columns first (absent ones as typed nulls), then the counters, so conform has nothing to do."""
    n = table.num_rows
    columns: list[AnyArray] = []
    names: list[str] = []
    for name, dtype in KERNEL_SCHEMA.items():
        columns.append(table.column(name) if name in table.column_names else pa.nulls(n, _ARROW_TYPES[dtype]))
        names.append(name)
    for name in table.column_names:
        if name not in KERNEL_SCHEMA:
            columns.append(table.column(name))
            names.append(name)
    return pa.table(columns, names=names)


def kernels_from_trace(timeline: DeviceTimeline, path: Path) -> pd.DataFrame:
    """ "Ascend Hardware" events -> kernels (names, times, task type; no types, shapes or dtypes)."""
    events = timeline.kernels
    if events.empty:
        raise InputError(
            say("ascend.no-kernels"),
            path=display(path),
            expected=say("ascend.an-ascend-profile"),
        )
    names = pa.array(events["name"].astype(str).to_list(), type=pa.string())
    core = pa.array([None if c is None else str(c) for c in events["core"]], type=pa.string())
    named: NamedColumns = {
        "name": names,
        "op_type": map_unique(names, op_type_of_kernel),
        "scope": map_unique(names, scope_of),
        "start_us": pa.array(events["start_us"].to_numpy(dtype="float64")),
        "duration_us": pa.array(events["duration_us"].to_numpy(dtype="float64")),
        "core": core,
    }
    table = sorted_by(normalise_columns(pa.Table.from_pydict(named)), [("start_us", "ascending")])
    return conform_kernels(to_frame(complete(table)))


# ------------------------------------------------------------------------------------------ limitations

LEVEL1_GROUPS = {
    "dtypes": ("input_dtypes", "Input Data Types"),
    "shapes": ("input_shapes", "Input Shapes"),
    "formats": ("input_formats", "Input Formats"),
}


def kernel_limitations(
    kd_columns: frozenset[str],
    kernels: pd.DataFrame,
    level: str | None,
    tool: Tool,
    table: str = "kernel_details.csv",
) -> list[Limitation]:
    """What the kernel table (`table`, as the user's files name it) cannot answer: Level0 columns,
    OP State, counters, framework scopes."""
    lims: list[Limitation] = []
    for topic, (col, header) in LEVEL1_GROUPS.items():
        if col not in kd_columns:
            lims.append(Limitation(topic, _level_reason(header, kd_columns, level, table), tool.level1))
    if kd_columns and "op_state" not in kd_columns:
        lims.append(
            Limitation(
                "op-state",
                say("ascend.no-op-state"),
                tool.op_state,
            )
        )
    if not any(c in kernels.columns for c in PIPE_COUNTERS):
        lims.append(
            Limitation(
                "aic-metrics",
                say("ascend.no-counters"),
                tool.aic_metrics,
            )
        )
    if kernels["scope"].isna().all():
        reason = say("ascend.torch-no-scopes" if tool.framework == "torch_npu" else "ascend.no-scopes")
        lims.append(Limitation("scopes", reason, tool.scopes))
    return lims


def _level_reason(header: str, kd_columns: frozenset[str], level: str | None, table: str) -> str:
    if not kd_columns:
        return say("ascend.no-kernel-details", header=header, table=table)
    if level in (None, "Level0"):
        how = say("ascend.recorded" if level else "ascend.inferred")
        return say("ascend.level0", header=header, how=how, table=table)
    return say("ascend.column-missing", header=header, level=level, table=table)

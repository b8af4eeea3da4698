"""Reader for MindSpore 2.5+ CPU profiler output (layout "cpu-ms").

Tree: ``*_ascend_ms/FRAMEWORK/cpu_op_detail_info_<r>.csv``, ``cpu_op_execute_timestamp_<r>.txt``,
``cpu_framework_<r>.txt`` and ``ASCEND_PROFILER_OUTPUT/trace_view.json``; no ``PROF_*``, no
``kernel_details.csv`` and no ``profiler_info``. Per-launch times come from the timestamp file
(start in ns, duration in ms), shapes from the framework file (k-th line of an op = its k-th launch).
Steps are not recorded on CPU: they are derived from the launches of an op that runs once per step.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from core.errors import InputError
from core.model import (
    MEMORY_SCHEMA,
    Limitation,
    ProfilerConfig,
    Run,
    RunMeta,
    conform_kernels,
    conform_steps,
    empty_table,
)
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.catalog import of_rank
from diagnosis.readers.io import arrow_block_problem, arrow_frame, budget, check_file, rows_error
from diagnosis.readers.tables import memory_of_host_record
from diagnosis.readers.traits import amp_markers, infer_execution_mode, infer_phase

LAYOUT = catalog.CPU_MS.name
LAYOUTS = (LAYOUT,)
_DETAIL_RE = catalog.CPU_DETAIL
_MAX_DEPTH = 4
DETAIL_COLUMNS = ("op_type", "full_op_name", "op_occurrences")


def candidates(folder: Path) -> list[Candidate]:
    """Run roots holding ``FRAMEWORK/cpu_op_detail_info_<r>.csv`` but no Ascend kernel tables."""
    found: list[Candidate] = []
    for detail in _walk_details(folder, _MAX_DEPTH):
        framework = detail.parent
        root = framework.parent
        if _has_ascend_tables(root):
            continue  # an Ascend run with CPU activity: the Ascend reader owns it
        rank = int(_DETAIL_RE.match(detail.name).group(1))  # pyright: ignore[reportOptionalMemberAccess]  # walked names match
        found.append(Candidate(LAYOUT, root, rank))
    return found


def _walk_details(folder: Path, depth: int) -> list[Path]:
    hits: list[Path] = []
    framework = folder / catalog.FRAMEWORK
    if framework.is_dir():
        hits += [p for p in sorted(framework.iterdir()) if _DETAIL_RE.match(p.name) and p.is_file()]
    if folder.name == catalog.FRAMEWORK:
        hits += [p for p in sorted(folder.iterdir()) if _DETAIL_RE.match(p.name) and p.is_file()]
    if depth > 0:
        for sub in sorted(folder.iterdir()):
            if sub.is_dir() and not sub.is_symlink() and sub.name not in (catalog.FRAMEWORK, "profiler"):
                hits += _walk_details(sub, depth - 1)
    return hits


def _has_ascend_tables(root: Path) -> bool:
    out = root / catalog.APO
    return (out / catalog.KERNEL_DETAILS).is_file() or any(root.glob("PROF_*"))


def read(candidate: Candidate) -> Run:
    """Read one CPU run into the canonical model."""
    root = candidate.root.parent if candidate.root.name == catalog.FRAMEWORK else candidate.root
    framework = root / catalog.FRAMEWORK
    rank = candidate.rank if candidate.rank is not None else 0
    detail = _read_detail(framework / of_rank(catalog.CPU_OP_DETAIL, rank))
    kernels = _read_timestamps(framework / of_rank(catalog.CPU_OP_TIMESTAMPS, rank), detail)
    kernels = attach_shapes(kernels, framework / of_rank(catalog.CPU_FRAMEWORK, rank))
    steps, kernels, step_note = derive_steps(kernels)
    limitations = _limitations(step_note)
    meta = RunMeta(
        layout=LAYOUT,
        source=root.name,
        device="CPU",
        rank=rank,
        config=ProfilerConfig(),
        execution_mode=infer_execution_mode(kernels["name"]),
        phase=infer_phase(kernels["name"], kernels["op_type"]),
        amp=amp_markers(kernels, max(len(steps), 1)),
        files=tuple(sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())),
    )
    record = framework / of_rank(catalog.CPU_MEMORY, rank)
    memory = (
        memory_of_host_record(arrow_frame(_read_csv(record)))
        if record.is_file()
        else empty_table(MEMORY_SCHEMA)
    )
    return Run(
        meta=meta,
        kernels=kernels,
        steps=steps,
        limitations=limitations,
        memory=memory,
        extras={"op_detail": detail},
    )


def _read_detail(path: Path) -> pd.DataFrame:
    """The per-operator table; gives op types for the launch names."""
    if not path.is_file():
        raise InputError(
            say("reader.file-missing"), path=str(path.name), expected="FRAMEWORK/cpu_op_detail_info_<r>.csv"
        )
    table = _read_csv(path)
    missing = [c for c in DETAIL_COLUMNS if c not in table.column_names]
    if missing:
        raise InputError(
            say("reader.missing-columns", missing=missing),
            path=path.name,
            expected="header op_side,op_type,op_name,full_op_name,op_occurrences,op_total_time(ms),...",
        )
    if table.num_rows == 0:
        raise InputError(say("reader.header-only"), path=path.name, expected=say("reader.row-per-op"))
    for name in ("op_type", "full_op_name"):
        if pa.types.is_binary(table.column(name).type):
            raise InputError(
                say("reader.column-not-utf8", column=name), path=path.name, expected=say("io.utf8-text")
            )
    keep = [
        c for c in table.column_names if c in DETAIL_COLUMNS or c.startswith(("op_total", "compute_time"))
    ]
    return arrow_frame(table.select(keep), pd.ArrowDtype)


def _read_csv(path: Path) -> pa.Table:
    check_file(path)
    try:
        table = pacsv.read_csv(path)
        table.column_names  # noqa: B018 - a header that is not UTF-8 fails here, not in read_csv
        return table
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        block = arrow_block_problem(str(exc), nonempty=path.stat().st_size > 0)
        raise InputError(
            block or say("reader.unreadable-csv", error=_first_line(exc)),
            path=path.name,
            expected=say("reader.a-csv"),
        ) from None


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__


def _read_timestamps(path: Path, detail: pd.DataFrame) -> pd.DataFrame:
    """Per-launch rows from ``<name>;HostCpuOps;<start_ns>,<dur_ms>,<x> ...`` lines."""
    if not path.is_file():
        raise InputError(
            say("reader.file-missing"), path=path.name, expected="FRAMEWORK/cpu_op_execute_timestamp_<r>.txt"
        )
    text = _read_text(path)
    names: list[str] = []
    counts: list[int] = []
    chunks: list[str] = []
    limit, total = budget("max_profile_rows"), 0  # each launch becomes a kernel row (a line holds many)
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split(";", 2)
        if len(parts) < 3:
            raise InputError(
                say("reader.no-launches-line", line=lineno),
                path=path.name,
                expected="<op name>;HostCpuOps;<start_ns>,<duration_ms>,0 ...",
            )
        launches = parts[2].strip()
        if not launches:
            continue
        names.append(parts[0])
        counts.append(launches.count(" ") + 1)
        total += counts[-1]
        if limit is not None and total > limit:
            raise rows_error(path, limit, say("io.what-launches"))
        chunks.append(launches.replace(" ", "\n"))
    if not names:
        raise InputError(say("reader.no-launches"), path=path.name, expected=say("reader.one-launch"))
    values = _parse_launches("\n".join(chunks), path.name)
    if len(values) != sum(counts):
        raise InputError(say("reader.bad-launch-list"), path=path.name, expected=say("reader.launch-entries"))
    name_arr = np.repeat(np.array(names, dtype=object), counts)
    type_of = dict(zip(detail["full_op_name"].astype(str), detail["op_type"].astype(str), strict=False))
    kernels = pd.DataFrame(
        {
            "name": pd.array(name_arr, dtype="string[pyarrow]"),
            "start_us": values["start_ns"].to_numpy(dtype="float64") / 1000.0,
            "duration_us": values["dur_ms"].to_numpy(dtype="float64") * 1000.0,
        }
    )
    kernels["op_type"] = kernels["name"].map(type_of).fillna(kernels["name"].map(_op_type_from_name))
    kernels["scope"] = kernels["name"]
    kernels["core"] = "CPU"
    kernels = kernels.sort_values("start_us", kind="stable").reset_index(drop=True)
    return kernels


def _parse_launches(body: str, fname: str) -> pd.DataFrame:
    opts = pacsv.ReadOptions(column_names=["start_ns", "dur_ms", "x"])
    conv = pacsv.ConvertOptions(
        column_types={"start_ns": pa.int64(), "dur_ms": pa.float64(), "x": pa.float64()}
    )
    try:
        table = pacsv.read_csv(io.BytesIO(body.encode()), read_options=opts, convert_options=conv)
    except pa.ArrowInvalid as exc:
        raise InputError(
            say("reader.bad-launch", error=_first_line(exc)),
            path=fname,
            expected="<start_ns>,<duration_ms>,0",
        ) from None
    return arrow_frame(table)


def _read_text(path: Path) -> str:
    check_file(path)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            say("io.not-utf8", byte=exc.start), path=path.name, expected=say("io.utf8-text")
        ) from None


def _op_type_from_name(name: str) -> str:
    """`Default/conv-Conv2d/Conv2D-op0` -> `Conv2D`; a bare PyNative name is its own type."""
    last = name.rsplit("/", 1)[-1]
    return re.sub(r"-op\d+$", "", last)


def attach_shapes(kernels: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Input shapes from the framework file: the k-th line of a short op name is its k-th launch."""
    if not path.is_file():
        return conform_kernels(kernels)
    rows = [line.split(";") for line in _read_text(path).splitlines() if line.count(";") >= 3]
    if not rows:
        return conform_kernels(kernels)
    frame = pd.DataFrame({"short": [r[1] for r in rows], "shapes": [_shape_text(r[3:]) for r in rows]})
    frame["k"] = frame.groupby("short").cumcount()
    short = kernels["name"].astype(str).str.rsplit("/", n=1).str[-1]
    keyed = pd.DataFrame({"short": short, "k": kernels.groupby(short.to_numpy()).cumcount().to_numpy()})
    merged = keyed.merge(frame, on=["short", "k"], how="left")
    kernels["input_shapes"] = pd.array(merged["shapes"].to_numpy(), dtype="string[pyarrow]")
    return conform_kernels(kernels)


def _shape_text(fields: list[str]) -> str:
    """`input_1:[8, 3, 16, 16]`, `input_6:NoShape` -> `8,3,16,16;` (canonical: ';' between inputs)."""
    shapes: list[str] = []
    for field in fields:
        if ":" not in field:
            continue
        value = field.split(":", 1)[1].strip()
        shapes.append(value.strip("[]").replace(" ", "") if value.startswith("[") else "")
    while shapes and shapes[-1] == "":
        shapes.pop()
    return ";".join(shapes)


def derive_steps(kernels: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Assign step numbers from an anchor op that runs once per step; return steps, kernels, a note.

    The anchor is the earliest-starting op among those whose launch count is the most common
    count; each anchor launch opens a step. Ops whose counts are not multiples of it make the
    derivation approximate, which the note says.
    """
    if kernels.empty:
        return conform_steps(pd.DataFrame()), kernels, "no launches"
    # A recompiled graph renumbers its ops (`Conv2D-op0` -> `Conv2D-op3`): count by position.
    position = kernels["name"].str.replace(r"-op\d+$", "", regex=True)
    counts = kernels.groupby(position, sort=False).size()
    n_steps = int(counts.mode().min())
    first_start = kernels.groupby(position, sort=False)["start_us"].min()
    anchor = first_start[counts[counts == n_steps].index].idxmin()
    anchor_starts: npt.NDArray[np.float64] = np.sort(
        kernels.loc[position == anchor, "start_us"].to_numpy(dtype="float64")
    )
    starts: npt.NDArray[np.float64] = kernels["start_us"].to_numpy(dtype="float64")
    step_idx = np.searchsorted(anchor_starts, starts, side="right") - 1
    # Launches before the first anchor belong to the first step (ops ordered before the anchor).
    step_idx = np.clip(step_idx, 0, None)
    kernels = kernels.copy()
    kernels["step"] = pd.array(step_idx + 1, dtype="int64[pyarrow]")  # pyright: ignore[reportCallIssue, reportArgumentType]  # pandas-stubs omits pyarrow dtype names
    note = "" if bool((counts % n_steps == 0).all()) else "approximate"
    return _step_table(kernels), kernels, note


def _step_table(kernels: pd.DataFrame) -> pd.DataFrame:
    ends = kernels["start_us"].astype("float64") + kernels["duration_us"].astype("float64")
    frame = pd.DataFrame(
        {"step": kernels["step"], "start": kernels["start_us"].astype("float64"), "end": ends}
    )
    frame["busy"] = kernels["duration_us"].astype("float64")
    grouped = frame.groupby("step", sort=True).agg(
        start=("start", "min"), end=("end", "max"), busy=("busy", "sum")
    )
    # A step lasts until the next one opens; the last step's trailing host gap is unknown, so its
    # wall time is left missing rather than understated (unless it is the only step).
    wall = (grouped["start"].shift(-1) - grouped["start"]).clip(lower=0)
    if len(grouped) == 1:
        wall = grouped["end"] - grouped["start"]
    steps = pd.DataFrame(
        {
            "step": grouped.index.to_numpy(),
            "start_us": grouped["start"].to_numpy(),
            "duration_us": wall.to_numpy(),
            "busy_us": grouped["busy"].to_numpy(),
        }
    )
    steps["free_us"] = (steps["duration_us"] - steps["busy_us"]).clip(lower=0)
    return conform_steps(steps)


def _limitations(step_note: str) -> list[Limitation]:
    lims = [
        Limitation(
            "profiler-config",
            say("cpu.no-config"),
            say("remedy.read-scripts"),
        ),
        Limitation(
            "dtypes",
            say("cpu.no-dtypes"),
            say("remedy.mindir-or-level1"),
        ),
        Limitation("cores", say("cpu.no-cores"), say("remedy.ascend")),
        Limitation("frequency", say("cpu.no-frequency"), say("remedy.npu-smi")),
    ]
    if step_note:
        lims.append(
            Limitation(
                "steps",
                say("cpu.no-steps"),
                say("remedy.schedule"),
            )
        )
    return lims

"""Reader for CANN msprof output (layout "cann-msprof"): Ascend 310/910 runs profiled with the `msprof`
command line, an ACL application or MindSpore Lite, which leave no MindSpore run folder.

Tree (CANN's documented export)::

    PROF_<n>_<timestamp>_<id>/
      device_<id>/              sample.json (the collection settings), info.json.<id>, data/ (raw, unread)
      host/                     data/ (raw, unread)
      mindstudio_profiler_output/
        op_summary_<ts>.csv     kernels: Device_id, Model ID, Task ID, Stream ID, Op Name, OP Type,
                                [OP State,] Task Type, Task Start Time(us), Task Duration(us),
                                Task Wait Time(us), Block Dim, ... (read; the only required file)
        step_trace_<ts>.csv     Device_id, Iteration ID, FP Start(us), BP End(us), Iteration End(us),
                                Iteration Time(us), ... (steps, when present)
        op_statistic_<ts>.csv   per-type totals (kept as written, informational)
        msprof_<ts>.json, task_time_<ts>.csv, api_statistic_<ts>.csv ...   (not read)

Files read: op_summary_*.csv (all slices, in name order), step_trace_*.csv, op_statistic_*.csv and
device_<id>/sample.json (``ai_core_metrics`` -> aic_metrics; ``prof_level`` or ``taskTime`` l0/l1/l2 ->
Level0/1/2). Each device_<id> folder is a rank; a PROF folder nested in a MindSpore or torch_npu run
folder is read through that run's ASCEND_PROFILER_OUTPUT instead.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from core.errors import InputError, error_line
from core.model import Limitation, ProfilerConfig, Run, RunMeta, conform_steps
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.ascend import Tool, kernel_limitations, read_kernel_details
from diagnosis.readers.discover import classify
from diagnosis.readers.io import (
    Col,
    arrow_frame,
    display,
    load_json,
    read_csv,
    read_header,
    read_table,
    resolve,
)
from diagnosis.readers.steps import assign_steps, union_lengths
from diagnosis.readers.traits import amp_of, infer_execution_mode, name_pairs, phase_of

LAYOUT = catalog.CANN_MSPROF.name
LAYOUTS = (LAYOUT,)
MAX_DEPTH = 6
_DEVICE = re.compile(r"^device_(\d+)$")
_LEVELS = {"l0": "Level0", "l1": "Level1", "l2": "Level2"}

CANN = Tool(
    framework="cann",
    level1=say("cann.level1"),
    aic_metrics=say("cann.aic-metrics"),
    op_state=say("cann.op-state"),
    scopes=say("cann.scopes"),
    steps=say("cann.steps"),
    config=say("cann.config"),
)
STEP_TRACE_COLUMNS = (
    Col("step", ("Iteration ID",), pa.int64()),
    Col("end_us", ("Iteration End(us)",), pa.float64()),
    Col("duration_us", ("Iteration Time(us)",), pa.float64()),
    Col("device", ("Device_id",), pa.int64()),
)


# ---------------------------------------------------------------------------------------------- protocol


def candidates(folder: Path) -> list[Candidate]:
    """Every PROF_* folder at or below `folder` holding mindstudio_profiler_output/op_summary_*.csv that
    is not part of another layout's run folder: one candidate per device_<id> (a rank)."""
    found: list[Candidate] = []
    for prof in prof_folders(Path(folder), 0):
        if not op_summaries(prof / catalog.MSPROF_OUTPUT) or classify(prof.parent):
            continue
        devices = devices_of(prof)
        if len(devices) <= 1:
            found.append(Candidate(LAYOUT, prof, devices[0] if devices else None))
        else:  # several devices in one PROF folder: each device folder is its own run root
            found += [Candidate(LAYOUT, prof / f"device_{d}", d) for d in devices]
    return found


def read(candidate: Candidate) -> Run:
    """Read one device of a PROF_* folder into the canonical model."""
    prof = candidate.root if candidate.root.name.startswith("PROF_") else candidate.root.parent
    out = prof / catalog.MSPROF_OUTPUT
    summaries = op_summaries(out)
    shared = prof != candidate.root  # several devices in one PROF folder: rows carry their Device_id
    kernels, kd_columns = _kernels(summaries, candidate.rank if shared else None)
    config, config_path = read_sample(prof, candidate.rank)
    files: list[Path] = [*([config_path] if config_path else []), *summaries]
    limitations = kernel_limitations(kd_columns, kernels, config.level, CANN, summaries[0].name)
    if config_path is None:
        limitations.insert(
            0,
            Limitation(
                "profiler-config",
                say("cann.no-sample"),
                CANN.config,
            ),
        )
    steps = _steps(out, kernels, candidate.rank, files, limitations)
    extras = _extras(out, files, limitations)
    pairs = name_pairs(kernels)
    meta = RunMeta(
        layout=LAYOUT,
        source=prof.name,
        framework="cann",
        device="Ascend",
        rank=candidate.rank,
        config=config,
        execution_mode=infer_execution_mode(kernels["scope"].dropna().drop_duplicates())
        if kernels["scope"].notna().any()
        else "graph",
        phase=phase_of(kernels, pairs),
        amp=amp_of(kernels, max(len(steps), 1), pairs),
        files=tuple(os.path.relpath(p, candidate.root).replace(os.sep, "/") for p in files),
    )
    return Run(meta=meta, kernels=kernels, steps=steps, limitations=limitations, extras=extras)


# ------------------------------------------------------------------------------------------- discovery


def prof_folders(folder: Path, depth: int) -> list[Path]:
    """PROF_* folders at or below `folder` (not searched inside, links not followed)."""
    if folder.name.startswith("PROF_"):
        return [folder]
    if depth >= MAX_DEPTH:
        return []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    found: list[Path] = []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
            found += prof_folders(Path(entry.path), depth + 1)
    return found


def op_summaries(out: Path) -> list[Path]:
    """op_summary_*.csv of a mindstudio_profiler_output folder, in name order (large runs write slices)."""
    try:
        names = sorted(
            e.name for e in os.scandir(out) if e.is_file() and catalog.MSPROF_OP_SUMMARY.fullmatch(e.name)
        )
    except OSError:
        return []
    return [out / name for name in names]


def devices_of(prof: Path) -> list[int]:
    try:
        return sorted(
            int(m.group(1)) for e in os.scandir(prof) if e.is_dir() and (m := _DEVICE.match(e.name))
        )
    except OSError:
        return []


# --------------------------------------------------------------------------------------------- tables


def _kernels(summaries: list[Path], rank: int | None) -> tuple[pd.DataFrame, frozenset[str]]:
    """Canonical kernels of every op_summary slice (rows of other devices dropped), in start order."""
    parts = [read_kernel_details(path) for path in summaries]
    frames = [frame for frame, _ in parts]
    if rank is not None:
        frames = [_of_device(frame, path, rank) for frame, path in zip(frames, summaries, strict=True)]
    kernels = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    if len(frames) > 1:
        kernels = kernels.sort_values("start_us", kind="stable").reset_index(drop=True)
    read = [frozenset(columns) for _, columns in parts]
    return kernels, read[0].intersection(*read[1:])


def _of_device(frame: pd.DataFrame, path: Path, rank: int) -> pd.DataFrame:
    """Rows of one device when the file carries several (Device_id)."""
    column = (Col("device", ("Device_id",), pa.int64()),)
    if "device" not in resolve(read_header(path), column):
        return frame
    ids = read_csv(path, column).column("device").to_numpy(zero_copy_only=False)
    if len(ids) != len(frame) or len(set(ids.tolist())) <= 1:
        return frame
    mine: npt.NDArray[np.bool_] = ids == rank
    return frame.loc[mine].reset_index(drop=True)


def read_sample(prof: Path, rank: int | None) -> tuple[ProfilerConfig, Path | None]:
    """device_<id>/sample.json -> level and aic_metrics (both None when not recorded)."""
    device = prof / f"device_{rank}" if rank is not None else None
    if device is None or not (device / catalog.MSPROF_SAMPLE).is_file():
        return ProfilerConfig(), None
    path = device / catalog.MSPROF_SAMPLE
    record = load_json(path, expected=say("msprof.sample-object"))
    if not isinstance(record, dict):
        raise InputError(say("json.not-object-is"), path=display(path), expected=say("msprof.sample-object"))
    sample = record
    level = _LEVELS.get(str(sample.get("prof_level") or sample.get("taskTime") or "").lower())
    metrics = sample.get("ai_core_metrics")
    return ProfilerConfig(level=level, aic_metrics=str(metrics) if metrics else None, raw=dict(sample)), path


def _steps(
    out: Path, kernels: pd.DataFrame, rank: int | None, files: list[Path], lims: list[Limitation]
) -> pd.DataFrame:
    """Iterations of step_trace_*.csv (start = end - time) with the kernels assigned to them; none -> one
    step and a limitation."""
    traces = sorted(out.glob("step_trace_*.csv"))
    if not traces:
        lims.append(
            Limitation(
                "steps",
                say("cann.no-step-trace"),
                CANN.steps,
            )
        )
        return conform_steps(pd.DataFrame())
    table = read_csv(traces[0], STEP_TRACE_COLUMNS, required=("step", "end_us", "duration_us"))
    files.append(traces[0])
    frame = arrow_frame(table)
    if rank is not None and "device" in frame and frame["device"].nunique() > 1:
        frame = frame[frame["device"] == rank]
    frame = (
        frame.dropna(subset=["step", "end_us", "duration_us"]).drop_duplicates("step").sort_values("end_us")
    )
    spans = pd.DataFrame(
        {
            "step": frame["step"].to_numpy("int64"),
            "start_us": (frame["end_us"] - frame["duration_us"]).to_numpy("float64"),
            "duration_us": frame["duration_us"].to_numpy("float64"),
        }
    )
    starts = kernels["start_us"].to_numpy(dtype="float64", na_value=np.nan)
    ids = assign_steps(starts, spans)
    kernels["step"] = pd.array(pd.Series(ids).astype("Int64"), dtype="int64[pyarrow]")  # pyright: ignore[reportCallIssue, reportArgumentType]  # pandas-stubs omits pyarrow dtype names
    ends = starts + kernels["duration_us"].to_numpy(dtype="float64", na_value=0.0)
    intervals = pd.DataFrame({"step": ids, "start": starts, "end": ends}).dropna()
    busy = union_lengths(intervals, "step") if len(intervals) else pd.Series(dtype="float64")
    spans["busy_us"] = spans["step"].astype("float64").map(busy).fillna(0.0).to_numpy()
    spans["free_us"] = (spans["duration_us"] - spans["busy_us"]).clip(lower=0)
    return conform_steps(spans)


def _extras(out: Path, files: list[Path], lims: list[Limitation]) -> dict[str, pd.DataFrame]:
    """op_statistic_*.csv as written (informational); an unreadable one is a limitation."""
    found = sorted(p for p in out.glob("op_statistic_*.csv") if p.is_file())
    if not found:
        return {}
    try:
        frame = read_table(found[0])
    except InputError as exc:
        lims.append(Limitation("extras", say("error.ignored", line=error_line(exc)), say("remedy.reexport")))
        return {}
    files.append(found[0])
    return {"op_statistic": frame} if len(frame) else {}

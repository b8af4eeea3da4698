"""Reader for CANN msprof's older timeline layout (layout "cann-msprof-timeline"): one ``PROF_*`` folder per
device with per-iteration Chrome-trace JSON and no ``mindstudio_profiler_output/`` exports.

Tree (as written by CANN msprof under MindSpore 1.x/2.0, e.g. MindInsight's test data)::

    PROF_<n>_<timestamp>_<id>/
      device_<id>/
        info.json.<id>             device and host record: rank_id, DeviceInfo (ai_core_num, aic_frequency)
        start_info.<id>, end_info.<id>
        timeline/
          msprof_<dev>_<model>_<iter>.json     one iteration: every process below (read)
          task_time_<dev>_<model>_<iter>.json  its "Ascend Hardware" tasks only (a subset; not read)
          step_trace_<dev>_<model>_<iter>.json its step trace only (a subset; not read)
          hccl_<dev>_<model>_<iter>.json       its HCCL planes only (a subset; not read)

Read from each ``msprof_*.json`` (tests/test_msprof_timeline.py checks that it holds what the subsets
hold): the "Ascend Hardware" compute tasks (Task Type AI_CORE, AI_CPU, AI_VECTOR_CORE, MIX_*) as kernels;
the HCCL "Communication Kernel" operators as kernels on core HCCL (their NOTIFY/REDUCE/MEMCPY tasks are
parts of them); the "Iteration Time" span (Iteration ID, start, wall time) as the step; the "Overlap
Analysis" spans (Computing, Communication(Not Overlapped), Free) as the step's breakdown; "AI Core Freq"
counter samples as the frequency table. ``info.json.<id>`` gives the rank (``rank_id``, else the device id).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from core.errors import InputError
from core.jsontypes import JsonObject, JsonValue
from core.model import Limitation, ProfilerConfig, Run, RunMeta, conform_steps
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.ascend import kernel_limitations, kernels_from_trace
from diagnosis.readers.cann_msprof import CANN, devices_of, op_summaries, prof_folders
from diagnosis.readers.discover import classify
from diagnosis.readers.io import check_file, display, load_json
from diagnosis.readers.steps import step_ids
from diagnosis.readers.tables import run_tables
from diagnosis.readers.trace import (
    FREQ_NAME,
    HARDWARE,
    OVERLAP,
    DeviceTimeline,
    add_freq,
    freq_frame,
    iter_events,
)
from diagnosis.readers.traits import amp_of, infer_execution_mode, name_pairs, phase_of

LAYOUT = catalog.CANN_MSPROF_TIMELINE.name
LAYOUTS = (LAYOUT,)
TIMELINE = "timeline"
COMPUTE_TASK = re.compile(r"^(AI_|MIX_|AIV|AIC)")  # AI_CORE, AI_CPU, AI_VECTOR_CORE, MIX_AIC, MIX_AIV ...
COMMUNICATION_THREAD = "Communication Kernel"
ITERATION = "Iteration Time"
BREAKDOWN = {"Computing": "busy_us", "Communication(Not Overlapped)": "communication_us", "Free": "free_us"}
HCCL = "HCCL"


# ---------------------------------------------------------------------------------------------- protocol


def candidates(folder: Path) -> list[Candidate]:
    """device_<id> folders of PROF_* folders that hold timeline/msprof_*.json and no text or db export."""
    found: list[Candidate] = []
    for prof in prof_folders(Path(folder), 0):
        if op_summaries(prof / catalog.MSPROF_OUTPUT) or classify(prof.parent):
            continue
        for device in devices_of(prof):
            root = prof / f"device_{device}"
            if timeline_files(root):
                found.append(Candidate(LAYOUT, root, _rank(root, device)))
    return found


def read(candidate: Candidate) -> Run:
    """Read every iteration of one device's timeline/ into the canonical model."""
    root = candidate.root
    info_path, info = _info(root)
    paths = timeline_files(root)
    parts = [_iteration(path) for path in paths]
    kernels = _kernels(pd.concat([p[0] for p in parts], ignore_index=True), paths[0])
    steps = conform_steps(pd.DataFrame([p[1] for p in parts if p[1]]))
    if len(steps):
        kernels["step"] = step_ids(kernels["start_us"], steps).set_axis(kernels.index)
    frequency = (
        pd.concat([p[2] for p in parts if len(p[2])], ignore_index=True)
        if any(len(p[2]) for p in parts)
        else None
    )
    limitations = kernel_limitations(frozenset(), kernels, None, CANN, paths[0].name)
    limitations.insert(0, Limitation("profiler-config", say("timeline.no-config"), CANN.config))
    if not len(steps):
        limitations.append(Limitation("steps", say("timeline.no-steps"), CANN.steps))
    files = [*([info_path] if info else []), *paths]
    pairs = name_pairs(kernels)
    scopes = kernels["scope"].dropna().drop_duplicates()
    meta = RunMeta(
        layout=LAYOUT,
        source=root.parent.name,
        framework="cann",
        device="Ascend",
        rank=candidate.rank,
        config=ProfilerConfig(),
        execution_mode=infer_execution_mode(scopes) if len(scopes) else "graph",
        phase=phase_of(kernels, pairs),
        amp=amp_of(kernels, max(len(steps), 1), pairs),
        environment=_environment(info),
        files=tuple(os.path.relpath(p, root).replace(os.sep, "/") for p in files),
    )
    return Run(meta=meta, kernels=kernels, steps=steps, limitations=limitations, **run_tables({}, frequency))


def timeline_files(device: Path) -> list[Path]:
    """timeline/msprof_<dev>_<model>_<iter>.json of a device folder, in iteration order."""
    try:
        entries = [e.name for e in os.scandir(device / TIMELINE) if e.is_file()]
    except OSError:
        return []
    found = [(m, n) for n in entries if (m := catalog.MSPROF_ITERATION.fullmatch(n))]
    return [
        device / TIMELINE / n
        for _, n in sorted(found, key=lambda f: (int(f[0].group(2)), int(f[0].group(3))))
    ]


def _info(device: Path) -> tuple[Path, dict[str, Any] | None]:
    """info.json.<id> of the device folder (None when absent)."""
    path = device / f"info.json.{device.name.removeprefix('device_')}"
    if not path.is_file():
        return path, None
    record = load_json(path, expected=say("timeline.info-object"))
    if not isinstance(record, dict):
        raise InputError(say("json.not-object-is"), path=display(path), expected=say("timeline.info-object"))
    return path, record


def _rank(device: Path, device_id: int) -> int:
    """rank_id of info.json.<id> when it is a rank (not -1 or missing), else the device id."""
    try:
        _, info = _info(device)
    except InputError:
        return device_id  # read() names the broken file
    rank = info.get("rank_id") if info else None
    return rank if isinstance(rank, int) and rank >= 0 else device_id


def _environment(info: dict[str, Any] | None) -> dict[str, Any]:
    """The device facts of info.json (AI Core count and clock as recorded, host)."""
    if not info:
        return {}
    devices = cast(list[Any], info.get("DeviceInfo")) if isinstance(info.get("DeviceInfo"), list) else []
    device = cast(JsonObject, devices[0]) if devices and isinstance(devices[0], dict) else {}
    facts: JsonObject = {
        "ai_core_num": device.get("ai_core_num"),
        "aic_frequency_mhz": device.get("aic_frequency"),
        "hwtype": info.get("hwtype"),
    }
    return {k: v for k, v in facts.items() if v is not None}


# ------------------------------------------------------------------------------------------- iterations


def _iteration(path: Path) -> tuple[pd.DataFrame, dict[str, float], pd.DataFrame]:
    """One msprof_*.json: its kernel rows, its step (empty without an Iteration Time span) and its
    frequency samples."""
    processes: dict[Any, str] = {}
    threads: dict[tuple[Any, Any], str] = {}
    rows: list[tuple[str, float, float, str]] = []
    overlap: dict[str, float] = {}
    step: dict[str, float] = {}
    freq_ts: list[float] = []
    freq_mhz: list[float] = []
    check_file(path)
    events = list(iter_events(path))
    for event in events:
        if event.get("ph") == "M":
            args = event.get("args")
            name = str(cast(JsonObject, args).get("name", "")) if isinstance(args, dict) else ""
            if event.get("name") == "process_name":
                processes[event.get("pid")] = name
            elif event.get("name") == "thread_name":
                threads[(event.get("pid"), event.get("tid"))] = name
    for event in events:
        ph = event.get("ph")
        if ph == "C" and event.get("name") == FREQ_NAME:
            add_freq(freq_ts, freq_mhz, event)
        if ph != "X":
            continue
        span = _span(event)
        if span is None:
            continue
        process = processes.get(event.get("pid"))
        a: JsonValue = event.get("args")
        args = a if isinstance(a, dict) else {}
        if event.get("cat") == ITERATION and "Iteration ID" in args:
            step = {"step": float(args["Iteration ID"]), "start_us": span[0], "duration_us": span[1]}
        elif process == HARDWARE and COMPUTE_TASK.match(str(args.get("Task Type", ""))):
            rows.append((str(event.get("name", "")), span[0], span[1], str(args["Task Type"])))
        elif threads.get((event.get("pid"), event.get("tid"))) == COMMUNICATION_THREAD:
            rows.append((str(event.get("name", "")), span[0], span[1], HCCL))
        elif process == OVERLAP and event.get("name") in BREAKDOWN:
            key = BREAKDOWN[str(event["name"])]
            overlap[key] = overlap.get(key, 0.0) + span[1]
    if step:
        step.update({key: overlap.get(key, 0.0) for key in BREAKDOWN.values()})
    frame = pd.DataFrame(rows, columns=["name", "start_us", "duration_us", "core"])
    return frame, step, freq_frame(freq_ts, freq_mhz)


def _span(event: dict[str, Any]) -> tuple[float, float] | None:
    try:
        start, dur = float(event["ts"]), float(event.get("dur", 0) or 0)
    except (KeyError, TypeError, ValueError):
        return None
    return (start, dur) if np.isfinite(start) and np.isfinite(dur) else None


def _kernels(rows: pd.DataFrame, first: Path) -> pd.DataFrame:
    """Kernel rows of every iteration -> canonical kernels in start order (names carry MindSpore scopes),
    as a trace's Ascend Hardware events are read."""
    if rows.empty:
        raise InputError(say("timeline.no-kernels"), path=display(first), expected=say("timeline.expected"))
    empty = pd.DataFrame()
    return kernels_from_trace(DeviceTimeline(rows, empty, empty, empty, {}), first)

"""Reader for MindSpore 1.x flat profiler folders that hold steps and communication but no operator files
(layout "legacy-steps"): e.g. the per-rank files a pipeline-parallel job leaves for cluster analysis.

Read, per rank: ``step_trace_raw_<r>_detail_time.csv`` (sys-count ticks of 10 ns): each step's start, wall
time, FP+BP and tail (busy) and iteration interval (free), and the per-step columns it keeps for each
communication operator, ``stream_<s>_<i>_<Op>-op<N>`` with ``_start_point`` and ``_end_point``
(Receive, Send, AllReduce ...), as kernels on core HCCL; ``hccl_raw_<r>.csv`` and
``profiler_info_<r>.json`` when present (as the flat legacy reader keeps them).

Without ``aicore_intermediate_<r>_detail.csv`` / ``output_timeline_data_<r>.txt`` and
``framework_raw_<r>.csv`` nothing is known of the compute operators: limitations say which questions
need them.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from core.model import Limitation, ProfilerConfig, Run, RunMeta, conform_kernels
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.arrow import NamedColumns
from diagnosis.readers.ascend import complete
from diagnosis.readers.ascend_legacy import (
    LEGACY_REMEDY,
    SYSCNT_US,
    legacy_config_limitations,
    legacy_extras,
    read_legacy_info,
    read_step_trace_raw,
)
from diagnosis.readers.catalog import of_rank
from diagnosis.readers.discover import discover
from diagnosis.readers.io import read_table, to_frame
from diagnosis.readers.tables import run_tables
from diagnosis.readers.values import map_unique, op_type_of_kernel

LAYOUT = catalog.LEGACY_STEPS.name
LAYOUTS = (LAYOUT,)
_OP_COLUMN = re.compile(r"^stream_\d+_\d+_(?P<op>.+-op\d+)$")
HCCL = "HCCL"
# The questions a run without operator files cannot answer (limitation topics the analyzers look up).
NEEDS_OPERATORS = ("operators", "dtypes", "shapes", "formats", "scopes", "op-state", "aic-metrics")


def candidates(folder: Path) -> list[Candidate]:
    """Flat MindSpore 1.x folders with step_trace_raw but no operator files: one candidate per rank."""
    return [c for c in discover(folder) if c.layout == LAYOUT]


def read(candidate: Candidate) -> Run:
    """Read one rank's steps and communication operators."""
    folder = candidate.root
    rank = candidate.rank if candidate.rank is not None else 0
    files: list[Path] = []
    trace = folder / of_rank(catalog.STEP_TRACE_RAW, rank)
    steps = read_step_trace_raw(trace, files)
    kernels = communication_ops(trace)
    info, info_path = read_legacy_info(folder, rank, files)
    limitations = legacy_config_limitations(info, info_path)
    files_needed = ", ".join(
        of_rank(t, rank) for t in (catalog.AICORE_DETAIL, catalog.OUTPUT_TIMELINE, catalog.FRAMEWORK_RAW)
    )
    limitations += [
        Limitation(
            topic,
            say("legacysteps.no-operators", files=files_needed, what=say(f"legacysteps.{topic}")),
            LEGACY_REMEDY,
        )
        for topic in NEEDS_OPERATORS
    ]
    extras = legacy_extras(folder, rank, files, limitations, {"hccl": catalog.LEGACY_TABLES["hccl"]})
    meta = RunMeta(
        layout=LAYOUT,
        source=folder.name,
        framework_version=info.framework_version if info else None,
        device="Ascend",
        rank=rank,
        config=info.config if info else ProfilerConfig(),
        execution_mode="graph",  # step_trace_raw (FP/BP points of a graph) is written in graph mode only
        phase="train" if steps["busy_us"].notna().any() else "unknown",
        files=tuple(p.relative_to(folder).as_posix() for p in files),
    )
    return Run(meta=meta, kernels=kernels, steps=steps, limitations=limitations, **run_tables(extras))


def communication_ops(path: Path) -> pd.DataFrame:
    """The per-step communication operator columns of step_trace_raw detail as kernels (µs, core HCCL).

    Built from numpy arrays, one slice of rows per operator column (a 1.x rank keeps about a hundred
    such columns: a DataFrame each cost 0.15 s of CPU for 485 kernels)."""
    frame = read_table(path)
    number = (
        pd.to_numeric(frame["step_num"], errors="coerce").to_numpy(dtype="float64")
        if "step_num" in frame
        else np.zeros(len(frame))
    )
    keep = np.isfinite(number) & (number > 0)
    step = number[keep].astype("int64")
    names: list[str] = []
    begins: list[np.ndarray] = []
    finishes: list[np.ndarray] = []
    for column in frame.columns:
        hit = _OP_COLUMN.match(str(column))
        start, end = f"{column}_start_point", f"{column}_end_point"
        if not hit or start not in frame or end not in frame:
            continue
        names.append(hit.group("op"))
        begins.append(_ticks(frame[start])[keep])
        finishes.append(_ticks(frame[end])[keep])
    begin = np.concatenate(begins) if begins else np.zeros(0)
    start_us = begin * SYSCNT_US
    duration_us = (np.concatenate(finishes) - begin) * SYSCNT_US if finishes else np.zeros(0)
    op = np.repeat(np.arange(len(names)), len(step))
    steps = np.tile(step, len(names))
    kept = np.flatnonzero(~np.isnan(start_us) & ~np.isnan(duration_us))
    order = kept[np.argsort(start_us[kept], kind="stable")]
    labels = pa.array([names[k] for k in op[order].tolist()], type=pa.string())
    columns: NamedColumns = {
        "name": labels,
        "op_type": map_unique(labels, op_type_of_kernel),
        "step": pa.array(steps[order].astype("int64")),
        "start_us": pa.array(start_us[order]),
        "duration_us": pa.array(duration_us[order]),
        "core": pa.array([HCCL] * len(order), type=pa.string()),
    }
    table = pa.Table.from_pydict(columns)
    return conform_kernels(to_frame(complete(table)))


def _ticks(values: pd.Series) -> np.ndarray:
    """A column of sys-count ticks as float64 (NaN where a cell is not a number)."""
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype="float64")

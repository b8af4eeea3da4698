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
    """The per-step communication operator columns of step_trace_raw detail as kernels (µs, core HCCL)."""
    frame = read_table(path)
    number = (
        pd.to_numeric(frame["step_num"], errors="coerce")
        if "step_num" in frame
        else pd.Series(dtype="float64")
    )
    frame = frame.loc[np.isfinite(number.astype("float64")) & (number.astype("float64") > 0)]
    rows: list[pd.DataFrame] = []
    for column in frame.columns:
        hit = _OP_COLUMN.match(str(column))
        start, end = f"{column}_start_point", f"{column}_end_point"
        if not hit or start not in frame or end not in frame:
            continue
        begin = pd.to_numeric(frame[start], errors="coerce").astype("float64")
        finish = pd.to_numeric(frame[end], errors="coerce").astype("float64")
        rows.append(
            pd.DataFrame(
                {
                    "name": hit.group("op"),
                    "step": pd.to_numeric(frame["step_num"]).astype("int64"),
                    "start_us": begin * SYSCNT_US,
                    "duration_us": (finish - begin) * SYSCNT_US,
                }
            )
        )
    ops = (
        pd.concat(rows, ignore_index=True)
        if rows
        else pd.DataFrame(columns=["name", "step", "start_us", "duration_us"])
    )
    ops = ops.dropna(subset=["start_us", "duration_us"]).sort_values("start_us", kind="stable")
    names = pa.array(ops["name"].astype(str).tolist(), type=pa.string())
    columns: NamedColumns = {
        "name": names,
        "op_type": map_unique(names, op_type_of_kernel),
        "step": pa.array(ops["step"].to_numpy(dtype="int64")),
        "start_us": pa.array(ops["start_us"].to_numpy(dtype="float64")),
        "duration_us": pa.array(ops["duration_us"].to_numpy(dtype="float64")),
        "core": pa.array([HCCL] * len(ops), type=pa.string()),
    }
    table = pa.Table.from_pydict(columns)
    return conform_kernels(to_frame(complete(table)))

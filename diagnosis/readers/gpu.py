"""Reader for MindSpore 2.0-2.4 GPU output (layout "legacy-gpu": flat `<out>/profiler/gpu_*_<id>.*`).

Per-launch op times come from ``gpu_op_execute_timestamp_<id>.txt`` (``<op_full_name>;<op_type>;<start_ns>,
<duration> ...``; MindSpore's GPU timeline uses the duration as µs, which is confirmed against
``gpu_op_detail_info_<id>.csv`` ``op_total_time(us)``), host ops from the CPU files beside them, shapes from
``gpu_framework_<id>.txt``, steps from ``step_trace_raw_<id>_detail_time.csv``. No dtypes are recorded.
MindSpore 2.5+ writes no GPU timeline at all.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from core.model import Limitation, Run, conform_kernels
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.ascend_legacy import (
    SYSCNT_US,
    legacy_config_limitations,
    legacy_extras,
    read_legacy_info,
    read_step_trace_raw,
    steps_onto_kernels,
)
from diagnosis.readers.catalog import HOST_OP_TIMESTAMPS, host_file, of_rank
from diagnosis.readers.discover import discover
from diagnosis.readers.io import to_frame
from diagnosis.readers.legacy_cpu import MS_TO_US, host_kernels, host_limitations, host_meta
from diagnosis.readers.steps import no_steps
from diagnosis.readers.tables import run_tables

LAYOUT = catalog.LEGACY_GPU_FLAT.name
LAYOUTS = (LAYOUT,)
NS_US = 0.001


def candidates(folder: Path) -> list[Candidate]:
    """MindSpore 2.0-2.4 GPU folders at or below `folder`, one candidate per device id."""
    return [c for c in discover(folder) if c.layout == LAYOUT]


def read(candidate: Candidate) -> Run:
    """Read one device of a flat legacy GPU folder."""
    folder = candidate.root
    rank = candidate.rank if candidate.rank is not None else 0
    files: list[Path] = []
    kernels, detail = host_kernels(folder, "gpu", rank, 1.0, "GPU", files)
    if (folder / host_file(HOST_OP_TIMESTAMPS, "cpu", rank)).is_file():
        host, _ = host_kernels(folder, "cpu", rank, MS_TO_US, "CPU", files)
        kernels = _merge(kernels, host)
    steps, kernels = _steps(folder / of_rank(catalog.STEP_TRACE_RAW, rank), kernels, files)
    info, info_path = read_legacy_info(folder, rank, files)
    limitations = legacy_config_limitations(info, info_path) + host_limitations("")
    if steps.empty:
        limitations.append(
            Limitation(
                "steps",
                say("gpu.no-step-trace"),
                say("gpu.include-step-trace"),
            )
        )
    extras = {"op_detail": to_frame(detail)} if detail is not None else {}
    extras.update(legacy_extras(folder, rank, files, limitations, catalog.GPU_TABLES))
    meta = host_meta(LAYOUT, "GPU", folder, rank, info, kernels, len(steps), files)
    return Run(meta=meta, kernels=kernels, steps=steps, limitations=limitations, **run_tables(extras))


def _merge(device: pd.DataFrame, host: pd.DataFrame) -> pd.DataFrame:
    merged = pd.concat([device, host], ignore_index=True)
    order = np.argsort(merged["start_us"].to_numpy(dtype="float64", na_value=np.inf), kind="stable")
    return conform_kernels(merged.iloc[order])


def _steps(path: Path, kernels: pd.DataFrame, files: list[Path]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Step spans; their tick unit (10 ns sys-count or ns) is the one under which kernels fall inside them."""
    if not path.is_file():
        return no_steps(), kernels
    best, best_hits = no_steps(), -1.0
    starts: npt.NDArray[np.float64] = kernels["start_us"].to_numpy(dtype="float64", na_value=np.nan)
    for scale in (SYSCNT_US, NS_US):
        steps = _scaled(read_step_trace_raw(path, []), scale / SYSCNT_US)
        if steps.empty:
            return steps, kernels
        begins: pd.Series[float] = steps["start_us"]
        ends: pd.Series[float] = begins + steps["duration_us"]
        lo, hi = float(begins.min()), float(ends.max())
        hits = float(np.mean((starts >= lo) & (starts <= hi))) if len(steps) else 0.0
        if hits > best_hits:
            best, best_hits = steps, hits
    files.append(path)
    return best, steps_onto_kernels(kernels, best)


def _scaled(steps: pd.DataFrame, factor: float) -> pd.DataFrame:
    if factor == 1.0:
        return steps
    out = steps.copy()
    for col in ("start_us", "duration_us", "busy_us", "free_us"):
        out[col] = out[col] * factor
    return out

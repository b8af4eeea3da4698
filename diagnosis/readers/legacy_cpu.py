"""Reader for MindSpore 2.0-2.4 CPU output (layout "legacy-cpu": flat `<out>/profiler/cpu_*_<id>.*`).

The four CPU files are those of MindSpore 2.10 (see the "cpu-ms" reader) but sit flat beside
``profiler_info_<id>.json`` instead of under ``FRAMEWORK/``. Launch lines are
``<full_op_name>;HostCpuOps;<start_ns>,<dur_ms>[,<tid>] ...``; the duration unit is confirmed against the
detail file's ``op_total_time(ms)`` (MindSpore 1.x: ``compute_time(ms)``). The host-op parsing here is
shared with the GPU reader, whose folders also hold CPU ops.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.errors import InputError
from core.model import Limitation, ProfilerConfig, Run, RunMeta, conform_kernels
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.arrow import Column, NamedColumns, sorted_by
from diagnosis.readers.ascend import complete
from diagnosis.readers.ascend_legacy import legacy_config_limitations, read_legacy_info
from diagnosis.readers.catalog import HOST_FRAMEWORK, HOST_OP_DETAIL, HOST_OP_TIMESTAMPS, host_file
from diagnosis.readers.cpu import attach_shapes as attach_framework_shapes
from diagnosis.readers.cpu import derive_steps
from diagnosis.readers.discover import discover
from diagnosis.readers.host import duration_scale, read_op_detail, read_op_timestamps
from diagnosis.readers.io import display, to_frame
from diagnosis.readers.profiler_info import InfoRecord
from diagnosis.readers.traits import amp_of, infer_execution_mode, phase_of
from diagnosis.readers.values import map_unique, scope_of

LAYOUT = catalog.LEGACY_CPU_FLAT.name
LAYOUTS = (LAYOUT,)
MS_TO_US = 1000.0


def candidates(folder: Path) -> list[Candidate]:
    """MindSpore 2.0-2.4 CPU folders at or below `folder`, one candidate per device id."""
    return [c for c in discover(folder) if c.layout == LAYOUT]


def read(candidate: Candidate) -> Run:
    """Read one device of a flat legacy CPU folder."""
    folder = candidate.root
    rank = candidate.rank if candidate.rank is not None else 0
    files: list[Path] = []
    kernels, detail = host_kernels(folder, "cpu", rank, MS_TO_US, "CPU", files)
    steps, kernels, note = derive_steps(kernels)
    info, info_path = read_legacy_info(folder, rank, files)
    limitations = legacy_config_limitations(info, info_path) + host_limitations(note)
    meta = host_meta(LAYOUT, "CPU", folder, rank, info, kernels, len(steps), files)
    extras = {"op_detail": to_frame(detail)} if detail is not None else {}
    return Run(meta=meta, kernels=kernels, steps=steps, limitations=limitations, extras=extras)


def host_meta(
    layout: str,
    device: str,
    folder: Path,
    rank: int,
    info: InfoRecord | None,
    kernels: pd.DataFrame,
    steps: int,
    files: list[Path],
) -> RunMeta:
    """RunMeta of a legacy host-op run (CPU or GPU): settings from profiler_info where it has them,
    the execution mode from the op names otherwise, phase and AMP markers from the kernels."""
    return RunMeta(
        layout=layout,
        source=folder.name,
        framework_version=info.framework_version if info else None,
        device=device,
        rank=rank,
        config=info.config if info else ProfilerConfig(),
        jit_level=info.jit_level if info else None,
        execution_mode=info.execution_mode
        if info and info.execution_mode != "unknown"
        else infer_execution_mode(kernels["name"]),
        phase=phase_of(kernels),
        amp=amp_of(kernels, max(steps, 1)),
        files=tuple(p.relative_to(folder).as_posix() for p in files),
    )


def host_kernels(
    folder: Path, prefix: str, rank: int, default_scale: float, core: str, files: list[Path]
) -> tuple[pd.DataFrame, pa.Table | None]:
    """Per-launch kernels from `<prefix>_op_execute_timestamp_<rank>.txt`, typed by the detail file and
    shaped by the framework file; also returns the detail table."""
    stamps = folder / host_file(HOST_OP_TIMESTAMPS, prefix, rank)
    detail_path = folder / host_file(HOST_OP_DETAIL, prefix, rank)
    if not stamps.is_file():
        raise InputError(
            say("legacy-cpu.no-stamps", name=stamps.name),
            path=display(folder),
            expected=f"{prefix}_op_execute_timestamp_<id>.txt",
        )
    detail = read_op_detail(detail_path) if detail_path.is_file() else None
    files += [p for p in (detail_path, stamps) if p.is_file()]
    launches = read_op_timestamps(stamps)
    scale = duration_scale(launches, detail, default_scale)
    kernels = _kernel_table(launches, detail, scale, core, typed_lines=prefix != "cpu")
    framework = folder / host_file(HOST_FRAMEWORK, prefix, rank)
    if framework.is_file():
        files.append(framework)
        kernels = attach_framework_shapes(kernels, framework)
    return conform_kernels(kernels), detail


def _kernel_table(
    launches: pa.Table, detail: pa.Table | None, scale: float, core: str, typed_lines: bool
) -> pd.DataFrame:
    """Canonical kernels, sorted by start; op type from the line (GPU), the detail file, or the name."""
    names = launches.column("name")
    from_name = map_unique(names, _type_from_name)
    op_type: Column = launches.column("type") if typed_lines else from_name
    if detail is not None:
        types = dict(
            zip(detail.column("full_op_name").to_pylist(), detail.column("op_type").to_pylist(), strict=False)
        )
        op_type = pc.coalesce(map_unique(names, types.get), op_type)
    columns: NamedColumns = {
        "name": names,
        "op_type": op_type,
        "scope": map_unique(names, scope_of),
        "start_us": pc.divide(launches.column("start_ns").cast(pa.float64(), safe=False), 1000.0),
        "duration_us": pc.multiply(launches.column("duration"), scale),
        "core": pa.array(np.full(launches.num_rows, core, dtype=object), pa.string()),
    }
    table = sorted_by(pa.Table.from_pydict(columns), [("start_us", "ascending")])
    return to_frame(complete(table))


def _type_from_name(name: str) -> str:
    """`Default/conv-Conv2d/Conv2D-op0` -> `Conv2D`; a bare PyNative name is its own type."""
    return re.sub(r"-op\d+$", "", name.rsplit("/", 1)[-1])


def host_limitations(step_note: str) -> list[Limitation]:
    """What host-op profiles cannot answer."""
    lims = [
        Limitation(
            "dtypes",
            say("host.no-dtypes"),
            say("remedy.mindir"),
        ),
        Limitation("formats", say("host.no-formats"), ""),
        Limitation("op-state", say("host.no-op-state"), ""),
        Limitation("aic-metrics", say("host.no-counters"), ""),
    ]
    if step_note:
        lims.append(
            Limitation(
                "steps",
                say("host.no-steps"),
                say("remedy.one-call"),
            )
        )
    return lims

"""Reader for torch_npu Ascend output (layout "torch-npu", `*_ascend_pt`).

Same ASCEND_PROFILER_OUTPUT/ files as MindSpore 2.5+ (kernel_details.csv with `Step Id`, kernel names
`aclnn<Api>_<Impl>_<Kernel>`); the configuration is `profiler_info.json` (one card) or
`profiler_info_<rank>.json` with a `config` record whose `_aic_metrics` values are spelled `ACL_AICORE_*`.
"""

from __future__ import annotations

from pathlib import Path

from diagnosis.model import ProfilerConfig, Run
from diagnosis.readers import Candidate
from diagnosis.readers.ascend import (
    Tool,
    build_meta,
    no_config_limitation,
    output_dir,
    read_info,
    read_metadata,
    read_output,
)
from diagnosis.readers.discover import discover

LAYOUT = "torch-npu"

TORCH = Tool(
    framework="torch_npu",
    level1="re-profile both runs with torch_npu.profiler._ExperimentalConfig("
    "profiler_level=torch_npu.profiler.ProfilerLevel.Level1)",
    aic_metrics="re-profile with torch_npu.profiler._ExperimentalConfig(profiler_level="
    "torch_npu.profiler.ProfilerLevel.Level1, aic_metrics=torch_npu.profiler.AiCMetrics.PipeUtilization)",
    op_state="profile with CANN 8.x or newer, whose kernel tables carry OP State",
    scopes="compare by kernel type and input shapes instead of framework scopes",
    steps="profile with schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=5) and call "
    "prof.step() once per step",
    config="upload the whole *_ascend_pt folder: profiler_info.json sits beside ASCEND_PROFILER_OUTPUT",
)


def candidates(folder: Path) -> list[Candidate]:
    """torch_npu run roots at or below `folder`."""
    return [c for c in discover(folder) if c.layout == LAYOUT]


def read(candidate: Candidate) -> Run:
    """Read one `*_ascend_pt` run into the canonical model."""
    root = candidate.root
    info, info_path = read_info(root, candidate.rank)
    config = info.config if info else ProfilerConfig()
    out = read_output(output_dir(root), candidate.rank, config.level, TORCH)
    if info_path:
        out.files.insert(0, info_path)
    else:
        out.limitations.insert(0, no_config_limitation(TORCH))
    environment = read_metadata(root, out)
    meta = build_meta(LAYOUT, root, candidate, info, out, environment)
    return out.to_run(meta)

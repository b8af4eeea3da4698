"""Reader for torch_npu Ascend output (layout "torch-npu", `*_ascend_pt`).

Same ASCEND_PROFILER_OUTPUT/ files as MindSpore 2.5+ (kernel_details.csv with `Step Id`, kernel names
`aclnn<Api>_<Impl>_<Kernel>`); the configuration is `profiler_info.json` (one card) or
`profiler_info_<rank>.json` with a `config` record whose `_aic_metrics` values are spelled `ACL_AICORE_*`.
"""

from __future__ import annotations

from pathlib import Path

from core.model import Run
from diagnosis.readers import Candidate
from diagnosis.readers.ascend import Tool, read_run
from diagnosis.readers.discover import discover

LAYOUT = "torch-npu"
LAYOUTS = (LAYOUT,)

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
    return read_run(candidate, LAYOUT, TORCH)

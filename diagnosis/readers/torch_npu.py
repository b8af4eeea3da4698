"""Reader for torch_npu Ascend output (layout "torch-npu", `*_ascend_pt`).

Same ASCEND_PROFILER_OUTPUT/ files as MindSpore 2.5+ (kernel_details.csv with `Step Id`, kernel names
`aclnn<Api>_<Impl>_<Kernel>`); the configuration is `profiler_info.json` (one card) or
`profiler_info_<rank>.json` with a `config` record whose `_aic_metrics` values are spelled `ACL_AICORE_*`.
"""

from __future__ import annotations

from pathlib import Path

from core.model import Run
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.ascend import Tool, read_run
from diagnosis.readers.discover import discover

LAYOUT = catalog.TORCH_NPU.name
LAYOUTS = (LAYOUT,)

TORCH = Tool(
    framework="torch_npu",
    level1=say("torch.level1"),
    aic_metrics=say("torch.aic-metrics"),
    op_state=say("remedy.op-state"),
    scopes=say("torch.scopes"),
    steps=say("torch.steps"),
    config=say("torch.config"),
)


def candidates(folder: Path) -> list[Candidate]:
    """torch_npu run roots at or below `folder`."""
    return [c for c in discover(folder) if c.layout == LAYOUT]


def read(candidate: Candidate) -> Run:
    """Read one `*_ascend_pt` run into the canonical model."""
    return read_run(candidate, LAYOUT, TORCH)

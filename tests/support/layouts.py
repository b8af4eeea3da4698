"""The one registry of profile runs per catalogued layout that the tests read: every per-layout map of the
suites (reader contracts, fuzzing, packing) is a selection of it, so a new layout's run is added once.

Each run names its layout as `diagnosis.readers.catalog.LAYOUTS` does (tests/test_reader_contracts.py
checks that reading it gives that layout, and that every catalogued layout has a run here) and the
suites that use it. Runs under tests/fixtures are real MindSpore runs or schema-exact folders with their
generators; a layout without such a fixture yet names its real sample in ../shared/samples, which
tests/test_real_samples.py reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.inputs import ASCEND, CPU, ROOT
from tests.support.samples import LEGACY, TIMELINE, TORCH_DB

CONTRACTS = "contracts"  # tests/test_reader_contracts.py: the canonical tables of every layout
FUZZ = "fuzz"  # tests/test_fuzz_readers.py and tests/bad_inputs/atheris_fuzz.py: damaged files
PACK = "pack"  # tests/test_pack.py: the packed archive diagnoses like the folder
ALL = frozenset({CONTRACTS, FUZZ, PACK})


@dataclass(frozen=True)
class LayoutRun:
    """One run of a catalogued layout: `variant` tells runs of one layout apart, `uses` names the suites."""

    layout: str
    variant: str
    path: Path
    uses: frozenset[str] = ALL

    @property
    def name(self) -> str:
        """The run's id in the suites (test ids, fuzz targets): the layout, then the variant."""
        return f"{self.layout}.{self.variant}" if self.variant else self.layout


RUNS = (
    LayoutRun("ascend-ms", "level1-train", ASCEND / "level1" / "train", frozenset({CONTRACTS, PACK})),
    LayoutRun("ascend-ms", "level1-infer", ASCEND / "level1" / "infer", frozenset({CONTRACTS, FUZZ})),
    LayoutRun("ascend-ms", "level0-infer", ASCEND / "level0" / "infer", frozenset({FUZZ})),
    LayoutRun("ascend-ms", "two-ranks", ASCEND / "two_rank", frozenset({FUZZ})),
    LayoutRun(
        "ascend-ms",
        "serving-slow",
        ROOT / "tests" / "fixtures" / "ascend_symptoms" / "serving" / "slow",
        frozenset({CONTRACTS}),
    ),
    LayoutRun("ascend-ms-2.3", "", ASCEND / "ms23"),
    LayoutRun("legacy-ascend", "", ASCEND / "legacy_ascend"),
    LayoutRun("legacy-ascend", "2.0", ASCEND / "legacy_ascend_20", frozenset({FUZZ})),
    LayoutRun("legacy-ascend", "1.x", ASCEND / "legacy_ascend_1x"),
    LayoutRun("legacy-gpu", "", ASCEND / "legacy_gpu"),
    LayoutRun("legacy-cpu", "", ASCEND / "legacy_cpu"),
    LayoutRun("torch-npu", "", ASCEND / "torch_npu"),
    LayoutRun("cann-msprof", "", ASCEND / "msprof" / "lite_infer"),
    LayoutRun("cann-msprof", "l0", ASCEND / "msprof" / "l0_nosteps", frozenset({CONTRACTS})),
    LayoutRun("cann-msprof", "two-devices", ASCEND / "msprof", frozenset({PACK})),
    LayoutRun("ascend-ms-db", "", ASCEND / "db" / "ms_infer"),
    LayoutRun("cann-msprof-db", "", ASCEND / "db" / "msprof_infer"),
    LayoutRun("cpu-ms", "", CPU / "infer_fp32_graph", frozenset({FUZZ})),
    LayoutRun("cpu-ms", "memory", CPU / "infer_fp32_graph_profile_memory", frozenset({CONTRACTS, PACK})),
    # No schema-exact fixture yet: the real samples, read by tests/test_real_samples.py.
    LayoutRun("torch-npu-db", "sample", TORCH_DB / "level1", frozenset()),
    LayoutRun("cann-msprof-timeline", "sample", TIMELINE, frozenset()),
    LayoutRun("legacy-steps", "sample", LEGACY, frozenset()),
)


def runs_for(use: str) -> dict[str, Path]:
    """The runs one suite uses, by name."""
    return {run.name: run.path for run in RUNS if use in run.uses}

"""What parsing the outputs comparison's dumps in the isolated child costs (issue 33): `compare_outputs`
with isolate=False (every dump and the mapping parsed in this process) against the default isolate=True
(each parsed in a fork of the warm reader, the Dump sent back through the reply's allow-list), on the real
msprobe sample and on the committed MindSpore CPU dumps, as folders and as zip archives.

    python -P bench/isolated_dumps_cost.py [--runs 9]

Each mode is warmed up once (the first isolated call starts the warm reader), then timed `--runs` times
(median). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from doctor.outputs_report import compare_outputs  # noqa: E402
from tests.support.samples import SAMPLES  # noqa: E402  (../shared/samples, found from a worktree too)

MSPROBE = SAMPLES / "msprobe_dump"
DUMPS = ROOT / "tests" / "fixtures" / "outputs"


def timed(pair: tuple[Any, Any], mapping: Path | None, isolate: bool) -> float:
    """Seconds of one comparison of the pair."""
    started = time.perf_counter()
    compare_outputs(*pair, mapping=mapping, isolate=isolate)
    return time.perf_counter() - started


def measure(label: str, pair: tuple[Any, Any], mapping: Path | None, runs: int) -> str:
    """One table row: median milliseconds in-process and isolated, after one warm-up of each."""
    timed(pair, mapping, False)
    timed(pair, mapping, True)
    here = statistics.median(timed(pair, mapping, False) for _ in range(runs)) * 1000
    isolated = statistics.median(timed(pair, mapping, True) for _ in range(runs)) * 1000
    return f"| {label} | {runs} | {here:.0f} | {isolated:.0f} | {isolated - here:+.0f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    runs = parser.parse_args().runs
    rows = ["| input | runs | in-process ms | isolated ms | difference ms |", "|---|---|---|---|---|"]
    msprobe = (MSPROBE / "mindspore_data", MSPROBE / "pytorch_data")
    rows.append(
        measure("real msprobe pair + layer_mapping.yaml", msprobe, MSPROBE / "layer_mapping.yaml", runs)
    )
    rows.append(
        measure(
            "MindSpore CPU .npy dumps (reference vs bn_train)",
            (DUMPS / "reference", DUMPS / "bn_train"),
            None,
            runs,
        )
    )
    with tempfile.TemporaryDirectory() as scratch:
        zips = tuple(
            shutil.make_archive(f"{scratch}/{n}", "zip", DUMPS, n) for n in ("reference", "bn_train")
        )
        rows.append(measure("the same .npy dumps zipped", zips, None, runs))
    print("\n".join(rows))


if __name__ == "__main__":
    main()

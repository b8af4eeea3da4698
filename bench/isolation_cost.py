"""What reading the profiles in the isolated child costs (issue 33): a diagnosis with isolate=False (every
reader in this process) against the default isolate=True (each profile read in a fork of the warm
reader, its tables sent back as Arrow IPC streams), on real samples and on a large generated pair.

    python -P bench/isolation_cost.py [--runs 5] [--big-runs 2] [--big bench/data/ascend_400000]

The big pair comes from `python -P bench/gen_ascend.py --rows 400000` (the row budget of one table);
it is skipped when absent. Each mode is warmed up once, then timed `--runs` times (median); the first
isolated call of the process is reported apart (it starts the warm reader). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from doctor import diagnose  # noqa: E402
from tests.support.samples import SAMPLES  # noqa: E402  (../shared/samples, found from a worktree too)

SMALL = {
    "Ascend Level1 fixture pair (51 + 33 kernels)": (
        ROOT / "tests/fixtures/ascend/level1/train",
        ROOT / "tests/fixtures/ascend/level1/infer",
    ),
    "real torch_npu 2-rank job, Level1 vs Level2": (
        SAMPLES / "torch_npu_2rank/text/level1",
        SAMPLES / "torch_npu_2rank/text/level2",
    ),
    "real kernel_details 2023 training vs 2025 BF16 LLM": (
        SAMPLES / "ascend/kernel_details_2023_training",
        SAMPLES / "ascend/kernel_details_2025_bf16_llm",
    ),
}


def timed(baseline: Path, target: Path, isolate: bool) -> float:
    """Seconds of one diagnosis of the pair (one language, as the CLI builds it)."""
    started = time.perf_counter()
    diagnose(baseline, target, isolate=isolate, translate=False)
    return time.perf_counter() - started


def measure(label: str, pair: tuple[Path, Path], runs: int) -> dict[str, object]:
    """Median seconds in-process and isolated, after one warm-up of each."""
    timed(*pair, isolate=False)
    timed(*pair, isolate=True)
    here = statistics.median(timed(*pair, isolate=False) for _ in range(runs))
    isolated = statistics.median(timed(*pair, isolate=True) for _ in range(runs))
    return {"input": label, "runs": runs, "here": here, "isolated": isolated}


def table(rows: list[dict[str, object]], cold: float, cold_here: float) -> str:
    """The measurements as Markdown."""
    lines = [
        "| input | runs | in-process (s) | isolated (s) | extra (s) | extra |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        here, isolated = float(row["here"]), float(row["isolated"])  # type: ignore[arg-type]
        extra = isolated - here
        lines.append(
            f"| {row['input']} | {row['runs']} | {here:.3f} | {isolated:.3f} | {extra:+.3f} | "
            f"{extra / here:+.0%} |"
        )
    lines.append(
        f"| first isolated call (starts the warm reader), fixture pair | 1 | {cold_here:.3f} | "
        f"{cold:.3f} | {cold - cold_here:+.3f} | {(cold - cold_here) / cold_here:+.0%} |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure every available input and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--big-runs", type=int, default=2)
    parser.add_argument("--big", type=Path, default=ROOT / "bench" / "data" / "ascend_400000")
    args = parser.parse_args(argv)
    fixture = next(iter(SMALL.values()))
    timed(*fixture, isolate=False)  # imports
    cold_here = timed(*fixture, isolate=False)
    cold = timed(*fixture, isolate=True)
    rows = [measure(label, pair, args.runs) for label, pair in SMALL.items() if pair[0].is_dir()]
    if (args.big / "train").is_dir():
        big = (args.big / "train", args.big / "infer")
        rows.append(measure(f"generated {args.big.name} train vs infer", big, args.big_runs))
    print(table(rows, cold, cold_here))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Summarise a generated MindSpore-layout dump folder (thousands of .npy files) in streaming, side by side
with reading its bytes once, in one run; prints a table (Markdown) for bench/RESULTS.md.

    .venv/bin/python bench/bench_outputs.py --gib 1.0 --files 4000

The folder is generated under a private temporary directory (named like MindSpore's CPU dump:
rank_0/Net/0/0/<Op>.<name>.0.0.<ts>.output.0.DefaultFormat.Float32.npy) and removed afterwards. Both
measurements read the same files in the same order; the byte read goes first and last (its mean is the
reference), so page-cache state is the same for both.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from outputs.ms_dump import read_npy_dump


def generate(folder: Path, total_bytes: int, files: int) -> int:
    """`files` float32 .npy tensors summing to about `total_bytes`; returns the bytes written."""
    per_file = max(1, total_bytes // files // 4)
    iteration = folder / "rank_0" / "Net" / "0" / "0"
    iteration.mkdir(parents=True)
    rng = np.random.default_rng(0)
    block = rng.standard_normal(per_file, dtype=np.float32)
    written = 0
    for i in range(files):
        op = f"MatMul.Default_layer{i}-MatMul_MatMul-op{i}"
        name = f"{op}.0.0.{1_000_000 + i}.output.0.DefaultFormat.Float32.npy"
        np.save(iteration / name, np.roll(block, i))
        written += (iteration / name).stat().st_size
    return written


def read_bytes(folder: Path) -> tuple[float, float]:
    """(wall, CPU) seconds to read every file once in 1 MiB blocks (the floor any summary has to pay)."""
    start, cpu = time.perf_counter(), time.process_time()
    for root, _dirs, names in os.walk(folder):
        for name in sorted(names):
            with open(os.path.join(root, name), "rb") as handle:
                while handle.read(1 << 20):
                    pass
    return time.perf_counter() - start, time.process_time() - cpu


def summarise(folder: Path) -> tuple[float, float, int]:
    """(wall, CPU) seconds to read the dump into per-tensor statistics (outputs.ms_dump.read_npy_dump)."""
    start, cpu = time.perf_counter(), time.process_time()
    dump = read_npy_dump(folder, folder.name)
    return time.perf_counter() - start, time.process_time() - cpu, len(dump.layers)


def main() -> None:
    """Generate, measure side by side, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--files", type=int, default=4000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perf-doctor-bench-") as tmp:
        folder = Path(tmp) / "dump"
        size = generate(folder, int(args.gib * (1 << 30)), args.files)
        first = read_bytes(folder)
        summary, summary_cpu, layers = summarise(folder)
        last = read_bytes(folder)
    floor, floor_cpu = (first[0] + last[0]) / 2, (first[1] + last[1]) / 2
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    head = "| input | files | MiB | read once: wall / CPU (s) | summary: wall / CPU (s) | wall ratio |"
    print(head + " peak RSS (MiB) |")
    print("|---|---|---|---|---|---|---|")
    print(
        f"| generated float32 .npy dump | {layers} | {size / (1 << 20):.0f} | {floor:.2f} / {floor_cpu:.2f}"
        f" | {summary:.2f} / {summary_cpu:.2f} | {summary / floor:.1f} | {peak:.0f} |"
    )


if __name__ == "__main__":
    main()

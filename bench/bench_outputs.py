"""Summarise a generated MindSpore-layout dump folder (thousands of .npy files) in streaming, side by side
with reading its bytes once, in one run; prints a table (Markdown) for bench/RESULTS.md.

    .venv/bin/python bench/bench_outputs.py --gib 1.0 --files 4000 --rounds 5

The folder is generated under a private temporary directory (named like MindSpore's CPU dump:
rank_0/Net/0/0/<Op>.<name>.0.0.<ts>.output.0.DefaultFormat.Float32.npy) and removed afterwards. Each
round reads the bytes once and summarises the folder with one and with two reader threads, and in two
processes, this one and a forked worker (the production path: doctor's isolated reader runs no other
thread, so it forks), in an order that rotates from round to round; the table gives each measurement's
median over the rounds and the median of the per-round ratios (a shared machine's load moves from second
to second, a ratio within one round compares like with like). CPU counts the forked worker's CPU too.
Every file is in the page cache for every measurement.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
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


def summarise(folder: Path, readers: int, processes: int) -> tuple[float, float]:
    """(wall, CPU of this process and its reaped children) seconds to read the dump into per-tensor
    statistics (outputs.ms_dump.read_npy_dump) by `readers` threads, or by `processes` processes."""
    start, cpu = time.perf_counter(), _cpu()
    read_npy_dump(folder, folder.name, readers=readers, processes=processes)
    return time.perf_counter() - start, _cpu() - cpu


def _cpu() -> float:
    """CPU seconds of this process and of its children that ended (the forked workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def measure(folder: Path, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) of each measurement in each round, the order rotating from round to round."""
    runs: dict[str, Callable[[], tuple[float, float]]] = {
        "read": lambda: read_bytes(folder),
        "summary, 1 reader thread": lambda: summarise(folder, 1, 1),
        "summary, 2 reader threads": lambda: summarise(folder, 2, 1),
        "summary, 2 processes (1 forked)": lambda: summarise(folder, 1, 2),
    }
    names = list(runs)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    read_bytes(folder)  # warm the page cache
    for round_ in range(rounds):
        turn = round_ % len(names)
        for name in names[turn:] + names[:turn]:
            times[name].append(runs[name]())
    return times


def main() -> None:
    """Generate, measure interleaved, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--files", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perf-doctor-bench-") as tmp:
        folder = Path(tmp) / "dump"
        size = generate(folder, int(args.gib * (1 << 30)), args.files)
        load = os.getloadavg()[0]
        times = measure(folder, args.rounds)
        load = max(load, os.getloadavg()[0])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    floor = times.pop("read")
    print(f"{args.files} float32 .npy files, {size / (1 << 20):.0f} MiB, {args.rounds} rounds, ", end="")
    print(f"load average up to {load:.1f}, peak RSS {peak:.0f} MiB (the forked worker: {workers:.0f} MiB)")
    print()
    print("| measurement | wall median (s) | CPU median (s) | wall / read, median of rounds ", end="")
    print("| all rounds | CPU / read's CPU, median of rounds |")
    print("|---|---|---|---|---|---|")
    print(f"| read the bytes once | {_median(floor, 0):.2f} | {_median(floor, 1):.2f} | 1 | | 1 |")
    for name, runs in times.items():
        ratios = [run[0] / base[0] for run, base in zip(runs, floor, strict=True)]
        cpu = statistics.median(run[1] / base[1] for run, base in zip(runs, floor, strict=True))
        every = " ".join(f"{r:.1f}" for r in ratios)
        print(
            f"| {name} | {_median(runs, 0):.2f} | {_median(runs, 1):.2f} | {statistics.median(ratios):.2f} |",
            end="",
        )
        print(f" {every} | {cpu:.2f} |")


def _median(runs: list[tuple[float, float]], index: int) -> float:
    return statistics.median(run[index] for run in runs)


if __name__ == "__main__":
    main()

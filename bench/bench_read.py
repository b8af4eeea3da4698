"""Benchmark the Ascend reader against its floor: a bare `pyarrow.csv.read_csv` of its kernel_details.csv.

Each measurement runs in a fresh Python subprocess, which reports its read time (perf_counter around the
read only, imports excluded) and its own peak RSS (`getrusage(RUSAGE_SELF).ru_maxrss`; tracemalloc does not
see Arrow's memory). The page cache is warmed first so both sides read from memory; the two sides alternate
and the best of `--repeat` times is kept, which filters out other processes' load; CPU time (all threads)
is reported too, as a load-independent view. Our side is the whole
`diagnosis.readers.ascend.read()`: kernel_details.csv, step_trace_time.csv, profiler_info, the trace_view.json
marker scan, normalisation and run traits.

    python bench/bench_read.py                          # 100k and 1M rows (generated if missing)
    python bench/bench_read.py --rows 3000000 --repeat 1 --kinds train
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from gen_ascend import run_dir, write_run  # noqa: E402  (bench/ is not a package)

# One reader module's read of its first candidate under `root`, timed in a fresh process; `check` is
# one more assertion line on `run` (bench_msprof uses the same script for the CANN reader).
READ_SCRIPT = """
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, {repo!r})
from diagnosis.readers import {reader} as reader
root = Path({root!r})
cpu = time.process_time()
began = time.perf_counter()
run = reader.read(reader.candidates(root)[0])
elapsed = time.perf_counter() - began
cpu = time.process_time() - cpu
assert len(run.kernels) == {rows}, len(run.kernels)
{check}
print(json.dumps({{"s": elapsed, "cpu": cpu, "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""

FLOOR = """
import json, resource, time
import pyarrow.csv
cpu = time.process_time()
began = time.perf_counter()
table = pyarrow.csv.read_csv({path!r})
elapsed = time.perf_counter() - began
cpu = time.process_time() - cpu
assert table.num_rows == {rows}, table.num_rows
print(json.dumps({{"s": elapsed, "cpu": cpu, "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""


def measure(code: str) -> dict[str, float]:
    """Run `code` in a fresh interpreter; return its reported seconds and peak RSS (kB)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def warm(root: Path) -> None:
    """Read every file once so that neither side pays for the disk."""
    for path in root.rglob("*"):
        if path.is_file():
            with open(path, "rb") as fh:
                while fh.read(1 << 24):
                    pass


def bench(rows: int, kind: str, repeat: int) -> dict[str, float]:
    """Best time (least disturbed by other processes) and max peak RSS of ours and the floor."""
    root = run_dir(rows, kind)
    kd = root / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    if not kd.is_file():
        write_run(root, kind, rows)
    warm(root)
    ours, floor = [], []
    for _ in range(repeat):  # interleaved, so both sides see the same background load
        script = READ_SCRIPT.format(repo=str(REPO), reader="ascend", root=str(root), rows=rows, check="")
        ours.append(measure(script))
        floor.append(measure(FLOOR.format(path=str(kd), rows=rows)))
    trace = root / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    return {
        "rows": rows,
        "kind": kind,
        "kd_mb": kd.stat().st_size / 2**20,
        "trace_mb": trace.stat().st_size / 2**20,
        "ours_s": min(m["s"] for m in ours),
        "ours_cpu": min(m["cpu"] for m in ours),
        "ours_mb": max(m["rss_kb"] for m in ours) / 1024,
        "floor_s": min(m["s"] for m in floor),
        "floor_cpu": min(m["cpu"] for m in floor),
        "floor_mb": max(m["rss_kb"] for m in floor) / 1024,
    }


COLUMNS = (
    "rows",
    "run",
    "kernel_details MB",
    "trace_view MB",
    "ours s",
    "ours CPU s",
    "ours peak RSS MB",
    "floor s",
    "floor CPU s",
    "floor peak RSS MB",
    "time ratio",
    "CPU ratio",
)


def table(results: list[dict[str, float]]) -> str:
    """A Markdown table of the measurements."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in results:
        cells = (
            f"{r['rows']:,}",
            r["kind"],
            f"{r['kd_mb']:.0f}",
            f"{r['trace_mb']:.0f}",
            f"{r['ours_s']:.2f}",
            f"{r['ours_cpu']:.2f}",
            f"{r['ours_mb']:.0f}",
            f"{r['floor_s']:.2f}",
            f"{r['floor_cpu']:.2f}",
            f"{r['floor_mb']:.0f}",
            f"{r['ours_s'] / r['floor_s']:.2f}",
            f"{r['ours_cpu'] / r['floor_cpu']:.2f}",
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--kinds", nargs="+", choices=("train", "infer"), default=["train", "infer"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    results = [bench(rows, kind, args.repeat) for rows in args.rows for kind in args.kinds]
    print(table(results))


if __name__ == "__main__":
    main()

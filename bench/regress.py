"""Regression check against a reference commit: the same `compare` on the same pair, on this machine today.

bench/RESULTS.md holds ratios measured on another day; the machine's speed changes between days (the same
commit took 1.26 s and 2.2 s at 100k rows on two days), so a ratio against an old table mixes the code's
change with the machine's. This script measures the reference commit and the working tree side by side
instead: the reference is checked out into a private temporary git worktree, both are byte-compiled, the
page cache is warmed, and fresh `python -m cli.main compare BASE TARGET --format json` processes of the
two alternate (`--repeat` each). Wall time (best and median), CPU time (user + system of the whole
process tree, the warm reader and its forks included; median) and peak RSS (median) are printed per
size with the ratio current / reference, and the goal (within 5 % on the median wall time and the peak
memory) marked met or not. With --instructions the instructions each tree executes
are counted too (valgrind callgrind), which on a shared machine is the measure that load does not move.

    .venv/bin/python bench/regress.py --ref 25bdd0e --rows 100000 1000000 [--repeat 7] [--out FILE]
        [--in-process]

With --in-process the current tree is also run with its readers in the CLI's process (as the reference read
them, before the isolated reader): the typed report's own cost apart from the isolation's.

With --out the table is also written to that file, with the date, the machine's load and both commits.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_compare import Sample, _report_ok, ensure_pair, run_child, warm  # noqa: E402

# every package either tree may hold (the current one split doctor/ into these rooms)
PACKAGES = (
    *("diagnosis", "doctor", "graph", "knowledge", "core"),
    *("cli", "sandbox", "outputs", "desk", "webapp"),
)
GOAL = 1.05  # current / reference, at most
CALLGRIND = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")
INSTRUCTIONS = re.compile(r"I\s+refs:\s+([\d,]+)")


def checkout(ref: str, into: Path) -> Path:
    """A detached worktree of `ref` under `into` (removed by remove_checkout)."""
    tree = into / "ref"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(tree), ref], check=True)
    return tree


def remove_checkout(tree: Path) -> None:
    subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)


def byte_compile(tree: Path) -> None:
    """Write .pyc files for the tree's packages (this machine sets PYTHONDONTWRITEBYTECODE)."""
    present = [str(tree / name) for name in PACKAGES if (tree / name).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *present], check=True, capture_output=True)


# The current CLI with its readers in this process, as the reference commit read them: what the typed
# report itself costs, apart from the isolated reader issue 33 added (the CLI's default).
IN_PROCESS = """
import sys
import cli.main as cli
from doctor import facade
def diagnose(*args, **kwargs):
    return facade.diagnose(*args, **{**kwargs, "isolate": False})
cli.diagnose = diagnose
cli.fork_warm_reader = lambda: False
sys.argv[0] = "perf-doctor"
raise SystemExit(cli.main())
"""
IN_PROCESS_SUFFIX = " (in-process)"  # a tree name ending so runs the current tree's CLI through IN_PROCESS


def run_tree(tree: Path, pair, work: Path, wrapper: tuple[str, ...] = (), in_process: bool = False) -> Sample:
    """One fresh CLI process of `tree`'s code on `pair` (under `wrapper`, e.g. valgrind; `in_process`:
    its readers in the CLI's own process), its report checked like bench_compare's."""
    report = work / "report.json"
    report.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    launch = ["-c", IN_PROCESS] if in_process else ["-m", "cli.main"]
    cmd = [*wrapper, sys.executable, *launch, "compare", str(pair.baseline), str(pair.target)]
    sample = run_child([*cmd, "--format", "json", "-o", str(report)], work / "run.log", env=env, cwd=tree)
    if sample.ok:
        sample.ok, sample.note = _report_ok(report, pair.rows)
    return sample


def instructions(rows: int, trees: dict[str, Path]) -> dict[str, int]:
    """Instructions each tree's process executes on the pair of `rows` rows, all threads (valgrind's
    callgrind): unlike time on a shared machine, the count does not depend on what else runs."""
    pair = ensure_pair(rows)
    if pair is None:
        raise SystemExit(f"no pair of {rows:,} rows (disk too full)")
    counts = {}
    with tempfile.TemporaryDirectory(prefix="bench-regress-cg-") as tmp:
        for name, tree in trees.items():
            sample = run_tree(tree, pair, Path(tmp), CALLGRIND, name.endswith(IN_PROCESS_SUFFIX))
            found = INSTRUCTIONS.search((Path(tmp) / "run.log").read_text(encoding="utf-8", errors="replace"))
            if not sample.ok or found is None:
                raise SystemExit(f"callgrind run of {name} failed: {sample.note}")
            counts[name] = int(found.group(1).replace(",", ""))
            print(f"  {rows:,} rows, {name}: {counts[name] / 1e9:.3f} G instructions", flush=True)
    return counts


def measure(rows: int, trees: dict[str, Path], repeat: int) -> dict[str, list[Sample]]:
    """Alternate the trees `repeat` times on the pair of `rows` rows; failed runs are reported and dropped."""
    pair = ensure_pair(rows)
    if pair is None:
        raise SystemExit(f"no pair of {rows:,} rows (disk too full)")
    warm(pair)
    samples: dict[str, list[Sample]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="bench-regress-") as tmp:
        for i in range(repeat):
            for name, tree in trees.items():
                sample = run_tree(tree, pair, Path(tmp), in_process=name.endswith(IN_PROCESS_SUFFIX))
                print(
                    f"  {rows:,} rows, {name} run {i + 1}: {sample.wall:.2f} s, cpu {sample.cpu:.2f} s, "
                    f"peak {sample.rss_mb:,.0f} MiB" + ("" if sample.ok else f" FAILED: {sample.note}"),
                    flush=True,
                )
                if sample.ok:
                    samples[name].append(sample)
    return samples


def table(results: dict[int, dict[str, list[Sample]]], ref: str) -> str:
    head = (
        "| rows / run | current tree | reference best s | current best s | best ratio | reference median s "
        "| current median s | median ratio | reference median CPU s | current median CPU s | CPU ratio "
        "| reference peak MiB | current peak MiB | memory ratio | goal (≤ 1.05) |\n"
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    )
    lines = [head]
    for rows, samples in results.items():
        for name in samples:
            if name != "reference":
                lines.append(_row(rows, name, samples["reference"], samples[name]))
    load = os.getloadavg()[0]
    title = (
        f"Reference {ref}, current working tree; load average {load:.2f} at the end. The goal is read on the "
        "median wall time and the median peak memory (CPU time is a median too), since on a shared machine "
        f"the best of a few runs says more about luck than about the code. Spread of one process here: "
        f"{_spread(results)}."
    )
    return title + "\n\n" + "\n".join(lines)


def _row(rows: int, name: str, ref_s: list[Sample], cur_s: list[Sample]) -> str:
    """One table row: tree `name` against the reference at `rows` rows."""
    best = [min(s.wall for s in side) for side in (ref_s, cur_s)]
    median = [statistics.median(s.wall for s in side) for side in (ref_s, cur_s)]
    cpu = [statistics.median(s.cpu for s in side) for side in (ref_s, cur_s)]
    peak = [statistics.median(s.rss_mb for s in side) for side in (ref_s, cur_s)]
    ratios = [cur / base for base, cur in (best, median, cpu, peak)]
    met = "met" if all(ratios[i] <= GOAL for i in (1, 3)) else "NOT met"
    return (
        f"| {rows:,} | {name} | {best[0]:.2f} | {best[1]:.2f} | {ratios[0]:.3f} | {median[0]:.2f} "
        f"| {median[1]:.2f} | {ratios[1]:.3f} | {cpu[0]:.2f} | {cpu[1]:.2f} | {ratios[2]:.3f} "
        f"| {peak[0]:,.0f} | {peak[1]:,.0f} | {ratios[3]:.3f} | {met} |"
    )


def _spread(results: dict[int, dict[str, list[Sample]]]) -> str:
    """Fastest to slowest wall time of each tree at each size, from this run's samples."""
    return "; ".join(
        f"{rows:,} rows {name} {min(s.wall for s in side):.2f}-{max(s.wall for s in side):.2f} s"
        for rows, samples in results.items()
        for name, side in samples.items()
    )


def instruction_table(counts: dict[int, dict[str, int]]) -> str:
    lines = [
        "| rows / run | reference G instructions | current G instructions | ratio | goal (≤ 1.05) |",
        "|---:|---:|---:|---:|---|",
    ]
    for rows, by_tree in counts.items():
        ratio = by_tree["current"] / by_tree["reference"]
        lines.append(
            f"| {rows:,} | {by_tree['reference'] / 1e9:.3f} | {by_tree['current'] / 1e9:.3f} | {ratio:.3f} "
            f"| {'met' if ratio <= GOAL else 'NOT met'} |"
        )
    return "Instructions executed (valgrind callgrind, all threads), one run per tree:\n\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ref", required=True, help="reference commit (e.g. the one RESULTS.md measured)")
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    parser.add_argument(
        "--instructions",
        type=int,
        nargs="*",
        default=[],
        metavar="ROWS",
        help="also count instructions with valgrind at these sizes (about 3 min per tree at 100k rows)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="also run the current CLI with its readers in its own process, as the reference read them",
    )
    args = parser.parse_args(argv)
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-regress-tree-") as tmp:
        ref_tree = checkout(args.ref, Path(tmp))
        try:
            trees = {"reference": ref_tree, "current": REPO}
            if args.in_process:
                trees["current" + IN_PROCESS_SUFFIX] = REPO
            for tree in trees.values():
                byte_compile(tree)
            results = {rows: measure(rows, trees, args.repeat) for rows in args.rows}
            counts = {rows: instructions(rows, trees) for rows in args.instructions}
        finally:
            remove_checkout(ref_tree)
    text = table(results, args.ref)
    if counts:
        text += "\n\n" + instruction_table(counts)
    print(text)
    if args.out is not None:
        args.out.write_text(record(text, args), encoding="utf-8")
    return 0


def record(text: str, args: argparse.Namespace) -> str:
    """The Markdown file --out writes: what was compared, when, on what, and the table."""
    head = _git("rev-parse", "--short", "HEAD")
    state = "clean" if not _git("status", "--porcelain") else "with uncommitted changes"
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = " ".join(str(r) for r in args.rows)
    sizes = " ".join(str(r) for r in args.instructions)
    extra = f" --instructions {sizes}" if sizes else ""
    lines = [
        "# Regression check against the reference commit",
        "",
        "Written by `bench/regress.py` (nothing edited by hand): fresh `python -m cli.main compare BASE "
        "TARGET --format json` processes of the reference commit and of the current tree, alternating, "
        f"{args.repeat} runs each per size, on the generated Ascend pairs of bench/gen_ascend.py.",
        "",
        f"- date: {when}",
        f"- current: {head}, {state}",
        f"- reference: {args.ref}",
        f"- command: `python bench/regress.py --ref {args.ref} --rows {rows} --repeat {args.repeat}{extra}`",
        "",
        text,
        "",
    ]
    return "\n".join(lines)


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=False)
    return done.stdout.strip()


if __name__ == "__main__":
    sys.exit(main())

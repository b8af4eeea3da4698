"""The benchmark in one command (`make bench`): profile comparison and MINDIR tables into bench/RESULTS.md.

1. Comparison (bench/bench_compare.py) on generated Ascend train/infer pairs of 100k, 1M and 3M kernel rows
   per run: Perf Doctor's `compare` end to end, `msprof-analyze compare` (installed into bench/.venv-msprof
   by the benchmark itself), and the floor (a bare pyarrow.csv.read_csv of the kernel_details files): wall
   time, CPU time, peak RSS and their ratios, with the goals (>= 10x faster than the peer, <= 3x the floor,
   no more peak memory than the peer, linear growth) marked met or not.
2. Where the time goes inside Perf Doctor: one run per size with each phase timed (read, compare, symptoms,
   ranking, report), read + compare printed beside the floor.
3. MINDIR (bench/bench_graph.py): ResNet-50 with its real weights and a synthetic 1M-node graph.
4. CANN msprof (bench/bench_msprof.py): reading a 1M-row op_summary against a bare pyarrow read of it
   (goal: within 2x).

The machine (CPU, cores, memory, load) is recorded with the tables. Pairs of 1M rows and more are deleted
afterwards (a 3M pair is ~7 GB) unless --keep-data is given; the disk is checked before generating.

    .venv/bin/python bench/run.py                       # everything, 5 runs each (3 of the peer; ~1 hour)
    .venv/bin/python bench/run.py --rows 100000 --skip-peer --skip-graph
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import bench_compare  # noqa: E402  (bench/ is not a package)
import bench_graph  # noqa: E402
import bench_msprof  # noqa: E402
from gen_ascend import DATA  # noqa: E402

RESULTS = HERE / "RESULTS.md"
CLUSTER_SECTION = (
    "## Every rank of a job"  # written by bench/cluster.py --write; kept when this rewrites the file
)
DEFAULT_ROWS = (100_000, 1_000_000, 3_000_000)
KEEP_BELOW = 1_000_000  # pairs smaller than this stay in bench/data/

PHASES = """
import json, sys, time
began = time.perf_counter()
from pathlib import Path
import doctor.facade as facade
from doctor.render import render
imported = time.perf_counter()
spent = {}

def timed(name, fn):
    def inner(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - start
    return inner

facade._read_all = timed("read", facade._read_all)  # both runs, read at once in two threads
facade.compare_sides = timed("compare", facade.compare_sides)
facade.analyze_pair = timed("symptoms", facade.analyze_pair)
facade.evaluate = timed("ranking", facade.evaluate)
start = time.perf_counter()
report = facade.diagnose(sys.argv[1], sys.argv[2])
Path(sys.argv[3]).write_text(render(report, "json"), encoding="utf-8")
total = time.perf_counter() - start
spent["import"] = imported - began
spent["report"] = total - sum(v for k, v in spent.items() if k != "import")
spent["total"] = time.perf_counter() - began
print(json.dumps(spent))
"""
PHASE_ORDER = ("import", "read", "compare", "symptoms", "ranking", "report", "total")


# ------------------------------------------------------------------------------------------- machine


def machine() -> dict[str, str]:
    """What the numbers were measured on."""
    info = {
        "date (UTC)": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "CPU": _cpu_model(),
        "cores": str(os.cpu_count()),
        "memory": f"{_mem_total_gib():.1f} GiB",
        "OS": f"{platform.system()} {platform.release()}",
        "Python": platform.python_version(),
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    info.update(_versions())
    info["code"] = code_state()
    return info


def code_state() -> str:
    """The commit measured, and whether the measured packages had uncommitted edits (the working tree is
    shared: an edit during the run would mix versions, so the state is recorded at the start and the end)."""
    git = ["git", "-C", str(REPO)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "--", "diagnosis", "doctor", "knowledge", "graph"],
        capture_output=True,
        text=True,
        check=False,
    )
    if head.returncode != 0:
        return "unknown (not a git checkout)"
    edits = len(dirty.stdout.splitlines())
    return f"{head.stdout.strip()}" + (f" with {edits} uncommitted file(s)" if edits else ", clean")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return float("nan")


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("pyarrow", "pandas", "numpy")}


# ---------------------------------------------------------------------------------------- the phases


def phases(rows: int) -> dict[str, float] | None:
    """One Perf Doctor run with each phase timed, in a fresh process."""
    pair = bench_compare.ensure_pair(rows)
    if pair is None:
        return None
    out = DATA / f"phases_{rows}.json"
    done = subprocess.run(
        [sys.executable, "-c", PHASES, str(pair.baseline), str(pair.target), str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    out.unlink(missing_ok=True)
    if done.returncode != 0:
        print(f"phase run failed: {done.stderr.strip()[-400:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def phase_table(timed: dict[int, dict[str, float]], results: list[bench_compare.Result]) -> str:
    floors = {r.rows: r.best("floor") for r in results}
    head = [
        "rows / run",
        *(f"{p} s" for p in PHASE_ORDER),
        "read + compare s",
        "floor s",
        "(read + compare) / floor",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for rows, spent in timed.items():
        both = spent["read"] + spent["compare"]
        floor = floors.get(rows)
        cells = [f"{rows:,}", *(f"{spent.get(p, 0.0):.2f}" for p in PHASE_ORDER), f"{both:.2f}"]
        cells += [f"{floor.wall:.2f}", f"{both / floor.wall:.2f}"] if floor else ["n/a", "n/a"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# -------------------------------------------------------------------------------------------- MINDIR


def graph_rows(repeat: int, sizes: list[int]) -> str:
    """bench_graph's table: ResNet-50 (real weights, and stripped) and synthetic graphs."""
    DATA.mkdir(parents=True, exist_ok=True)
    rows = [("ResNet-50 (real weights)", bench_graph.best_of(bench_graph.ensure_resnet50(), repeat))]
    stripped = bench_graph.FIXTURES / "resnet50_noweights.mindir"
    rows.append(("ResNet-50 (weights stripped)", bench_graph.best_of(stripped, repeat)))
    for nodes in sizes:
        rows.append(
            (f"synthetic {nodes:,}", bench_graph.best_of(bench_graph.ensure_synthetic(nodes), repeat))
        )
    return bench_graph.table(rows)


# ----------------------------------------------------------------------------------------- RESULTS.md


def write_results(
    info: dict[str, str],
    compare: str,
    goal_lines: list[str],
    phases_md: str,
    graph_md: str | None,
    args: argparse.Namespace,
    msprof_md: str | None = None,
) -> None:
    machine_md = "\n".join(f"| {k} | {v} |" for k, v in info.items())
    command = "make bench" if sys.argv[1:] == [] else "bench/run.py " + " ".join(sys.argv[1:])
    text = f"""# Benchmark results

Written by `{command}` (bench/run.py). Every number below is measured by it on the machine described here;
nothing is edited by hand. The machine is shared with other work, so each wall time is the best of
{args.repeat} runs ({args.peer_repeat} for msprof-analyze) and CPU time is given beside it.

## Machine

| item | value |
|---|---|
{machine_md}

## Profile comparison, end to end

Generated MindSpore 2.10 Ascend folders (bench/gen_ascend.py): a ResNet-50-like training run (baseline) and
inference run (target), each with the given number of kernel rows in a Level1 kernel_details.csv,
step_trace_time.csv and trace_view.json (which msprof-analyze requires). Each command is a fresh process;
wall and CPU time and peak RSS (ru_maxrss) are the child's own.

* ours: `perf-doctor compare BASELINE TARGET --format json -o report.json` (read, align, symptoms, ranking,
  JSON report);
* peer: `msprof-analyze compare -d TARGET -bp BASELINE -o DIR` ({bench_compare.PEER_PACKAGE}
  {bench_compare.PEER_VERSION} in its own virtual environment, bench/.venv-msprof; a run counts only if its
  xlsx has a KernelCompare sheet);
* floor: a bare `pyarrow.csv.read_csv` of the two kernel_details.csv files.

{compare}

Goals:

{chr(10).join(goal_lines)}

### Inside Perf Doctor

One run per size, each phase timed in the process (import: interpreter start to the facade loaded; read: both
runs read and prepared (forward kernels, per-operator aggregates) at once in two threads; compare: alignment
and the operator table; report: building and writing the JSON document). Read + compare is printed beside the
floor's best wall time.

{phases_md}

## MINDIR

{graph_md or "(skipped: --skip-graph)"}

## CANN msprof op_summary read

bench/bench_msprof.py: the CANN msprof reader on a 1M-row op_summary (the generated inference kernel_details
under CANN's column names, with a step_trace) against a bare `pyarrow.csv.read_csv` of it.

{msprof_md or "(skipped: --skip-msprof)"}
"""
    old = RESULTS.read_text(encoding="utf-8") if RESULTS.is_file() else ""
    kept = old[old.index(CLUSTER_SECTION) :] if CLUSTER_SECTION in old else ""  # bench/cluster.py's table
    RESULTS.write_text(text + ("\n" + kept if kept else ""), encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(REPO)}")


def cleanup(rows: list[int]) -> None:
    """Delete generated pairs of KEEP_BELOW rows and more (a 3M pair is ~7 GB)."""
    for n in rows:
        folder = DATA / f"ascend_{n}"
        if n >= KEEP_BELOW and folder.is_dir():
            shutil.rmtree(folder)
            print(f"deleted {folder.relative_to(REPO)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, nargs="+", default=list(DEFAULT_ROWS))
    parser.add_argument("--repeat", type=int, default=5, help="runs of ours and the floor per size (>= 3)")
    parser.add_argument("--peer-repeat", type=int, default=3, help="runs of msprof-analyze per size")
    parser.add_argument("--graph-sizes", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--skip-graph", action="store_true")
    parser.add_argument("--skip-msprof", action="store_true")
    parser.add_argument("--keep-data", action="store_true", help="keep generated pairs of 1M rows and more")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    info = machine()
    peer = None if args.skip_peer else bench_compare.peer_command()
    results = []
    timed = {}
    for rows in args.rows:
        result = bench_compare.bench(rows, args.repeat, args.peer_repeat, peer)
        if result is None:
            continue
        results.append(result)
        spent = phases(rows)
        if spent:
            timed[rows] = spent
        if not args.keep_data:
            cleanup([rows])
    compare_md = bench_compare.table(results)
    goal_lines = bench_compare.goals(results)
    phases_md = phase_table(timed, results)
    print(compare_md, "\n".join(goal_lines), phases_md, sep="\n\n")
    graph_md = None if args.skip_graph else graph_rows(args.repeat, args.graph_sizes)
    if graph_md:
        print(graph_md)
    msprof_md = None if args.skip_msprof else bench_msprof.table([bench_msprof.bench(1_000_000, args.repeat)])
    if msprof_md:
        print(msprof_md)
    info["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    info["code at end"] = code_state()
    info["benchmark duration"] = f"{(time.perf_counter() - began) / 60:.0f} min"
    (DATA / "bench_compare.json").write_text(json.dumps([r.to_json() for r in results], indent=1))
    write_results(info, compare_md, goal_lines, phases_md, graph_md, args, msprof_md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every rank of a job, side by side with msprof-analyze 26.2 `cluster`, on the same generated jobs.

Jobs are made by tests/fixtures/cluster/generate.py from the real torch_npu 2-rank capture in
../shared/samples/torch_npu_2rank/text/level1 (its ORIGIN.json in each job): N ranks of `*_ascend_pt`, each
with kernel_details.csv, step_trace_time.csv, communication.json and profiler_info_<r>.json, one rank (N // 3)
running its optimizer update on AI CPU (1.44x the others' computing; they wait for it in the all-reduce).

Per job size, each a fresh process, timed by this script:
- perf-doctor: `diagnose(None, JOB)` (every rank read, slow rank found, diagnosed against a typical rank,
  report built); wall time, peak RSS of the main process and of its whole process tree (summed);
- one rank: `diagnose(None, JOB, rank=0)`, for the scaling goal wall <= 1.3 x one rank x ranks / cores;
- floor: a fresh interpreter importing pandas and pyarrow, alone and then parsing two ranks'
  kernel_details.csv with pyarrow (the least a diagnosis of the slow rank against a typical one reads), best
  of 3: the peer's time over it bounds the speed-up any Python tool doing that work can reach;
- peer: `msprof-analyze cluster -d JOB -m all --export_type text` (bench/.venv-msprof, as bench_compare.py
  installs it), wall time and peak RSS. Its `slow_rank` recipe refuses text exports ("only supports DB as
  input data"), so the peer's slow rank is the rank with the most Computing in the
  cluster_step_trace_time.csv it writes (what its slow-rank advice reads).

    .venv/bin/python bench/cluster.py                        # 8 and 64 ranks x 100k kernels, 512 x 191
    .venv/bin/python bench/cluster.py --sizes 8 --kernels 20000 --skip-peer
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.fixtures.cluster.generate import Job, make_job  # noqa: E402

WORK = HERE / ".cluster-jobs"
SECTION = "## Every rank of a job"  # bench/run.py keeps this section when it rewrites RESULTS.md
PEER_VENV = HERE / ".venv-msprof"
DOCTOR_CODE = """
import json, resource, sys, time
from doctor import facade
if __name__ == "__main__":
    rank = None if sys.argv[2] == "all" else int(sys.argv[2])
    t = time.perf_counter()
    report = facade.diagnose(None, sys.argv[1], rank=rank, isolate=False, translate=False)
    wall = time.perf_counter() - t
    ranks = report.document.ranks
    slow = None
    if ranks is not None:
        slow = next((j.slow_rank.rank for j in ranks.jobs if j.slow_rank is not None), None)
    print(json.dumps({
        "wall_s": wall,
        "main_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "slow_rank": slow,
        "verdict": report.document.verdict.text,
    }))
"""

# The floor of any Python tool that diagnoses the slow rank against a typical one: the interpreter, pandas
# and pyarrow imported, and the two ranks' kernel_details.csv parsed by pyarrow (nothing analysed). With
# no file given, the interpreter and the imports alone.
FLOOR_CODE = """
import sys
import pandas
import pyarrow.csv
for path in sys.argv[1:]:
    pyarrow.csv.read_csv(path)
"""


@dataclass
class Row:
    """One job size measured."""

    ranks: int
    kernels: int
    doctor_s: float
    doctor_command_s: float
    doctor_rss_mb: float
    tree_rss_mb: float
    one_rank_s: float
    doctor_slow: int | None
    peer_s: float | None
    peer_rss_mb: float | None
    peer_slow: str
    expected_slow: int
    doctor_cpu_s: float
    peer_cpu_s: float | None
    imports_s: float  # interpreter + pandas + pyarrow imported
    floor_s: float  # ... and two ranks' kernel_details.csv parsed


def job_for(ranks: int, kernels: int | None) -> Path:
    """The generated job (kept between runs: generating 64 x 100k rows takes a while)."""
    job = Job(ranks=ranks, steps=1, seed=ranks, slow=ranks // 3, kernels=kernels)
    folder = WORK / f"r{ranks}_k{kernels or 191}"
    origin = folder / "ORIGIN.json"
    if not (origin.is_file() and json.loads(origin.read_text())["kernels"] == kernels):
        print(f"generating {ranks} ranks x {kernels or 191} kernels in {folder} ...", flush=True)
        make_job(folder, job)
    return folder


def run_measured(cmd: list[str], **kwargs: object) -> tuple[float, float, int, str, float]:
    """Run `cmd`; its wall time, the peak of the summed RSS (MB) of its whole process tree (pool workers and
    the forkserver included, sampled every 50 ms), its exit code, its stdout and the CPU seconds (user +
    system) of its tree (every descendant its parent reaped): on a shared machine the CPU time moves far
    less with the load than the wall time."""
    import resource

    import psutil

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, **kwargs)
    root, peak = psutil.Process(proc.pid), 0
    chunks: list[str] = []
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.05)
    chunks.append(proc.stdout.read() if proc.stdout else "")
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, peak / 2**20, proc.returncode, "".join(chunks), cpu


def run_doctor(job: Path, rank: str) -> dict:
    """One fresh process of Perf Doctor on the job (or one rank of it), with its tree's peak RSS and the
    whole command's wall time (interpreter start and imports included, as the peer's is measured)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-c", DOCTOR_CODE, str(job), rank]
    wall, peak, code, out, cpu = run_measured(cmd, cwd=REPO, env=env)
    if code != 0:
        raise SystemExit(f"perf-doctor failed on {job} ({code})")
    return {**json.loads(out.strip().splitlines()[-1]), "tree_rss_mb": peak, "command_s": wall, "cpu_s": cpu}


def run_peer(job: Path) -> tuple[float, float, str, float]:
    """msprof-analyze cluster -m all on the job: wall, peak RSS (MB), the slow rank it reports and the CPU
    seconds of its process tree."""
    exe = PEER_VENV / "bin" / "msprof-analyze"
    out = job / "cluster_analysis_output"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(exe), "cluster", "-d", str(job), "-m", "all", "--export_type", "text", "--force"]
    wall, peak, code, _, cpu = run_measured(cmd)
    slow = peer_slow_rank(out) if code == 0 else f"failed ({code})"
    shutil.rmtree(out, ignore_errors=True)  # Perf Doctor would read it otherwise
    return wall, peak, slow, cpu


def peer_slow_rank(out: Path) -> str:
    """The rank with the most computing per step in the peer's cluster_step_trace_time.csv."""
    path = out / "cluster_step_trace_time.csv"
    if not path.is_file():
        return "no cluster_step_trace_time.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Type"] == "rank"]
    by_rank: dict[int, list[float]] = {}
    for row in rows:
        by_rank.setdefault(int(row["Index"]), []).append(float(row["Computing"]))
    return str(max(by_rank, key=lambda r: sum(by_rank[r]) / len(by_rank[r])))


def run_floor(job: Path, files: int) -> float:
    """Wall seconds of FLOOR_CODE on `files` of the job's kernel_details.csv (the best of 3 fresh
    processes: a floor is what the machine allows at best)."""
    paths = [str(p) for p in sorted(job.rglob("kernel_details.csv"))[:files]]
    cmd = [sys.executable, "-c", FLOOR_CODE, *paths]
    return min(run_measured(cmd)[0] for _ in range(3))


def measure(ranks: int, kernels: int | None, skip_peer: bool) -> Row:
    job = job_for(ranks, kernels)
    imports, floor = run_floor(job, 0), run_floor(job, 2)
    whole = run_doctor(job, "all")
    one = run_doctor(job, "0")
    peer = (None, None, "skipped", None) if skip_peer else run_peer(job)
    print(
        f"{ranks} ranks: doctor {whole['wall_s']:.1f} s, one rank {one['wall_s']:.1f} s, peer {peer[0]}",
        flush=True,
    )
    print("  verdict:", whole["verdict"], flush=True)
    return Row(
        ranks,
        kernels or 191,
        whole["wall_s"],
        whole["command_s"],
        whole["main_rss_mb"],
        whole["tree_rss_mb"],
        one["wall_s"],
        whole["slow_rank"],
        peer[0],
        peer[1],
        peer[2],
        ranks // 3,
        whole["cpu_s"],
        peer[3],
        imports,
        floor,
    )


def table(rows: list[Row], cores: int) -> str:
    head = (
        "| ranks x kernels | Perf Doctor s (whole command s) | peak RSS main / whole tree MB | one rank s"
        " | goal 1.3 x one x ranks / cores | msprof-analyze cluster s | peak RSS MB"
        " | speed-up (whole command) | CPU s Perf Doctor / peer (ratio)"
        " | slow rank: injected / Perf Doctor / peer"
        " | floor s: imports / + two kernel files read | peer / floor |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        goal = 1.3 * r.one_rank_s * r.ranks / cores
        speed = f"{r.peer_s / r.doctor_s:.1f}x ({r.peer_s / r.doctor_command_s:.1f}x)" if r.peer_s else "-"
        peer_s = f"{r.peer_s:.1f}" if r.peer_s else "-"
        peer_rss = f"{r.peer_rss_mb:.0f}" if r.peer_rss_mb else "-"
        cpu = f"{r.doctor_cpu_s:.1f}"
        if r.peer_cpu_s:
            cpu += f" / {r.peer_cpu_s:.1f} ({r.peer_cpu_s / r.doctor_cpu_s:.1f}x)"
        lines.append(
            f"| {r.ranks} x {r.kernels} | {r.doctor_s:.1f} ({r.doctor_command_s:.1f}) | "
            f"{r.doctor_rss_mb:.0f} / {r.tree_rss_mb:.0f} | "
            f"{r.one_rank_s:.1f} | {goal:.1f} ({'met' if r.doctor_s <= goal else 'missed'}) | "
            f"{peer_s} | {peer_rss} | {speed} | {cpu} | {r.expected_slow} / {r.doctor_slow} / {r.peer_slow}"
            f" | {r.imports_s:.2f} / {r.floor_s:.2f} | {_floor_speed(r)} |"
        )
    return "\n".join(lines)


def _floor_speed(r: Row) -> str:
    """The peer's time over the floor: the most any Python tool reading the two ranks could be faster."""
    return f"{r.peer_s / r.floor_s:.1f}x" if r.peer_s else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 64, 512])
    parser.add_argument(
        "--kernels", type=int, default=100_000, help="kernels per rank below --big (default 100k)"
    )
    parser.add_argument("--big", type=int, default=512, help="from this many ranks on, the real 191 kernels")
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--write", action="store_true", help="put the table into bench/RESULTS.md")
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0))
    rows: list[Row] = []
    for n in args.sizes:  # the table so far after each size: a long run still leaves its finished rows
        rows.append(measure(n, None if n >= args.big else args.kernels, args.skip_peer))
        print(f"\n{cores} cores; load average {os.getloadavg()}\n\n{table(rows, cores)}\n", flush=True)
    if args.write:
        write_results(table(rows, cores), cores)
    return 0


def write_results(text: str, cores: int) -> None:
    """Put this run's table at the top of the section of bench/RESULTS.md this script owns (bench/run.py
    keeps the section), above the earlier runs, which stay as the section's history."""
    results = HERE / "RESULTS.md"
    old = results.read_text(encoding="utf-8")
    heading = f"{SECTION} (bench/cluster.py)"
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    command = " ".join(["bench/cluster.py", *sys.argv[1:]])
    run = f"**Run of {when}:** `{command}`, {cores} cores, load average {os.getloadavg()[0]:.1f}.\n\n{text}\n"
    if SECTION not in old:
        results.write_text(f"{old.rstrip()}\n\n{heading}\n\n{run}", encoding="utf-8")
        return
    start = old.index(SECTION)
    end = old.find("\n## ", start + len(SECTION))  # the sections after this one are kept
    end = end if end >= 0 else len(old)
    body = old[start:end].split("\n", 1)[1].strip("\n") if "\n" in old[start:end] else ""
    section = f"{heading}\n\n{run}\n{body}\n" if body else f"{heading}\n\n{run}"
    results.write_text(f"{old[:start]}{section}{old[end:]}", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())

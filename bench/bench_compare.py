"""End-to-end comparison benchmark: Perf Doctor's `compare` against `msprof-analyze compare` and the floor.

For a generated Ascend train/infer pair (bench/gen_ascend.py: Level1 kernel_details.csv, step_trace_time.csv,
trace_view.json) three commands are run, each as a fresh process:

* ours:  `perf-doctor compare BASE TARGET --format json -o report.json` (read both folders, align, symptoms,
         ranking, JSON report; the whole CLI, interpreter start and imports included);
* peer:  `msprof-analyze compare -d TARGET -bp BASE -o DIR` (msprof-analyze 26.2.0, installed by this script
         into its own virtual environment, bench/.venv-msprof, never a project dependency); a run counts
         only if it wrote its performance_comparison_result_*.xlsx (the tool exits 0 even on error);
* floor: a bare `pyarrow.csv.read_csv` of both kernel_details.csv files (interpreter start and the pyarrow
         import included, like the other two).

Each is measured with os.wait4 on the child: wall time (perf_counter around it), CPU time (user + system,
all threads, of the whole process tree: processes it left behind are reaped here as a subreaper) and
peak RSS (ru_maxrss of the child). The page cache is warmed and our packages byte-compiled (compile_ours)
first; the three commands alternate and the best wall time of `--repeat` runs is kept (the machine is
shared, so the best run is the least disturbed one); CPU time is the least of the runs and peak RSS the
largest.

    .venv/bin/python bench/bench_compare.py --rows 100000 1000000 [--repeat 5] [--peer-repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from gen_ascend import run_dir, write_run  # noqa: E402  (bench/ is not a package)

PEER_PACKAGE = "msprof-analyze"
PEER_VERSION = "26.2.0"
PEER_VENV = HERE / ".venv-msprof"
PAIR_BYTES_PER_ROW = 2_400  # a generated train + infer pair on disk (CSV + trace), measured at 1M rows
DISK_MARGIN = 2 << 30

FLOOR = """
import sys
import pyarrow.csv
for path, rows in zip(sys.argv[1::2], sys.argv[2::2]):
    table = pyarrow.csv.read_csv(path)
    assert table.num_rows == int(rows), (path, table.num_rows)
"""


# ------------------------------------------------------------------------------------------ processes


@dataclass
class Sample:
    """One child process: wall and CPU seconds, peak RSS (MiB), exit status and what it left."""

    wall: float
    cpu: float
    rss_mb: float
    status: int
    ok: bool = True
    note: str = ""


def run_child(cmd: list[str], log: Path, env: dict[str, str] | None = None, cwd: Path = REPO) -> Sample:
    """Run `cmd` to completion; its own rusage (not its siblings') comes from os.wait4. The CPU time is the
    whole tree's: a process the child started but never waited for (the CLI's warm reader and its forks)
    is handed to this process when the child ends (a subreaper), waited for, and counted."""
    subreaper = _become_subreaper()
    with open(log, "wb") as out:
        began = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - began
    orphans = _reap_orphans() if subreaper else 0.0
    child.returncode = os.waitstatus_to_exitcode(status)
    return Sample(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime + orphans,
        rss_mb=usage.ru_maxrss / 1024,
        status=child.returncode,
        ok=child.returncode == 0,
        note="" if child.returncode == 0 else f"exit {child.returncode}: {_tail(log)}",
    )


def _become_subreaper() -> bool:
    """Linux: orphaned descendants of this process's children are reparented to it (PR_SET_CHILD_SUBREAPER),
    so their CPU time can be counted; False where that is not available."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # 36: PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _reap_orphans() -> float:
    """Wait for every process left to this subreaper (they end when the child's channels close); their
    CPU seconds, user + system."""
    total = 0.0
    while True:
        try:
            _, _, usage = os.wait4(-1, 0)
        except ChildProcessError:
            return total
        total += usage.ru_utime + usage.ru_stime


def _tail(log: Path, lines: int = 3) -> str:
    text = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return " / ".join(text[-lines:])[-400:]


# -------------------------------------------------------------------------------------------- the peer


def peer_command() -> Path:
    """msprof-analyze in its own virtual environment, created and pinned here when missing."""
    exe = PEER_VENV / "bin" / "msprof-analyze"
    python = PEER_VENV / "bin" / "python"
    if exe.is_file() and _peer_version(python) == PEER_VERSION:
        return exe
    print(f"installing {PEER_PACKAGE}=={PEER_VERSION} into {PEER_VENV} ...", flush=True)
    began = time.perf_counter()
    subprocess.run([_base_python(), "-m", "venv", "--clear", str(PEER_VENV)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, f"{PEER_PACKAGE}=={PEER_VERSION}"], check=True)
    if _peer_version(python) != PEER_VERSION:
        raise SystemExit(f"{PEER_PACKAGE} {PEER_VERSION} did not install into {PEER_VENV}")
    print(f"installed in {time.perf_counter() - began:.0f} s", flush=True)
    return exe


def _peer_version(python: Path) -> str | None:
    if not python.is_file():
        return None
    code = f"import importlib.metadata as m; print(m.version({PEER_PACKAGE!r}))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def _base_python() -> str:
    """The interpreter behind this virtual environment (a venv made from a venv's python is fine too)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def peer_outcome(out_dir: Path, log: Path) -> tuple[bool, str]:
    """Whether msprof-analyze really compared: its xlsx exists with a KernelCompare sheet."""
    books = sorted(out_dir.glob("performance_comparison_result_*.xlsx"))
    if not books:
        errors = [line for line in _log_lines(log) if "ERROR" in line or "Traceback" in line]
        return False, "no performance_comparison_result_*.xlsx" + (f" ({errors[-1][:200]})" if errors else "")
    sheets = _sheet_names(books[-1])
    if "KernelCompare" not in sheets:
        return False, f"xlsx without KernelCompare (sheets: {', '.join(sheets)})"
    return True, "sheets: " + ", ".join(sheets)


def _log_lines(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8", errors="replace").splitlines()


def _sheet_names(book: Path) -> list[str]:
    with zipfile.ZipFile(book) as archive:
        workbook = archive.read("xl/workbook.xml").decode("utf-8")
    return re.findall(r'<sheet [^>]*name="([^"]+)"', workbook)


# --------------------------------------------------------------------------------------- the three runs


@dataclass
class Pair:
    """A generated train (baseline) / infer (target) pair."""

    rows: int
    baseline: Path
    target: Path

    def kernel_details(self) -> list[Path]:
        return [
            root / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv" for root in (self.baseline, self.target)
        ]

    def size_mb(self) -> dict[str, float]:
        out = {}
        for name in ("kernel_details.csv", "trace_view.json"):
            files = [root / "ASCEND_PROFILER_OUTPUT" / name for root in (self.baseline, self.target)]
            out[name] = sum(f.stat().st_size for f in files) / 2**20
        return out


def ensure_pair(rows: int) -> Pair | None:
    """The pair for `rows` kernel rows per run, generated when missing (None when the disk is too full)."""
    pair = Pair(rows, run_dir(rows, "train"), run_dir(rows, "infer"))
    missing = [root for root in (pair.baseline, pair.target) if not _complete(root)]
    if missing:
        need = rows * PAIR_BYTES_PER_ROW * len(missing) // 2 + DISK_MARGIN
        free = shutil.disk_usage(HERE.parent).free
        if free < need:
            print(f"skipping {rows:,} rows: {free / 2**30:.1f} GiB free, {need / 2**30:.1f} GiB needed")
            return None
        for root in missing:
            print(f"generating {root.relative_to(REPO)} ({rows:,} rows) ...", flush=True)
            write_run(root, "train" if root == pair.baseline else "infer", rows)
    return pair


def _complete(root: Path) -> bool:
    apo = root / "ASCEND_PROFILER_OUTPUT"
    trace = apo / "trace_view.json"
    return (apo / "kernel_details.csv").is_file() and trace.is_file() and _ends_list(trace)


def _ends_list(trace: Path) -> bool:
    """A trace cut short by an interrupted generator does not end with `]`."""
    with open(trace, "rb") as fh:
        fh.seek(max(0, trace.stat().st_size - 8))
        return fh.read().rstrip().endswith(b"]")


def warm(pair: Pair) -> None:
    """Read every file once so that no side pays for the disk."""
    for root in (pair.baseline, pair.target):
        for path in root.rglob("*"):
            if path.is_file():
                with open(path, "rb") as fh:
                    while fh.read(1 << 24):
                        pass


def compile_ours() -> None:
    """Byte-compile Perf Doctor's packages, as installing a wheel does: this checkout is an editable
    install, and with PYTHONDONTWRITEBYTECODE set (as on this machine) every run would otherwise compile
    the changed sources again (40-70 ms of the 100k-row run, measured with all of them uncompiled)."""
    packages = [str(REPO / name) for name in ("diagnosis", "doctor", "graph", "knowledge")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=True, capture_output=True)


def ours_command() -> list[str]:
    """The perf-doctor console script of this environment (else `python -m cli.main`)."""
    script = Path(sys.executable).with_name("perf-doctor")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "cli.main"]


def run_ours(pair: Pair, work: Path) -> Sample:
    report = work / "report.json"
    report.unlink(missing_ok=True)
    cmd = [*ours_command(), "compare", str(pair.baseline), str(pair.target), "--format", "json"]
    sample = run_child([*cmd, "-o", str(report)], work / "ours.log")
    if sample.ok:
        sample.ok, sample.note = _report_ok(report, pair.rows)
    return sample


def _report_ok(report: Path, rows: int) -> tuple[bool, str]:
    if not report.is_file():
        return False, "no report written"
    data = json.loads(report.read_text(encoding="utf-8"))
    launches = sum(run["kernel_launches"] for run in data["runs"])
    if data["kind"] != "pair" or launches != 2 * rows:
        return False, f"unexpected report: kind {data['kind']}, {launches} launches"
    return True, f"{data['operators']['total']} operators, {len(data['causes'])} causes"


def run_peer(pair: Pair, work: Path, exe: Path) -> Sample:
    out_dir = work / "peer"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir()
    cmd = [str(exe), "compare", "-d", str(pair.target), "-bp", str(pair.baseline), "-o", str(out_dir)]
    log = work / "peer.log"
    sample = run_child(cmd, log)
    if sample.status < 0:
        sample.ok, sample.note = False, f"killed by signal {-sample.status} (out of memory?)"
    elif sample.ok:
        sample.ok, sample.note = peer_outcome(out_dir, log)
    return sample


def run_floor(pair: Pair, work: Path) -> Sample:
    args = [str(a) for path in pair.kernel_details() for a in (path, pair.rows)]
    return run_child([sys.executable, "-c", FLOOR, *args], work / "floor.log")


# ------------------------------------------------------------------------------------------- results


@dataclass
class Result:
    """Best-of-N numbers of one size."""

    rows: int
    files_mb: dict[str, float]
    runs: dict[str, list[Sample]] = field(default_factory=dict)

    def best(self, who: str) -> Sample | None:
        """Least wall time of the good runs, least CPU, largest peak RSS; None when no run was good."""
        good = [s for s in self.runs.get(who, []) if s.ok]
        if not good:
            return None
        return Sample(
            wall=min(s.wall for s in good),
            cpu=min(s.cpu for s in good),
            rss_mb=max(s.rss_mb for s in good),
            status=0,
            note=good[-1].note,
        )

    def failure(self, who: str) -> str:
        bad = [s.note for s in self.runs.get(who, []) if not s.ok]
        return bad[-1] if bad else "not run"

    def cell(self, who: str) -> str:
        """What the table shows for a command without a good run."""
        return "failed" if self.runs.get(who) else "not run"

    def to_json(self) -> dict:
        return {
            "rows": self.rows,
            "files_mb": self.files_mb,
            "runs": {who: [vars(s) for s in samples] for who, samples in self.runs.items()},
        }


def bench(rows: int, repeat: int, peer_repeat: int, peer: Path | None) -> Result | None:
    """Alternate ours, floor and (up to `peer_repeat` times) the peer on one pair."""
    pair = ensure_pair(rows)
    if pair is None:
        return None
    warm(pair)
    compile_ours()
    result = Result(rows, pair.size_mb(), {"ours": [], "floor": [], "peer": []})
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        work = Path(tmp)
        for i in range(max(repeat, peer_repeat if peer else 0)):
            if i < repeat:
                _record(result, "ours", run_ours(pair, work))
                _record(result, "floor", run_floor(pair, work))
            if peer is not None and i < peer_repeat and _peer_worth_it(result):
                _record(result, "peer", run_peer(pair, work, peer))
    return result


def _record(result: Result, who: str, sample: Sample) -> None:
    result.runs[who].append(sample)
    state = "ok" if sample.ok else "FAILED"
    print(
        f"  {result.rows:>9,} {who:<5} {sample.wall:8.2f} s wall {sample.cpu:8.2f} s CPU "
        f"{sample.rss_mb:8.0f} MiB  {state} {sample.note}",
        flush=True,
    )


def _peer_worth_it(result: Result) -> bool:
    """A peer killed for memory is not run again on the same size."""
    return not any(s.status < 0 for s in result.runs["peer"])


# ---------------------------------------------------------------------------------------------- table

COLUMNS = (
    "rows / run",
    "ours s",
    "ours CPU s",
    "ours peak MiB",
    "peer s",
    "peer CPU s",
    "peer peak MiB",
    "floor s",
    "floor CPU s",
    "floor peak MiB",
    "peer / ours (time)",
    "ours / floor (time)",
    "ours / floor (CPU)",
    "ours / peer (memory)",
    "ours CPU µs / row",
)


def table(results: list[Result]) -> str:
    """The Markdown table of the measurements and ratios."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---:|" * len(COLUMNS)]
    for r in results:
        ours, peer, floor = r.best("ours"), r.best("peer"), r.best("floor")
        cells = [f"{r.rows:,}"]
        for who, s in (("ours", ours), ("peer", peer), ("floor", floor)):
            cells += [f"{s.wall:.2f}", f"{s.cpu:.2f}", f"{s.rss_mb:,.0f}"] if s else [r.cell(who), "", ""]
        cells += [
            _ratio(peer.wall if peer else None, ours.wall if ours else None),
            _ratio(ours.wall if ours else None, floor.wall if floor else None),
            _ratio(ours.cpu if ours else None, floor.cpu if floor else None),
            _ratio(ours.rss_mb if ours else None, peer.rss_mb if peer else None),
            f"{ours.cpu / (2 * r.rows) * 1e6:.2f}" if ours else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a is not None and b else "n/a"


def goals(results: list[Result]) -> list[str]:
    """Each goal of the benchmark, per size: met or not, with the number that decides it."""
    out = []
    for r in results:
        ours, peer, floor = r.best("ours"), r.best("peer"), r.best("floor")
        if ours is None:
            out.append(f"- {r.rows:,} rows: our run failed ({r.failure('ours')})")
            continue
        speed = (
            f"{peer.wall / ours.wall:.1f}x faster than the peer ({_met(peer.wall / ours.wall >= 10)})"
            if peer
            else f"peer {r.cell('peer')} ({r.failure('peer')})"
        )
        floor_part = (
            f"{ours.wall / floor.wall:.2f}x the floor ({_met(ours.wall / floor.wall <= 3)})"
            if floor
            else "n/a"
        )
        memory = (
            f"peak {ours.rss_mb:,.0f} MiB vs the peer's {peer.rss_mb:,.0f} MiB "
            f"({_met(ours.rss_mb <= peer.rss_mb)})"
            if peer
            else f"peak {ours.rss_mb:,.0f} MiB"
        )
        out.append(f"- {r.rows:,} rows: {speed}; {floor_part}; {memory}")
    out.append(linearity(results))
    return out


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def linearity(results: list[Result]) -> str:
    """CPU time per row at each size; judged between the two largest sizes, where start-up is negligible
    (linear: about constant; the smallest size pays the interpreter and imports on few rows)."""
    costs = [(r.rows, r.best("ours").cpu / (2 * r.rows) * 1e6) for r in results if r.best("ours")]
    if len(costs) < 2:
        return "- linear growth: needs two sizes"
    listing = ", ".join(f"{cost:.2f} µs at {rows:,}" for rows, cost in costs)
    (small, c_small), (large, c_large) = costs[-2], costs[-1]
    growth = c_large / c_small
    return (
        f"- linear growth: CPU per row {listing}; {large:,} vs {small:,} rows: {growth:.2f}x per row "
        f"({_met(growth <= 1.2)})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=5, help="runs of ours and the floor per size")
    parser.add_argument("--peer-repeat", type=int, default=3, help="runs of msprof-analyze per size")
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--json", type=Path, help="also write every sample here")
    args = parser.parse_args(argv)
    peer = None if args.skip_peer else peer_command()
    results = [r for rows in args.rows if (r := bench(rows, args.repeat, args.peer_repeat, peer))]
    print(table(results))
    print("\n".join(goals(results)))
    if args.json:
        args.json.write_text(json.dumps([r.to_json() for r in results], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Server memory of one large request, and ordinary users' latency while hostile uploads run.

The app runs in its own process (tests/bad_inputs/server.py: `python app.py` as it serves, default
settings: concurrency 2, queue 16) with a private temporary folder; its resident memory is read from
/proc (VmRSS now, VmHWM the peak since start; isolated children are separate processes, not counted).

    python bench/hostile_load.py memory BASELINE TARGET [--after AFTER]   # RSS before, peak, after
    python bench/hostile_load.py attack [--users 8] [--size 100000]
    python bench/hostile_load.py joinbomb [--runs 3]                         # issue 33: SQLite join bombs
    python bench/hostile_load.py graph --nodes 100000                        # issue 33: a big model's memory
    python bench/hostile_load.py graph-app --nodes 800000 [--budget N]       # the same, as the app runs it

`memory` uploads each folder's files except trace_view.json (larger than the app's 500 MB upload limit
for the big bench folders; the kernels come from kernel_details.csv). `attack` starts `--users` clients at
once, each uploading the bench pair bench/data/ascend_<size>/{train,infer} (make it with
bench/gen_ascend.py), while one attacker uploads the corpus's call-explosion MINDIR and issue 20's zip
bomb (about 15 MB holding a 1.9 GiB kernel_details.csv, built here); every ordinary report must equal the
in-process diagnosis of the same pair. `joinbomb` times a normal request (the Ascend Level1 fixture
pair) alone, then again while two SQLite join-bomb uploads (the corpus's sqlite_string_ids_repeated and
sqlite_tasks_share_global_task_id) start at the same moment from other clients; it prints a table and
the bytes the server's temporary folder and /var/tmp gained. Prints one JSON object (latencies in
seconds, memory in MiB).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gradio_client import handle_file  # noqa: E402
from gradio_client.exceptions import AppError  # noqa: E402

from doctor import diagnose  # noqa: E402
from tests.bad_inputs import generate  # noqa: E402
from tests.bad_inputs.server import Server, app_server, local_client  # noqa: E402

DATA = ROOT / "bench" / "data"
TIMEOUT_S = 900
BOMB_MEMBER_BYTES = 1900 * 2**20  # issue 20, item 2: a 1.9 GiB kernel_details.csv in a small zip


def status_mib(pid: int, key: str) -> float:
    """One memory line of /proc/<pid>/status (VmRSS, VmHWM) in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"{key} not found")


def upload_files(folder: Path, skip: tuple[str, ...] = ()) -> list[Any]:
    """A folder's files as the browser uploads them, minus names in `skip`."""
    return [handle_file(str(p)) for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in skip]


def compare_job(server: Server, baseline: list[Any], target: list[Any], after: Any = None) -> Any:
    """Submit one Compare request (with an after-the-fix run when `after` is given) from a new client."""
    return local_client(server.url).submit(baseline, target, None, None, "auto", after, api_name="/diagnose")


def same_report(report: dict[str, Any], expected: dict[str, Any]) -> bool:
    """The app's report says what the in-process diagnosis says (causes, timing)."""
    causes = [c["id"] for c in report["causes"]] == [c["id"] for c in expected["causes"]]
    timing = json.dumps(report["timing"], sort_keys=True) == json.dumps(expected["timing"], sort_keys=True)
    return causes and timing


def memory(baseline: Path, target: Path, after: Path | None = None) -> dict[str, Any]:
    """RSS of a fresh server before, at the peak of and after one pair diagnosis (plus an after run)."""
    with (
        tempfile.TemporaryDirectory(prefix="perf-doctor-bench-") as scratch,
        app_server(Path(scratch)) as server,
    ):
        pid = server.process.pid
        idle = local_client(server.url).predict(handle_file(str(generate.MODEL)), api_name="/inspect_model")
        assert idle[0]["kind"] == "mindir"  # warm: every module the analysis imports is loaded
        before, started = status_mib(pid, "VmRSS"), time.monotonic()
        sides = (baseline, target) if after is None else (baseline, target, after)
        files = [upload_files(side, ("trace_view.json",)) for side in sides]
        report = compare_job(server, *files).result(timeout=TIMEOUT_S)[0]
        elapsed = time.monotonic() - started
        time.sleep(2)
        return {
            "pair": [str(side) for side in sides],
            "kernel_details_mib": [
                round(next(side.rglob("kernel_details.csv")).stat().st_size / 2**20) for side in sides
            ],
            "after_section": report.get("after") is not None,
            "seconds": round(elapsed, 1),
            "kind": report["kind"],
            "rss_before_mib": round(before),
            "rss_peak_mib": round(status_mib(pid, "VmHWM")),
            "rss_after_mib": round(status_mib(pid, "VmRSS")),
        }


def issue_zip_bomb(run: Path, path: Path) -> Path:
    """A zip of `run` whose kernel_details.csv repeats its first 4 rows up to 1.9 GiB (deflate level 1
    compresses that about 135:1, under the ratio budget of 200: a 15 MB zip, as in issue 20)."""
    table = next(run.rglob("kernel_details.csv"))
    with table.open("rb") as fh:
        lines = [fh.readline() for _ in range(5)]
    name = table.relative_to(run.parent).as_posix()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for other in sorted(run.rglob("*")):
            if other.is_file() and other.name not in ("kernel_details.csv", "trace_view.json"):
                archive.write(other, other.relative_to(run.parent).as_posix())
        with archive.open(name, "w", force_zip64=True) as out:
            for chunk in generate._repeated_rows(lines[0], b"".join(lines[1:]), BOMB_MEMBER_BYTES):
                out.write(chunk)
    return path


def attack(users: int, size: int, data: Path = DATA) -> dict[str, Any]:
    """`users` ordinary pair diagnoses at once while two hostile uploads run."""
    pair = data / f"ascend_{size}"
    expected = diagnose(pair / "train", pair / "infer", isolate=False).to_dict()
    scratch = Path(tempfile.mkdtemp(prefix="perf-doctor-bench-"))
    bomb = issue_zip_bomb(pair / "train", scratch / "kernel_details_1.9GiB.zip")
    bomb_label = f"{bomb.stat().st_size / 1e6:.1f} MB zip bomb"
    results: list[tuple[float, bool, str]] = []
    hostile: dict[str, str] = {}
    lock = threading.Lock()
    with app_server(scratch / "server") as server:
        pid = server.process.pid
        before = status_mib(pid, "VmRSS")
        files = [upload_files(pair / "train"), upload_files(pair / "infer")]

        def user() -> None:
            started = time.monotonic()
            try:
                report = compare_job(server, *files).result(timeout=TIMEOUT_S)[0]
                ok, note = same_report(report, expected), ""
            except AppError as error:
                ok, note = False, str(error)[:200]
            with lock:
                results.append((time.monotonic() - started, ok, note))

        def attacker(name: str, job: Any) -> None:
            try:
                job.result(timeout=TIMEOUT_S)
                hostile[name] = "report (not refused)"
            except AppError as error:
                hostile[name] = str(error)[:160]

        client = local_client(server.url)
        explosion = generate.CORPUS / "mindir_call_explosion.mindir"
        threads = [
            threading.Thread(
                target=attacker,
                args=(
                    "call explosion",
                    client.submit(handle_file(str(explosion)), api_name="/inspect_model"),
                ),
            ),
            threading.Thread(
                target=attacker,
                args=(bomb_label, compare_job(server, files[0], [handle_file(str(bomb))])),
            ),
        ]
        started = time.monotonic()
        threads += [threading.Thread(target=user) for _ in range(users)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.monotonic() - started
        peak, after = status_mib(pid, "VmHWM"), status_mib(pid, "VmRSS")
        alive = server.alive()
    shutil.rmtree(scratch, ignore_errors=True)
    latencies = sorted(r[0] for r in results)
    return {
        "users": users,
        "pair": str(pair),
        "correct_reports": sum(1 for r in results if r[1]),
        "failures": [r[2] for r in results if not r[1]],
        "hostile": hostile,
        "wall_s": round(wall, 1),
        "latency_p50_s": round(statistics.median(latencies), 1),
        "latency_p95_s": round(latencies[max(0, round(0.95 * len(latencies)) - 1)], 1),
        "latency_max_s": round(latencies[-1], 1),
        "rss_before_mib": round(before),
        "rss_peak_mib": round(peak),
        "rss_after_mib": round(after),
        "server_alive": alive,
    }


JOIN_BOMBS = ("sqlite_string_ids_repeated", "sqlite_tasks_share_global_task_id")
NORMAL_PAIR = (generate.ASCEND / "level1" / "train", generate.ASCEND / "level1" / "infer")


def folder_bytes(folder: Path) -> int:
    """Bytes of the regular files below `folder` that this process may read (0 when it is gone)."""
    total = 0
    for path in folder.rglob("*") if folder.is_dir() else ():
        try:
            total += path.stat().st_size if path.is_file() else 0
        except OSError:
            continue
    return total


def timed(job: Any) -> tuple[float, str]:
    """Wait for a submitted job: (seconds from now, "report" or the error's first 120 characters)."""
    started = time.monotonic()
    try:
        job.result(timeout=TIMEOUT_S)
        outcome = "report"
    except AppError as error:
        outcome = str(error)[:120]
    return time.monotonic() - started, outcome


def joinbomb(runs: int) -> dict[str, Any]:
    """A normal request's latency alone and under two join-bomb uploads started at the same moment."""
    normal = [upload_files(side) for side in NORMAL_PAIR]
    bombs = [generate.CORPUS / f"{name}.zip" for name in JOIN_BOMBS]
    alone: list[float] = []
    attacked: list[float] = []
    hostile: list[tuple[str, float, str]] = []
    var_tmp = Path("/var/tmp")
    with (
        tempfile.TemporaryDirectory(prefix="perf-doctor-bench-") as scratch,
        app_server(Path(scratch)) as server,
    ):
        client = local_client(server.url)
        timed(compare_job(server, *normal))  # warm-up: every module loaded
        var_before = folder_bytes(var_tmp)
        for _ in range(runs):
            started = time.monotonic()
            timed(compare_job(server, *normal))
            alone.append(time.monotonic() - started)
        for _ in range(runs):
            jobs = [client.submit(normal[0], [handle_file(str(b))], None, None, "auto", api_name="/diagnose")
                    for b in bombs]  # fmt: skip
            started = time.monotonic()  # the two bombs and the normal request start at the same moment
            timed(compare_job(server, *normal))
            attacked.append(time.monotonic() - started)
            for bomb, job in zip(bombs, jobs, strict=True):
                _, outcome = timed(job)
                hostile.append((bomb.stem, round(time.monotonic() - started, 1), outcome))
        gained = {"server_tmp": folder_bytes(server.temp), "var_tmp": folder_bytes(var_tmp) - var_before}
        alive = server.alive()
    ratio = statistics.median(attacked) / statistics.median(alone)
    return {
        "normal_pair": [str(side.relative_to(ROOT)) for side in NORMAL_PAIR],
        "runs": runs,
        "alone_s": [round(x, 2) for x in alone],
        "under_two_join_bombs_s": [round(x, 2) for x in attacked],
        "median_ratio": round(ratio, 2),
        "within_2x": ratio <= 2.0,
        "hostile": [
            {"upload": name, "answered_within_s": s, "answer": answer} for name, s, answer in hostile
        ],
        "bytes_gained": gained,
        "server_alive": alive,
    }


def joinbomb_table(result: dict[str, Any]) -> str:
    """The joinbomb measurement as a Markdown table."""
    rows = ["| run | alone (s) | under two join bombs (s) |", "|---|---|---|"]
    for index, (alone, attacked) in enumerate(
        zip(result["alone_s"], result["under_two_join_bombs_s"], strict=True)
    ):
        rows.append(f"| {index + 1} | {alone:.2f} | {attacked:.2f} |")
    rows.append(f"| median ratio | | {result['median_ratio']:.2f} (within 2x: {result['within_2x']}) |")
    return "\n".join(rows)


def graph_memory(nodes: int) -> dict[str, Any]:
    """RSS of this (fresh) process around one isolated inspect_model of a chain of `nodes` Add nodes
    (generate.write_huge_model): before, peak, and after the request with no collection of ours."""
    from doctor import inspect_model

    self_pid = os.getpid()
    with tempfile.TemporaryDirectory(prefix="perf-doctor-bench-") as scratch:
        path = generate.write_huge_model(Path(scratch) / f"chain_{nodes}.mindir", nodes)
        inspect_model(generate.MODEL, translate=False)  # warm: every module the request imports
        before, started = status_mib(self_pid, "VmRSS"), time.monotonic()
        inspect_model(path, translate=False)
        elapsed = time.monotonic() - started
        return {
            "nodes": nodes,
            "file_mb": round(path.stat().st_size / 1e6, 1),
            "seconds": round(elapsed, 1),
            "rss_before_mib": round(before),
            "rss_peak_mib": round(status_mib(self_pid, "VmHWM")),
            "rss_after_mib": round(status_mib(self_pid, "VmRSS")),
        }


class ChildPeaks:
    """Samples the peak resident memory (VmHWM) of every process below `pid` every `every_s` seconds, so
    the isolated children the server starts are measured too (VmHWM only grows: the last sample of a
    child before it ends is its peak, less what it gained in its last `every_s`)."""

    def __init__(self, pid: int, every_s: float = 0.05) -> None:
        self.pid, self.every_s = pid, every_s
        self.peaks: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> ChildPeaks:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            for child in descendants(self.pid):
                try:
                    self.peaks[child] = max(self.peaks.get(child, 0.0), status_mib(child, "VmHWM"))
                except (OSError, RuntimeError):  # ended between the listing and the read
                    continue

    @property
    def largest(self) -> float:
        """The largest peak of one child seen (MiB), 0 when none ran."""
        return max(self.peaks.values(), default=0.0)


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (children, grandchildren ...), from /proc."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                continue
            found += kids
            todo += kids
    return found


def graph_app_memory(nodes: int, budget: int | None) -> dict[str, Any]:
    """One Inspect request of a chain of `nodes` Add nodes through the app, as it serves (the model
    decoded in the isolated child, the graph analysed in the server): the server's RSS before, at its
    peak and after, and the isolated child's peak."""
    env = {"PERF_DOCTOR_MAX_GRAPH_NODES": str(budget)} if budget else None
    with tempfile.TemporaryDirectory(prefix="perf-doctor-bench-") as scratch:
        path = generate.write_huge_model(Path(scratch) / f"chain_{nodes}.mindir", nodes)
        with app_server(Path(scratch) / "server", env) as server:
            pid = server.process.pid
            client = local_client(server.url)
            client.predict(handle_file(str(generate.MODEL)), api_name="/inspect")  # warm
            before, started = status_mib(pid, "VmRSS"), time.monotonic()
            with ChildPeaks(pid) as children:
                _, outcome = timed(client.submit(handle_file(str(path)), api_name="/inspect"))
            elapsed = time.monotonic() - started
            time.sleep(2)
            return {
                "nodes": nodes,
                "node_budget": budget or "default",
                "file_mb": round(path.stat().st_size / 1e6, 1),
                "answer": outcome,
                "seconds": round(elapsed, 1),
                "server_rss_before_mib": round(before),
                "server_rss_peak_mib": round(status_mib(pid, "VmHWM")),
                "server_rss_after_mib": round(status_mib(pid, "VmRSS")),
                "child_peak_mib": round(children.largest),
            }


def graph_app_table(result: dict[str, Any]) -> str:
    """The graph-app measurement as one Markdown table row under its header."""
    keys = ("nodes", "node_budget", "file_mb", "answer", "seconds", "server_rss_before_mib",
            "server_rss_peak_mib", "server_rss_after_mib", "child_peak_mib")  # fmt: skip
    return "\n".join(
        [
            "| " + " | ".join(keys) + " |",
            "|" + "---|" * len(keys),
            "| " + " | ".join(str(result[k]) for k in keys) + " |",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Run one measurement and print it as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("memory")
    one.add_argument("baseline", type=Path)
    one.add_argument("target", type=Path)
    one.add_argument("--after", type=Path, help="a third folder, uploaded as the after-the-fix run")
    many = commands.add_parser("attack")
    many.add_argument("--users", type=int, default=8)
    many.add_argument("--size", type=int, default=100_000)
    many.add_argument("--data", type=Path, default=DATA, help="folder of the ascend_<size> pairs")
    bombs = commands.add_parser("joinbomb")
    bombs.add_argument("--runs", type=int, default=3, help="timed requests alone and under attack")
    big = commands.add_parser("graph")
    big.add_argument("--nodes", type=int, default=100_000)
    app_graph = commands.add_parser("graph-app")
    app_graph.add_argument("--nodes", type=int, default=800_000)
    app_graph.add_argument("--budget", type=int, help="PERF_DOCTOR_MAX_GRAPH_NODES of the server")
    args = parser.parse_args(argv)
    if args.command == "graph-app":
        result = graph_app_memory(args.nodes, args.budget)
        print(graph_app_table(result), file=sys.stderr)
    elif args.command == "graph":
        result = graph_memory(args.nodes)
    elif args.command == "joinbomb":
        result = joinbomb(args.runs)
        print(joinbomb_table(result), file=sys.stderr)
    elif args.command == "memory":
        after = args.after.resolve() if args.after else None
        result = memory(args.baseline.resolve(), args.target.resolve(), after)
    else:
        result = attack(args.users, args.size, args.data)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Load: concurrent users of the app through gradio_client, on 127.0.0.1 only, bounded in count and time.

Eight users each diagnose their own pair of real CPU profiles (different scenarios, so every report is
different) three times over, at the same time; each checks that every answer is its own report. Then a
server with a queue of two is flooded: the requests that do not fit are told the queue is full, the
others get their reports. Throughput and latency are printed (run with -s) for the release notes.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client, handle_file
from gradio_client.utils import QueueError

from doctor import diagnose
from tests.bad_inputs.server import Server, app_server, local_client
from tests.support.inputs import CPU, files_of

pytestmark = pytest.mark.slow

PAIRS = [
    ("train_amp_o2_graph", "infer_fp32_graph"),
    ("train_fp32_graph", "infer_fp32_graph_batch32"),
    ("train_fp32_graph", "infer_trainmode_graph"),
    ("train_fp32_pynative", "infer_fp32_pynative"),
    ("train_fp32_graph", "infer_fp32_graph_nowarmup"),
    ("train_fp32_graph", "infer_fp32_graph_dynamic_shapes"),
    ("train_fp32_graph", "infer_fp32_graph_contention"),
    ("train_amp_o2_graph", "infer_amp_o2_graph"),
]
ROUNDS = 3
FLOOD = 16
TIMEOUT_S = 300


@dataclass
class User:
    """One simulated user: the pair it uploads, the report it must get back, its latencies."""

    baseline: Path
    target_zip: Path
    expected: dict[str, Any]
    latencies: list[float] = field(default_factory=list)
    reports: list[dict[str, Any]] = field(default_factory=list)


def fingerprint(report: dict[str, Any]) -> str:
    """What makes a report this pair's: inputs, cause ranking, timing and operator count."""
    keep = {
        "inputs": [(i["role"], i["name"]) for i in report["inputs"]],
        "causes": [(c["id"], c["rank"]) for c in report["causes"]],
        "timing": report["timing"],
        "operators": report["operators"]["total"],
    }
    return json.dumps(keep, sort_keys=True)


def _zip_folder(folder: Path, path: Path) -> Path:
    """A zip of a profile folder, so that each user's target has its own name in the report."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            archive.write(file, f"{folder.name}/{file.relative_to(folder)}")
    return path


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> list[User]:
    """The eight users; each expected report is computed in-process from the same files."""
    folder = tmp_path_factory.mktemp("uploads")
    made = []
    for baseline, target in PAIRS:
        archive = _zip_folder(CPU / target, folder / f"{target}.zip")
        expected = diagnose(files_of(CPU / baseline), archive).to_dict()  # uploaded as the app gets them
        made.append(User(CPU / baseline, archive, json.loads(fingerprint(expected))))
    assert len({json.dumps(u.expected, sort_keys=True) for u in made}) == len(PAIRS), "reports must differ"
    return made


def _submit(client: Client, user: User) -> Any:
    """One compare job: the baseline folder's files and the target archive."""
    baseline = [handle_file(p) for p in files_of(user.baseline)]
    return client.submit(
        baseline, [handle_file(str(user.target_zip))], None, None, "auto", api_name="/diagnose"
    )


def _session(server: Server, user: User, start: threading.Barrier) -> None:
    """A user connects, waits for everyone, then diagnoses its pair ROUNDS times in a row."""
    client = local_client(server.url)
    start.wait(timeout=TIMEOUT_S)
    for _ in range(ROUNDS):
        began = time.perf_counter()
        user.reports.append(_submit(client, user).result(timeout=TIMEOUT_S)[0])
        user.latencies.append(time.perf_counter() - began)


def _percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (`share` in [0, 1])."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _alone(server: Server, user: User) -> float:
    """The latency of one request on an idle server (the second of two: the first warms it up)."""
    client = local_client(server.url)
    for _ in range(2):
        began = time.perf_counter()
        report = _submit(client, user).result(timeout=TIMEOUT_S)[0]
        assert json.loads(fingerprint(report)) == user.expected
    return time.perf_counter() - began


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The app with its default concurrency (2) and a queue large enough for everyone."""
    env = {"PERF_DOCTOR_CONCURRENCY": "2", "PERF_DOCTOR_QUEUE_SIZE": "64"}
    with app_server(tmp_path_factory.mktemp("load"), env) as running:
        yield running


def test_eight_concurrent_users_each_get_their_own_report(server: Server, users: list[User]) -> None:
    alone = _alone(server, users[0])
    start = threading.Barrier(len(users) + 1)
    with ThreadPoolExecutor(len(users)) as pool:
        sessions = [pool.submit(_session, server, user, start) for user in users]
        start.wait(timeout=TIMEOUT_S)
        began = time.perf_counter()
        for session in sessions:
            session.result(timeout=TIMEOUT_S)
        wall = time.perf_counter() - began
    for user in users:
        assert len(user.reports) == ROUNDS, "no request may be lost"
        for report in user.reports:
            assert json.loads(fingerprint(report)) == user.expected, f"cross-talk for {user.target_zip.name}"
    latencies = [value for user in users for value in user.latencies]
    print(
        f"\nload: {len(latencies)} diagnoses by {len(users)} users in {wall:.1f} s = "
        f"{len(latencies) / wall:.2f}/s; latency p50 {statistics.median(latencies):.2f} s, "
        f"p95 {_percentile(latencies, 0.95):.2f} s, max {max(latencies):.2f} s; "
        f"one request alone {alone:.2f} s"
    )
    assert server.alive()


def test_a_flood_beyond_the_queue_is_told_the_queue_is_full(
    tmp_path_factory: pytest.TempPathFactory, users: list[User]
) -> None:
    env = {"PERF_DOCTOR_CONCURRENCY": "1", "PERF_DOCTOR_QUEUE_SIZE": "2"}
    with app_server(tmp_path_factory.mktemp("flood"), env) as server:
        clients = [local_client(server.url) for _ in range(FLOOD)]
        picks = [users[index % len(users)] for index in range(FLOOD)]
        with ThreadPoolExecutor(FLOOD) as pool:
            jobs = list(pool.map(_submit, clients, picks))
        served, refused = 0, []
        for job, user in zip(jobs, picks, strict=True):
            try:
                report = job.result(timeout=TIMEOUT_S)[0]
            except QueueError as error:
                refused.append(str(error))
                continue
            assert json.loads(fingerprint(report)) == user.expected
            served += 1
        print(f"\nflood: {FLOOD} at once, queue 2, concurrency 1: {served} served, {len(refused)} told busy")
        assert refused, "the flood must overflow a queue of two"
        assert all(message == "Queue is full! Please try again." for message in refused)
        assert served + len(refused) == FLOOD and served >= 1
        assert server.alive()

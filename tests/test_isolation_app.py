"""A hostile upload cannot take the app down for other users.

The app runs in its own process with a 300 MB isolation limit; a model that needs more and a zip bomb
are submitted through gradio_client at the same time as another user's ordinary diagnosis. The ordinary
one completes with the right report, the hostile ones get one clear error each, the server's own memory
does not grow by the model, and the server still answers afterwards.
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

from doctor import diagnose
from tests.bad_inputs import generate
from tests.bad_inputs.server import Server, app_server, local_client
from tests.support.inputs import CPU, files_of

pytestmark = pytest.mark.slow

MEMORY_MB = 300
TIMEOUT_S = 180


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The app in its own process with a low isolation memory limit."""
    env = {"PERF_DOCTOR_ISOLATION_MEMORY_MB": str(MEMORY_MB), "PERF_DOCTOR_CONCURRENCY": "2"}
    with app_server(tmp_path_factory.mktemp("hostile"), env) as running:
        yield running


def _client(server: Server) -> Client:
    return local_client(server.url)


def _pair(client: Client, baseline: Path, target: Path | list[str]) -> object:
    """Submit a compare job: folders are uploaded as their files, an archive as itself."""
    targets = files_of(target) if isinstance(target, Path) and target.is_dir() else [str(target)]
    return client.submit(
        [handle_file(p) for p in files_of(baseline)],
        [handle_file(p) for p in targets],
        None,
        None,
        "auto",
        api_name="/diagnose",
    )


def _error_of(job: object) -> str:
    """The one-line error a job ends with (it must end with one)."""
    with pytest.raises(AppError) as caught:
        job.result(timeout=TIMEOUT_S)  # type: ignore[attr-defined]
    return html.unescape(str(caught.value))


def test_hostile_uploads_do_not_disturb_another_users_diagnosis(server: Server, tmp_path: Path) -> None:
    huge = generate.write_huge_model(tmp_path / "huge.mindir")
    expected = diagnose(CPU / "train_fp32_graph", CPU / "infer_fp32_graph_batch32", isolate=False)
    memory_before = server.peak_memory_kib()

    attacker, victim = _client(server), _client(server)
    model_job = attacker.submit(handle_file(str(huge)), api_name="/inspect_model")
    bomb_job = _pair(attacker, CPU / "train_fp32_graph", generate.CORPUS / "zip_bomb.zip")
    normal_job = _pair(victim, CPU / "train_fp32_graph", CPU / "infer_fp32_graph_batch32")

    report = normal_job.result(timeout=TIMEOUT_S)[0]
    assert [c["id"] for c in report["causes"]] == [c["id"] for c in expected.data["causes"]]
    assert json.dumps(report["timing"], sort_keys=True) == json.dumps(
        expected.to_dict()["timing"], sort_keys=True
    )
    model_error = _error_of(model_job)
    assert re.search(rf"huge\.mindir: the model could not be decoded.*\b{MEMORY_MB} MB", model_error)
    assert "expands more than 200:1" in _error_of(bomb_job)

    assert server.alive()
    grown_mib = (server.peak_memory_kib() - memory_before) / 1024
    assert grown_mib < MEMORY_MB / 2, f"the server grew by {grown_mib:.0f} MiB: the model was decoded in it"
    again = _client(server).predict(handle_file(str(generate.MODEL)), api_name="/inspect_model")
    assert again[0]["kind"] == "mindir"


def _children(pid: int) -> list[int]:
    """The process ids of a process's direct children (Linux /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def test_cancelling_a_request_kills_its_isolated_decoder(server: Server) -> None:
    """The call explosion keeps its decoder busy for many seconds; cancelling the job ends the child at
    once, the server does not wait for it and still answers."""
    model = generate.CORPUS / "mindir_call_explosion.mindir"
    resident = set(_children(server.process.pid))  # the warm profile reader (sandbox.isolation._zygote)
    job = _client(server).submit(handle_file(str(model)), api_name="/inspect_model")
    deadline = time.monotonic() + 60
    while not set(_children(server.process.pid)) - resident and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(_children(server.process.pid)) - resident, "the isolated decoder never started"
    cancelled = time.monotonic()
    job.cancel()
    while set(_children(server.process.pid)) - resident and time.monotonic() - cancelled < 20:
        time.sleep(0.1)
    assert set(_children(server.process.pid)) - resident == set()
    assert time.monotonic() - cancelled < 10
    assert server.alive()


def test_a_profile_over_the_readers_memory_does_not_disturb_another_user(
    server: Server, tmp_path: Path
) -> None:
    """Issue 33: the CSV readers run in the isolated child too. A 60 MiB kernel_details.csv of real rows
    (under the upload budgets) needs more than the child's 300 MB: that upload gets one line naming the
    file while another user's diagnosis, submitted at the same moment, completes correctly."""
    hostile = generate.write_oversized_profile(tmp_path, "csv", 60)
    expected = diagnose(CPU / "train_fp32_graph", CPU / "infer_fp32_graph_batch32", isolate=False)
    attacker, victim = _client(server), _client(server)
    hostile_job = _pair(attacker, generate.ASCEND / "level1" / "infer", hostile)
    normal_job = _pair(victim, CPU / "train_fp32_graph", CPU / "infer_fp32_graph_batch32")

    report = normal_job.result(timeout=TIMEOUT_S)[0]  # /diagnose: the report document, then its files
    assert [c["id"] for c in report["causes"]] == [c["id"] for c in expected.data["causes"]]
    error = _error_of(hostile_job)
    assert re.search(rf"kernel_details\.csv: the profile could not be read.*\b{MEMORY_MB} MB", error), error
    assert server.alive()

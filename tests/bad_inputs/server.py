"""The web app in a process of its own on 127.0.0.1, for the hostile-input, load and privacy tests.

A separate process gives each test a private temporary folder (TMPDIR, so Gradio's upload cache and our
workspaces land there and nowhere shared), its own environment (isolation limits, queue size, case
store) and a server whose memory can be measured apart from the test's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import huggingface_hub.constants
from gradio_client import Client

from tests.support.inputs import ROOT, free_port

START_TIMEOUT_S = 90
# The app as `python app.py` builds and serves it (settings from the environment, cleanup on SIGTERM),
# on a given loopback port.
SCRIPT = """
import sys
from app import build_demo, serve
from doctor.config import AppConfig
config = AppConfig.from_env()
demo = build_demo(config)
sys.exit(serve(demo, config, server_name="127.0.0.1", server_port=int(sys.argv[1]), quiet=True))
"""
_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy


def local_client(url: str) -> Client:
    """A gradio_client Client that talks to `url` only. Creating a Client otherwise makes huggingface_hub
    fetch an "agent harnesses" list from huggingface.co (once per process, cached for a day), so the
    hub is switched to offline mode in this process, as HF_HUB_OFFLINE=1 would do before its import."""
    huggingface_hub.constants.HF_HUB_OFFLINE = True
    return Client(url, verbose=False, analytics_enabled=False)


@dataclass
class Server:
    """A running app: its URL, process, private temporary folder and log file."""

    url: str
    process: subprocess.Popen[bytes]
    temp: Path
    log: Path

    def peak_memory_kib(self) -> int:
        """The server process's peak resident memory (VmHWM), not counting its children."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise RuntimeError("VmHWM not found")

    def alive(self) -> bool:
        """The process runs and the page answers."""
        return self.process.poll() is None and _answers(self.url)


@contextmanager
def app_server(folder: Path, env: Mapping[str, str] | None = None) -> Iterator[Server]:
    """Start the app with TMPDIR and the case store inside `folder` (plus `env`); stop it afterwards."""
    temp = folder / "tmp"
    temp.mkdir(parents=True)
    environment = {k: v for k, v in os.environ.items() if k != "GRADIO_TEMP_DIR"}
    environment.update(
        TMPDIR=str(temp),
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_OFFLINE="1",
        PERF_DOCTOR_CASE_DB=str(folder / "cases.sqlite3"),
        **(env or {}),
    )
    port, log = free_port(), folder / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(port)], cwd=ROOT, env=environment, stdout=sink, stderr=sink
        )
    server = Server(f"http://127.0.0.1:{port}/", process, temp, log)
    try:
        _wait_until_up(server)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_up(server: Server) -> None:
    """Poll the page until it answers; fail with the log if the process exits or takes too long."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the app exited at start:\n{server.log.read_text(errors='replace')[-3000:]}")
        if _answers(server.url):
            return
        time.sleep(0.3)
    raise RuntimeError(f"the app did not answer within {START_TIMEOUT_S} s")


def _answers(url: str) -> bool:
    """Whether GET `url` answers 200 (directly, never through a proxy)."""
    try:
        with _LOOPBACK.open(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False

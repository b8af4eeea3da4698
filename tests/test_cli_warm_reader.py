"""The CLI's warm reader is a fork of the CLI itself (sandbox.isolation.fork_warm_reader): no second
interpreter imports the readers again. Its forks keep every guarantee of the interpreter zygote's (issue
33): the memory and wall-clock limits name the file, and nothing is left running or on disk afterwards."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sandbox import fork_warm_reader, isolation
from tests.bad_inputs import generate
from tests.support.isolated import MEMORY_MB, OUT_OF_MEMORY

ROOT = Path(__file__).resolve().parents[1]
LEVEL1 = generate.ASCEND / "level1"
# Runs the CLI as a subreaper's child: whatever the CLI leaves running is handed to the launcher, which
# counts what is still alive 10 s after the CLI ended (the warm reader ends as soon as its caller does).
LAUNCH = """
import ctypes, json, os, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
done = subprocess.run([sys.executable, "-m", "cli.main", *sys.argv[1:]], capture_output=True, text=True)
deadline, left = time.monotonic() + 10, 0
while time.monotonic() < deadline:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    time.sleep(0.05)
else:
    left = 1
print(json.dumps({"code": done.returncode, "stdout": done.stdout, "stderr": done.stderr, "left": left}))
"""
# What the CLI's zygote is, asked in a CLI-like process (single-threaded, readers imported by the facade).
KIND = """
import sys
from pathlib import Path
import doctor.facade
from sandbox import fork_warm_reader, isolation
from diagnosis import Workspace
assert fork_warm_reader()
with Workspace() as space:
    run, _ = isolation.read_profile(Path(sys.argv[1]), rank=None, source="t", scheduler=None, workspace=space)
print(type(isolation._ZYGOTE[0].process).__name__, len(run.kernels))
"""


def _cli(tmp_path: Path, *args: str, **env: str) -> dict[str, object]:
    """Run `perf-doctor ARGS` under the launcher with TMPDIR in `tmp_path`/tmp; its outcome."""
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch), **env}
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, *args], env=environ, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-800:]
    return json.loads(done.stdout)


def test_the_cli_forks_its_warm_reader_from_itself() -> None:
    done = subprocess.run(
        [sys.executable, "-c", KIND, str(LEVEL1 / "train")],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-800:]
    kind, kernels = done.stdout.split()
    assert kind == "_ForkedZygote" and int(kernels) > 0


def test_a_threaded_caller_does_not_fork_itself() -> None:
    """A server runs other threads: it keeps the interpreter zygote (a fork could inherit a held lock)."""
    before = list(isolation._ZYGOTE)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert fork_warm_reader() is False
    finally:
        stop.set()
        other.join()
    assert before == isolation._ZYGOTE


def test_the_cli_reads_in_its_fork_and_leaves_nothing_behind(tmp_path: Path) -> None:
    outcome = _cli(tmp_path, "compare", str(LEVEL1 / "train"), str(LEVEL1 / "infer"), "--format", "json")
    assert outcome["code"] == 0, outcome["stderr"]
    assert json.loads(str(outcome["stdout"]))["kind"] == "pair"
    assert outcome["left"] == 0 and list((tmp_path / "tmp").iterdir()) == []


def _compare_oversized(tmp_path: Path, **env: str) -> dict[str, object]:
    """The CLI comparing a real run with a 60 MiB kernel_details.csv under the isolation settings `env`."""
    hostile = generate.write_oversized_profile(tmp_path / "input", "csv", 60)
    return _cli(tmp_path, "compare", str(LEVEL1 / "infer"), str(hostile), "--format", "json", **env)


@pytest.mark.slow
def test_the_cli_forks_memory_limit_names_the_file(tmp_path: Path) -> None:
    outcome = _compare_oversized(tmp_path, PERF_DOCTOR_ISOLATION_MEMORY_MB=str(MEMORY_MB))
    assert outcome["code"] == 2
    line = str(outcome["stderr"])
    assert "kernel_details.csv: the profile could not be read" in line, line
    assert re.search(OUT_OF_MEMORY, line) and "PERF_DOCTOR_ISOLATION_MEMORY_MB" in line, line
    assert outcome["left"] == 0 and list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.slow
def test_the_cli_forks_wall_clock_limit_stops_the_read(tmp_path: Path) -> None:
    outcome = _compare_oversized(tmp_path, PERF_DOCTOR_ISOLATION_WALL_S="0.02")  # below any read of 60 MiB
    assert outcome["code"] == 2
    line = str(outcome["stderr"])
    assert "PERF_DOCTOR_ISOLATION_WALL_S" in line, line
    assert outcome["left"] == 0 and list((tmp_path / "tmp").iterdir()) == []

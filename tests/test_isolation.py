"""sandbox.isolation: MINDIR decoding and archive extraction in a child process under memory, CPU-time and
wall-clock limits, and the facade's use of it."""

from __future__ import annotations

import asyncio
import datetime
import io
import math
import os
import pathlib
import pickle
import resource
import tarfile
import tempfile
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

import graph
from core.errors import InputError
from diagnosis import sources
from diagnosis.ingest import read_folder
from diagnosis.workspace import Workspace
from doctor import diagnose, inspect_model
from sandbox import isolation
from sandbox.isolation import IsolationError, IsolationLimits, Task, run_isolated
from tests.bad_inputs import generate
from tests.support.inputs import CPU, MINDIR, RESNET

TASK = Task(subject="input.bin", failure="the input could not be decoded")
GOOD_ZIP = generate.CORPUS / "archive_good_zip.zip"
BOMB = generate.CORPUS / "zip_bomb.zip"
GARBAGE = generate.CORPUS / "mindir_random_bytes.mindir"

T = TypeVar("T")


@pytest.fixture(scope="module")
def huge_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 6.7 MB MINDIR that needs about 300 MB to decode and walk."""
    return generate.write_huge_model(tmp_path_factory.mktemp("huge") / "huge.mindir")


# ------------------------------------------------------------------------------------------ results


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet50_noweights", "if_net", "external_graph", "amp_o2"])
def test_isolated_model_equals_the_in_process_one(name: str) -> None:
    path = MINDIR / f"{name}.mindir"
    here, there = graph.load_mindir(path), isolation.load_mindir(path)
    assert list(there.graph.nodes(data=True)) == list(here.graph.nodes(data=True))
    assert list(there.graph.edges(data=True)) == list(here.graph.edges(data=True))
    for field in ("inputs", "outputs", "parameters", "functions", "op_counts", "warnings", "file_bytes"):
        assert getattr(there, field) == getattr(here, field), field


@pytest.mark.slow
def test_input_errors_cross_the_process_boundary_unchanged() -> None:
    with pytest.raises(InputError) as here:
        graph.load_mindir(GARBAGE)
    with pytest.raises(InputError) as there:
        isolation.load_mindir(GARBAGE)
    assert (there.value.problem, there.value.path, there.value.expected) == (
        here.value.problem,
        here.value.path,
        here.value.expected,
    )


@pytest.mark.slow
def test_a_str_subclass_path_reaches_the_child_as_a_plain_str() -> None:
    class UploadPath(str):  # like the path objects a web framework hands over
        pass

    assert type(isolation._plain(UploadPath("/x/model.mindir"))) is str
    assert isolation.load_mindir(UploadPath(str(RESNET))).graph.number_of_nodes() > 400


@pytest.mark.slow
def test_printing_in_the_child_does_not_corrupt_the_reply() -> None:
    assert run_isolated(TASK, print, "noise on stdout") is None


# ------------------------------------------------------------------------------------------ limits


# Out of memory, Python raises MemoryError; C code sometimes crashes instead. Both name the limit.
# Out of memory shows either as MemoryError in the child or as the child killed by a signal; the space
# belongs to the first spelling only ("decoded within ...", "decoded: the decoder stopped ...").
OUT_OF_MEMORY = (
    r"could not be decoded( within 200 MB of memory"
    r"|: the decoder stopped \(SIG\w+\), perhaps for lack of memory \(limit 200 MB\))"
)


@pytest.mark.slow
def test_memory_limit_turns_a_huge_model_into_an_input_error(huge_model: Path) -> None:
    with pytest.raises(InputError, match=OUT_OF_MEMORY) as caught:
        isolation.load_mindir(huge_model, limits=IsolationLimits(memory_mb=200))
    assert caught.value.path == "huge.mindir"
    assert "PERF_DOCTOR_ISOLATION_MEMORY_MB" in caught.value.message
    assert isolation.load_mindir(huge_model).graph.number_of_nodes() == 100_001  # the default is enough


@pytest.mark.slow
def test_cpu_limit_stops_a_busy_child() -> None:
    started = time.monotonic()
    with pytest.raises(InputError, match=r"could not be decoded within 1 s of CPU time") as caught:
        run_isolated(TASK, math.factorial, 10**9, limits=IsolationLimits(cpu_s=1))
    assert "PERF_DOCTOR_ISOLATION_CPU_S" in caught.value.message
    assert time.monotonic() - started < 20


def test_wall_clock_timeout_kills_a_stalled_child() -> None:
    started = time.monotonic()
    with pytest.raises(InputError, match=r"could not be decoded within 0\.5 s;") as caught:
        run_isolated(TASK, time.sleep, 60, limits=IsolationLimits(wall_s=0.5))
    assert caught.value.path == "input.bin" and "PERF_DOCTOR_ISOLATION_WALL_S" in caught.value.message
    assert time.monotonic() - started < 10


@pytest.mark.slow
def test_a_crashing_decoder_is_an_input_error_not_a_dead_server() -> None:
    with pytest.raises(
        InputError, match=r"the decoder stopped \(SIGABRT\), perhaps for lack of memory"
    ) as caught:
        run_isolated(TASK, os.abort, limits=IsolationLimits(memory_mb=512))
    assert (
        "(limit 512 MB)" in caught.value.problem and "PERF_DOCTOR_ISOLATION_MEMORY_MB" in caught.value.message
    )


@pytest.mark.slow
def test_a_bug_in_the_child_is_an_internal_error_with_its_traceback() -> None:
    with pytest.raises(IsolationError, match="ValueError: invalid literal") as caught:
        run_isolated(TASK, int, "not a number")
    assert "Traceback" in str(caught.value)
    with pytest.raises(IsolationError, match="exited with 3"):
        run_isolated(TASK, os._exit, 3)


@pytest.mark.slow
def test_a_model_decoder_cannot_write_files(tmp_path: Path) -> None:
    target = tmp_path / "written.bin"
    with pytest.raises(IsolationError, match="OSError"):
        run_isolated(TASK, pathlib.Path.write_bytes, target, b"data")
    assert target.stat().st_size == 0  # RLIMIT_FSIZE=0: the file may be opened, never filled
    writer = Task(subject="x", failure="x", writes_files=True)
    assert run_isolated(writer, pathlib.Path.write_bytes, target, b"data") == 4


@pytest.mark.slow
def test_the_parent_keeps_its_own_limits(huge_model: Path) -> None:
    before = [resource.getrlimit(kind) for kind in (resource.RLIMIT_AS, resource.RLIMIT_CPU)]
    with pytest.raises(InputError):
        isolation.load_mindir(huge_model, limits=IsolationLimits(memory_mb=200))
    assert [resource.getrlimit(kind) for kind in (resource.RLIMIT_AS, resource.RLIMIT_CPU)] == before


# ------------------------------------------------------------------------------------------ replies


def test_a_reply_may_hold_only_data_classes() -> None:
    with pytest.raises(IsolationError, match=r"disallowed object datetime\.datetime"):
        run_isolated(TASK, datetime.datetime.fromtimestamp, 0)
    for hostile in (("ok", os.system), ("ok", pickle.loads), ("ok", io.BytesIO(b"x"))):
        with pytest.raises(IsolationError, match="disallowed"):
            isolation._safe_loads(pickle.dumps(hostile))
    assert isolation._safe_loads(pickle.dumps(("ok", {"a": [1, 2.5, "x", None, (3,)]}))) == (
        "ok",
        {"a": [1, 2.5, "x", None, (3,)]},
    )


# ------------------------------------------------------------------------------------------ settings


@pytest.mark.slow
def test_limits_come_from_the_environment() -> None:
    env = {"PERF_DOCTOR_ISOLATION_MEMORY_MB": "512", "PERF_DOCTOR_ISOLATION_WALL_S": "2.5"}
    assert IsolationLimits.from_env(env) == IsolationLimits(memory_mb=512, wall_s=2.5)
    assert IsolationLimits.from_env({}) == IsolationLimits()
    with pytest.raises(InputError, match=r"PERF_DOCTOR_ISOLATION_CPU_S.*not a number"):
        IsolationLimits.from_env({"PERF_DOCTOR_ISOLATION_CPU_S": "ten"})
    with pytest.raises(InputError, match=r"PERF_DOCTOR_ISOLATION_MEMORY_MB.*not positive"):
        IsolationLimits.from_env({"PERF_DOCTOR_ISOLATION_MEMORY_MB": "0"})
    with pytest.raises(ValueError, match="wall_s"):
        IsolationLimits(wall_s=-1)


# ------------------------------------------------------------------------------------------ archives


@pytest.mark.slow
def test_archive_is_extracted_into_the_callers_workspace(tmp_path: Path) -> None:
    with Workspace(base=tmp_path) as workspace:
        folder = isolation.materialize(GOOD_ZIP, workspace)
        assert folder.parent == workspace.path
        assert read_folder(folder).meta.layout == "cpu-ms"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_folder_is_not_sent_to_a_child(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(isolation, "run_isolated", lambda *a, **k: pytest.fail("no child for a folder"))
    with Workspace(base=tmp_path) as workspace:
        assert isolation.materialize(CPU / "infer_fp32_graph", workspace) == CPU / "infer_fp32_graph"


@pytest.mark.slow
@pytest.mark.parametrize("source", [None, "", [], [3], ["/no/such/upload.zip"]])
def test_odd_sources_are_refused_like_in_process(source: object, tmp_path: Path) -> None:
    with Workspace(base=tmp_path) as workspace:
        with pytest.raises(InputError) as here:
            sources.materialize(source, workspace)  # type: ignore[arg-type]
        with pytest.raises(InputError) as there:
            isolation.materialize(source, workspace)  # type: ignore[arg-type]
    assert there.value.message == here.value.message


@pytest.mark.slow
def test_archive_refusals_match_the_in_process_ones(tmp_path: Path) -> None:
    with Workspace(base=tmp_path) as workspace:
        with pytest.raises(InputError) as here:
            sources.materialize(BOMB, workspace)
        with pytest.raises(InputError) as there:
            isolation.materialize(BOMB, workspace)
    assert there.value.message == here.value.message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_an_extraction_killed_midway_leaves_nothing_once_the_workspace_closes(tmp_path: Path) -> None:
    archive = tmp_path / "many.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for index in range(15_000):
            info = tarfile.TarInfo(f"run/{index // 100}/{index}.csv")
            info.size = 4
            tar.addfile(info, io.BytesIO(b"a,b\n"))
    base = tmp_path / "base"
    base.mkdir()
    with Workspace(base=base) as workspace:
        with pytest.raises(
            InputError, match=r"many\.tar\.gz: the upload could not be unpacked within 0\.5 s"
        ):
            isolation.materialize(archive, workspace, limits=IsolationLimits(wall_s=0.5))
        assert list(workspace.path.iterdir()), "the child was stopped while writing"
    assert list(base.iterdir()) == []


# ------------------------------------------------------------------------------------------ facade


@pytest.mark.slow
def test_the_facade_isolates_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the parent's decoders broken, an isolated diagnosis still works: the child decodes."""

    def broken(*args: object, **kwargs: object) -> None:
        raise AssertionError("decoded in the server process")

    monkeypatch.setattr(graph, "load_mindir", broken)
    monkeypatch.setattr(sources, "materialize", broken)
    monkeypatch.setattr("doctor.facade.materialize", broken)
    report = diagnose(GOOD_ZIP, GOOD_ZIP, RESNET)  # archives both: a folder would be used where it is
    assert report.kind == "pair" and report.data["graph"]["file"] == RESNET.name
    with pytest.raises(AssertionError, match="server process"):
        inspect_model(RESNET, isolate=False)
    with pytest.raises(AssertionError, match="server process"):
        diagnose(CPU / "train_amp_o2_graph", GOOD_ZIP, isolate=False)


@pytest.mark.slow
def test_the_facade_reads_the_limits_from_the_environment(huge_model: Path, monkeypatch) -> None:
    monkeypatch.setenv("PERF_DOCTOR_ISOLATION_MEMORY_MB", "200")
    with pytest.raises(InputError, match=r"huge\.mindir: the model " + OUT_OF_MEMORY):
        inspect_model(huge_model)
    with pytest.raises(InputError, match=OUT_OF_MEMORY):
        diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", huge_model)


@pytest.mark.slow
def test_the_child_writes_nothing_but_the_extraction(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = set(tmp_path.iterdir())
    with Workspace() as workspace:
        isolation.materialize(GOOD_ZIP, workspace)
        isolation.load_mindir(RESNET)
        assert set(tmp_path.iterdir()) - before == {workspace.path}
    assert set(tmp_path.iterdir()) == before


def _run_alone(scenario: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """asyncio.run in a thread of its own: a browser test's Playwright may leave an event loop running
    in the main thread, where asyncio.run refuses to start."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, scenario()).result()


def test_cancelling_the_awaiting_task_kills_the_isolated_child() -> None:
    """What a web request the client cancels does: the awaiting task is cancelled, the child is killed at
    once (not after its 60 s), and the worker thread ends with "cancelled" instead of running on."""
    token = isolation.Cancellation()
    outcome: list[BaseException] = []

    def work() -> None:
        try:
            run_isolated(TASK, time.sleep, 60, limits=IsolationLimits(wall_s=120))
        except InputError as error:
            outcome.append(error)

    async def scenario() -> float:
        task = asyncio.ensure_future(isolation.run_cancellable(work, token))
        while token.running == 0:  # the child has started
            await asyncio.sleep(0.05)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        while token.running:  # the killed child is reaped by the worker thread
            await asyncio.sleep(0.05)
        return time.monotonic() - started

    assert _run_alone(scenario) < 10
    assert [error.problem for error in outcome] == ["the request was cancelled"]


def test_a_request_cancelled_before_its_child_starts_never_runs_it() -> None:
    token = isolation.Cancellation()
    token.cancel()

    async def scenario() -> None:
        await isolation.run_cancellable(lambda: run_isolated(TASK, time.sleep, 60), token)

    with pytest.raises(InputError, match="the request was cancelled"):
        _run_alone(scenario)

"""Untrusted decoding (MINDIR protobuf, archive extraction) in a child process under hard limits.

A hostile upload must not take the app down for other users: a model that decodes into gigabytes, an
archive that stalls the extractor or a decoder crash must cost one child process, never the server.
`run_isolated` starts a fresh Python (``-I -B``: no user site, no bytecode writes) that sets
``RLIMIT_AS`` (address space), ``RLIMIT_CPU`` (CPU seconds) and ``RLIMIT_CORE=0`` on itself before it
touches the input, while the parent enforces a wall-clock timeout and kills the child when it passes.
A model decoder also gets ``RLIMIT_FSIZE=0``: it has no reason to write any file.

Results come back pickled from our own child, so they are data we produced, not the upload; they are
still unpickled with an allow-list of classes (graph model, networkx graphs, plain containers) so that
a compromised child could not turn its answer into code in the server.

Limits (environment, read per call; see docs/security.md):

- PERF_DOCTOR_ISOLATION_MEMORY_MB  address space of one child, MiB (default 3072)
- PERF_DOCTOR_ISOLATION_CPU_S      CPU seconds of one child (default 120)
- PERF_DOCTOR_ISOLATION_WALL_S     wall-clock seconds before the child is killed (default 180)
"""

from __future__ import annotations

import io
import os
import pickle
import signal
import subprocess
import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from core import InputError, say
from diagnosis import MIB, Limits, Source, Workspace, check_positive, env_name, settings_from_env

T = TypeVar("T")
ISOLATION_PREFIX = "isolation_"
PROTOCOL = pickle.HIGHEST_PROTOCOL
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)
# The child's first code: the parent's import path, then this module alone. The "doctor" package is
# registered without running doctor/__init__.py, which would import the whole facade (pandas, plotly:
# about 0.5 s and 100 MB per child) that an isolated decoder never uses.
_BOOT = (
    "import sys, types; sys.path[:0] = {paths!r}; package = types.ModuleType('doctor'); "
    "package.__path__ = [{package!r}]; sys.modules['doctor'] = package; "
    "from sandbox.isolation import serve_one; serve_one()"
)


@dataclass(frozen=True)
class IsolationLimits:
    """What one isolated child may use; each field has a PERF_DOCTOR_ISOLATION_<FIELD> override."""

    memory_mb: int = 3072  # address space (RLIMIT_AS), MiB; the interpreter itself needs about 60
    cpu_s: int = 120  # CPU seconds (RLIMIT_CPU)
    wall_s: float = 180.0  # wall-clock seconds before the parent kills the child

    def __post_init__(self) -> None:
        check_positive(self)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> IsolationLimits:
        """The defaults, each replaced by its PERF_DOCTOR_ISOLATION_<FIELD> variable when set."""
        return settings_from_env(cls, environ, ISOLATION_PREFIX)


class IsolationError(RuntimeError):
    """The child failed for a reason that is not the input's fault (a bug or a broken environment)."""


@dataclass(frozen=True)
class Task:
    """What an isolated call is about, for the user-facing message: `subject` names the input."""

    subject: str  # e.g. "model.mindir"
    failure: str  # e.g. "the model could not be decoded"
    writes_files: bool = False  # False: the child cannot write a byte to any file (RLIMIT_FSIZE=0)


# --------------------------------------------------------------------------------------------------
# Parent side


def run_isolated(
    task: Task,
    func: Callable[..., T],
    *args: Any,
    limits: IsolationLimits | None = None,
    **kwargs: Any,
) -> T:
    """Call the module-level function ``func(*args, **kwargs)`` in a child under `limits`.

    InputError raised in the child is raised here unchanged; a memory or time overrun or a crash of the
    child becomes an InputError naming `task.subject`; any other exception in the child an IsolationError.
    """
    limits = limits or IsolationLimits.from_env()
    request = _request(limits, task, func, args, kwargs)
    status, stdout, stderr = _spawn(request, limits.wall_s)
    if status == "timeout":
        raise _overrun(task, say("isolation.within-wall", s=limits.wall_s), "wall_s")
    if status == "cancelled":
        raise InputError(say("isolation.cancelled"), path=task.subject)
    return _answer(task, limits, status, stdout, stderr)


def _request(
    limits: IsolationLimits, task: Task, func: Callable[..., Any], args: Sequence[Any], kwargs: dict
) -> bytes:
    """Two pickles: the rlimits (applied before anything else is unpickled), then the call."""
    rlimits = {
        "memory_bytes": int(limits.memory_mb * MIB),
        "cpu_s": int(limits.cpu_s),
        "file_bytes": None if task.writes_files else 0,
    }
    buffer = io.BytesIO()
    pickle.dump(rlimits, buffer, protocol=PROTOCOL)
    pickle.dump((func, tuple(args), kwargs), buffer, protocol=PROTOCOL)
    return buffer.getvalue()


def _spawn(request: bytes, wall_s: float) -> tuple[int | str, bytes, bytes]:
    """Run the child with `request` on stdin; returns (exit code or "timeout", stdout, stderr)."""
    boot = _BOOT.format(paths=_child_path(), package=str(Path(__file__).resolve().parent))
    command = [sys.executable, "-I", "-B", "-c", boot]
    token = _current_token()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _EVERY_CHILD.add(proc)
    if token is not None:
        token.adopt(proc)
    try:
        stdout, stderr = proc.communicate(request, timeout=wall_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return "timeout", b"", b""
    finally:
        if proc.poll() is None:  # interrupted (e.g. Ctrl-C): never leave the child running
            proc.kill()
            proc.wait()
        if token is not None:
            token.release(proc)
    if token is not None and token.cancelled:
        return "cancelled", b"", b""
    return proc.returncode, stdout, stderr


# --------------------------------------------------------------------------------------------------
# Cancellation: a cancelled request kills its isolated children


class Cancellation:
    """The isolated children of one request; `cancel()` kills them and refuses new ones."""

    def __init__(self) -> None:
        self.cancelled = False
        self._children: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()

    def adopt(self, proc: subprocess.Popen[bytes]) -> None:
        """Track a child just started (killed at once when the request was already cancelled)."""
        with self._lock:
            self._children.add(proc)
            if self.cancelled:
                proc.kill()

    def release(self, proc: subprocess.Popen[bytes]) -> None:
        """The child has ended."""
        with self._lock:
            self._children.discard(proc)

    def cancel(self) -> None:
        """Kill every running child of the request; children started later are killed at start."""
        with self._lock:
            self.cancelled = True
            children = list(self._children)
        for proc in children:
            proc.kill()

    @property
    def running(self) -> int:
        """How many children are running now."""
        with self._lock:
            return len(self._children)


_LOCAL = threading.local()
_EVERY_CHILD: weakref.WeakSet[subprocess.Popen[bytes]] = weakref.WeakSet()  # for kill_all_children


def kill_all_children() -> int:
    """Kill every isolated child still running in this process (the app is stopping: a decoder must not
    outlive the server that would read its answer); returns how many were killed."""
    running = [proc for proc in list(_EVERY_CHILD) if proc.poll() is None]
    for proc in running:
        proc.kill()
    return len(running)


def _current_token() -> Cancellation | None:
    """The cancellation token of the request this thread works for, if any."""
    return getattr(_LOCAL, "token", None)


async def run_cancellable(func: Callable[[], T], token: Cancellation | None = None) -> T:
    """Await `func()` run in a worker thread; when the awaiting task is cancelled (a web request the
    client cancelled), the isolated children `func` started are killed instead of running on.

    The thread itself cannot be stopped: once its child is killed it ends with an error nobody waits for.
    """
    import asyncio  # here, not at the top: the isolated child imports this module and never awaits

    token = token or Cancellation()

    def work() -> T:
        _LOCAL.token = token
        try:
            return func()
        finally:
            _LOCAL.token = None

    future = asyncio.get_running_loop().run_in_executor(None, work)
    try:
        return await future
    except asyncio.CancelledError:
        token.cancel()
        raise


def _child_path() -> list[str]:
    """The parent's import path as absolute folders, this package's root first."""
    paths = [_PACKAGE_ROOT]
    for entry in sys.path:
        absolute = os.path.abspath(entry or os.curdir)
        if absolute not in paths:
            paths.append(absolute)
    return paths


def _answer(task: Task, limits: IsolationLimits, code: int | str, stdout: bytes, stderr: bytes) -> Any:
    """Turn the child's exit code and answer into a result or the right exception."""
    if stdout:
        reply = _safe_loads(stdout)
        kind = reply[0]
        if kind == "ok":
            return reply[1]
        if kind == "input_error":
            raise InputError(reply[1], path=reply[2], expected=reply[3])
        if kind == "memory":
            raise _overrun(task, say("isolation.within-memory", mb=limits.memory_mb), "memory_mb")
        raise IsolationError(f"{task.failure}: {reply[1]}: {reply[2]}\n{_tail(stderr)}")
    if code == -signal.SIGXCPU:
        raise _overrun(task, say("isolation.within-cpu", s=limits.cpu_s), "cpu_s")
    if isinstance(code, int) and code < 0:
        raise _crash(task, code, limits)
    raise IsolationError(f"{task.failure}: the isolated process exited with {code}: {_last_line(stderr)}")


def _overrun(task: Task, within: Any, field: str) -> InputError:
    """A limit was reached: say which, and which variable the operator can raise."""
    return InputError(
        say("isolation.overrun", failure=task.failure, within=within),
        path=task.subject,
        expected=say("isolation.smaller", variable=env_name(ISOLATION_PREFIX + field)),
    )


def _crash(task: Task, code: int, limits: IsolationLimits) -> InputError:
    """The child was stopped by a signal. C code that finds no memory under RLIMIT_AS often crashes
    (SIGSEGV, SIGABRT) instead of raising MemoryError, and the kernel's out-of-memory killer sends
    SIGKILL, so the message names the memory limit as the likely cause."""
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return InputError(
        say("isolation.stopped", failure=task.failure, name=name, mb=limits.memory_mb),
        path=task.subject,
        expected=say("isolation.smaller", variable=env_name(ISOLATION_PREFIX + "memory_mb")),
    )


def _tail(data: bytes, lines: int = 30) -> str:
    """The end of the child's stderr (its traceback), for the server log."""
    return "\n".join(data.decode("utf-8", "replace").rstrip().splitlines()[-lines:])


def _last_line(data: bytes) -> str:
    """The last line of the child's stderr, for a one-line internal error."""
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else "no output"


# Classes a reply may contain; anything else in a reply is refused (see module docstring).
_ALLOWED_MODULES = ("graph.model",)
_ALLOWED_PREFIXES = ("networkx.classes.",)
# core.text.Text: an InputError's problem and expectation (an id and values, rebuilt from the catalog).
_ALLOWED_NAMES = {("collections", "Counter"), ("collections", "OrderedDict"), ("core.text", "Text")}


class _ReplyUnpickler(pickle.Unpickler):
    """Unpickles only the data classes a reply can legitimately hold."""

    def find_class(self, module: str, name: str) -> Any:
        allowed = (
            module in _ALLOWED_MODULES
            or module.startswith(_ALLOWED_PREFIXES)
            or (module, name) in _ALLOWED_NAMES
        )
        found = super().find_class(module, name) if allowed else None
        if not isinstance(found, type):
            raise IsolationError(f"the isolated process replied with a disallowed object {module}.{name}")
        return found


def _safe_loads(data: bytes) -> tuple[Any, ...]:
    """The child's reply tuple, unpickled with the allow-list."""
    try:
        reply = _ReplyUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as error:
        raise IsolationError(f"unreadable reply from the isolated process ({error})") from None
    if not isinstance(reply, tuple) or not reply:
        raise IsolationError("malformed reply from the isolated process")
    return reply


# --------------------------------------------------------------------------------------------------
# Child side


def serve_one() -> None:
    """Child entry point: apply the limits, run the one call read from stdin, write the reply."""
    reply_channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything the call prints goes to stderr, never into the reply
    stdin = sys.stdin.buffer
    try:
        _apply_limits(pickle.load(stdin))
        func, args, kwargs = pickle.load(stdin)
        reply: tuple[Any, ...] = ("ok", func(*args, **kwargs))
    except InputError as error:
        reply = ("input_error", error.problem, error.path, error.expected)
    except MemoryError:
        reply = ("memory",)
    except Exception as error:  # a bug, not the input: the traceback goes to the parent's log
        traceback.print_exc()
        reply = ("error", type(error).__name__, str(error).splitlines()[0][:300] if str(error) else "")
    _write_reply(reply_channel, reply)


def _write_reply(channel: BinaryIO, reply: tuple[Any, ...]) -> None:
    """Pickle the reply; a reply too large for the memory limit is itself a memory overrun."""
    try:
        data = pickle.dumps(reply, protocol=PROTOCOL)
    except MemoryError:
        data = pickle.dumps(("memory",), protocol=PROTOCOL)
    channel.write(data)
    channel.flush()


def _apply_limits(rlimits: dict[str, int | None]) -> None:
    """Set the child's own resource limits (POSIX); without the resource module only the wall clock
    applies."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return
    memory, cpu, file_bytes = rlimits["memory_bytes"], rlimits["cpu_s"], rlimits["file_bytes"]
    assert memory is not None and cpu is not None  # the parent always sets both (file_bytes may be None)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if file_bytes is not None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write then fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))


# --------------------------------------------------------------------------------------------------
# The isolated tasks


def load_mindir(path: str | os.PathLike[str], *, limits: IsolationLimits | None = None) -> Any:
    """graph.load_mindir in a child under the limits; returns the MindirModel."""
    task = Task(subject=Path(path).name, failure=say("isolation.model-failed"))
    return run_isolated(task, _load_mindir_child, _plain(path), limits=limits)


def _load_mindir_child(path: str) -> Any:
    """Runs in the child: graph is imported there, not in this module."""
    import graph

    return graph.load_mindir(path)


def materialize(
    source: Source,
    workspace: Workspace,
    *,
    budget: Limits | None = None,
    limits: IsolationLimits | None = None,
) -> Path:
    """diagnosis.sources.materialize with extraction in a child writing into `workspace`.

    A plain folder is passed through and an empty source refused in-process (nothing is decoded);
    everything else is extracted by the child into a new folder of the caller's workspace, which removes
    it like any other content."""
    from diagnosis import materialize as materialize_here

    if not source or (isinstance(source, (str, os.PathLike)) and os.path.isdir(source)):
        return materialize_here(source, workspace, budget=budget)
    budget = budget if budget is not None else Limits.from_env()
    task = Task(subject=_subject(source), failure=say("isolation.unpack-failed"), writes_files=True)
    plain: Source = _plain(source) if isinstance(source, (str, os.PathLike)) else [_plain(p) for p in source]
    folder = run_isolated(task, _materialize_child, plain, str(workspace.path), budget, limits=limits)
    result = Path(folder)
    if not result.resolve().is_relative_to(workspace.path.resolve()):
        raise IsolationError(f"the isolated extraction answered a folder outside the workspace: {folder}")
    return result


def decode_database(subject: str, func: Callable[..., T], args: tuple[Any, ...]) -> T:
    """A reader's SQLite decoding function (diagnosis.isolated_decoding's runner) in a child under the
    limits: a database that stalls or balloons costs the child, which a cancelled request kills. The
    child writes no file (RLIMIT_FSIZE=0): SQLite's temporary files could not grow outside the
    workspace even if a reader forgot ``temp_store=MEMORY``."""
    task = Task(subject=subject, failure=say("isolation.database-failed"))
    return run_isolated(task, func, *args)


def _plain(item: Any) -> Any:
    """A path as a plain str (anything else unchanged, for the child to refuse): web frameworks pass str
    subclasses whose pickles would import them in the child (Gradio's paths would import all of Gradio)."""
    return str(os.fspath(item)) if isinstance(item, (str, os.PathLike)) else item


def _subject(source: Source) -> str:
    """A short name for messages: the file name, or how many files were given."""
    if isinstance(source, (str, os.PathLike)):
        return Path(source).name or str(source)
    items = list(source)
    return Path(str(items[0])).name if len(items) == 1 else f"{len(items)} files"


class _BorrowedWorkspace(Workspace):
    """The parent's open workspace folder, seen from the child: used, never removed, by the child."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._path = path

    @property
    def path(self) -> Path:
        return self._path  # type: ignore[return-value]

    def close(self) -> None:
        """The parent owns the folder and removes it."""


def _materialize_child(source: Source, root: str, budget: Limits) -> str:
    """Runs in the child: extract into the parent's workspace folder `root`."""
    from diagnosis import materialize as materialize_here

    return str(materialize_here(source, _BorrowedWorkspace(Path(root)), budget=budget))

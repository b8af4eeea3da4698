"""Untrusted decoding (MINDIR protobuf, archive extraction, every profile reader, the outputs comparison's
dumps) in a child process under hard limits.

A hostile upload must not take the app down for other users: a model that decodes into gigabytes, an
archive that stalls the extractor or a decoder crash must cost one child process, never the server.
`run_isolated` starts a fresh Python (``-I -B``: no user site, no bytecode writes) that sets
``RLIMIT_AS`` (address space), ``RLIMIT_CPU`` (CPU seconds) and ``RLIMIT_CORE=0`` on itself before it
touches the input, while the parent enforces a wall-clock timeout and kills the child when it passes.
A model decoder and a profile reader also get ``RLIMIT_FSIZE=0``: they have no reason to write any file.
A profile reader (`read_profile`) is a fork of a warm zygote that imported pandas, pyarrow and the readers
once (`serve_forks`), since importing them costs more than reading a typical profile; the fork leads a
process group of its own, killed whole on timeout or cancellation. A single-threaded caller that imported
the readers already (the CLI) makes its zygote a fork of itself instead (`fork_warm_reader`).

Results come back pickled from our own child, so they are data we produced, not the upload; they are
still unpickled with an allow-list of classes (graph model, run model, dump model, networkx graphs,
plain containers; a run's tables travel as Arrow IPC bytes) so that a compromised child could not turn its
answer into code in the server.

Limits (environment, read per call; see docs/security.md):

- PERF_DOCTOR_ISOLATION_MEMORY_MB  address space of one child, MiB (default 3072)
- PERF_DOCTOR_ISOLATION_CPU_S      CPU seconds of one child (default 120)
- PERF_DOCTOR_ISOLATION_WALL_S     wall-clock seconds before the child is killed (default 180)
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing.connection
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar, cast

from core import InputError, may_fork, say
from diagnosis import MIB, Limits, Source, Workspace, check_positive, env_name, settings_from_env

if TYPE_CHECKING:
    import pandas as pd

    from core import Run
    from graph import MindirModel

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
    temp_dir: str | None = None  # the child's TMPDIR (a folder of the request's workspace), else inherited
    warm: bool = False  # True: a fork of the warm reader process (see _fork), not a fresh interpreter


# --------------------------------------------------------------------------------------------------
# Parent side


def run_isolated(
    task: Task,
    func: Callable[..., T],
    *args: object,
    limits: IsolationLimits | None = None,
    **kwargs: object,
) -> T:
    """Call the module-level function ``func(*args, **kwargs)`` in a child under `limits`.

    InputError raised in the child is raised here unchanged; a memory or time overrun or a crash of the
    child becomes an InputError naming `task.subject`; any other exception in the child an IsolationError.
    """
    limits = limits or IsolationLimits.from_env()
    request = _request(limits, task, func, args, kwargs)
    reading = ""
    if task.warm:
        status, stdout, stderr, reading = _fork(request, limits.wall_s, task.temp_dir)
    else:
        status, stdout, stderr = _spawn(request, limits.wall_s)
    if status == "cancelled":
        raise InputError(say("isolation.cancelled"), path=task.subject)
    if reading:  # a limit names the file the reader needed it for
        task = replace(task, subject=reading.partition(" ")[2])
    if status == "timeout":
        raise _overrun(task, say("isolation.within-wall", s=limits.wall_s), "wall_s")
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
    """Run the child with `request` on stdin; returns (exit code or "timeout", stdout, stderr).

    The child leads a process group of its own, so that killing it also kills the processes it started
    (a reader's pool of rank workers)."""
    boot = _BOOT.format(paths=_child_path(), package=str(Path(__file__).resolve().parent))
    command = [sys.executable, "-I", "-B", "-c", boot]
    token = _current_token()
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    _EVERY_CHILD.add(proc)
    if token is not None:
        token.adopt(proc)
    try:
        stdout, stderr = proc.communicate(request, timeout=wall_s)
    except subprocess.TimeoutExpired:
        kill(proc)
        _, stderr = proc.communicate()
        return "timeout", b"", stderr
    finally:
        if proc.poll() is None:  # interrupted (e.g. Ctrl-C): never leave the child running
            kill(proc)
            proc.wait()
        if token is not None:
            token.release(proc)
    if token is not None and token.cancelled:
        return "cancelled", b"", b""
    return proc.returncode, stdout, stderr


# The warm reader: a zygote process that imported pandas, pyarrow and every profile reader once and forks
# one child per read (a few milliseconds) instead of starting an interpreter that imports them (about
# 1 s per side). The zygote only forks and reaps: each child sets its own limits, reads, and replies.
_ZYGOTE_BOOT = (
    "import sys, types; sys.path[:0] = {paths!r}; package = types.ModuleType('doctor'); "
    "package.__path__ = [{package!r}]; sys.modules['doctor'] = package; "
    "from sandbox.isolation import serve_forks; serve_forks({fd})"
)
_READING = b"\x1eperf-doctor reading: "  # a message naming the profile file the child opens next
_EXIT = b"\x1eperf-doctor exit: "  # the zygote's last message on a child's channel: its exit code
_POLL_S = 0.5
_THREAD_REFUSED = "Failed to launch worker thread"  # Arrow, when RLIMIT_AS leaves no room for a stack


class _ForkedZygote:
    """A zygote forked from this process (`fork_warm_reader`), as `_Zygote` sees a process: poll(),
    kill(), wait() like a Popen's, on the pid this process forked."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: gone
                self.returncode = -signal.SIGKILL
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def wait(self) -> int:
        if self.returncode is None:
            try:
                _, status = os.waitpid(self.pid, 0)
                self.returncode = os.waitstatus_to_exitcode(status)
            except ChildProcessError:
                self.returncode = -signal.SIGKILL
        return self.returncode


@dataclass
class _Zygote:
    """The running zygote: its process and the control socket (one fork request at a time)."""

    process: subprocess.Popen[bytes] | _ForkedZygote
    control: socket.socket
    lock: threading.Lock


_ZYGOTE: list[_Zygote] = []
_ZYGOTE_LOCK = threading.Lock()


def _zygote() -> _Zygote:
    """The zygote of this process, started on first use (again if it died)."""
    with _ZYGOTE_LOCK:
        if _ZYGOTE and _ZYGOTE[0].process.poll() is None:
            return _ZYGOTE[0]
        if _ZYGOTE:
            _ZYGOTE[0].control.close()
        ours, theirs = socket.socketpair()
        boot = _ZYGOTE_BOOT.format(
            paths=_child_path(), package=str(Path(__file__).resolve().parent), fd=theirs.fileno()
        )
        process = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", boot], stdin=subprocess.DEVNULL, pass_fds=[theirs.fileno()]
        )
        theirs.close()
        _ZYGOTE[:] = [_Zygote(process, ours, threading.Lock())]
        return _ZYGOTE[0]


def fork_warm_reader() -> bool:
    """Make the warm reader a fork of this process, for a caller that has imported the readers already
    and runs no other Python thread (the CLI, before its analysis): its fork starts in milliseconds,
    where a new interpreter imports pandas, pyarrow and the readers again (about 1 s). The forks of it
    are limited, killed and cleaned up like those of the interpreter zygote. A threaded server must not
    fork itself (another thread may hold a lock the fork inherits): with any other thread running this
    forks nothing and answers False, and the reader starts as a new interpreter on first use. The
    native pools of numpy and Arrow are fork-aware; the interpreter zygote forks with them too."""
    if not may_fork():
        return False
    with _ZYGOTE_LOCK:
        if _ZYGOTE and _ZYGOTE[0].process.poll() is None:
            return True
        if _ZYGOTE:
            _ZYGOTE[0].control.close()
        from diagnosis import read_folder  # noqa: F401 - the readers, imported before the fork

        ours, theirs = socket.socketpair()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the zygote: never returns into the caller's code
            code = 0
            try:
                ours.close()  # else the zygote would keep its own control channel open past the caller
                serve_forks(theirs.detach())
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        theirs.close()
        _ZYGOTE[:] = [_Zygote(_ForkedZygote(pid), ours, threading.Lock())]
        return True


class _Forked:
    """A child forked by the zygote, as the cancellation code sees a child: pid, poll(), kill()."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)


# An isolated child as the cancellation code sees it: a fresh interpreter (Popen) or a fork of the zygote.
_Child = subprocess.Popen[bytes] | _Forked


def _fork(request: bytes, wall_s: float, temp_dir: str | None) -> tuple[int | str, bytes, bytes, str]:
    """Run the call in a fork of the warm zygote; returns (the exit code, "timeout" or "cancelled"; the
    reply; b"" for stderr, which the fork shares with this process; "<size> <name>" of the largest file
    the child opened, or "")."""
    ours, theirs = socket.socketpair()
    try:
        pid = _ask_fork(theirs)
    except (OSError, ValueError):  # the zygote died (killed by an operator or the OOM killer): restart it
        pid = _ask_fork(theirs)
    theirs.close()
    proc = _Forked(pid)
    token = _current_token()
    _EVERY_CHILD.add(proc)
    if token is not None:
        token.adopt(proc)
    conn = multiprocessing.connection.Connection(ours.detach())
    try:
        conn.send_bytes(pickle.dumps((request, temp_dir), protocol=PROTOCOL))
        status, reply, reading = _listen(conn, proc, wall_s)
    except (OSError, EOFError):  # the child died before it read its call
        status, reply, reading = "ok", b"", ""
    finally:
        if proc.returncode is None:  # timed out or interrupted: never leave the child running
            kill(proc)
            _wait_exit(conn, proc)
        conn.close()
        if token is not None:
            token.release(proc)
    if token is not None and token.cancelled:
        return "cancelled", b"", b"", reading
    code = -signal.SIGKILL if proc.returncode is None else proc.returncode  # set above: reply, exit or kill
    return status if status == "timeout" else code, reply, b"", reading


def _ask_fork(channel: socket.socket) -> int:
    """Ask the zygote for a fork that talks on `channel`; returns its pid."""
    zygote = _zygote()
    with zygote.lock:
        try:
            socket.send_fds(zygote.control, [b"fork"], [channel.fileno()])
            return int(zygote.control.recv(32))
        except (OSError, ValueError):
            zygote.process.kill()
            zygote.process.wait()
            raise


def _listen(conn: Any, proc: _Forked, wall_s: float) -> tuple[str, bytes, str]:
    """Read the child's messages until its reply, the zygote's report of its exit (it ended without a
    reply) or the deadline: ("ok" or "timeout", the reply or b"", the largest file named)."""
    deadline = time.monotonic() + wall_s
    reading = ""
    while (left := deadline - time.monotonic()) > 0:
        if not conn.poll(min(left, _POLL_S)):
            continue
        data = conn.recv_bytes()
        if data.startswith(_READING):
            reading = _larger(reading, data[len(_READING) :].decode("utf-8", "replace"))
        elif data.startswith(_EXIT):
            proc.returncode = int(data[len(_EXIT) :])
            return "ok", b"", reading
        else:  # the reply: the child only exits now (code 0), no need to wait for the zygote to reap it
            proc.returncode = 0
            return "ok", data, reading
    return "timeout", b"", reading


def _larger(known: str, said: str) -> str:
    """Of two "<size> <name>" reading messages, the larger file's (several are read at once in threads:
    the largest one opened is the likely cause of an overrun); `known` may be empty."""
    if not known:
        return said
    size, _, _ = said.partition(" ")
    known_size, _, _ = known.partition(" ")
    return said if int(size) > int(known_size) else known


def _wait_exit(conn: Any, proc: _Forked, wait_s: float = 10.0) -> None:
    """After a kill: wait (briefly) for the zygote's exit message so the child is reaped and known gone."""
    deadline = time.monotonic() + wait_s
    with contextlib.suppress(OSError, EOFError):
        while proc.returncode is None and conn.poll(max(0.0, deadline - time.monotonic())):
            data = conn.recv_bytes()
            if data.startswith(_EXIT):
                proc.returncode = int(data[len(_EXIT) :])
    if proc.returncode is None:
        proc.returncode = -signal.SIGKILL


def kill(proc: _Child) -> None:
    """Kill an isolated child and every process of its group (it leads one: see _spawn)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):  # gone already, or no process groups
        proc.kill()


# --------------------------------------------------------------------------------------------------
# Cancellation: a cancelled request kills its isolated children


class Cancellation:
    """The isolated children of one request; `cancel()` kills them and refuses new ones."""

    def __init__(self) -> None:
        self.cancelled = False
        self._children: set[_Child] = set()
        self._lock = threading.Lock()

    def adopt(self, proc: _Child) -> None:
        """Track a child just started (killed at once when the request was already cancelled)."""
        with self._lock:
            self._children.add(proc)
            if self.cancelled:
                kill(proc)

    def release(self, proc: _Child) -> None:
        """The child has ended."""
        with self._lock:
            self._children.discard(proc)

    def cancel(self) -> None:
        """Kill every running child of the request; children started later are killed at start."""
        with self._lock:
            self.cancelled = True
            children = list(self._children)
        for proc in children:
            kill(proc)

    @property
    def running(self) -> int:
        """How many children are running now."""
        with self._lock:
            return len(self._children)


_LOCAL = threading.local()
_EVERY_CHILD: weakref.WeakSet[_Child] = weakref.WeakSet()  # for kill_all_children


def kill_all_children() -> int:
    """Kill every isolated child still running in this process (the app is stopping: a decoder must not
    outlive the server that would read its answer); returns how many were killed."""
    running = [proc for proc in list(_EVERY_CHILD) if proc.poll() is None]
    for proc in running:
        kill(proc)
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
    if isinstance(code, int) and (code < 0 or (task.warm and code > 0)):
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
    """The child was stopped by a signal, or a fork of the warm reader ended without a reply (it replies
    to every error it can catch). C code that finds no memory under RLIMIT_AS often crashes (SIGSEGV,
    SIGABRT) or exits (glibc: 127 when a new thread gets no memory) instead of raising MemoryError, and
    the kernel's out-of-memory killer sends SIGKILL, so the message names the memory limit as the likely
    cause."""
    try:
        name = signal.Signals(-code).name if code < 0 else f"exit code {code}"
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
_ALLOWED_MODULES = ("graph.model", "core.model")
_ALLOWED_PREFIXES = ("networkx.classes.",)
# core.text.Text: an InputError's problem and expectation (an id and values, rebuilt from the catalog).
# outputs' dump model (a Dump of Layers of TensorStats: strings, numbers, tuples), named by string: this
# module never imports outputs, a sibling stage.
_ALLOWED_NAMES = {
    ("collections", "Counter"),
    ("collections", "OrderedDict"),
    ("core.text", "Text"),
    ("outputs.layers", "Dump"),
    ("outputs.layers", "Layer"),
    ("outputs.stats", "TensorStats"),
}


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
    _write_reply(reply_channel, _serve(sys.stdin.buffer))


def _serve(stream: BinaryIO, base_bytes: int = 0) -> tuple[Any, ...]:
    """Apply the limits (the first pickle; `base_bytes` of address space on top of the memory limit), run
    the call (the second), and return the reply."""
    try:
        rlimits = pickle.load(stream)
        rlimits["memory_bytes"] += base_bytes
        _apply_limits(rlimits)
        func, args, kwargs = pickle.load(stream)
        return ("ok", func(*args, **kwargs))
    except InputError as error:
        return ("input_error", error.problem, error.path, error.expected)
    except MemoryError:
        return ("memory",)
    except Exception as error:  # a bug, not the input: the traceback goes to the parent's log
        if _THREAD_REFUSED in str(error):  # Arrow found no memory for a worker thread's stack
            return ("memory",)
        traceback.print_exc()
        return ("error", type(error).__name__, str(error).splitlines()[0][:300] if str(error) else "")


_CONNECTION: list[Any] = []  # a forked child's connection to its parent (for say_reading)


def serve_forks(fd: int) -> None:
    """The zygote's entry point: import the readers once, then fork one child per request received on
    the control socket `fd` (each brings the child's own channel) and report each child's exit code on
    its channel when the zygote reaps it. Ends when the parent closes the control socket."""
    import gc
    import select

    _warm_up()
    gc.freeze()  # the imported objects stay out of the collector: a fork's collections copy no pages
    control = socket.socket(fileno=fd)
    channels: dict[int, socket.socket] = {}
    while True:
        ready, _, _ = select.select([control], [], [], 0.05)
        _reap(channels)
        if not ready:
            continue
        message, fds, _, _ = socket.recv_fds(control, 16, 1)
        if not message or not fds:  # the parent is gone
            return
        channel = socket.socket(fileno=fds[0])
        pid = os.fork()
        if pid == 0:
            control.close()
            for other in channels.values():
                other.close()
            _forked_child(channel)
        channels[pid] = channel
        control.sendall(str(pid).encode())


def _warm_up() -> None:
    """In the zygote: import the readers and what a read imports on first use (Arrow's pandas bridge,
    the cluster reader, the BOM codec), and convert one small table both ways, so that no fork pays for
    them again."""
    import encodings.utf_8_sig  # noqa: F401
    import importlib

    import pandas as pd

    from diagnosis import read_folder  # noqa: F401 - the readers

    for module in ("diagnosis.readers.cluster", "pyarrow.pandas_compat", "pyarrow.vendored.version"):
        importlib.import_module(module)
    _frame(_ipc(pd.DataFrame({"name": pd.Series(["a"], dtype="string[pyarrow]")})))


def _address_space() -> int:
    """This process's address space now (VmSize), in bytes; 0 when /proc cannot tell. A fork of the
    zygote starts with the imported libraries mapped (about 370 MB, shared with the zygote), so its
    memory limit counts on top of them: a profile reader may grow by the limit, like a fresh decoder."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return 0
    return 0


def _reap(channels: dict[int, socket.socket]) -> None:
    """In the zygote: report the exit code of every child that ended, on its channel, and close it."""
    while channels:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        channel = channels.pop(pid, None)
        if channel is not None:
            with contextlib.suppress(OSError):
                connection = multiprocessing.connection.Connection(channel.detach())
                connection.send_bytes(_EXIT + str(os.waitstatus_to_exitcode(status)).encode())
                connection.close()


def _forked_child(channel: socket.socket) -> None:
    """A fork of the zygote: a process group of its own (killed whole), the request's temporary folder,
    then the call as in serve_one; the reply goes back on `channel`. Never returns."""
    code = 0
    try:
        os.setsid()
        conn = multiprocessing.connection.Connection(channel.detach())
        request, temp_dir = pickle.loads(conn.recv_bytes())
        if temp_dir is not None:
            import tempfile

            os.environ["TMPDIR"] = temp_dir
            tempfile.tempdir = None
        _CONNECTION.append(conn)
        reply = _serve(io.BytesIO(request), _address_space())
        try:
            data = pickle.dumps(reply, protocol=PROTOCOL)
        except MemoryError:
            data = pickle.dumps(("memory",), protocol=PROTOCOL)
        conn.send_bytes(data)
        conn.close()
    except BaseException:  # a fork must never return into the zygote's loop
        traceback.print_exc()
        code = 1
    finally:
        sys.stderr.flush()
        os._exit(code)


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


def load_mindir(path: str | os.PathLike[str], *, limits: IsolationLimits | None = None) -> MindirModel:
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


def decode_dump(subject: str, func: Callable[..., T], *args: object, **kwargs: object) -> T:
    """A reader of the outputs comparison's dumps (outputs.read_dump_at, which the caller passes: this
    module never imports outputs, a sibling stage) in a fork of the warm reader under the limits, writing
    no file; the caller gives it `say_reading` as its watcher, so that a limit names the file it parsed.
    The Dump comes back through the reply's allow-list."""
    task = Task(subject=subject, failure=say("isolation.dump-failed"), warm=True)
    return run_isolated(
        task, func, *args, **cast("dict[str, Any]", kwargs)
    )  # `limits` among them is the caller's


def decode_mapping(subject: str, func: Callable[..., T], *args: object) -> T:
    """The outputs comparison's layer mapping (a YAML file; outputs.load_mapping, passed by the caller)
    read in a fork of the warm reader under the limits, writing no file: a YAML of nested aliases grows
    without bound. The names come back as a plain dict."""
    task = Task(subject=subject, failure=say("isolation.mapping-failed"), warm=True)
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
        self._borrowed = path

    @property
    def path(self) -> Path:
        return self._borrowed

    def close(self) -> None:
        """The parent owns the folder and removes it."""


def _materialize_child(source: Source, root: str, budget: Limits) -> str:
    """Runs in the child: extract into the parent's workspace folder `root`."""
    from diagnosis import materialize as materialize_here

    return str(materialize_here(source, _BorrowedWorkspace(Path(root)), budget=budget))


def read_profile(
    folder: Path, *, rank: int | None, source: str, scheduler: str | None, workspace: Workspace
) -> tuple[Run, Run | None]:
    """diagnosis.read_folder of an unpacked or local profile folder in a child under the limits, and the
    run of the typical rank when the job has a slow rank (else None): (run, typical).

    Parsing CSV, JSON and text profiles costs a multiple of their size: a hostile one costs the child,
    which the limits stop (naming the file it was reading) and a cancelled request kills. The child
    holds its files to the per-file budgets when this process does, writes no file (RLIMIT_FSIZE=0) and
    keeps any temporary folder (a rank pool's socket) in the request's workspace. The tables come back
    as Arrow IPC streams (plain bytes), the rest of the run as allow-listed data classes."""
    from diagnosis import budgets_held

    temp = workspace.path / f"reader-{os.urandom(4).hex()}"
    temp.mkdir(mode=0o700)
    task = Task(subject=source, failure=say("isolation.profile-failed"), temp_dir=str(temp), warm=True)
    wire = run_isolated(task, _read_profile_child, str(folder), rank, source, scheduler, budgets_held())
    run, typical = wire
    return _run_from_wire(run), None if typical is None else _run_from_wire(typical)


def _read_profile_child(
    folder: str, rank: int | None, source: str, scheduler: str | None, held: bool
) -> tuple[Any, Any]:
    """Runs in the child: read the run (and the typical rank's) and encode them for the reply."""
    import pyarrow as pa

    from diagnosis import find_runs, hold_to_budgets, read_folder, watch_reads

    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        # glibc's malloc: its address space stays near what is used (a 400,000-row pair side: 1.2 GB at
        # its peak for 0.5 GB resident), so RLIMIT_AS measures the read; jemalloc and mimalloc reserve
        # 2-3 GB for the same read, which the limit would refuse. The child is short-lived: the page
        # reuse jemalloc gives the long-running server does not matter here.
        pa.set_memory_pool(pa.system_memory_pool())
    if held:
        hold_to_budgets()
    # The ranks that need a full read go to forked workers over pipes (diagnosis.scale.in_forks): a
    # multiprocessing pool's locks are POSIX semaphores, files this child cannot size (RLIMIT_FSIZE=0).
    os.environ[_RANK_POOL] = "fork"
    watch_reads(say_reading)
    cands = find_runs(Path(folder))  # found once for the job and for its typical rank
    run = read_folder(Path(folder), rank=rank, source=source, scheduler=scheduler, candidates=cands)
    typical = None
    if run.ranks is not None and run.ranks.straggler is not None:
        straggler = run.ranks.straggler
        typical = read_folder(Path(folder), rank=straggler.typical_rank, source=source, candidates=cands)
    return _run_to_wire(run), None if typical is None else _run_to_wire(typical)


def say_reading(name: str, size: int) -> None:
    """Runs in the child: tell the parent which file of the user's is opened or parsed now, and its size
    (the largest one told names the input when a limit stops the child); nothing outside a warm fork.
    A caller passes it to a child-side reader as its watcher (outputs.read_dump_at's `watch`)."""
    for conn in _CONNECTION:
        conn.send_bytes(_READING + f"{size} {name}".encode("utf-8", "replace"))


def _run_to_wire(run: Any) -> tuple[Any, dict[str, bytes]]:
    """A core.model.Run as (the run without its tables, each table as an Arrow IPC stream)."""
    import dataclasses

    import pandas as pd

    names = [f.name for f in dataclasses.fields(run) if isinstance(getattr(run, f.name), pd.DataFrame)]
    frames = {name: _ipc(getattr(run, name)) for name in names}
    frames.update({_EXTRA + name: _ipc(value) for name, value in run.extras.items()})
    return dataclasses.replace(run, **dict.fromkeys(names), extras={}), frames


_EXTRA = "extras/"  # the key prefix of Run.extras tables on the wire
_RANK_POOL = "PERF_DOCTOR_RANK_POOL"  # diagnosis.scale's pool kind


def _run_from_wire(wire: tuple[Any, dict[str, bytes]]) -> Run:
    """The run `_run_to_wire` encoded, with its tables read back from their Arrow streams."""
    run, frames = wire
    for name, data in frames.items():
        if name.startswith(_EXTRA):
            run.extras[name[len(_EXTRA) :]] = _frame(data)
        else:
            setattr(run, name, _frame(data))
    return run


# The field metadata of a string column `_ipc` sent dictionary-encoded, for `_frame` to decode it back.
_DICTIONARY = {b"perf-doctor wire": b"dictionary"}
_DICTIONARY_ROWS = 1024  # shorter string columns are sent as they are


def _ipc(frame: Any) -> bytes:
    """One DataFrame as an Arrow IPC stream (its pandas dtypes and index kept in the schema). A string
    column whose values repeat (kernel names, types, shapes: a few hundred distinct in 100,000 rows) is
    sent dictionary-encoded: a fifth of the bytes, which the reply is written, sent and read faster for."""
    import pyarrow as pa

    table = pa.Table.from_pandas(frame)
    pairs = [_compact(column, field) for column, field in zip(table.columns, table.schema, strict=True)]
    # the pandas dtypes and index, kept (copied into the type pyarrow's schema() takes)
    pandas: dict[bytes | str, bytes | str] = {k: v for k, v in (table.schema.metadata or {}).items()}
    schema = pa.schema([field for _, field in pairs], metadata=pandas)
    table = pa.Table.from_arrays([column for column, _ in pairs], schema=schema)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _compact(column: Any, field: Any) -> tuple[Any, Any]:
    """A long string column as a dictionary-encoded one (marked in its field) when it has at most half
    as many distinct values as rows; any other column as it is."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.types.is_string(field.type) or pa.types.is_large_string(field.type)
    if not text or len(column) < _DICTIONARY_ROWS:
        return column, field
    encoded = pc.dictionary_encode(column).combine_chunks()  # pyright: ignore[reportAttributeAccessIssue]  # pyarrow.compute's kernels are generated at import
    if len(encoded.dictionary) * 2 > len(column):
        return column, field
    return encoded, pa.field(field.name, encoded.type, field.nullable, _DICTIONARY)


def _frame(data: bytes) -> pd.DataFrame:
    """The DataFrame of one Arrow IPC stream `_ipc` wrote (its dictionary-encoded columns decoded)."""
    import pyarrow as pa

    table = pa.ipc.open_stream(data).read_all()
    if any(field.metadata == _DICTIONARY for field in table.schema):
        fields = [
            pa.field(f.name, f.type.value_type, f.nullable) if f.metadata == _DICTIONARY else f
            for f in table.schema
        ]
        pandas: dict[bytes | str, bytes | str] = {k: v for k, v in (table.schema.metadata or {}).items()}
        table = table.cast(pa.schema(fields, metadata=pandas))
    return table.to_pandas()


def read_npu_smi(path: str | os.PathLike[str]) -> pd.DataFrame:
    """diagnosis.read_npu_smi of an `npu-smi` text file in a fork of the warm reader under the limits;
    the readings come back as an Arrow IPC stream."""
    task = Task(subject=Path(path).name, failure=say("isolation.profile-failed"), warm=True)
    return _frame(run_isolated(task, _read_npu_smi_child, _plain(path)))


def _read_npu_smi_child(path: str) -> bytes:
    """Runs in the child: the readings as an Arrow IPC stream."""
    from diagnosis import read_npu_smi as read_here

    return _ipc(read_here(path))

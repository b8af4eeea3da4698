"""Work split over forked workers that answer over pipes, for a caller that may write no file.

doctor's isolated reader runs with RLIMIT_FSIZE=0, so a multiprocessing pool cannot start there (its locks
are POSIX semaphores, files in /dev/shm it cannot size: OSError EFBIG). A worker forked here instead
computes its share, pickles the answer into a pipe and exits. Forking is safe only in a process that runs
no other Python thread (another thread may hold a lock the fork inherits): callers check
`may_fork()`. Used by diagnosis.scale (the ranks) and outputs.ms_dump (tensor files).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import threading
from collections.abc import Callable, Sequence
from typing import BinaryIO, TypeVar

Item = TypeVar("Item")
Answer = TypeVar("Answer")


def may_fork() -> bool:
    """Whether this process may fork a worker: it can fork and runs no other Python thread (a fork would
    inherit any lock another thread holds)."""
    return hasattr(os, "fork") and threading.active_count() == 1


def cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def in_forks(
    shares: Sequence[Sequence[Item]],
    work: Callable[[Sequence[Item]], Answer],
    prepare: Callable[[], None] | None = None,
    *,
    here: bool = False,
) -> list[Answer]:
    """`work(share)` of every share, in order, each share in a worker forked for it (`prepare` runs first
    in each worker); `here`: the first share is worked in this process meanwhile (one fork fewer, and no
    answer of it to pickle). A worker that ends without an answer (a limit stopped it, or `work` raised)
    has its share worked here, after every worker has ended: the same limit or error then stops this
    process, where it names the input that needed it. The answers are unpickled from our own forks, which
    read the same input under the same limits as this process."""
    forked = shares[1:] if here else shares
    running: list[tuple[int, BinaryIO] | None] = []  # None: no worker could be forked for the share
    sent: list[bytes | None] = []
    try:
        for share in forked:
            running.append(_fork_worker(share, work, prepare))
        done = [work(shares[0])] if here and shares else []
        while running:
            sent.append(_collect(*running[0]) if running[0] else None)
            running.pop(0)
    finally:
        _end(running)
    return done + [
        work(share) if data is None else pickle.loads(data) for share, data in zip(forked, sent, strict=True)
    ]


def _fork_worker(
    share: Sequence[Item], work: Callable[[Sequence[Item]], Answer], prepare: Callable[[], None] | None
) -> tuple[int, BinaryIO] | None:
    """Fork a worker that writes the pickled `work(share)` into a pipe; its pid and the pipe's read end,
    None when no worker could be forked (no process or memory left for one: the share is worked here)."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid:
        os.close(write_end)
        return pid, os.fdopen(read_end, "rb")
    code = 1
    try:
        os.close(read_end)
        if prepare is not None:
            prepare()
        data = pickle.dumps(work(share), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as out:
            out.write(data)
        code = 0
    finally:  # a fork never returns into its parent's code
        os._exit(code)


def _collect(pid: int, pipe: BinaryIO) -> bytes | None:
    """The worker's pickled answer, None when it ended without one (it is reaped)."""
    with pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    return data if status == 0 and data else None


def _end(running: list[tuple[int, BinaryIO] | None]) -> None:
    """Kill and reap the workers not reaped yet (this process failed or was interrupted meanwhile)."""
    for pid, pipe in filter(None, running):
        pipe.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)

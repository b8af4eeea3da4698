"""What the tests of the isolated children share: the memory limit they set, the error a child out of
memory gives, and cancelling a running analysis the way Gradio does."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from sandbox.isolation import Cancellation, run_cancellable

MEMORY_MB = 200  # PERF_DOCTOR_ISOLATION_MEMORY_MB of the hostile-input tests
# Python's MemoryError, or C code that crashed or exited for want of memory (named as the likely cause)
OUT_OF_MEMORY = (
    rf"( within {MEMORY_MB} MB of memory"
    rf"|: the decoder stopped \((SIG\w+|exit code \d+)\), perhaps for lack of memory"
    rf" \(limit {MEMORY_MB} MB\))"
)


def cancel_while_running(
    work: Callable[[], None],
    token: Cancellation,
    settle_s: float = 0.0,
    pids: list[int] | None = None,
    *,
    freeze: bool = False,
) -> float:
    """Run `work` cancellably, cancel it once it runs (after `settle_s`, collecting its children's pids
    into `pids`), and wait until no child is left; returns the seconds from the cancel to the end.

    With `freeze`, the children are stopped (SIGSTOP) as soon as they are seen: a child that can never
    finish its work by itself ends only if the cancel kills it, however fast the machine reads."""

    async def scenario() -> float:
        task = asyncio.ensure_future(run_cancellable(work, token))
        while token.running == 0:
            await asyncio.sleep(0.02)
        children = [child.pid for child in token._children]
        if freeze:
            for pid in children:
                os.kill(pid, signal.SIGSTOP)
        if pids is not None:
            pids.extend(children)
        await asyncio.sleep(settle_s)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        while token.running:
            await asyncio.sleep(0.02)
        return time.monotonic() - started

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, scenario()).result()

"""core.forks: work split over forked workers answering over pipes (the isolated reader may write no file,
so no multiprocessing pool): answers in share order, a share whose worker gave no answer worked in the
caller, and workers still running when the caller fails killed and reaped, never left behind."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import pytest

from core.forks import in_forks

PARENT = [os.getpid()]  # the test's own process (set again by the test that relies on it)


def _where(share: Sequence[str]) -> tuple[str, ...]:
    """Each item with the pid of the process that worked it; an item "fails" fails in a forked worker."""
    if "fails" in share and os.getpid() != PARENT[0]:
        raise ValueError("a forked worker failed")
    return tuple(f"{item}@{os.getpid()}" for item in share)


@pytest.mark.parametrize("here", [False, True])
def test_answers_come_in_share_order_and_a_failed_share_is_worked_here(here: bool) -> None:
    """Each share is worked once, by a worker of its own (`here`: the first by the caller); the share
    whose worker failed is worked again by the caller and its answer takes its place."""
    PARENT[0] = me = os.getpid()
    answers = in_forks([["a", "b"], ["fails"], ["c"]], _where, here=here)
    items = [[text.split("@")[0] for text in answer] for answer in answers]
    pids = [{int(text.split("@")[1]) for text in answer} for answer in answers]
    assert items == [["a", "b"], ["fails"], ["c"]]
    assert (pids[0] == {me}) is here and pids[1] == {me} and me not in pids[2]


def _slow_or_failing(share: Sequence[str]) -> list[str]:
    """The caller's share fails at once; a worker's share takes a minute."""
    if share == ["here"]:
        raise ValueError("the caller's own share failed")
    time.sleep(60)
    return list(share)


def test_workers_still_running_when_the_caller_fails_are_killed_and_reaped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The caller's own share raises while a worker still works: the error comes at once, and the worker
    is killed and reaped (no process left running, no zombie)."""
    real_fork, forked = os.fork, []

    def counted_fork() -> int:
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted_fork)
    started = time.monotonic()
    with pytest.raises(ValueError, match="own share"):
        in_forks([["here"], ["slow"]], _slow_or_failing, here=True)
    assert time.monotonic() - started < 30 and len(forked) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(forked[0], os.WNOHANG)  # reaped already


def test_a_share_no_worker_could_be_forked_for_is_worked_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """fork fails (EAGAIN: no process or memory left for one): the shares are worked by the caller, the
    answers are the same, and no pipe is left open."""
    import errno

    def no_fork() -> int:
        raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

    PARENT[0] = me = os.getpid()
    open_before = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "fork", no_fork)
    answers = in_forks([["a"], ["b"], ["c"]], _where, here=True)
    assert answers == [(f"a@{me}",), (f"b@{me}",), (f"c@{me}",)]
    assert len(os.listdir("/proc/self/fd")) == open_before

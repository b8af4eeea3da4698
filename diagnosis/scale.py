"""Where the per-rank work runs: in this process, a local process pool, or a Dask distributed cluster.

Each rank is read and reduced to a compact `RankSummary`: locally by `quick_candidate` here, then
`summarize_rank` (a full read) in the pool; on Dask by `summarize_rank` (small files first).
Top-level functions, so they pickle to a pool or Dask worker; only the summaries come back. A Dask worker
must see the same paths (a shared file system): docs/scaling.md.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import cast

from core import forks
from core.errors import InputError
from core.model import RankSummary
from core.text import say
from diagnosis.readers import Candidate

SERIAL_BELOW = 4  # fewer full reads than this run here: a worker's start-up (~1 s) costs more than it saves
SERIAL_BYTES = 48 * 2**20  # so do ranks whose exports total less than this (8 small ranks read in ~1 s)
WORKERS_ENV = "PERF_DOCTOR_RANK_WORKERS"  # worker processes for the ranks (default: the CPU count; 1: serial)
# "fork": the ranks go to forked workers that answer over a pipe, not a multiprocessing pool, whose locks
# are POSIX semaphores: files in /dev/shm that a process allowed to write no file (doctor's isolated
# reader, RLIMIT_FSIZE=0) cannot size (OSError EFBIG)
POOL_ENV = "PERF_DOCTOR_RANK_POOL"
FORK_WORKERS = 2  # at most this many forked workers: each holds the caller's own limits (memory, CPU)
# From this many ranks a forked worker reads half the ranks' small files while this process reads the
# other half: about 1.6 ms a rank (512 ranks: 0.8 s) against 8-10 ms for a fork's round trip.
QUICK_FORK_RANKS = 32


def workers(ranks: int, size: int | None = None) -> int:
    """How many worker processes read `ranks` ranks of `size` bytes of exports (1 means in this process)."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if raw:
        try:
            wanted = int(raw)
        except ValueError:
            raise InputError(
                say("limits.not-number", raw=raw), path=WORKERS_ENV, expected=say("limits.positive-whole")
            ) from None
        if wanted < 1:
            raise InputError(
                say("limits.not-positive", raw=raw), path=WORKERS_ENV, expected=say("limits.positive-whole")
            )
        return min(wanted, ranks)
    if ranks < SERIAL_BELOW or (size is not None and size < SERIAL_BYTES):
        return 1
    return max(
        1,
        min(ranks, forks.cpus()),
    )


def summarize_ranks(
    cands: Sequence[Candidate], folder: Path, scheduler: str | None = None
) -> list[RankSummary]:
    """Every candidate rank's summary, in rank order: on the Dask cluster at `scheduler`; else the ranks
    whose small files suffice here (a few milliseconds each: a worker's start-up would cost more), and the
    ranks that need a full read in a local process pool (or here, for a few ranks)."""
    from diagnosis.ingest import full_summary

    ordered = sorted(cands, key=lambda c: c.rank or 0)
    base = str(display_base(folder))
    if scheduler:
        return _on_dask(ordered, base, scheduler)
    done = dict(zip((id(c) for c in ordered), quick_summaries(ordered, base), strict=True))
    rest = [c for c in ordered if done[id(c)] is None]
    n = workers(len(rest), sum(_export_bytes(c.root) for c in rest))
    if n <= 1:
        done.update((id(c), full_summary(c, base)) for c in rest)
    elif os.environ.get(POOL_ENV) == "fork":
        done.update(zip((id(c) for c in rest), in_forks(rest, base, min(n, FORK_WORKERS)), strict=True))
    else:
        # forkserver: a fork of a process running reader threads could inherit a held lock
        context = multiprocessing.get_context("forkserver")
        with ProcessPoolExecutor(max_workers=n, mp_context=context) as pool:
            full = pool.map(summarize_rank, rest, [base] * len(rest), chunksize=1)
            done.update(zip((id(c) for c in rest), full, strict=True))
    return cast("list[RankSummary]", [done[id(c)] for c in ordered])  # every rank is summarised above


def quick_summaries(cands: Sequence[Candidate], base: str) -> list[RankSummary | None]:
    """Each rank's summary from its small files (None where they do not suffice), in order: for
    QUICK_FORK_RANKS ranks or more, in a process that runs no other thread (the isolated reader, the
    CLI), half of them in a forked worker answering over a pipe (core.forks); else here, one by one."""
    from diagnosis.ingest import quick_candidate
    from diagnosis.readers.io import stop_watching

    if len(cands) < QUICK_FORK_RANKS or not forks.may_fork() or forks.cpus() < 2:
        return [quick_candidate(c, base) for c in cands]
    shares = [list(cands[0::2]), list(cands[1::2])]
    answers = forks.in_forks(shares, partial(_quick_share, base=base), stop_watching, here=True)
    found: dict[int, RankSummary | None] = {}
    for share, summaries in zip(shares, answers, strict=True):
        found.update(zip((id(c) for c in share), summaries, strict=True))
    return [found[id(c)] for c in cands]


def _quick_share(cands: Sequence[Candidate], base: str) -> list[RankSummary | None]:
    """A share's summaries from the small files (a forked worker's task, or this process's share)."""
    from diagnosis.ingest import quick_candidate

    return [quick_candidate(c, base) for c in cands]


def in_forks(cands: Sequence[Candidate], base: str, n: int) -> list[RankSummary]:
    """The full summaries of `cands` read by `n` forked workers (every n-th rank each), in order. A worker
    pickles its summaries into a pipe and exits; one that ends without them (a limit stopped it) has its
    ranks read here, where the same limit names the file that needed it (core.forks). A worker tells no
    watcher which file it reads (its parent's channel is not its own)."""
    from diagnosis.readers.io import stop_watching

    shares = [share for share in (list(cands[i::n]) for i in range(n)) if share]
    answers = forks.in_forks(shares, partial(_full_summaries, base=base), stop_watching)
    found: dict[int, RankSummary] = {}
    for share, summaries in zip(shares, answers, strict=True):
        found.update(zip((id(c) for c in share), summaries, strict=True))
    return [found[id(c)] for c in cands]


def _full_summaries(cands: Sequence[Candidate], base: str) -> list[RankSummary]:
    """A forked worker's task: the full summaries of its ranks."""
    from diagnosis.ingest import full_summary

    return [full_summary(c, base) for c in cands]


def summarize_rank(cand: Candidate, base: str, quick: bool = False) -> RankSummary:
    """A worker's task: the rank's summary (`quick`: its small files first)."""
    from diagnosis.ingest import full_summary, summarize_candidate

    summarize = summarize_candidate if quick else full_summary
    return summarize(cand, base)


def display_base(folder: Path) -> Path:
    """The folder rank roots are named relative to: below the single folders an archive or a parent folder
    wraps around the job, so a folder and its packed archive name the ranks alike."""
    for _ in range(8):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return folder
        if len(entries) != 1 or not entries[0].is_dir():
            return folder
        folder = Path(entries[0].path)
    return folder


def _export_bytes(root: Path) -> int:
    """Bytes of the files directly in a rank's folder and its ASCEND_PROFILER_OUTPUT/ (a cheap estimate of
    the parse work; raw data further down is never read)."""
    total = 0
    for folder in (root, root / "ASCEND_PROFILER_OUTPUT"):
        try:
            total += sum(entry.stat().st_size for entry in os.scandir(folder) if entry.is_file())
        except OSError:
            continue
    return total


def _on_dask(cands: Sequence[Candidate], base: str, scheduler: str) -> list[RankSummary]:
    """The summaries computed on a Dask distributed cluster (its workers read the same paths)."""
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - distributed is a pinned dependency
        raise InputError(say("scale.no-dask"), path=scheduler, expected=say("scale.dask-expected")) from None
    try:
        client = Client(scheduler, timeout="10s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        raise InputError(
            say("scale.no-scheduler", reason=str(error)), path=scheduler, expected=say("scale.dask-expected")
        ) from None
    with client:
        futures = client.map(  # pyright: ignore[reportUnknownMemberType]  # distributed's Client.map is untyped
            summarize_rank, list(cands), base=base, quick=True, pure=False
        )
        # Client.gather is untyped; of a list of futures it returns their results, in order
        gathered = cast("list[RankSummary]", client.gather(futures))  # pyright: ignore[reportUnknownMemberType]
        return list(gathered)

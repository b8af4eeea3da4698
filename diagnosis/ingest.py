"""From any user input to one canonical Run: materialise, find run roots, choose a rank, read.

The readers decide from the files present which layout a folder holds; this module only
collects their candidates and picks one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import numpy as np

from core.errors import InputError
from core.model import Limitation, Run
from diagnosis.readers import (
    Candidate,
    ascend,
    ascend_legacy,
    cann_msprof,
    cpu,
    gpu,
    legacy_cpu,
    sqlite_db,
    torch_npu,
)
from diagnosis.readers.catalog import BY_NAME, KNOWN_LAYOUTS_TEXT, SKIP_RECORD

# The reader modules, imported by name (a missing or renamed one fails here, at import), in detection
# order: the most specific layouts first, so that a 2.3/2.4 output (legacy profiler/ plus
# rank-*_ascend_ms) is not taken for a plain 2.5+ one.
READERS: tuple[ModuleType, ...] = (
    ascend_legacy,
    torch_npu,
    ascend,
    cpu,
    gpu,
    legacy_cpu,
    cann_msprof,
    sqlite_db,
)


def reader_of(layout: str) -> ModuleType:
    """The reader module that reads `layout` (each names its layouts in LAYOUTS)."""
    return next(reader for reader in READERS if layout in reader.LAYOUTS)


def find_runs(folder: Path) -> list[Candidate]:
    """Every run root of every known layout at or below `folder`, without duplicates."""
    found: list[Candidate] = []
    claimed: set[Path] = set()
    for reader in READERS:
        for cand in reader.candidates(folder):
            root = cand.root.resolve()
            if root in claimed:
                continue
            claimed.add(root)
            found.append(cand)
    return found


def choose_run(candidates: Sequence[Candidate], rank: int | None, source: str) -> Candidate:
    """The candidate for `rank`, or the only / lowest rank when no rank is asked for."""
    if not candidates:
        raise InputError("no profiler output found", path=source, expected=KNOWN_LAYOUTS_TEXT)
    layouts = {c.layout for c in candidates}
    if len(layouts) > 1 and rank is None:
        # Mixed layouts in one upload are almost always two different runs packed together.
        names = ", ".join(sorted(f"{c.root.name} ({c.layout})" for c in candidates))
        raise InputError(
            f"several different profiler outputs found: {names}",
            path=source,
            expected="one run (or the ranks of one run) per input",
        )
    _refuse_duplicate_ranks(candidates, source)
    if rank is None:
        return min(candidates, key=lambda c: (c.rank is None, c.rank or 0, str(c.root)))
    for cand in candidates:
        if cand.rank == rank:
            return cand
    ranks = sorted({c.rank for c in candidates if c.rank is not None})
    raise InputError(f"rank {rank} does not exist", path=source, expected=f"one of the ranks {ranks}")


def _refuse_duplicate_ranks(candidates: Sequence[Candidate], source: str) -> None:
    """Two run folders claiming one rank are two different runs packed together: say so."""
    by_rank: dict[int, list[str]] = {}
    for cand in candidates:
        if cand.rank is not None:
            by_rank.setdefault(cand.rank, []).append(cand.root.name)
    for rank, roots in sorted(by_rank.items()):
        if len(roots) > 1:
            raise InputError(
                f"rank {rank} appears more than once ({', '.join(sorted(roots))})",
                path=source,
                expected="one run folder per rank (upload each run separately)",
            )


MAX_PLAUSIBLE_US = 3.6e9  # one launch longer than an hour is a corrupt value, not a kernel


def sanitize_durations(run: Run) -> Run:
    """Drop launches whose duration is missing, negative, infinite or implausibly large, and say so
    as a limitation; a run with no valid duration left is an InputError naming the file."""
    dur = run.kernels["duration_us"].astype("float64").to_numpy(na_value=np.nan)
    problems = {
        "missing or NaN (not a number)": np.isnan(dur),
        "negative": dur < 0,
        "infinite": np.isinf(dur),
        "implausible (longer than an hour)": np.isfinite(dur) & (dur > MAX_PLAUSIBLE_US),
    }
    bad = np.logical_or.reduce(list(problems.values()))
    if not bad.any():
        return run
    rank = run.meta.rank if run.meta.rank is not None else 0
    where = BY_NAME[run.meta.layout].durations.replace("<r>", str(rank))
    if bad.all():
        raise InputError(
            "no valid launch duration (every value is missing, negative, infinite or too large)",
            path=where,
            expected="durations as finite, non-negative numbers",
        )
    counts = ", ".join(f"{int(m.sum())} {label}" for label, m in problems.items() if m.any())
    run.kernels = run.kernels.loc[~bad].reset_index(drop=True)
    run.limitations.append(
        Limitation(
            "durations",
            f"{int(bad.sum())} launches with invalid durations were dropped from {where} ({counts})",
            "re-export the profile; invalid durations usually mean a truncated or edited file",
        )
    )
    return run


def read_folder(folder: Path, *, rank: int | None = None, source: str | None = None) -> Run:
    """Read the run (of `rank`) found in a local folder."""
    display = source or folder.name
    cands = find_runs(folder)
    if not cands:
        from diagnosis.sources import describe

        raise InputError(
            f"this is not profiler output (found: {describe(folder)})",
            path=display,
            expected=KNOWN_LAYOUTS_TEXT,
        )
    cand = choose_run(cands, rank, display)
    run = sanitize_durations(reader_of(cand.layout).read(cand))
    run.meta.source = display
    run.meta.ranks_available = tuple(sorted({c.rank for c in cands if c.rank is not None}))
    run.limitations.extend(skipped_limitation(folder))
    return run


def skipped_limitation(folder: Path) -> list[Limitation]:
    """The note on raw data an upload held that was skipped unread (sources writes the record)."""
    try:
        record = json.loads(folder.with_name(folder.name + SKIP_RECORD).read_text(encoding="utf-8"))
        files, size = int(record["files"]), int(record["bytes"])
    except (OSError, ValueError, TypeError, KeyError):
        return []
    return [
        Limitation(
            "skipped",
            f"{files} files ({size / 2**20:.1f} MiB) no reader uses were skipped unread (raw profiler data "
            "such as "
            "PROF_*/device_*/data, logs, FRAMEWORK binaries)",
            "nothing to do; `perf-doctor pack RUN_FOLDER` makes a small archive of only the files read",
        )
    ]


def list_ranks(folder: Path) -> list[int]:
    """Ranks found in a folder (empty when the runs carry no rank)."""
    return sorted({c.rank for c in find_runs(folder) if c.rank is not None})

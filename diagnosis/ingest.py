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
from core.text import say
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
        raise InputError(say("error.no-output"), path=source, expected=KNOWN_LAYOUTS_TEXT)
    layouts = {c.layout for c in candidates}
    if len(layouts) > 1 and rank is None:
        # Mixed layouts in one upload are almost always two different runs packed together.
        names = ", ".join(sorted(f"{c.root.name} ({c.layout})" for c in candidates))
        raise InputError(
            say("error.several", names=names),
            path=source,
            expected=say("error.one-run"),
        )
    _refuse_duplicate_ranks(candidates, source)
    if rank is None:
        return min(candidates, key=lambda c: (c.rank is None, c.rank or 0, str(c.root)))
    for cand in candidates:
        if cand.rank == rank:
            return cand
    ranks = sorted({c.rank for c in candidates if c.rank is not None})
    raise InputError(say("error.no-rank", rank=rank), path=source, expected=say("error.ranks", ranks=ranks))


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


def _durations_file(run: Run) -> str:
    """The file the run's launch durations come from, as named in messages."""
    rank = run.meta.rank if run.meta.rank is not None else 0
    return BY_NAME[run.meta.layout].durations.replace("<r>", str(rank))


def refuse_zero_durations(run: Run) -> Run:
    """A run whose every launch lasts 0 µs (or -0) has no time to compare: an InputError, not a
    division by zero further down."""
    dur = run.kernels["duration_us"].astype("float64").to_numpy(na_value=np.nan)
    if len(dur) and not np.any(dur != 0):
        raise InputError(
            f"every launch lasts 0 µs: all {len(dur)} durations are zero, so there is no time to analyse",
            path=_durations_file(run),
            expected="a profile whose launches have measured durations",
        )
    return run


def drop_bad_starts(run: Run) -> Run:
    """Drop launches whose start time is infinite (e.g. 1e999 overflows to inf), with a warning: one such
    start would turn every time span it enters into inf or NaN. Missing starts are left alone."""
    if "start_us" not in run.kernels or not len(run.kernels):
        return run
    start = run.kernels["start_us"].astype("float64").to_numpy(na_value=0.0)
    bad = np.isinf(start)
    if bad.any() and not bad.all():
        run.kernels = run.kernels.loc[~bad].reset_index(drop=True)
        run.limitations.append(
            Limitation(
                "start-times",
                f"{int(bad.sum())} launches with a non-finite start time (inf) were dropped "
                f"from {_durations_file(run)}",
                "re-export the profile; a non-finite start time means an edited or corrupt file",
            )
        )
    elif bad.all():
        raise InputError(
            "no finite launch start time (every value is infinite)",
            path=_durations_file(run),
            expected="start times as finite numbers",
        )
    return run


def drop_negative_steps(run: Run) -> Run:
    """Launches and steps with a negative step id are dropped with a warning (MindSpore numbers steps
    from 0 or 1; a negative id is an edited or corrupt file)."""
    dropped = 0
    for name in ("kernels", "steps"):
        table = getattr(run, name)
        if "step" not in table or not len(table):
            continue
        step = table["step"].astype("float64").to_numpy(na_value=0.0)
        negative = step < 0
        if negative.any():
            setattr(run, name, table.loc[~negative].reset_index(drop=True))
            dropped += int(negative.sum()) if name == "kernels" else 0
    if dropped and not len(run.kernels):
        raise InputError(
            "every launch has a negative step id", path=_durations_file(run), expected="step ids of 0 or more"
        )
    if dropped:
        run.limitations.append(
            Limitation(
                "steps",
                f"{dropped} launches with a negative step id were dropped from {_durations_file(run)}",
                "re-export the profile; step ids are never negative in a real one",
            )
        )
    return run


def sanitize(run: Run) -> Run:
    """Every value check of a freshly read run: durations, start times, step ids."""
    return drop_negative_steps(drop_bad_starts(refuse_zero_durations(sanitize_durations(run))))


def read_folder(folder: Path, *, rank: int | None = None, source: str | None = None) -> Run:
    """Read the run (of `rank`) found in a local folder."""
    display = source or folder.name
    cands = find_runs(folder)
    if not cands:
        from diagnosis.sources import describe

        raise InputError(
            say("error.not-profiler", found=describe(folder)),
            path=display,
            expected=KNOWN_LAYOUTS_TEXT,
        )
    cand = choose_run(cands, rank, display)
    run = sanitize(reader_of(cand.layout).read(cand))
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

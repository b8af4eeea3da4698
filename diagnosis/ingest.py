"""From any user input to one canonical Run: materialise, find run roots, choose a rank, read.

The readers decide from the files present which layout a folder holds; this module only
collects their candidates and picks one.
"""

from __future__ import annotations

import csv
import importlib
import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from core.errors import InputError, error_line
from core.model import Limitation, RankSummary, Run
from core.text import join, say
from diagnosis.readers import Candidate
from diagnosis.readers.catalog import BY_NAME, KNOWN_LAYOUTS_TEXT, LAYOUTS, SKIP_RECORD
from diagnosis.readers.discover import walk_once

# The reader modules in detection order, the catalogue's (catalog.LAYOUTS names each layout's reader): a
# missing or renamed module fails here, at import.
READERS: tuple[ModuleType, ...] = tuple(
    importlib.import_module(f"diagnosis.readers.{name}")
    for name in dict.fromkeys(lay.reader for lay in LAYOUTS)
)


def reader_of(layout: str) -> ModuleType:
    """The reader module that reads `layout` (each names its layouts in LAYOUTS, as the catalogue does)."""
    return next(reader for reader in READERS if layout in reader.LAYOUTS)


def find_runs(folder: Path) -> list[Candidate]:
    """Every run root of every known layout at or below `folder`, without duplicates."""
    found: list[Candidate] = []
    claimed: set[Path] = set()
    with walk_once():  # every reader asks discover() for the same folder: walked once
        for reader in READERS:
            # A root an earlier reader claimed is not read again; one reader may give several ranks one
            # root (a flat legacy folder holds every rank's files side by side).
            mine = [(cand.root.resolve(), cand) for cand in reader.candidates(folder)]
            own = [(root, cand) for root, cand in mine if root not in claimed]
            claimed |= {root for root, _ in own}
            found += list({(root, cand.rank): cand for root, cand in own}.values())
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
                say("ingest.rank-twice", rank=rank, roots=", ".join(sorted(roots))),
                path=source,
                expected=say("ingest.folder-per-rank"),
            )


MAX_PLAUSIBLE_US = 3.6e9  # one launch longer than an hour is a corrupt value, not a kernel


def sanitize_durations(run: Run) -> Run:
    """Drop launches whose duration is missing, negative, infinite or implausibly large, and say so
    as a limitation; a run with no valid duration left is an InputError naming the file."""
    dur = run.kernels["duration_us"].astype("float64").to_numpy(na_value=np.nan)
    problems = {
        "ingest.dur-nan": np.isnan(dur),
        "ingest.dur-negative": dur < 0,
        "ingest.dur-infinite": np.isinf(dur),
        "ingest.dur-implausible": np.isfinite(dur) & (dur > MAX_PLAUSIBLE_US),
    }
    bad: np.ndarray = np.logical_or.reduce(list(problems.values()))
    if not bad.any():
        return run
    rank = run.meta.rank if run.meta.rank is not None else 0
    where = BY_NAME[run.meta.layout].durations.replace("<r>", str(rank))
    if bad.all():
        raise InputError(
            say("ingest.no-valid-duration"),
            path=where,
            expected=say("ingest.finite-durations"),
        )
    counts = join(
        [say("ingest.count", n=int(m.sum()), what=say(key)) for key, m in problems.items() if m.any()],
        "sep.comma",
    )
    run.kernels = run.kernels.loc[~bad].reset_index(drop=True)
    run.limitations.append(
        Limitation(
            "durations",
            say("ingest.dropped-durations", n=int(bad.sum()), where=where, counts=counts),
            say("ingest.reexport-durations"),
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
            say("ingest.all-zero", n=len(dur)),
            path=_durations_file(run),
            expected=say("ingest.measured-durations"),
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
                say("ingest.dropped-starts", n=int(bad.sum()), where=_durations_file(run)),
                say("ingest.reexport-starts"),
            )
        )
    elif bad.all():
        raise InputError(
            say("ingest.no-finite-start"),
            path=_durations_file(run),
            expected=say("ingest.finite-starts"),
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
            say("ingest.all-negative-steps"), path=_durations_file(run), expected=say("ingest.step-ids")
        )
    if dropped:
        run.limitations.append(
            Limitation(
                "steps",
                say("ingest.dropped-steps", n=dropped, where=_durations_file(run)),
                say("ingest.reexport-steps"),
            )
        )
    return run


def sanitize(run: Run) -> Run:
    """Every value check of a freshly read run: durations, start times, step ids."""
    return drop_negative_steps(drop_bad_starts(refuse_zero_durations(sanitize_durations(run))))


def read_folder(
    folder: Path,
    *,
    rank: int | None = None,
    source: str | None = None,
    scheduler: str | None = None,
    candidates: Sequence[Candidate] | None = None,
) -> Run:
    """Read the run (of `rank`) found in a local folder (its `candidates` when already found).

    Without `rank`, a job of several ranks is read whole: every rank is summarised (a local process pool,
    or the Dask cluster at `scheduler`), ranks whose files are broken are reported, and the rank read in
    full for the operator analysis is the slow rank when there is one, else the lowest readable rank."""
    display = source or folder.name
    cands = list(candidates) if candidates is not None else find_runs(folder)
    if not cands:
        from diagnosis.sources import describe

        raise InputError(
            say("error.not-profiler", found=describe(folder)),
            path=display,
            expected=KNOWN_LAYOUTS_TEXT,
        )
    cand = choose_run(cands, rank, display)
    ranked = [c for c in cands if c.rank is not None]
    ranks = None
    cluster, cluster_problem = _cluster_ranks(folder) if rank is None else ([], None)
    if rank is None and len({c.rank for c in ranked}) > 1:
        ranks, cand = _read_ranks(ranked, folder, scheduler, display, cluster)
    elif len(cluster) > 1:  # one rank uploaded beside msprof-analyze's cluster analysis of every rank
        from diagnosis.ranks import rank_set

        ranks = rank_set(cluster, cand.rank)
    run = sanitize(reader_of(cand.layout).read(cand))
    run.meta.source = display
    run.meta.ranks_available = tuple(sorted({c.rank for c in cands if c.rank is not None}))
    run.limitations.extend(skipped_limitation(folder))
    if ranks is not None:
        run.ranks = ranks
        run.limitations.extend(_broken_limitations(ranks))
    if cluster_problem is not None:
        run.limitations.append(Limitation("ranks", cluster_problem, say("ranks.broken-remedy")))
    return run


def _cluster_ranks(folder: Path) -> tuple[list[Any], str | None]:
    """Rank summaries from msprof-analyze's cluster_step_trace_time.csv when the upload holds one, and
    the problem when it cannot be read (the profiles themselves are still analysed)."""
    from diagnosis.readers.cluster import (
        COMMUNICATION,
        MATRIX,
        find_cluster_step_trace,
        read_cluster_step_trace,
        with_links,
        with_matrix,
    )

    path = find_cluster_step_trace(folder)
    if path is None:
        return [], None
    from diagnosis.scale import display_base

    try:
        summaries = read_cluster_step_trace(path, display_base(folder))
        summaries = with_links(summaries, path.parent / COMMUNICATION)
        return with_matrix(summaries, path.parent / MATRIX), None
    except InputError as error:
        where = _relative(Path(error.path), str(folder)) if error.path else None
        return [], error_line(InputError(error.problem, path=where, expected=error.expected))


def _read_ranks(
    ranked: list[Candidate], folder: Path, scheduler: str | None, display: str, cluster: list[Any]
) -> tuple[Any, Candidate]:
    """Summarise every rank; the job's RankSet and the candidate to read in full (the slow rank when
    there is one, else the lowest readable rank). Every rank broken: the lowest rank's error."""
    from diagnosis.ranks import rank_set
    from diagnosis.scale import summarize_ranks

    summaries = summarize_ranks(ranked, folder, scheduler)
    own = {s.rank for s in summaries}
    summaries += [c for c in cluster if c.rank not in own]  # ranks only the cluster analysis covers
    readable = sorted(s.rank for s in summaries if s.ok)
    if not readable:  # nothing to analyse: the lowest rank's own error, as a one-rank read gives it
        lowest = min(ranked, key=lambda c: c.rank or 0)
        sanitize(reader_of(lowest.layout).read(lowest))
        raise InputError(say("ranks.all-broken"), path=display, expected=KNOWN_LAYOUTS_TEXT)
    ranks = rank_set(summaries, readable[0])
    if ranks.straggler is not None:
        ranks.chosen = ranks.straggler.rank
    chosen = next(c for c in ranked if c.rank == ranks.chosen)
    return ranks, chosen


def _broken_limitations(ranks: Any) -> list[Limitation]:
    """One limitation per rank whose files could not be read (the others are still analysed)."""
    return [
        Limitation(
            "ranks",
            say("ranks.broken", rank=s.rank, root=s.root, problem=s.error),
            say("ranks.broken-remedy"),
        )
        for s in ranks.broken
    ]


def summarize_candidate(cand: Candidate, base: str = "") -> RankSummary:
    """Read one rank and reduce it to its RankSummary; a rank whose files are broken becomes a summary
    holding the problem (a worker of the process pool or of a Dask cluster runs this)."""
    quick = quick_candidate(cand, base)
    return quick if quick is not None else full_summary(cand, base)


def quick_candidate(cand: Candidate, base: str = "") -> RankSummary | None:
    """The rank's summary from its small files alone, or None when they do not suffice or one of them is
    damaged (then `full_summary` reads the rank and names the problem)."""
    from diagnosis.ranks import quick_summary

    rank = cand.rank if cand.rank is not None else 0
    try:
        return quick_summary(cand.root, rank, _relative(cand.root, base), cand.layout)
    except (InputError, OSError, ValueError, KeyError, TypeError, csv.Error):  # UnicodeDecodeError too
        return None


def full_summary(cand: Candidate, base: str = "") -> RankSummary:
    """The rank read in full by its layout's reader and reduced to its RankSummary; a rank whose files are
    broken becomes a summary holding the problem."""
    from diagnosis.ranks import broken, summarize

    rank = cand.rank if cand.rank is not None else 0
    root = _relative(cand.root, base)
    try:
        run = sanitize(reader_of(cand.layout).read(cand))
    except InputError as error:  # named relative to the input: never the server's folders
        where = _relative(Path(error.path), base) if error.path else None
        return broken(rank, root, error_line(InputError(error.problem, path=where, expected=error.expected)))
    except (OSError, ValueError, KeyError, TypeError) as error:  # a damaged file the reader did not foresee
        return broken(rank, root, f"{type(error).__name__}: {error}")
    return summarize(run, rank, root)


def _relative(path: Path, base: str) -> str:
    """`path` relative to the input folder `base` (its own name when outside it or without a base)."""
    try:
        return path.relative_to(base).as_posix() if base else path.name
    except ValueError:
        return path.name


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
            say("ingest.skipped", files=files, mib=size / 2**20),
            say("ingest.skipped-remedy"),
        )
    ]


def list_ranks(folder: Path) -> list[int]:
    """Ranks found in a folder (empty when the runs carry no rank)."""
    return sorted({c.rank for c in find_runs(folder) if c.rank is not None})

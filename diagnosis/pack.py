"""`perf-doctor pack`: a small archive of exactly the files Perf Doctor reads from a run folder.

A real Ascend run folder keeps CANN's raw data (PROF_*/device_*/data, thousands of slices, often GBs)
beside the exports the readers use. Packing reads the run as a diagnosis would and keeps the files the
readers opened (RunMeta.files, every one a catalogue name), at their paths relative to the folder's
parent, so that diagnosing the archive reads the same files in the same tree.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from core.errors import InputError
from core.text import say
from diagnosis.ingest import choose_run, find_runs, read_folder, reader_of
from diagnosis.readers.cluster import cluster_files


@dataclass(frozen=True)
class Packed:
    """What `pack_run` wrote: the archive, the files kept (archive names, sizes) and what it left out."""

    archive: Path
    kept: tuple[tuple[str, int], ...]
    skipped_files: int
    skipped_bytes: int

    @property
    def size(self) -> int:
        """Bytes of the archive written."""
        return self.archive.stat().st_size


def pack_run(folder: Path, out: Path | None = None, *, rank: int | None = None) -> Packed:
    """Read the run(s) in `folder` (all ranks, or `rank`) and zip the files read into `out`
    (default: ``<folder name>.perf-doctor.zip`` in the current folder)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(
            say("pack.not-folder"), path=folder.name or str(folder), expected=say("pack.run-folder")
        )
    files = _files_read(folder, rank)
    base = Path(os.path.commonpath([folder.resolve(), *files])).parent
    target = Path(out) if out is not None else Path.cwd() / f"{folder.resolve().name}.perf-doctor.zip"
    if not target.parent.is_dir():
        raise InputError(say("pack.no-folder"), path=str(target))
    if target.resolve().is_relative_to(folder.resolve()):
        raise InputError(say("pack.inside"), path=str(target), expected=say("pack.elsewhere"))
    kept = _write_zip(target, files, base)
    total_files, total_bytes = _tally(folder)
    kept_bytes = sum(size for _, size in kept)
    return Packed(target, kept, max(total_files - len(kept), 0), max(total_bytes - kept_bytes, 0))


def _files_read(folder: Path, rank: int | None) -> list[Path]:
    """Absolute paths of the files the readers open for the chosen run(s), without duplicates."""
    cands = find_runs(folder)
    if not cands:
        read_folder(folder, rank=rank)  # raises the same "not profiler output" error as a diagnosis
    chosen = [choose_run(cands, rank, folder.name)]
    if rank is None:
        chosen = [c for c in cands if c.layout == chosen[0].layout]
    found: dict[Path, None] = {}
    for cand in chosen:
        run = reader_of(cand.layout).read(cand)
        for name in run.meta.files:
            found.setdefault(Path(os.path.normpath(cand.root.resolve() / name)), None)
    if rank is None:  # msprof-analyze's cluster_analysis_output/ speaks for every rank
        found.update((path.resolve(), None) for path in cluster_files(folder))
    return list(found)


def _write_zip(target: Path, files: list[Path], base: Path) -> tuple[tuple[str, int], ...]:
    """Deflate `files` into `target` under their paths relative to `base`."""
    kept: list[tuple[str, int]] = []
    try:
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(files):
                name = path.relative_to(base).as_posix()
                archive.write(path, name)
                kept.append((name, path.stat().st_size))
    except OSError as error:
        raise InputError(say("pack.cannot-write", reason=error.strerror), path=str(target)) from None
    return tuple(kept)


def _tally(folder: Path) -> tuple[int, int]:
    """Files and bytes below `folder` (links not followed)."""
    count = size = 0
    for root, _dirs, names in os.walk(folder):
        for name in names:
            try:
                size += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
            count += 1
    return count, size

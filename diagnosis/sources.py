"""Turn whatever the user gave (a folder, an archive, or a browser folder upload) into one local folder.

Everything is written inside a private :class:`~diagnosis.workspace.Workspace`; archives are unpacked by
:mod:`diagnosis.archives` under the limits, loose files placed by :mod:`diagnosis.upload_tree`.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from core.errors import InputError
from core.text import say
from diagnosis.archives import ARCHIVE_SUFFIXES, SKIP_BUDGET, Meter, archive_kind, extract, limit_hint
from diagnosis.limits import Limits
from diagnosis.readers.catalog import SKIP_RECORD, place_of
from diagnosis.upload_tree import LEGACY_ROOT, NEW_ROOT_NAME, rebuild_tree
from diagnosis.workspace import Workspace, remove_tree

Source = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]

ACCEPTED = say("error.accepted")


# --------------------------------------------------------------------------------------------------
# Entry points


def materialize(source: Source | None, workspace: Workspace, *, budget: Limits | None = None) -> Path:
    """A local folder holding the input: a folder as is, an archive extracted, a file list rebuilt.

    `budget` defaults to ``Limits.from_env()``. The returned folder holds the run root(s) at or below it.
    Raises InputError for anything the user can fix.
    """
    limits = budget if budget is not None else Limits.from_env()
    paths = _input_paths(source)
    if len(paths) == 1 and _is_dir(paths[0]):
        return paths[0]
    for path in paths:
        _require_file(path)
    dest = workspace.new_folder("input-")
    meter = Meter(limits)
    try:
        _fill_from_files(paths, dest, meter)
        _record_skipped(dest, meter)
    except BaseException:
        remove_tree(dest)
        raise
    return dest


def _record_skipped(dest: Path, meter: Meter) -> None:
    """Say what was skipped (raw data no reader opens) in a record beside `dest`, in the workspace (never
    inside what the user gave), which the reading side turns into a note."""
    if meter.skipped:
        record = {"files": meter.skipped, "bytes": meter.skipped_bytes}
        dest.with_name(dest.name + SKIP_RECORD).write_text(json.dumps(record), encoding="utf-8")


def describe(path: str | os.PathLike[str], *, limit: int = 10) -> str:
    """A short list of what a folder holds (top-level names, folders with file counts), for messages."""
    folder = Path(path)
    if not folder.exists():
        return "nothing (the path does not exist)"
    if not folder.is_dir():
        return f"a single file {folder.name!r}"
    try:
        entries = sorted(folder.iterdir(), key=lambda p: (not _is_real_dir(p), p.name))
    except OSError as error:
        return f"an unreadable folder ({error.strerror})"
    if not entries:
        return "an empty folder"
    shown = [_describe_entry(entry) for entry in entries[:limit]]
    if len(entries) > limit:
        shown.append(f"and {len(entries) - limit} more")
    return ", ".join(shown)


def _describe_entry(entry: Path) -> str:
    """`name/ (N files)` for a folder, `name` for anything else."""
    if not _is_real_dir(entry):
        return entry.name
    count, capped = _count_files(entry, cap=10_000)
    return f"{entry.name}/ ({count}{'+' if capped else ''} file{'' if count == 1 else 's'})"


def _count_files(folder: Path, *, cap: int) -> tuple[int, bool]:
    """Files below a folder, not following links, stopping at `cap`; returns (count, stopped early)."""
    count = 0
    for _root, _dirs, files in os.walk(folder):
        count += len(files)
        if count >= cap:
            return cap, True
    return count, False


def _is_real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _input_paths(source: Source | None) -> list[Path]:
    """The source as a list of distinct paths (a browser may pass the same file twice)."""
    if source is None or (isinstance(source, str) and not source.strip()):
        raise InputError(say("error.nothing"), expected=ACCEPTED)
    items: Iterable[str | os.PathLike[str]] = [source] if isinstance(source, (str, os.PathLike)) else source
    paths: dict[str, Path] = {}
    for item in items:
        if not isinstance(item, (str, os.PathLike)) or not str(item).strip():
            raise InputError(say("sources.not-a-path", item=item), expected=ACCEPTED)
        paths.setdefault(os.path.realpath(item), Path(item))
    if not paths:
        raise InputError(say("sources.empty-list"), expected=ACCEPTED)
    return list(paths.values())


def _status(path: Path) -> os.stat_result | None:
    """The path's status, None when it does not exist; any other failure (a name over the file system's
    limit, no permission) is an InputError naming the file, never an OSError."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise InputError(say("io.cannot-open", why=exc.strerror), path=path.name, expected=ACCEPTED) from None


def _is_dir(path: Path) -> bool:
    """Whether the path is an existing folder (see _status)."""
    info = _status(path)
    return info is not None and stat.S_ISDIR(info.st_mode)


def _require_file(path: Path) -> None:
    """Each listed path must be an existing regular file."""
    info = _status(path)
    if info is None:
        raise InputError(say("error.not-found"), path=path.name, expected=ACCEPTED)
    if stat.S_ISDIR(info.st_mode):
        raise InputError(say("sources.folder-in-list"), path=path.name, expected=say("sources.files-only"))
    if not stat.S_ISREG(info.st_mode):
        raise InputError(say("io.not-regular"), path=path.name, expected=ACCEPTED)


# --------------------------------------------------------------------------------------------------
# File lists: archives and browser folder uploads


def _fill_from_files(paths: list[Path], dest: Path, meter: Meter) -> None:
    """Extract listed archives and rebuild a profiler tree from the other listed files; files of a
    folder upload that no reader opens (raw data, logs) are skipped and do not count against the limits."""
    if len(paths) > SKIP_BUDGET * meter.limits.max_members:
        raise InputError(
            say("sources.files-over", n=len(paths), limit=meter.limits.max_members),
            expected=limit_hint("max_members"),
        )
    archives: list[tuple[Path, str]] = []
    loose: list[Path] = []
    skipped: list[Path] = []
    for path in paths:
        kind = None if place_of(path.name) else archive_kind(path)
        if kind is not None:
            archives.append((path, kind))
        else:
            (loose if place_of(path.name) else skipped).append(path)
    if len(loose) + len(archives) > meter.limits.max_members:
        raise InputError(
            say("sources.profiler-files-over", n=len(loose) + len(archives), limit=meter.limits.max_members),
            expected=limit_hint("max_members"),
        )
    if loose or archives:
        for path in skipped:
            meter.skips(path.name, path.stat().st_size, force=True)
    loose += skipped if not (loose or archives) else []
    placed = rebuild_tree(loose, dest, meter)
    if len(archives) == 1 and not placed:
        extract(archives[0][0], archives[0][1], dest, meter)
        return
    used = {NEW_ROOT_NAME, LEGACY_ROOT[0]}
    for path, kind in archives:
        folder = dest / _unique_stem(path.name, used)
        os.mkdir(folder, 0o700)
        extract(path, kind, folder, meter)
    if not archives and not placed:
        raise InputError(
            say("error.no-known-file", n=len(loose), found=_preview(path.name for path in loose)),
            expected=say("error.folder-files"),
        )


def _unique_stem(name: str, used: set[str]) -> str:
    """A safe, unused folder name for one of several archives: its name without the archive suffix."""
    lower = name.lower()
    for suffix, _kind in ARCHIVE_SUFFIXES:
        if lower.endswith(suffix):
            name = name[: -len(suffix)]
            break
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:100].strip(".") or "archive"
    candidate, number = stem, 1
    while candidate in used:
        number += 1
        candidate = f"{stem}-{number}"
    used.add(candidate)
    return candidate


def _preview(names: Iterable[str], limit: int = 8) -> str:
    """Up to `limit` names, then how many more."""
    items = sorted(set(names))
    text = ", ".join(items[:limit])
    return text + (f" and {len(items) - limit} more" if len(items) > limit else "")

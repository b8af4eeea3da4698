"""Find and read a dump in what the user gave (a folder or an archive), through the same materialisation,
budgets and InputErrors as profiles (diagnosis.materialize in a private Workspace)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from core.errors import InputError
from core.text import say
from diagnosis import Limits, Source, Workspace, describe, materialize
from outputs.layers import Dump
from outputs.ms_dump import STATISTIC_CSV, iteration_folders, read_npy_dump, read_statistic_csv
from outputs.msprobe import load_mapping, read_msprobe

MAPPING_NAME = "layer_mapping.yaml"
SEARCH_DEPTH = 8  # folder levels searched for dump.json / statistic.csv below what was given
MSPROBE_SIDE_FILES = ("construct.json", "stack.json")  # parsed beside an msprobe dump.json
Watch = Callable[[str, int], None]  # told (name, size in bytes) of each file before it is parsed


def read_dump(
    source: Source,
    workspace: Workspace,
    *,
    budget: Limits | None = None,
    mapping: dict[str, str] | None = None,
    label: str | None = None,
    watch: Watch | None = None,
) -> Dump:
    """The dump in `source`: msprobe ``dump.json``, MindSpore ``statistic.csv`` or ``.npy`` tensors.

    `watch` is told the name (as messages give it) and size of each file before it is parsed: an isolated
    reader tells its parent which file needed the memory or time when a limit stopped it."""
    label = label or _label(source)  # a caller that extracted an archive elsewhere names the user's file
    limits = budget if budget is not None else Limits.from_env()
    tell = watch or _unwatched
    single = _single_file(source)
    if single is not None and single.name == "dump.json":
        _check_size(single, label, limits)
        _tell_msprobe(tell, single, label)
        return read_msprobe(single, label, mapping)
    if single is not None and single.name == STATISTIC_CSV:
        tell(label, _size(single))
        return read_statistic_csv(single, label)
    folder = materialize(source, workspace, budget=limits)
    found = _find(folder, "dump.json")
    if found is not None:
        member = _member(label, folder, found)
        _check_size(found, member, limits)
        _tell_msprobe(tell, found, member)
        return read_msprobe(found, member, mapping)
    found = _find(folder, STATISTIC_CSV)
    if found is not None:
        member = _member(label, folder, found)
        tell(member, _size(found))
        return read_statistic_csv(found, member)
    if iteration_folders(folder):
        tell(label, 0)
        return read_npy_dump(folder, label)
    raise InputError(
        say("outputs.no-dump", found=describe(folder)), path=label, expected=say("outputs.dump-expected")
    )


def reads_in_place(source: Source) -> bool:
    """Whether `read_dump` reads `source` where it is, writing nothing: one folder, or one lone
    ``dump.json`` or ``statistic.csv`` (anything else is first copied or extracted into the workspace)."""
    items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    if len(items) != 1:
        return False
    path = Path(items[0])
    return path.is_dir() or (path.is_file() and path.name in ("dump.json", STATISTIC_CSV))


def read_dump_at(
    path: str,
    label: str | None,
    budget: Limits,
    mapping: dict[str, str] | None,
    watch: Watch | None = None,
) -> Dump:
    """`read_dump` of what `reads_in_place` accepts, from plain values: what an isolated child runs (it
    opens no workspace, since nothing is copied)."""
    if not reads_in_place(path):
        raise ValueError(f"read_dump_at reads a folder or a lone dump file, not {Path(path).name!r}")
    return read_dump(path, Workspace(), budget=budget, mapping=mapping, label=label, watch=watch)


def find_mapping(*sources: Source) -> dict[str, str] | None:
    """A ``layer_mapping.yaml`` inside a given folder, or beside two given folders (msprobe's layout)."""
    found = mapping_file(*sources)
    return None if found is None else load_mapping(found, found.name)


def mapping_file(*sources: Source) -> Path | None:
    """Where `find_mapping` finds its ``layer_mapping.yaml``, without reading it; None if nowhere."""
    for source in sources:
        if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
            for candidate in (Path(source) / MAPPING_NAME, Path(source).parent / MAPPING_NAME):
                if candidate.is_file():
                    return candidate
    return None


def _single_file(source: Source) -> Path | None:
    """The one regular file given, when a single file (not an archive) was given."""
    items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    if len(items) == 1 and Path(items[0]).is_file():
        return Path(items[0])
    return None


def _find(folder: Path, name: str) -> Path | None:
    """The shallowest file called `name` below `folder` (sorted, so the choice is stable)."""
    hits: list[Path] = []
    for root, dirs, files in os.walk(folder):
        depth = len(Path(root).relative_to(folder).parts)
        if depth >= SEARCH_DEPTH:
            dirs.clear()
        if name in files:
            hits.append(Path(root) / name)
    return min(hits, key=lambda p: (len(p.parts), str(p))) if hits else None


def _unwatched(name: str, size: int) -> None:
    """No one watches the reads (the dump is read in this process)."""


def _size(path: Path) -> int:
    """A file's size in bytes, 0 when it cannot be seen (the reader then says why)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _tell_msprobe(tell: Watch, dump: Path, name: str) -> None:
    """Tell of an msprobe dump.json and the files parsed beside it (named like it)."""
    tell(name, _size(dump))
    folder_name = name.rpartition("/")[0]
    for side in MSPROBE_SIDE_FILES:
        if dump.with_name(side).is_file():
            tell(f"{folder_name}/{side}" if folder_name else side, _size(dump.with_name(side)))


def _check_size(path: Path, label: str, limits: Limits) -> None:
    """A dump.json is parsed whole: it is held to the per-file profile budget."""
    size = path.stat().st_size
    if size > limits.max_profile_file_bytes:
        raise InputError(
            say("outputs.too-big", mib=size // (1 << 20), limit=limits.max_profile_file_bytes // (1 << 20)),
            path=label,
        )


def _label(source: Source) -> str:
    """The name the user knows the input by (never a workspace path)."""
    if isinstance(source, (str, os.PathLike)):
        return Path(source).name or str(source)
    names = [Path(item).name for item in source]
    return names[0] if len(names) == 1 else f"{names[0]} (+{len(names) - 1})"


def _member(label: str, folder: Path, found: Path) -> str:
    """`label/relative/path` of a file found inside the input."""
    relative = found.relative_to(folder).as_posix()
    return f"{label}/{relative}"

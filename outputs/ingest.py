"""Find and read a dump in what the user gave (a folder or an archive), through the same materialisation,
budgets and InputErrors as profiles (diagnosis.materialize in a private Workspace)."""

from __future__ import annotations

import os
from pathlib import Path

from core.errors import InputError
from core.text import say
from diagnosis import Limits, Source, Workspace, describe, materialize
from outputs.layers import Dump
from outputs.ms_dump import STATISTIC_CSV, iteration_folders, read_npy_dump, read_statistic_csv
from outputs.msprobe import load_mapping, read_msprobe

MAPPING_NAME = "layer_mapping.yaml"
SEARCH_DEPTH = 8  # folder levels searched for dump.json / statistic.csv below what was given


def read_dump(
    source: Source,
    workspace: Workspace,
    *,
    budget: Limits | None = None,
    mapping: dict[str, str] | None = None,
    label: str | None = None,
) -> Dump:
    """The dump in `source`: msprobe ``dump.json``, MindSpore ``statistic.csv`` or ``.npy`` tensors."""
    label = label or _label(source)  # a caller that extracted an archive elsewhere names the user's file
    limits = budget if budget is not None else Limits.from_env()
    single = _single_file(source)
    if single is not None and single.name == "dump.json":
        _check_size(single, label, limits)
        return read_msprobe(single, label, mapping)
    if single is not None and single.name == STATISTIC_CSV:
        return read_statistic_csv(single, label)
    folder = materialize(source, workspace, budget=limits)
    found = _find(folder, "dump.json")
    if found is not None:
        member = _member(label, folder, found)
        _check_size(found, member, limits)
        return read_msprobe(found, member, mapping)
    found = _find(folder, STATISTIC_CSV)
    if found is not None:
        return read_statistic_csv(found, _member(label, folder, found))
    if iteration_folders(folder):
        return read_npy_dump(folder, label)
    raise InputError(
        say("outputs.no-dump", found=describe(folder)), path=label, expected=say("outputs.dump-expected")
    )


def find_mapping(*sources: Source) -> dict[str, str] | None:
    """A ``layer_mapping.yaml`` inside a given folder, or beside two given folders (msprobe's layout)."""
    for source in sources:
        if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
            for candidate in (Path(source) / MAPPING_NAME, Path(source).parent / MAPPING_NAME):
                if candidate.is_file():
                    return load_mapping(candidate, candidate.name)
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

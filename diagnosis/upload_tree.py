"""Browser folder uploads lose their sub-folders: rebuild a minimal profiler tree from the file names the
catalogue knows (diagnosis.readers.catalog.PLACES says where each basename belongs).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from core.errors import InputError
from core.text import say
from diagnosis.archives import Meter, SafeTree
from diagnosis.readers.catalog import APO, FRAMEWORK, MSPROF_OUTPUT, place_of

NEW_ROOT_NAME = "upload_ascend_ms"  # 2.5+ files: <dest>/upload_ascend_ms/{ASCEND_PROFILER_OUTPUT,FRAMEWORK}/
LEGACY_ROOT = ("upload", "profiler")  # legacy files: <dest>/upload/profiler/
MSPROF_ROOT = "PROF_upload"  # CANN msprof files: <dest>/PROF_upload/{mindstudio_profiler_output,device_0}/


def placement(names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Relative destination of every known basename among `names` (unknown names are left out).

    2.5+ files go to ``upload_ascend_ms/``; legacy files to ``upload/profiler/``. Names found in both
    layouts (cpu_op_detail_info_<r>.csv, profiler_info_<r>.json, minddata_pipeline_*) go to the legacy
    folder when legacy-only files are present or when profiler_info is present without any 2.5+-only file
    (2.5+ never writes profiler_info on CPU), else to the 2.5+ folder. With both kinds present the 2.5+
    part is nested as in MindSpore 2.3/2.4: ``upload/profiler/rank-<r>_upload_ascend_ms/``.
    """
    roles = {name: role for name in set(names) if (role := place_of(name)) is not None}
    has_new = any(role.startswith("new") for role in roles.values())
    has_legacy = "legacy" in roles.values()
    shared_to_legacy = has_legacy or ("shared-root" in roles.values() and not has_new)
    new_root: tuple[str, ...] = (NEW_ROOT_NAME,)
    if has_new and has_legacy:
        new_root = (*LEGACY_ROOT, f"rank-{_rank_of(roles)}_{NEW_ROOT_NAME}")
    targets = {
        "new-output": (*new_root, APO),
        "new-root": new_root,
        "legacy": LEGACY_ROOT,
        "shared-output": LEGACY_ROOT if shared_to_legacy else (*new_root, APO),
        "shared-framework": LEGACY_ROOT if shared_to_legacy else (*new_root, FRAMEWORK),
        "shared-root": LEGACY_ROOT if shared_to_legacy else new_root,
        "msprof-output": (MSPROF_ROOT, MSPROF_OUTPUT),
        "msprof-device": (MSPROF_ROOT, "device_0"),
        "msprof-timeline": (MSPROF_ROOT, "device_0", "timeline"),
    }
    return {name: (*targets[role], name) for name, role in roles.items()}


def _rank_of(roles: dict[str, str]) -> int:
    """The rank named by profiler_info_<r>.json, else by a legacy *_<r>[_detail].* file, else 0."""
    ordered = sorted(roles, key=lambda name: (roles[name] != "shared-root", name))
    for name in ordered:
        found = re.search(r"_(\d+)(?:_[a-z_]+)?\.(?:json|csv|txt)$", name)
        if roles[name] in ("shared-root", "legacy") and found:
            return int(found.group(1))
    return 0


def rebuild_tree(files: list[Path], dest: Path, meter: Meter) -> int:
    """Copy the known files into the tree `placement` describes; returns how many were placed.

    Different files with one basename (e.g. kernel_details.csv of two ranks) cannot be told apart after a
    browser folder upload, so they are refused; identical copies are kept once."""
    by_name: dict[str, list[Path]] = {}
    for path in files:
        by_name.setdefault(path.name, []).append(path)
    targets = placement(by_name)
    for name in targets:
        _refuse_ambiguous(name, by_name[name])
    tree = SafeTree(dest, "upload", meter.limits)
    for name, parts in sorted(targets.items(), key=lambda item: item[1]):
        source = by_name[name][0]
        meter.count_member(name, name)
        with source.open("rb") as stream, tree.create(parts, name) as out:
            meter.pump(stream, out, source=name, label=name)
    return len(targets)


def _refuse_ambiguous(name: str, paths: list[Path]) -> None:
    """Several different files with one name: refuse, since the folder each came from is lost."""
    if len(paths) < 2:
        return
    if len({path.stat().st_size for path in paths}) == 1 and len({_digest(path) for path in paths}) == 1:
        return
    raise InputError(
        say("upload.same-name", n=len(paths)),
        path=name,
        expected=say("upload.archive-instead"),
    )


def _digest(path: Path) -> str:
    """SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()

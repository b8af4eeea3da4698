"""Find profiler run roots in a folder and tell their layout from the files present (never a version string).

One classifier serves the Ascend-family and legacy readers, so two readers never claim the same folder:
each reader's ``candidates()`` keeps the roots of its own layout. Accepted inputs: a run root, any parent
of run roots (one candidate per rank), or ``ASCEND_PROFILER_OUTPUT/`` itself.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path

from core.errors import InputError
from core.text import say
from diagnosis.readers import Candidate, catalog
from diagnosis.readers.catalog import (
    APO,
    CPU_DETAIL,
    FRAMEWORK,
    INFO_FILE,
    KERNEL_DETAILS,
    LEGACY_ASCEND,
    LEGACY_CPU,
    LEGACY_GPU,
    LEGACY_OPERATORS,
    MS_DB,
    RANK_DIR,
    RANK_SUFFIX,
    STEP_TRACE_RAW_FILE,
    TORCH_DB,
    TRACE_VIEW,
)
from diagnosis.readers.io import require_regular

MAX_DEPTH = 6
_SKIP = re.compile(r"^(?:PROF_.*|FRAMEWORK|logs|device_\d+|host|mindstudio_profiler_\w+|__pycache__|\..*)$")


_WALKED: ContextVar[dict[Path, list[Candidate]] | None] = ContextVar("discover_walked", default=None)


@contextmanager
def walk_once() -> Generator[None, None, None]:
    """Within this block a folder is walked once: every reader's `candidates()` asks `discover` for the
    same folder, and a 512-rank job's tree took 0.15 s a walk."""
    token = _WALKED.set({})
    try:
        yield
    finally:
        _WALKED.reset(token)


def discover(folder: Path) -> list[Candidate]:
    """Every run root at or below `folder`, in path order (roots are not searched inside)."""
    folder = Path(folder)
    walked = _WALKED.get()
    if walked is None:
        return _discover(folder)
    if folder not in walked:
        walked[folder] = _discover(folder)
    return list(walked[folder])


def _discover(folder: Path) -> list[Candidate]:
    if not folder.is_dir():
        return []
    if folder.name == APO:
        return _output_folder_given(folder)
    found: list[Candidate] = []
    _walk(folder, 0, found)
    return found


def _output_folder_given(folder: Path) -> list[Candidate]:
    """`ASCEND_PROFILER_OUTPUT/` itself: read its run folder when that is one, else the folder alone."""
    parent = classify(folder.parent)
    if parent:
        note = f"{APO} given directly; read its run folder {folder.parent.name}"
        return [replace(c, note=note) for c in parent]
    return classify(folder)


def _walk(folder: Path, depth: int, found: list[Candidate]) -> None:
    here = classify(folder)
    if here:
        found.extend(here)
        return
    if depth >= MAX_DEPTH:
        return
    for sub in _subdirs(folder):
        if not _SKIP.match(sub.name):
            _walk(sub, depth + 1, found)


def _subdirs(folder: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]


def _listing(folder: Path) -> tuple[set[str], set[str]]:
    """(file names, directory names) of a folder; empty when unreadable."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return set(), set()
    files: set[str] = set()
    dirs: set[str] = set()
    for entry in entries:
        try:
            if entry.is_file():
                files.add(entry.name)
            elif entry.is_dir():
                dirs.add(entry.name)
        except OSError as exc:  # a symbolic link loop (ELOOP) or an entry removed meanwhile
            raise InputError(
                say("discover.loop", why=exc.strerror),
                path="/".join(Path(entry.path).parts[-3:]),
                expected=say("discover.regular"),
            ) from None
    return files, dirs


def classify(folder: Path) -> list[Candidate]:
    """The run roots located exactly at `folder` (several for a flat legacy folder with several ranks)."""
    files, dirs = _listing(folder)
    if APO in dirs:
        return _run_root(folder, files, dirs)
    flat = _flat_legacy(folder, files, dirs)
    if flat:
        return flat
    if KERNEL_DETAILS in files:
        note = "kernel_details.csv without its run folder: no profiler configuration record"
        return [Candidate(catalog.ASCEND_MS.name, folder, _suffix_rank(files), note=note)]
    if TRACE_VIEW in files and not dirs:
        note = "trace_view.json without its run folder: kernels from its Ascend Hardware events"
        return [Candidate(catalog.ASCEND_MS.name, folder, None, note=note)]
    if TRACE_VIEW not in files and any(MS_DB.match(f) for f in files):
        note = "ascend_mindspore_profiler db without its run folder: no profiler configuration record"
        return [Candidate(catalog.ASCEND_MS_DB.name, folder, _suffix_rank(files), note=note)]
    return []


def _run_root(folder: Path, files: set[str], dirs: set[str]) -> list[Candidate]:
    """A folder holding ASCEND_PROFILER_OUTPUT/: torch_npu, MindSpore 2.3/2.4 rank folder, 2.5+ or CPU."""
    out_files, _ = _listing(folder / APO)
    info_ranks = sorted(int(m.group(1)) for f in files if (m := INFO_FILE.match(f)))
    if _is_torch(folder, files, info_ranks):
        rank = info_ranks[0] if info_ranks else _suffix_rank(out_files)
        return [Candidate(_torch_layout(out_files), folder, rank)]
    rank_dir = RANK_DIR.match(folder.name)
    if not info_ranks and (rank_dir or _legacy_parent(folder.parent)):
        return [Candidate(catalog.ASCEND_MS_23.name, folder, int(rank_dir.group(1)) if rank_dir else None)]
    has_prof = any(d.startswith("PROF_") for d in dirs)
    if not has_prof and KERNEL_DETAILS not in out_files and _has_cpu_framework(folder):
        return [Candidate(catalog.CPU_MS.name, folder, None)]
    ascend_files = KERNEL_DETAILS in out_files or any(f.endswith(".db") for f in out_files)
    if has_prof or info_ranks or ascend_files or folder.name.endswith("_ascend_ms"):
        rank = info_ranks[0] if info_ranks else _suffix_rank(out_files)
        return [Candidate(_ascend_layout(out_files), folder, rank)]
    return []


def _ascend_layout(out_files: set[str]) -> str:
    """MindSpore: a db-only export (ascend_mindspore_profiler*.db) is read from its SQLite database."""
    return _export_layout(out_files, MS_DB, catalog.ASCEND_MS.name, catalog.ASCEND_MS_DB.name)


def _torch_layout(out_files: set[str]) -> str:
    """torch_npu: a db-only export (ascend_pytorch_profiler_<rank>.db) is read from its SQLite database."""
    return _export_layout(out_files, TORCH_DB, catalog.TORCH_NPU.name, catalog.TORCH_NPU_DB.name)


def _export_layout(out_files: set[str], db: re.Pattern[str], text_layout: str, db_layout: str) -> str:
    """An export_type=db output (its database, no kernel_details.csv and no trace_view.json) is read from
    the database; anything else from the text exports."""
    text = KERNEL_DETAILS in out_files or TRACE_VIEW in out_files
    return text_layout if text or not any(db.match(f) for f in out_files) else db_layout


def _is_torch(folder: Path, files: set[str], info_ranks: list[int]) -> bool:
    """torch_npu: `*_ascend_pt`, a rank-less `profiler_info.json`, or a `config` record inside."""
    if folder.name.endswith("_ascend_pt") or "profiler_info.json" in files:
        return True
    if not info_ranks:
        return False
    path = folder / f"profiler_info_{info_ranks[0]}.json"
    try:
        require_regular(path)  # never block on a named pipe; named if a limit stops the decoding
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError, InputError):  # unreadable here: the reader says why
        return False
    return isinstance(record, dict) and "config" in record and "profiler_parameters" not in record


def _legacy_parent(folder: Path) -> bool:
    """The `profiler/` folder of MindSpore 2.3/2.4: legacy per-rank files beside the rank folders."""
    files, _ = _listing(folder)
    return any(INFO_FILE.match(f) or LEGACY_ASCEND.match(f) for f in files)


def _has_cpu_framework(folder: Path) -> bool:
    files, _ = _listing(folder / FRAMEWORK)
    return any(CPU_DETAIL.match(f) for f in files)


def _suffix_rank(files: set[str]) -> int | None:
    ranks = sorted(int(m.group(1)) for f in files if (m := RANK_SUFFIX.match(f)))
    return ranks[0] if ranks else None


def _ids(files: set[str], pattern: re.Pattern[str]) -> list[int]:
    return sorted({int(m.group(1)) for f in files if (m := pattern.match(f))})


def _flat_legacy(folder: Path, files: set[str], dirs: set[str]) -> list[Candidate]:
    """MindSpore 2.0-2.4 flat `profiler/` folders: GPU, then Ascend, then CPU files decide."""
    gpu = _ids(files, LEGACY_GPU)
    if gpu:
        return [Candidate(catalog.LEGACY_GPU_FLAT.name, folder, r) for r in gpu]
    if any(RANK_DIR.match(d) and d.endswith("_ascend_ms") for d in dirs):
        return []  # MindSpore 2.3/2.4: the rank folders below are the run roots
    ascend = _ids(files, LEGACY_ASCEND)
    if ascend and not _ids(files, LEGACY_OPERATORS) and _ids(files, STEP_TRACE_RAW_FILE):
        # MindSpore 1.x steps and communication without operator files (e.g. kept for cluster analysis)
        return [Candidate(catalog.LEGACY_STEPS.name, folder, r) for r in _ids(files, STEP_TRACE_RAW_FILE)]
    if ascend:
        return [Candidate(catalog.LEGACY_ASCEND_FLAT.name, folder, r) for r in ascend]
    cpu = _ids(files, LEGACY_CPU)
    if cpu and folder.name != FRAMEWORK:
        return [Candidate(catalog.LEGACY_CPU_FLAT.name, folder, r) for r in cpu]
    return []

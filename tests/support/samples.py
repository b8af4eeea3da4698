"""Where the real profiler samples are (../shared/samples beside the repository; from a git worktree kept
in a sibling folder, ../../shared/samples), and small readers of their own files for the tests' figures."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = next(
    (p for p in (_ROOT.parent / "shared" / "samples", _ROOT.parents[1] / "shared" / "samples") if p.is_dir()),
    _ROOT.parent / "shared" / "samples",
)
TORCH_TEXT = SAMPLES / "torch_npu_2rank" / "text"
TORCH_DB = SAMPLES / "torch_npu_2rank" / "db"
TIMELINE = SAMPLES / "msprof_timeline_2dev"
LEGACY = SAMPLES / "mindspore_legacy_4rank"
LEVELS = ("level0", "level1", "level2")


def query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows of one query on a sample database, opened read-only."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def torch_db(level: str, rank: int) -> Path:
    return (
        TORCH_DB
        / level
        / f"rank{rank}_ascend_pt"
        / "ASCEND_PROFILER_OUTPUT"
        / f"ascend_pytorch_profiler_{rank}.db"
    )


def trace_events(path: Path) -> list[dict[str, Any]]:
    """The events of a Chrome-trace JSON list."""
    return [e for e in json.loads(path.read_text(encoding="utf-8")) if isinstance(e, dict)]

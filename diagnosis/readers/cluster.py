"""msprof-analyze's `cluster_analysis_output/` (written by `msprof-analyze cluster`): the per-rank time
breakdown of `cluster_step_trace_time.csv`, read as rank summaries when a job's ranks are not uploaded
one by one (or to fill the ranks that are missing).

Its rows: `Step` (empty when the analysis summed every step), `Type` (`rank` or `stage`), `Index` (the rank
id, or the stage's ranks), then Computing, Communication(Not Overlapped), Overlapped, Communication, Free,
Stage (the wall time), Bubble, in µs. Only the `rank` rows are read.
"""

from __future__ import annotations

import csv
from pathlib import Path

from core.errors import InputError
from core.model import RankSummary, StepBreakdown
from core.text import say
from diagnosis.readers.io import display

CLUSTER_FOLDER = "cluster_analysis_output"
STEP_TRACE = "cluster_step_trace_time.csv"
MAX_DEPTH = 3
COLUMNS = ("Computing", "Communication(Not Overlapped)", "Overlapped", "Free", "Stage")


def find_cluster_step_trace(folder: Path) -> Path | None:
    """`cluster_analysis_output/cluster_step_trace_time.csv` at or below `folder` (three levels at most)."""
    for depth in range(MAX_DEPTH + 1):
        pattern = "/".join(["*"] * depth + [CLUSTER_FOLDER, STEP_TRACE])
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
    return None


def read_cluster_step_trace(path: Path, base: Path) -> list[RankSummary]:
    """One summary per `rank` row (a step per distinct Step value; 0 when the analysis summed the steps)."""
    root = path.relative_to(base).as_posix() if path.is_relative_to(base) else path.name
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(say("cluster.unreadable", reason=str(error)), path=display(path)) from None
    if rows and not set(COLUMNS) <= set(rows[0]):
        missing = ", ".join(c for c in COLUMNS if c not in rows[0])
        raise InputError(
            say("cluster.columns", missing=missing), path=display(path), expected=", ".join(COLUMNS)
        )
    steps: dict[int, list[StepBreakdown]] = {}
    for row in rows:
        if (row.get("Type") or "").strip().lower() != "rank":
            continue
        try:
            rank = int(str(row.get("Index")).strip())
            values = [float(row[c]) for c in COLUMNS]
        except (TypeError, ValueError):
            continue
        step = int(row["Step"]) if (row.get("Step") or "").strip().isdigit() else 0
        computing, exposed, overlapped, free, wall = values
        steps.setdefault(rank, []).append(StepBreakdown(step, wall, computing, exposed, overlapped, free))
    return [
        RankSummary(
            rank=rank,
            root=root,
            layout="msprof-analyze-cluster",
            breakdown=tuple(b),
            breakdown_source="cluster",
        )
        for rank, b in sorted(steps.items())
    ]

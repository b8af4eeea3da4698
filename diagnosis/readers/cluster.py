"""msprof-analyze's `cluster_analysis_output/` (written by `msprof-analyze cluster`): the per-rank time
breakdown of `cluster_step_trace_time.csv`, read as rank summaries when a job's ranks are not uploaded
one by one (or to fill the ranks that are missing).

Its rows: `Step` (empty when the analysis summed every step), `Type` (`rank` or `stage`), `Index` (the rank
id, or the stage's ranks), then Computing, Communication(Not Overlapped), Overlapped, Communication, Free,
Stage (the wall time), Bubble, in µs. Only the `rank` rows are read. `cluster_communication.json` beside it
gives those ranks' bandwidth per link type: {group: {step: {op: {rank: {"Communication Bandwidth Info":
{link type: {"Bandwidth(GB/s)": ...}}}}}}}, the mean over the operators that used the link.
`cluster_communication_matrix.json` gives each link's bandwidth between two global ranks: {group's ranks:
{step: {"<op>@<group>": {"<src>-<dst>": {"Transport Type", "Transit Size(MB)", "Transit Time(ms)", ...}}}}},
its `-total` operators (and the `Total Op Info` sum of each group, left out here as it repeats them).
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

from core.errors import InputError
from core.model import RankSummary, StepBreakdown
from core.text import say
from diagnosis.readers.communication import adds_up
from diagnosis.readers.io import display, is_object, json_get, json_items, json_number, load_json

CLUSTER_FOLDER = "cluster_analysis_output"
STEP_TRACE = "cluster_step_trace_time.csv"
COMMUNICATION = "cluster_communication.json"
MATRIX = "cluster_communication_matrix.json"
FILES = (STEP_TRACE, COMMUNICATION, MATRIX)  # what is read of the folder (perf-doctor pack keeps them)
LINKS = ("HCCS", "RDMA", "SDMA", "PCIE", "SIO")
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


def cluster_files(folder: Path) -> list[Path]:
    """The files of the cluster analysis found at or below `folder` that are read (FILES)."""
    trace = find_cluster_step_trace(folder)
    if trace is None:
        return []
    return [trace.parent / name for name in FILES if (trace.parent / name).is_file()]


def with_links(summaries: list[RankSummary], path: Path) -> list[RankSummary]:
    """The summaries with each rank's bandwidth per link type from cluster_communication.json at `path`
    (unchanged when it is absent)."""
    if not path.is_file():
        return summaries
    links = cluster_links(load_json(path))
    return [dataclasses.replace(s, link_gbps=links[s.rank]) if s.rank in links else s for s in summaries]


def cluster_links(data: object) -> dict[int, dict[str, float]]:
    """Per rank, the mean bandwidth (GB/s) per link type over the operators that used it (above 0)."""
    found: dict[int, dict[str, list[float]]] = {}
    for _, steps in json_items(data):
        for _, ops in json_items(steps):
            for _, ranks in json_items(ops):
                for rank, info in json_items(ranks):
                    _add_links(found, rank, info)
    return {
        rank: {link: round(sum(v) / len(v), 4) for link, v in sorted(by_link.items())}
        for rank, by_link in sorted(found.items())
    }


def _add_links(found: dict[int, dict[str, list[float]]], rank: str, info: object) -> None:
    if not (is_object(info) and rank.strip().isdigit()):
        return
    for link, stats in json_items(json_get(info, "Communication Bandwidth Info")):
        value = json_number(json_get(stats, "Bandwidth(GB/s)"))
        if link.upper() in LINKS and value is not None and value > 0:
            found.setdefault(int(rank.strip()), {}).setdefault(link.upper(), []).append(value)


def with_matrix(summaries: list[RankSummary], path: Path) -> list[RankSummary]:
    """The summaries with each rank's links (pair_gbps, by global ranks, the rank as src) from
    cluster_communication_matrix.json at `path` (unchanged when it is absent)."""
    if not path.is_file():
        return summaries
    pairs = cluster_pairs(load_json(path))
    return [dataclasses.replace(s, pair_gbps=pairs[s.rank]) if s.rank in pairs else s for s in summaries]


def cluster_pairs(data: object) -> dict[int, dict[str, dict[str, float]]]:
    """Per src rank, per link type, each link's bandwidth (GB/s) as "<src>-<dst>": its transit size over
    its transit time summed over the steps and groups of its `-total` operators."""
    sums: dict[tuple[int, str, int], list[float]] = {}
    for _, steps in json_items(data):
        for _, ops in json_items(steps):
            for op, links in json_items(ops):
                if op.startswith("Total Op Info") or not adds_up(op):
                    continue
                for pair, info in json_items(links):
                    _add_pair(sums, pair, info)
    out: dict[int, dict[str, dict[str, float]]] = {}
    for (src, link, dst), (size, time) in sorted(sums.items()):
        if size > 0 and time > 0:  # MB per ms is GB/s
            out.setdefault(src, {}).setdefault(link, {})[f"{src}-{dst}"] = round(size / time, 4)
    return out


def _add_pair(sums: dict[tuple[int, str, int], list[float]], pair: str, info: object) -> None:
    ends = pair.split("-")
    if not (is_object(info) and len(ends) == 2 and all(e.strip().isdigit() for e in ends)):
        return
    transport = json_get(info, "Transport Type")
    link = str("" if transport is None else transport).strip().upper()
    size, time = (
        json_number(json_get(info, "Transit Size(MB)")),
        json_number(json_get(info, "Transit Time(ms)")),
    )
    src, dst = (int(e) for e in ends)
    if link in LINKS and src != dst and size is not None and time is not None:
        total = sums.setdefault((src, link, dst), [0.0, 0.0])
        total[0] += size
        total[1] += time

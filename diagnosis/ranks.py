"""Every rank of a job: a compact per-rank summary (time breakdown per step, per-op aggregates, link
bandwidth), the slow rank (a robust straggler test over steps) and slow links.

A rank is reduced to a `core.model.RankSummary` right after it is read, so a job of many ranks costs the
memory of one rank's tables plus a few kilobytes per rank. The breakdown follows msprof-analyze's
step_trace_time terms: computing, communication not overlapped by computing, overlapped, and free.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import InputError
from core.model import RankSet, RankSummary, Run, SlowLinkRecord, StepBreakdown, Straggler
from core.text import say
from diagnosis.readers import catalog
from diagnosis.readers.communication import (
    group_links,
    group_members,
    matrix_table,
    pair_bandwidth,
)
from diagnosis.readers.io import (
    NULL_VALUES,
    is_object,
    json_get,
    json_items,
    json_number,
    load_json,
    read_header,
    require,
    resolve,
)
from diagnosis.readers.rank_files import QUICK_COLUMNS, STATISTIC_COLUMNS, kernel_type_totals
from diagnosis.readers.steps import union_lengths
from diagnosis.readers.trace import scan_markers

TOP_OPS = 64  # op types kept per rank (by time): enough to say what a slow rank spends more time on
Z_SLOW = 3.5  # robust z-score (Iglewicz and Hoaglin's modified z) above which a rank is an outlier
MIN_RATIO = 1.1  # and at least 10 % more computing than the median rank: smaller gaps are noise
MAD_FLOOR = 0.01  # MAD is at least 1 % of the median, so identical ranks do not make every wiggle an outlier
STABLE_SHARE = 0.6  # the rank is an outlier in at least 60 % of the steps every rank recorded
MIN_RANKS = 3  # a link type needs this many ranks (or links) to have a median worth comparing with
DIXON_MAX = 10  # up to this many ranks Dixon's Q test finds the outlier; MAD of so few values is degenerate
# Dixon's Q (r10) at 95 % confidence, by number of values (Rorabacher, Anal. Chem. 63, 1991, table II)
DIXON_Q95 = {3: 0.970, 4: 0.829, 5: 0.710, 6: 0.625, 7: 0.568, 8: 0.526, 9: 0.493, 10: 0.466}
SLOW_LINK = 0.5  # a link below half the median bandwidth of its type is slow
QUICK_TRACE_BYTES = 64 * 2**20  # a quick summary scans trace_view.json for the clock up to this size (~0.5 s)
LINKS = ("hccs", "rdma", "sdma", "pcie", "sio")


# -------------------------------------------------------------------------------------------- breakdown


def is_communication(kernels: pd.DataFrame) -> np.ndarray:
    """Which launches are collective communication (HCCL tasks, hcom_* / Hccl* operators)."""
    core = kernels["core"].astype("string").fillna("").str.upper()
    name = kernels["name"].astype("string").fillna("").str.lower()
    op_type = kernels["op_type"].astype("string").fillna("").str.lower()
    comm = (core == "HCCL") | name.str.startswith("hcom_") | op_type.str.startswith(("hcom", "hccl"))
    return comm.to_numpy(dtype=bool, na_value=False)


def step_breakdown(run: Run) -> tuple[tuple[StepBreakdown, ...], str]:
    """Per step: wall, computing, exposed communication, overlapped and free time, and where they came
    from: the run's own step_trace_time (when it records communication) or the kernels by time overlap."""
    steps = run.steps
    if len(steps) and steps["communication_us"].notna().any() and steps["busy_us"].notna().any():
        return _from_step_trace(steps), "step_trace_time"
    return _from_kernels(run), "kernels"


def _from_step_trace(steps: pd.DataFrame) -> tuple[StepBreakdown, ...]:
    frame = steps[["step", "duration_us", "busy_us", "communication_us", "overlapped_us", "free_us"]]
    values = frame.astype("float64").fillna(0.0).to_numpy()
    return tuple(
        StepBreakdown(int(s), float(w), float(c), float(m), float(o), float(f)) for s, w, c, m, o, f in values
    )


def _from_kernels(run: Run) -> tuple[StepBreakdown, ...]:
    """Computing = union of compute launches, communication = union of HCCL launches, overlapped = their
    intersection; the wall is the step's recorded duration, else the span of its launches."""
    k = run.kernels
    start = k["start_us"].to_numpy(dtype="float64", na_value=np.nan)
    if not len(k) or not np.isfinite(start).any():
        return ()
    dur = np.nan_to_num(k["duration_us"].to_numpy(dtype="float64", na_value=np.nan))
    step = k["step"].to_numpy(dtype="float64", na_value=np.nan)
    step = np.where(np.isnan(step), -1.0, step) if np.isfinite(step).any() else np.zeros(len(k))
    frame = pd.DataFrame({"step": step, "start": start, "end": start + dur, "comm": is_communication(k)})
    frame = frame[np.isfinite(frame["start"]) & (frame["step"] >= 0)]
    if frame.empty:
        return ()
    every = union_lengths(frame, "step")
    compute = _union(frame[~frame["comm"]], every.index)
    comm = _union(frame[frame["comm"]], every.index)
    overlapped = (compute + comm - every).clip(lower=0)
    span = frame.groupby("step")["end"].max() - frame.groupby("step")["start"].min()
    wall = _recorded_wall(run.steps, span)
    out: list[StepBreakdown] = []
    for s in every.index:
        exposed = float(comm[s] - overlapped[s])
        free = max(float(wall[s]) - float(compute[s]) - exposed, 0.0)
        out.append(
            StepBreakdown(int(s), float(wall[s]), float(compute[s]), exposed, float(overlapped[s]), free)
        )
    return tuple(out)


def _union(frame: pd.DataFrame, index: pd.Index) -> pd.Series:
    if frame.empty:
        return pd.Series(0.0, index=index)
    return union_lengths(frame, "step").reindex(index, fill_value=0.0)


def _recorded_wall(steps: pd.DataFrame, span: pd.Series) -> pd.Series:
    """Each step's recorded wall time where the step table has one, else its launches' span."""
    if not len(steps) or steps["duration_us"].isna().all():
        return span
    recorded = pd.Series(
        steps["duration_us"].to_numpy(dtype="float64", na_value=np.nan),
        index=steps["step"].to_numpy(dtype="float64", na_value=np.nan),
    )
    recorded = recorded[~recorded.index.duplicated()]
    return recorded.reindex(span.index).fillna(span).clip(lower=span * 0)


# ---------------------------------------------------------------------------------------------- summary


def summarize(run: Run, rank: int, root: str) -> RankSummary:
    """The compact summary of one read rank."""
    breakdown, source = step_breakdown(run)
    k = run.kernels
    by_type = k["op_type"].astype("string").fillna(k["name"].astype("string"))
    op_us = (
        pd.Series(k["duration_us"].to_numpy(dtype="float64", na_value=0.0))
        .groupby(by_type.to_numpy(dtype=object, na_value=""))
        .sum()
        .nlargest(TOP_OPS)
    )
    summary = RankSummary(
        rank=rank,
        root=root,
        layout=run.meta.layout,
        breakdown=breakdown,
        breakdown_source=source,
        kernels=len(k),
        op_us={str(name): round(float(us), 3) for name, us in op_us.items()},
        link_gbps=_link_bandwidth(run),
        aicore_mhz=_clock(run),
    )
    return _with_matrix(summary, run.extras.get("communication_matrix"), run.meta.environment)


def _with_matrix(summary: RankSummary, matrix: pd.DataFrame | None, metadata: object) -> RankSummary:
    """The summary with its communication_matrix.json and profiler_metadata.json figures: its links in
    group ranks, its rank in each group and the groups' global ranks when recorded."""
    links, group_rank = group_links(matrix)
    return dataclasses.replace(
        summary, links=links, group_rank=group_rank, group_members=group_members(metadata)
    )


def _link_bandwidth(run: Run) -> dict[str, float]:
    """Mean bandwidth (GB/s) per link type over the collectives that used it (communication.json)."""
    return _link_bandwidth_of(run.extras.get("communication"))


def _link_bandwidth_of(comm: pd.DataFrame | None) -> dict[str, float]:
    """`_link_bandwidth` of a communication.json table."""
    if comm is None or not len(comm):
        return {}
    out: dict[str, float] = {}
    for link in LINKS:
        col = f"{link}_bandwidth_gb_s"
        if col in comm.columns:
            values = pd.to_numeric(comm[col], errors="coerce").astype("float64")
            used = values[values > 0]
            if len(used):
                out[link.upper()] = round(float(used.mean()), 4)
    return out


def _clock(run: Run) -> float | None:
    return _median_mhz(run.frequency)


def _median_mhz(frequency: pd.DataFrame) -> float | None:
    """The median of the AI Core clock samples (MHz), None without any."""
    mhz = frequency["mhz"].astype("float64").dropna() if len(frequency) else pd.Series(dtype=float)
    return round(float(mhz.median()), 1) if len(mhz) else None


def quick_summary(run_root: Path, rank: int, root: str, layout: str) -> RankSummary | None:
    """The summary of an Ascend-family rank from its small files alone, or None when they do not suffice
    (then the rank is read in full): step_trace_time.csv with a communication column gives the breakdown,
    op_statistic.csv (else two columns of kernel_details.csv) the per-op totals, communication.json and
    communication_matrix.json the link bandwidth, trace_view.json's "AI Core Freq" counters the clock (when
    the trace is at most QUICK_TRACE_BYTES). This is the per-rank work of a many-rank job: it skips the
    kernel table, the shapes and the counters that only the ranks read in full need."""
    apo = run_root / catalog.APO
    trace, details = apo / catalog.STEP_TRACE_TIME, apo / catalog.KERNEL_DETAILS
    if not (trace.is_file() and details.is_file()):
        return None
    # the kernel table's header must hold its launches (one line read): a damaged one is read in full and
    # reported, as a full read would
    require(resolve(read_header(details), QUICK_COLUMNS), QUICK_COLUMNS, ("name", "duration_us"), details)
    breakdown = _quick_step_trace(trace)
    if not breakdown:
        return None
    op_us, kernels = _op_totals(apo)
    comm, matrix = apo / catalog.COMMUNICATION, apo / catalog.COMMUNICATION_MATRIX
    links = _links_of_json(load_json(comm)) if comm.is_file() else {}
    table = matrix_table(load_json(matrix), matrix) if matrix.is_file() else None
    metadata = run_root / catalog.PROFILER_METADATA
    summary = RankSummary(
        rank=rank,
        root=root,
        layout=layout,
        breakdown=breakdown,
        breakdown_source="step_trace_time",
        kernels=kernels,
        op_us=_top(op_us),
        link_gbps=links,
        aicore_mhz=_quick_clock(apo / catalog.TRACE_VIEW),
    )
    return _with_matrix(summary, table, _metadata(metadata))


def _metadata(path: Path) -> object:
    """profiler_metadata.json's content, None without it or when it does not parse (as the full read,
    which only notes it)."""
    try:
        return load_json(path) if path.is_file() else None
    except InputError:
        return None


def _quick_clock(trace: Path) -> float | None:
    """The median AI Core clock of the trace's "AI Core Freq" counters (one byte-level pass, as the full
    read's), when trace_view.json is at most QUICK_TRACE_BYTES; None without it or when it is larger."""
    try:
        if not trace.is_file() or trace.stat().st_size > QUICK_TRACE_BYTES:
            return None
        return _median_mhz(scan_markers(trace, steps=False, freq=True).freq)
    except InputError:  # a damaged trace costs the clock only, as in a full read
        return None


def _top(totals: dict[str, float]) -> dict[str, float]:
    """The TOP_OPS largest totals, largest first (ties in name order, as pandas' nlargest of a groupby)."""
    ranked = sorted(sorted(totals.items()), key=lambda item: -item[1])[:TOP_OPS]
    return {name: round(us, 3) for name, us in ranked}


def _quick_step_trace(path: Path) -> tuple[StepBreakdown, ...]:
    """step_trace_time.csv read as readers.steps.read_step_trace_time reads it (wall = computing + exposed
    communication + free; step ids from the Step column's trailing digits, else row order), without
    building a table: a many-rank job reads hundreds of these tiny files. Empty without the communication
    column; a file that does not parse is read by the full reader, which names the problem."""
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or "Communication(Not Overlapped)" not in rows[0]:
        return ()
    found = [re.search(r"(\d+)\s*$", r.get("Step") or "") for r in rows]
    ids = [int(m.group(1)) for m in found if m] if all(found) else list(range(len(rows)))
    out: list[StepBreakdown] = []
    for step, row in zip(ids, rows, strict=True):
        computing, exposed, free = (
            _number(row.get(k)) for k in ("Computing", "Communication(Not Overlapped)", "Free")
        )
        if computing is None or free is None:
            raise InputError(say("ranks.quick-unparsed"), path=str(path))
        overlapped = _number(row.get("Overlapped")) or 0.0
        exposed = exposed or 0.0
        out.append(StepBreakdown(step, computing + exposed + free, computing, exposed, overlapped, free))
    return tuple(out)


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "", "N/A") else None
    except ValueError:
        return None
    return value if value is None or np.isfinite(value) else None


def _links_of_json(data: object) -> dict[str, float]:
    """_link_bandwidth's figures straight from communication.json: per link type, the mean of the
    collectives' bandwidths above 0."""
    found: dict[str, list[float]] = {}
    for _, kinds in json_items(data):
        for _, ops in json_items(kinds):
            for op, info in json_items(ops):
                if not is_object(info) or op.startswith("Total Op Info"):
                    continue
                for link, stats in json_items(json_get(info, "Communication Bandwidth Info")):
                    value = json_number(json_get(stats, "Bandwidth(GB/s)"))
                    if link.lower() in LINKS and value is not None and value > 0:
                        found.setdefault(link.upper(), []).append(value)
    return {link: round(float(np.mean(v)), 4) for link, v in found.items() if link.lower() in LINKS}


def _op_totals(apo: Path) -> tuple[dict[str, float], int]:
    """Device time per op type and the launch count: from op_statistic.csv when the run wrote it (Level1:
    a few hundred bytes, compute operators only), else from two columns of kernel_details.csv."""
    statistic = apo / catalog.OUTPUT_TABLES["op_statistic"]
    if statistic.is_file():
        return _statistic_totals(statistic)
    return kernel_type_totals(apo / catalog.KERNEL_DETAILS)


def _statistic_totals(path: Path) -> tuple[dict[str, float], int]:
    """op_statistic.csv's Total Time(us) per OP Type and its summed Count, read with the csv module: the
    file is a few hundred bytes and a job has hundreds of them (pyarrow's reader costs ~3 ms a file). An
    empty or N/A cell counts as nothing; other text, or a row of the wrong width, fails the quick read."""
    header = read_header(path)
    found = resolve(header, STATISTIC_COLUMNS)
    require(found, STATISTIC_COLUMNS, ("op_type", "count", "total_us"), path)
    at = {name: header.index(column) for name, column in found.items()}
    parts: dict[str, list[float]] = {}
    counts: list[float] = []
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        next(reader, None)
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise InputError(say("ranks.quick-unparsed"), path=str(path))
            name = "" if row[at["op_type"]] in NULL_VALUES else row[at["op_type"]]
            parts.setdefault(name, []).append(_cell(row[at["total_us"]], path))
            counts.append(_cell(row[at["count"]], path))
    return {name: math.fsum(values) for name, values in parts.items()}, int(math.fsum(counts))


def _cell(text: str, path: Path) -> float:
    """A number cell of a small table: 0 when empty or N/A, InputError for text."""
    if text in NULL_VALUES:
        return 0.0
    value = _number(text)
    if value is None:
        raise InputError(say("ranks.quick-unparsed"), path=str(path))
    return value


def broken(rank: int, root: str, problem: str) -> RankSummary:
    """The summary of a rank whose files could not be read: only the problem."""
    return RankSummary(rank=rank, root=root, error=problem)


# ------------------------------------------------------------------------------------------- slow rank


def per_step(summaries: list[RankSummary], field_name: str) -> pd.DataFrame:
    """A rank x step table of one breakdown field (µs) over the readable ranks."""
    data = {s.rank: {b.step: getattr(b, field_name) for b in s.breakdown} for s in summaries if s.ok}
    return pd.DataFrame(data).T.sort_index()


def find_straggler(summaries: list[RankSummary]) -> tuple[Straggler | None, str]:
    """The slow rank by computing time per step, or None with the reason no test could run or named none.

    Per step, a rank is slow when it computes at least 10 % more than the median rank and stands out by
    the test that suits the number of ranks: Dixon's Q above its 95 % value from 3 to 10 ranks, the
    modified z-score (x - median) / (1.4826 MAD) above 3.5 beyond; it is the straggler when it is slow in
    at least 60 % of the steps every rank recorded. Two ranks have no odd one out: see `_two_ranks`."""
    table = per_step(summaries, "computing_us").dropna(axis=1)
    if len(table) < 2:
        return None, say("ranks.too-few", n=len(table))
    if table.shape[1] == 0:
        return None, say("ranks.no-common-step")
    if len(table) == 2:
        return _two_ranks(summaries, table)
    median = table.median(axis=0)
    test = "dixon" if len(table) <= DIXON_MAX else "mad"
    outlier = _dixon_slow(table) if test == "dixon" else _mad_slow(table, median)
    slow = outlier & (table >= median * MIN_RATIO)
    share = slow.sum(axis=1) / table.shape[1]
    if share.max() < STABLE_SHARE:
        return None, ""
    rank = int(share.idxmax())  # pyright: ignore[reportArgumentType]  # pandas-stubs: a label is Hashable, a row or column selection Series | DataFrame
    typical = int((table.sub(median, axis=1).abs().sum(axis=1)).drop(index=rank).idxmin())  # pyright: ignore[reportArgumentType]  # pandas-stubs: a label is Hashable
    return _straggler(summaries, table, rank, typical, median, int(slow.loc[rank].sum()), test), ""


def _mad_slow(table: pd.DataFrame, median: pd.Series) -> pd.DataFrame:
    """Rank x step: modified z-score above Z_SLOW (the MAD floored at 1 % of the median)."""
    mad = (table - median).abs().median(axis=0).clip(lower=median.abs() * MAD_FLOOR) * 1.4826
    return ((table - median) / mad.replace(0.0, np.nan)) > Z_SLOW


def _dixon_slow(table: pd.DataFrame) -> pd.DataFrame:
    """Rank x step: the largest value of the step when Dixon's Q = (largest - next) / (largest - smallest)
    exceeds its 95 % critical value for that many ranks (one outlier per step; two equally slow ranks mask
    each other, as in any Dixon test)."""
    values = table.to_numpy(dtype="float64")
    ordered = np.sort(values, axis=0)
    spread = ordered[-1] - ordered[0]
    q = np.divide(ordered[-1] - ordered[-2], spread, out=np.zeros_like(spread), where=spread > 0)
    top = values.argmax(axis=0)
    slow = np.zeros(values.shape, dtype=bool)
    flagged = q > DIXON_Q95[len(table)]
    slow[top[flagged], np.flatnonzero(flagged)] = True
    return pd.DataFrame(slow, index=table.index, columns=table.columns)


def _two_ranks(summaries: list[RankSummary], table: pd.DataFrame) -> tuple[Straggler | None, str]:
    """Two ranks: no outlier test can say which one is abnormal. One is named only on the pair's own
    evidence: it computes at least 10 % more than the other in at least 60 % of the steps, and the other
    waits for it (more exposed communication); else None and what was seen."""
    first, second = (int(r) for r in table.index)
    both = table.to_numpy(dtype="float64")
    longer = np.where(both[0] >= both[1], first, second)
    ratio = both.max(axis=0) / np.where(both.min(axis=0) > 0, both.min(axis=0), np.nan)
    counts = pd.Series(longer[ratio >= MIN_RATIO]).value_counts()
    if counts.empty or counts.iloc[0] < STABLE_SHARE * table.shape[1]:
        return None, say("ranks.two-alike", n=2)
    rank = int(counts.index[0])
    other = int(second if rank == first else first)
    reference = table.loc[other]
    found = _straggler(summaries, table, rank, other, reference, int(counts.iloc[0]), "pair")  # pyright: ignore[reportArgumentType]  # pandas-stubs: .loc[label] of a frame is a row
    if not found.victims:
        return None, say("ranks.two-no-wait", rank=rank, other=other, ratio=found.ratio)
    return found, ""


def _straggler(
    summaries: list[RankSummary],
    table: pd.DataFrame,
    rank: int,
    typical: int,
    reference: pd.Series,
    flagged: int,
    test: str,
) -> Straggler:
    """The Straggler record of `rank` against the per-step `reference` computing time."""
    victims, wait_ms = _victims(summaries, rank)
    return Straggler(
        rank=rank,
        typical_rank=typical,
        ratio=round(float((table.loc[rank] / reference).median()), 4),  # pyright: ignore[reportArgumentType]  # pandas-stubs: a row's median is a float
        extra_ms=round(float((table.loc[rank] - reference).median()) / 1000, 4),  # pyright: ignore[reportArgumentType]  # as above
        steps_flagged=flagged,
        steps_total=int(table.shape[1]),
        victims=victims,
        wait_ms=round(wait_ms, 4),
        test=test,
    )


def _victims(summaries: list[RankSummary], slow: int) -> tuple[tuple[int, ...], float]:
    """Ranks whose exposed communication per step exceeds the slow rank's: they wait for it in collectives
    (victims, not causes), and their median extra wait per step (ms)."""
    comm = per_step(summaries, "communication_us").dropna(axis=1)
    if slow not in comm.index or comm.shape[1] == 0:
        return (), 0.0
    extra = comm.drop(index=slow).sub(comm.loc[slow], axis=1).median(axis=1)
    waiting = extra[extra > 0]
    return tuple(int(r) for r in waiting.index), float(waiting.median()) / 1000 if len(waiting) else 0.0


def find_slow_links(summaries: list[RankSummary]) -> list[SlowLinkRecord]:
    """Ranks whose bandwidth on a link type is below half the median of that type across ranks, then the
    links (communication_matrix.json's src-dst pairs) below half the median of their type's links."""
    return _slow_rank_links(summaries) + _slow_pairs(summaries)


def global_ranks(summaries: Sequence[RankSummary]) -> dict[str, dict[int, int]]:
    """Per communication group, its ranks mapped to global ranks: a rank's LOCAL link to itself in its
    matrix says which rank of the group it is; profiler_metadata.json's parallel_group_info (the group's
    global ranks in order) fills the ranks that were not uploaded."""
    out: dict[str, dict[int, int]] = {}
    for s in summaries:
        for group, members in s.group_members.items():
            for local, rank in enumerate(members):
                out.setdefault(group, {})[local] = rank
    for s in summaries:
        for group, local in s.group_rank.items():
            out.setdefault(group, {})[local] = s.rank
    return out


def with_global_pairs(summaries: list[RankSummary]) -> list[RankSummary]:
    """The summaries with each rank's matrix links named by global ranks (pair_gbps); the ranks without
    matrix links keep theirs (msprof-analyze's cluster matrix already names global ranks)."""
    mapping = global_ranks(summaries)
    return [
        dataclasses.replace(s, pair_gbps=pair_bandwidth(s.links, mapping)) if s.links else s
        for s in summaries
    ]


def _slow_pairs(summaries: list[RankSummary]) -> list[SlowLinkRecord]:
    """Links of one type from every rank's matrix (a link seen by both its ends: the first rank's figure)
    against the median of that type; at least MIN_RANKS links of the type."""
    out: list[SlowLinkRecord] = []
    for link in sorted({name for s in summaries for name in s.pair_gbps}):
        values: dict[str, tuple[int, float]] = {}
        for s in summaries:
            for pair, gbps in s.pair_gbps.get(link, {}).items() if s.ok else ():
                values.setdefault(pair, (s.rank, gbps))
        if len(values) < MIN_RANKS:
            continue
        median = float(np.median([gbps for _, gbps in values.values()]))
        for pair, (rank, gbps) in sorted(values.items(), key=lambda item: (item[1][0], item[0])):
            if median > 0 and gbps < SLOW_LINK * median:
                out.append(
                    {"rank": rank, "link": link, "gbps": gbps, "median_gbps": round(median, 4), "pair": pair}
                )
    return out


def _slow_rank_links(summaries: list[RankSummary]) -> list[SlowLinkRecord]:
    out: list[SlowLinkRecord] = []
    for link in sorted({name for s in summaries for name in s.link_gbps}):
        values = {s.rank: s.link_gbps[link] for s in summaries if s.ok and link in s.link_gbps}
        if len(values) < MIN_RANKS:
            continue
        median = float(np.median(list(values.values())))
        for rank, gbps in sorted(values.items()):
            if median > 0 and gbps < SLOW_LINK * median:
                out.append({"rank": rank, "link": link, "gbps": gbps, "median_gbps": round(median, 4)})
    return out


def rank_set(summaries: list[RankSummary], chosen: int | None) -> RankSet:
    """The job's ranks with the slow rank and slow links found."""
    ordered = with_global_pairs(sorted(summaries, key=lambda s: s.rank))
    straggler, reason = find_straggler(ordered)
    return RankSet(ordered, chosen, straggler, find_slow_links(ordered), reason)

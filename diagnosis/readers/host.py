"""The host-op files of MindSpore 2.0-2.4 CPU and GPU folders: the per-operator detail table and the
per-launch timestamp lines, with the duration unit they imply.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from core.errors import InputError
from core.text import say
from diagnosis.readers.arrow import NamedColumns
from diagnosis.readers.io import Col, budget, display, first_line, read_csv, read_text, rows_error

OP_DETAIL_COLS = (
    Col("full_op_name", ("full_op_name", "op_full_name")),
    Col("op_type", ("op_type",)),
    Col("occurrences", ("op_occurrences",), pa.int64()),
    Col("total_ms", ("op_total_time(ms)", "compute_time(ms)"), pa.float64()),
    Col("total_us", ("op_total_time(us)",), pa.float64()),
)


def read_op_detail(path: Path) -> pa.Table:
    """`cpu_op_detail_info` / `gpu_op_detail_info`: per-op type, occurrences and total time (as total_us)."""
    table = read_csv(path, OP_DETAIL_COLS, required=("full_op_name", "op_type"))
    if "total_ms" in table.column_names:
        total = pc.multiply(table.column("total_ms"), 1000.0)  # pyright: ignore[reportAttributeAccessIssue]  # pyarrow.compute's kernels are generated at import
        table = table.drop_columns(["total_ms"])
        table = table.append_column("total_us", total) if "total_us" not in table.column_names else table
    return table


def read_op_timestamps(path: Path) -> pa.Table:
    """`<op name>;<type>;<start_ns>,<duration>[,<tid>] <start_ns>,<duration> ...` -> one row per launch:
    name, type, start_ns, duration (raw unit: ms on CPU, µs on GPU)."""
    names, kinds, counts, chunks = _timestamp_lines(path)
    body = "\n".join(chunks)
    width = body.split("\n", 1)[0].count(",") + 1
    columns = ["start_ns", "duration", "tid"][:width]
    expected = say("host.entries")
    if width < 2:  # a launch without its duration (a file cut after a start time)
        problem = say("host.no-duration", entry=chunks[0][:40])
        raise InputError(problem, path=display(path), expected=expected)
    try:
        launches = pacsv.read_csv(
            io.BytesIO(body.encode()),
            read_options=pacsv.ReadOptions(column_names=columns),
            parse_options=pacsv.ParseOptions(quote_char=False),  # the format has no quoting
            convert_options=pacsv.ConvertOptions(
                column_types={"start_ns": pa.int64(), "duration": pa.float64()}, include_columns=columns[:2]
            ),
        )
    except pa.ArrowInvalid as exc:
        raise InputError(
            say("reader.bad-launch", error=first_line(exc)),
            path=display(path),
            expected=expected,
        ) from None
    if launches.num_rows != sum(counts):  # e.g. an entry split or merged by a damaged separator
        raise InputError(say("reader.bad-launch-list"), path=display(path), expected=expected)
    index = pa.array(np.repeat(np.arange(len(names)), counts), type=pa.int64())
    named: NamedColumns = {
        "name": pa.array(names, pa.string()).take(index),
        "type": pa.array(kinds, pa.string()).take(index),
        "start_ns": launches.column("start_ns"),
        "duration": launches.column("duration"),
    }
    return pa.Table.from_pydict(named)


def _timestamp_lines(path: Path) -> tuple[list[str], list[str], list[int], list[str]]:
    """Split the per-op lines (one Python object per operator, not per launch)."""
    names: list[str] = []
    kinds: list[str] = []
    counts: list[int] = []
    chunks: list[str] = []
    limit, total = budget("max_profile_rows"), 0  # each launch becomes a kernel row (a line holds many)
    for lineno, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        parts = line.strip().split(";")
        launches = parts[-1].split() if len(parts) >= 3 else []
        if not launches:
            raise InputError(
                say("host.no-list", line=lineno),
                path=display(path),
                expected=say("host.per-line"),
            )
        names.append(parts[0])
        kinds.append(parts[1])
        counts.append(len(launches))
        total += counts[-1]
        if limit is not None and total > limit:
            raise rows_error(path, limit, say("io.what-launches"))
        chunks.append("\n".join(launches))
    if not names:
        raise InputError(say("reader.no-launches"), path=display(path), expected=say("host.one-line"))
    return names, kinds, counts, chunks


def duration_scale(launches: pa.Table, detail: pa.Table | None, default: float) -> float:
    """µs per raw duration unit: whichever of 1 (µs) or 1000 (ms) makes per-op launch sums match the
    detail file's totals; `default` when the two files share no operator."""
    if detail is None or "total_us" not in detail.column_names:
        return default
    launched = pd.DataFrame(
        {"name": launches.column("name"), "d": launches.column("duration")}  # pyright: ignore[reportArgumentType]  # pandas-stubs: a pyarrow column is array-like (__array__)
    )
    sums = launched.groupby("name")["d"]
    totals = pd.Series(
        detail.column("total_us").to_numpy(zero_copy_only=False),
        index=detail.column("full_op_name"),  # pyright: ignore[reportArgumentType, reportCallIssue]  # pandas-stubs: a pyarrow column is array-like
    )
    raw = sums.sum()
    common = raw.index.intersection(totals.index)
    ratio = (totals[common] / raw[common]).replace([np.inf, -np.inf], np.nan).dropna()
    ratio = ratio[ratio > 0]
    if ratio.empty:
        return default
    middle = float(np.median(np.log10(ratio.to_numpy(dtype="float64"))))
    return 1.0 if abs(middle) < abs(middle - 3.0) else 1000.0

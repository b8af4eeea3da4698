"""communication.json (per step, collective and point-to-point operator) as one table."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import pandas as pd

from core.errors import InputError
from core.text import say
from diagnosis.readers.io import counter_name, display

# ------------------------------------------------------------------------------------------ extras


def communication_summary(data: Any, path: Path) -> pd.DataFrame:
    """communication.json -> one row per (step, collective|p2p, op): time info and per-link bandwidth."""
    if not isinstance(data, dict):
        raise InputError(
            say("json.not-object"), path=display(path), expected="{step: {collective|p2p: {op: ...}}}"
        )
    rows = []
    for step_key, kinds in data.items():
        if not isinstance(kinds, dict):
            continue
        step = re.search(r"(\d+)$", str(step_key))
        for kind, ops in kinds.items():
            if not isinstance(ops, dict):
                continue
            for op, info in ops.items():
                if isinstance(info, dict) and not op.startswith("Total Op Info"):
                    rows.append(_comm_row(int(step.group(1)) if step else None, kind, op, info))
    return pd.DataFrame(rows).convert_dtypes(dtype_backend="pyarrow") if rows else pd.DataFrame()


def _comm_row(step: int | None, kind: str, op: str, info: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"step": step, "kind": kind, "op": op}
    for key, value in (info.get("Communication Time Info") or {}).items():
        if isinstance(value, int | float):
            row[counter_name(key)] = float(value)
    for link, stats in (info.get("Communication Bandwidth Info") or {}).items():
        if isinstance(stats, dict):
            for key in ("Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)"):
                if isinstance(stats.get(key), int | float):
                    row[f"{link.lower()}_{counter_name(key)}"] = float(stats[key])
    return row


# ------------------------------------------------------------------------------- communication_matrix.json

MATRIX_LINKS = ("HCCS", "RDMA", "SDMA", "PCIE", "SIO")  # LOCAL (a rank to itself) is not a link


def matrix_table(data: Any, path: Path) -> pd.DataFrame:
    """communication_matrix.json -> one row per (step, kind, op, link): src and dst rank, transport type,
    transit size (MB), time (ms) and bandwidth (GB/s).

    Its layout: {step: {collective|p2p: {"<op>@<group>": {"<src>-<dst>": {"Transport Type", "Transit
    Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)", "Op Name"}}}}}; an op named `<kind>-total@...` sums
    the others of its kind (`-top1`, `-middle`, `-bottom1` ... are single operators)."""
    if not isinstance(data, dict):
        raise InputError(
            say("json.not-object"),
            path=display(path),
            expected="{step: {collective|p2p: {op: {src-dst: ...}}}}",
        )
    rows = []
    for step_key, kinds in data.items():
        step = re.search(r"(\d+)$", str(step_key))
        for kind, ops in kinds.items() if isinstance(kinds, dict) else ():
            for op, links in ops.items() if isinstance(ops, dict) else ():
                for pair, info in links.items() if isinstance(links, dict) else ():
                    row = _matrix_row(pair, info)
                    if row is not None:
                        rows.append(
                            {"step": int(step.group(1)) if step else None, "kind": kind, "op": op, **row}
                        )
    return pd.DataFrame(rows) if rows else pd.DataFrame()


def _matrix_row(pair: str, info: Any) -> dict[str, Any] | None:
    ends = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", str(pair))
    if ends is None or not isinstance(info, dict):
        return None
    numbers = [info.get(k) for k in ("Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)")]
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers):
        return None
    size, time, gbps = (float(cast(float, v)) for v in numbers)  # numbers: checked just above
    transport = str(info.get("Transport Type", "")).strip().upper()
    return {
        "src": int(ends.group(1)),
        "dst": int(ends.group(2)),
        "transport": transport,
        "size_mb": size,
        "time_ms": time,
        "gbps": gbps,
    }


def pair_bandwidth(matrix: pd.DataFrame | None) -> dict[str, dict[str, float]]:
    """Per link type, each link's bandwidth (GB/s) as "<src>-<dst>": its transit size over its transit
    time, summed over the `-total` operators when the matrix has them (else over every operator)."""
    if matrix is None or not len(matrix):
        return {}
    rows = matrix[matrix["transport"].isin(MATRIX_LINKS) & (matrix["src"] != matrix["dst"])]
    totals = rows[rows["op"].astype(str).str.contains(r"-total@|-total$", regex=True)]
    rows = totals if len(totals) else rows
    sums = rows.groupby(["transport", "src", "dst"])[["size_mb", "time_ms"]].sum()
    out: dict[str, dict[str, float]] = {}
    for (transport, src, dst), (size, time) in sums.iterrows():  # pyright: ignore[reportGeneralTypeIssues]  # pandas-stubs: a MultiIndex label is Hashable
        if time > 0 and size > 0:  # MB per ms is GB/s
            out.setdefault(str(transport), {})[f"{int(src)}-{int(dst)}"] = round(float(size) / float(time), 4)
    return out

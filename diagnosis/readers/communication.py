"""communication.json (per step, collective and point-to-point operator) as one table."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

import pandas as pd

from core.errors import InputError
from core.model import LinkTraffic
from core.text import say
from diagnosis.readers.io import counter_name, display, is_object, json_get, json_items, json_number

# ------------------------------------------------------------------------------------------ extras


def communication_summary(data: object, path: Path) -> pd.DataFrame:
    """communication.json -> one row per (step, collective|p2p, op): time info and per-link bandwidth."""
    if not is_object(data):
        raise InputError(
            say("json.not-object"), path=display(path), expected="{step: {collective|p2p: {op: ...}}}"
        )
    rows: list[dict[str, object]] = []
    for step_key, kinds in json_items(data):
        step = re.search(r"(\d+)$", step_key)
        for kind, ops in json_items(kinds):
            for op, info in json_items(ops):
                if is_object(info) and not op.startswith("Total Op Info"):
                    rows.append(_comm_row(int(step.group(1)) if step else None, kind, op, info))
    return pd.DataFrame(rows).convert_dtypes(dtype_backend="pyarrow") if rows else pd.DataFrame()


def _comm_row(step: int | None, kind: str, op: str, info: object) -> dict[str, object]:
    row: dict[str, object] = {"step": step, "kind": kind, "op": op}
    for key, value in json_items(json_get(info, "Communication Time Info")):
        number = json_number(value)
        if number is not None:
            row[counter_name(key)] = number
    for link, stats in json_items(json_get(info, "Communication Bandwidth Info")):
        for key in ("Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)"):
            number = json_number(json_get(stats, key))
            if number is not None:
                row[f"{link.lower()}_{counter_name(key)}"] = number
    return row


# ------------------------------------------------------------------------------- communication_matrix.json

MATRIX_LINKS = ("HCCS", "RDMA", "SDMA", "PCIE", "SIO")  # LOCAL (a rank to itself) is not a link
STATS = ("top", "middle", "bottom")  # single operators beside the `-total` sums (msprof-analyze's terms)


def matrix_table(data: object, path: Path) -> pd.DataFrame:
    """communication_matrix.json -> one row per (step, kind, op, link): the op's communication group, src
    and dst rank (ranks of that group), transport type, transit size (MB), time (ms) and bandwidth (GB/s).

    Its layout: {step: {collective|p2p: {"<op>@<group>": {"<src>-<dst>": {"Transport Type", "Transit
    Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)", "Op Name"}}}}}; an op named `<kind>-total@...` sums
    the others of its kind (`-top1`, `-middle`, `-bottom1` ... are single operators)."""
    if not is_object(data):
        raise InputError(
            say("json.not-object"),
            path=display(path),
            expected="{step: {collective|p2p: {op: {src-dst: ...}}}}",
        )
    rows: list[dict[str, object]] = []
    for step_key, kinds in json_items(data):
        step = re.search(r"(\d+)$", step_key)
        for kind, ops in json_items(kinds):
            for op, links in json_items(ops):
                for pair, info in json_items(links):
                    row = _matrix_row(pair, info)
                    if row is not None:
                        head = {"step": int(step.group(1)) if step else None, "kind": kind, "op": op}
                        rows.append({**head, "group": op.rpartition("@")[2], **row})
    return pd.DataFrame(rows) if rows else pd.DataFrame()


def _matrix_row(pair: str, info: object) -> dict[str, object] | None:
    ends = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", pair)
    if ends is None or not is_object(info):
        return None
    size, time, gbps = (
        json_number(json_get(info, k)) for k in ("Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)")
    )
    if size is None or time is None or gbps is None:
        return None
    transport = json_get(info, "Transport Type")
    return {
        "src": int(ends.group(1)),
        "dst": int(ends.group(2)),
        "transport": str("" if transport is None else transport).strip().upper(),
        "size_mb": size,
        "time_ms": time,
        "gbps": gbps,
    }


def adds_up(op: str) -> bool:
    """Whether an operator of the matrix counts in a link's total: a `-total` sum, or an operator of a
    matrix without the top/middle/bottom statistics (older exports); as msprof-analyze sums them."""
    name = op.rpartition("@")[0] or op
    return "total" in name or not any(stat in name for stat in STATS)


def group_links(matrix: pd.DataFrame | None) -> tuple[tuple[LinkTraffic, ...], dict[str, int]]:
    """The rank's links (its matrix's `-total` operators summed per group, link type and src-dst pair, in
    the group's ranks) and its own rank in each group (the src of its LOCAL link to itself)."""
    if matrix is None or not len(matrix):
        return (), {}
    own = matrix[matrix["src"] == matrix["dst"]]
    group_rank = {str(g): int(src) for g, src in zip(own["group"], own["src"], strict=True)}
    rows = matrix[matrix["transport"].isin(MATRIX_LINKS) & (matrix["src"] != matrix["dst"])]
    rows = rows[[adds_up(str(op)) for op in rows["op"]]]
    sums = rows.groupby(["group", "transport", "src", "dst"])[["size_mb", "time_ms"]].sum()
    links = tuple(
        LinkTraffic(str(g), str(t), int(src), int(dst), float(size), float(time))
        for (g, t, src, dst), size, time in zip(sums.index, sums["size_mb"], sums["time_ms"], strict=True)
    )
    return links, group_rank


def pair_bandwidth(
    links: Sequence[LinkTraffic], ranks: Mapping[str, Mapping[int, int]]
) -> dict[str, dict[str, float]]:
    """Per link type, each link's bandwidth (GB/s) as "<src>-<dst>" in global ranks: its transit size over
    its transit time, summed over the groups it carried traffic for. `ranks` maps each group's ranks to
    global ones; a link whose ends it does not map is left out (as msprof-analyze does)."""
    sums: dict[tuple[str, int, int], list[float]] = {}
    for link in links:
        mapped = ranks.get(link.group, {})
        if link.src in mapped and link.dst in mapped:
            total = sums.setdefault((link.transport, mapped[link.src], mapped[link.dst]), [0.0, 0.0])
            total[0] += link.size_mb
            total[1] += link.time_ms
    out: dict[str, dict[str, float]] = {}
    for (transport, src, dst), (size, time) in sorted(sums.items()):
        if time > 0 and size > 0:  # MB per ms is GB/s
            out.setdefault(transport, {})[f"{src}-{dst}"] = round(size / time, 4)
    return out


# ------------------------------------------------------------------------ communication groups' ranks


def group_id(name: str) -> str:
    """The id an operator name carries after "@" for the communication group `name`: two 32-bit
    polynomial string hashes (primes 29 and 131) side by side, as torch_npu and msprof-analyze write it."""
    low = high = 0
    for char in name:
        high = (high * 29 + ord(char)) & 0xFFFFFFFF
        low = (low * 131 + ord(char)) & 0xFFFFFFFF
    return str((high << 32) | low)


def group_members(metadata: object) -> dict[str, tuple[int, ...]]:
    """profiler_metadata.json's `parallel_group_info` ({group name: {"global_ranks": [...]}}) as group id
    -> the group's global ranks in order (a group's rank i is the i-th smallest global rank)."""
    out: dict[str, tuple[int, ...]] = {}
    for name, group in json_items(json_get(metadata, "parallel_group_info")):
        ranks = json_get(group, "global_ranks")
        members = cast(list[object], ranks) if isinstance(ranks, list) else []
        whole = [r for r in members if isinstance(r, int) and not isinstance(r, bool)]
        if members and len(whole) == len(members):
            out[group_id(name)] = tuple(sorted(whole))
    return out

"""communication.json (per step, collective and point-to-point operator) as one table."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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

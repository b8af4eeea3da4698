"""Parse the text printed by Huawei's `npu-smi` tool (Ascend HDK "npu-smi info" reference) into the
canonical npu-smi table (core.model.NPU_SMI_SCHEMA): the ``npu-smi info`` device table,
``npu-smi info watch`` sample lines and ``npu-smi info -t common`` key/value blocks.

`npu-smi` output is not part of a profiler folder: the user gives it beside a profile, and
:func:`attach_npu_smi` reads the file and attaches its readings to that run.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path
from typing import Any, TypedDict

import pandas as pd

from core.errors import InputError
from core.model import NPU_SMI_SCHEMA, Run, empty_table
from core.text import say
from diagnosis.readers.tables import canonical

NPU_SMI_MAX_BYTES = 1 << 20


_SMI_NAMES = {
    "npuid": "npu",
    "npu": "npu",
    "npu id": "npu",
    "chipid": "chip",
    "chip": "chip",
    "chip id": "chip",
    "pwr": "power_w",
    "power": "power_w",
    "npu real-time power": "power_w",
    "temp": "temperature_c",
    "temperature": "temperature_c",
    "ai core": "aicore_pct",
    "aicore": "aicore_pct",
    "aicore usage rate": "aicore_pct",
    "ai cpu": "aicpu_pct",
    "aicpu usage rate": "aicpu_pct",
    "ctrl cpu": "ctrlcpu_pct",
    "ctrlcpu usage rate": "ctrlcpu_pct",
    "memory": "memory_pct",
    "memory usage rate": "memory_pct",
    "memory bw": "memory_bw_pct",
    "hbm usage rate": "hbm_pct",
    "aicore freq": "aicore_rated_mhz",
    "aicore curfreq": "aicore_freq_mhz",
    "aicore count": "aicore_count",
    "memory-usage": "memory_mb",
    "hbm-usage": "hbm_mb",
    "hugepages-usage": "hugepages",
}
_HEADER_COL = re.compile(r"\S[^()]*\([^)]*\)")
_PAIR = re.compile(r"(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)|(\S+)")
_HEALTH = ("OK", "WARNING", "ALARM", "CRITICAL", "NOT-EXIST", "UNKNOWN")
# `used / total` table cells give `<key>_used` and `<key>_total`: their canonical names.
_PAIR_NAMES = {
    "hbm_mb_used": "hbm_used_mb",
    "hbm_mb_total": "hbm_total_mb",
    "memory_mb_used": "memory_used_mb",
    "memory_mb_total": "memory_total_mb",
}


def _smi_key(label: str) -> str:
    """`Pwr(W)` -> power_w, `Aicore curFreq(MHZ)` -> aicore_freq_mhz; unknown labels snake-cased."""
    base = re.sub(r"\([^)]*\)", "", label).strip().lower()
    return _SMI_NAMES.get(base, re.sub(r"[^a-z0-9]+", "_", base).strip("_"))


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None  # "NA", "-" and the like


Reading = str | float | int | None  # a name, a number, or a reading npu-smi left out ("NA")


class NpuSmiReadings(TypedDict):
    """What `npu-smi` printed (parse_npu_smi): each reading a row of names and numbers."""

    version: str | None
    devices: list[dict[str, Reading]]  # info: one row per chip
    samples: list[dict[str, Reading]]  # info watch: one row per line
    common: list[dict[str, Reading]]  # info -t common: one row per block


def parse_npu_smi(text: str) -> NpuSmiReadings:
    """Readings from `npu-smi` output: {"version", "devices" (info table, one dict per chip), "samples"
    (info watch lines), "common" (info -t common blocks)}. Unrecognised lines are ignored."""
    lines = text.splitlines()
    version = re.search(r"npu-smi\s+(\S+)\s+Version", text)
    return {
        "version": version.group(1) if version else None,
        "devices": _table_devices(lines),
        "samples": _watch_samples(lines),
        "common": _common_blocks(lines),
    }


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table_devices(lines: list[str]) -> list[dict[str, Any]]:
    """`npu-smi info`: per chip a row `| npu name | health | power temp hugepages |` followed by a row
    `| chip | bus-id | aicore memory hbm |`; column names come from the two header rows."""
    table = [_cells(x) for x in lines if x.strip().startswith("|") and x.count("|") >= 4]
    heads = [c for c in table if len(c) >= 3 and c[0].startswith(("NPU", "Chip")) and "(" in c[2]]
    names = [[_smi_key(h) for h in _HEADER_COL.findall(c[2])] for c in heads[:2]]
    if len(names) < 2:
        return []
    devices: list[dict[str, Any]] = []
    for first, second in itertools.pairwise(table):
        if len(first) < 3 or len(second) < 3 or first[1].upper() not in _HEALTH:
            continue
        npu_name = first[0].split()
        record: dict[str, Any] = {"npu": _number(npu_name[0]) if npu_name else None, "health": first[1]}
        record["name"] = " ".join(npu_name[1:]) or None
        record["chip"], record["bus_id"] = _number(second[0]), second[1]
        for keys, cell in ((names[0], first[2]), (names[1], second[2])):
            record.update(_pair_values(keys, cell))
        devices.append(record)
    return devices


def _pair_values(keys: list[str], cell: str) -> dict[str, Any]:
    """Tokens of a table cell in header order; `used / total` pairs become `<key>_used`, `<key>_total`."""
    out: dict[str, Any] = {}
    for key, match in zip(keys, _PAIR.finditer(cell), strict=False):
        if match.group(3) is None:
            out[f"{key}_used"], out[f"{key}_total"] = float(match.group(1)), float(match.group(2))
        else:
            out[key] = _number(match.group(3))
    return out


def _watch_samples(lines: list[str]) -> list[dict[str, Any]]:
    """`npu-smi info watch`: a header `NpuID(Idx)  ChipId(Idx) Pwr(W) ...` then whitespace-separated rows."""
    samples: list[dict[str, Any]] = []
    keys: list[str] | None = None
    for line in lines:
        if "NpuID" in line and "(" in line:
            keys = [_smi_key(h) for h in _HEADER_COL.findall(line)]
            continue
        values = line.split()
        if keys and len(values) == len(keys):
            numbers = [_number(v) for v in values]
            if numbers[0] is not None:
                samples.append(dict(zip(keys, numbers, strict=True)))
    return samples


def _common_blocks(lines: list[str]) -> list[dict[str, Any]]:
    """`npu-smi info -t common`: `Key : value` lines; a block per chip (or per NPU when no Chip ID is
    printed); the `Chip Name : mcu` block (board controller, not an AI Core) is skipped."""
    blocks: list[dict[str, Any]] = []
    npu: float | None = None
    current: dict[str, Any] | None = None
    for line in lines:
        if ":" not in line or line.strip().startswith("|"):
            continue
        label, _, raw = line.partition(":")
        key, value = _smi_key(label), raw.strip()
        if key == "npu":
            npu = _number(value)
            current = {"npu": npu, "chip": None}
            blocks.append(current)
        elif key == "chip":
            if current is None or current.get("chip") is not None or len(current) > 2:
                current = {"npu": npu}
                blocks.append(current)
            current["chip"] = _number(value)
        elif key == "chip_name":
            current = None
        elif current is not None:
            current[key] = _number(value)
    return [b for b in blocks if set(b) - {"npu", "chip", "chip_count"}]


def npu_smi_frame(text: str) -> pd.DataFrame:
    """All `npu-smi` readings of a text as one NPU_SMI_SCHEMA table (column `source`: info, watch or
    common); empty when the text holds none."""
    parsed = parse_npu_smi(text)
    parts = [
        pd.DataFrame(rows).assign(source=source)
        for rows, source in (
            (parsed["devices"], "info"),
            (parsed["samples"], "watch"),
            (parsed["common"], "common"),
        )
        if rows
    ]
    if not parts:
        return empty_table(NPU_SMI_SCHEMA)
    frame = pd.concat(parts, ignore_index=True).rename(columns=_PAIR_NAMES)
    return canonical(frame, NPU_SMI_SCHEMA)


def read_npu_smi(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The readings of an `npu-smi info` text file; a file that holds none is an InputError."""
    file = Path(path)
    name = file.name
    try:
        if file.stat().st_size > NPU_SMI_MAX_BYTES:
            raise InputError(say("npu-smi.too-big"), path=name, expected=say("npu-smi.printed"))
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise InputError(say("archive.cannot-read", why=error.strerror), path=name) from None
    frame = npu_smi_frame(text)
    if frame.empty:
        raise InputError(
            say("npu-smi.none"),
            path=name,
            expected=say("npu-smi.output"),
        )
    return frame


def attach_npu_smi(run: Run, path: str | os.PathLike[str]) -> Run:
    """Give `run` the readings of an `npu-smi` text file taken on its device (InputError when the file
    holds none); returns the run."""
    run.npu_smi = read_npu_smi(path)
    return run

"""Device symptoms: AI CPU fallback, operators that changed core, AI Core frequency drops (from the
trace's "AI Core Freq" counter or an `npu-smi` reading), exposed communication and memory growth.

`npu-smi` text is not part of a profiler folder. The app attaches it as ``run.extras["npu_smi"]``:
the DataFrame returned by :func:`npu_smi_frame` (raw text is accepted too). :func:`parse_npu_smi`
reads the three documented outputs of Huawei's `npu-smi` tool (Ascend HDK "npu-smi info" reference):
the ``npu-smi info`` device table, ``npu-smi info watch`` sample lines and ``npu-smi info -t common``
key/value blocks.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
import pandas as pd

from core.symptoms import Emits, Symptom
from diagnosis.analyzers import pair_analyzer, run_analyzer
from diagnosis.analyzers.common import OP_COLS, rnd, rows
from diagnosis.compare import Comparison, Side
from diagnosis.stats import kendall_tau

# The symptom kinds this module emits (see diagnosis/analyzers/__init__.py).
EMITS = Emits(
    pair=("core-change",),
    run=("ai-cpu-ops", "frequency-drop", "communication-share", "memory-growth"),
)

AICPU_SHARE = 0.05
AICPU_OP_US = 20.0
FREQ_DROP = 0.05  # a sample >= 5 % below the run's maximum (msprof-analyze frequency_threshold)
COMM_SHARE = 0.10
MEMORY_GROWTH = 0.10
MEMORY_TAU = 0.5
MEMORY_MIN_WINDOWS = 4
MEMORY_FALLBACK_WINDOWS = 8
# memory_record.csv components, most specific total first (MindSpore / torch_npu spellings).
MEMORY_COMPONENTS = ("MindSpore+GE", "PTA+GE", "MindSpore", "PTA", "GE", "APP")


# ------------------------------------------------------------------------------------------- AI CPU


@run_analyzer
def ai_cpu_ops(side: Side, role: str) -> list[Symptom]:
    """Operators on AI CPU: more than 5 % of the run's kernel time, or any one averaging >= 20 µs."""
    ops = side.ops.reset_index(names="operator")
    aicpu = ops.loc[(ops["core"].astype("string").str.upper() == "AI_CPU").fillna(False).to_numpy()]
    aicpu = aicpu.sort_values("us_per_step", ascending=False, kind="stable")
    total = float(ops["us_per_step"].sum())
    if aicpu.empty or total <= 0:
        return []
    aicpu_us = float(aicpu["us_per_step"].sum())
    share = aicpu_us / total
    slow = aicpu.loc[aicpu["mean_us"] >= AICPU_OP_US]
    if share <= AICPU_SHARE and slow.empty:
        return []
    return [
        Symptom(
            "ai-cpu-ops",
            f"{len(aicpu)} operators of the {role} run on AI CPU: {share:.0%} of its kernel time "
            f"({aicpu_us / 1000:.3f} ms per step); {len(slow)} of them take {AICPU_OP_US:g} µs or more.",
            source=role,
            strength=min(1.0, max(share / 0.15, 0.6 if len(slow) else 0.0)),
            values={
                "aicpu_share": rnd(share),
                "aicpu_ms_per_step": rnd(aicpu_us / 1000, 4),
                "ops": aicpu["operator"].astype(str).tolist(),
            },
            evidence=rows(aicpu, ["operator", "op_type", "mean_us", "us_per_step", "input_dtypes"]),
            recoverable_ms_per_step=rnd(aicpu_us / 1000, 4),
        )
    ]


@pair_analyzer
def core_change(c: Comparison) -> list[Symptom]:
    """Matched operators that ran on a different core type in the two runs (e.g. AI_CORE -> AI_CPU)."""
    t = c.table
    changed = t.loc[t["core_changed"] & t["match"].isin(["scope", "sequence"])]
    if changed.empty:
        return []
    to_aicpu = (changed["target_core"].astype("string").str.upper() == "AI_CPU").fillna(False)
    ms = float(changed["target_us_per_step"].sum()) / 1000
    lost = float(changed["delta_us_per_step"].clip(lower=0).sum()) / 1000
    moves = (
        changed["baseline_core"].astype(str) + " -> " + changed["target_core"].astype(str)
    ).value_counts()
    text = ", ".join(f"{n} {move}" for move, n in moves.items())
    return [
        Symptom(
            "core-change",
            f"{len(changed)} matched operators run on a different core on the target ({text}); "
            f"they take {ms:.3f} ms per step there.",
            strength=1.0 if to_aicpu.any() else 0.6,
            values={"ops": changed["operator"].astype(str).tolist(), "ms_per_step": rnd(ms, 4)},
            evidence=rows(
                changed.sort_values("delta_us_per_step", ascending=False),
                [*OP_COLS, "baseline_core", "target_core"],
            ),
            recoverable_ms_per_step=rnd(lost, 4),
        )
    ]


# ----------------------------------------------------------------------------------------- frequency


def run_window(side: Side) -> tuple[float, float] | None:
    """First kernel start and last kernel end of the run (µs), or None without kernel times."""
    k = side.run.kernels
    start = k["start_us"].astype("float64")
    end = start + k["duration_us"].astype("float64").fillna(0.0)
    if start.notna().sum() == 0:
        return None
    return float(start.min()), float(end.max())


def frequency_profile(freq: pd.DataFrame, window: tuple[float, float] | None) -> pd.DataFrame:
    """Counter samples in effect during the window, each with the time it held (µs): the sample before
    the window opens is clamped to the window start, later samples are dropped."""
    f = freq.astype({"ts_us": "float64", "mhz": "float64"}).dropna().sort_values("ts_us", kind="stable")
    if window is None:
        return f.assign(held_us=1.0)
    lo, hi = window
    before = f.loc[f["ts_us"] <= lo].tail(1).assign(ts_us=lo)
    f = pd.concat([before, f.loc[(f["ts_us"] > lo) & (f["ts_us"] <= hi)]], ignore_index=True)
    held = np.diff(np.append(f["ts_us"].to_numpy(), hi))
    return f.assign(held_us=held)


def npu_smi_readings(side: Side) -> pd.DataFrame | None:
    """The run's attached `npu-smi` readings (extras["npu_smi"], a frame or the raw text)."""
    value: Any = side.run.extras.get("npu_smi")
    if isinstance(value, str):
        value = npu_smi_frame(value)
    return value if isinstance(value, pd.DataFrame) and len(value) else None


@run_analyzer
def frequency_drop(side: Side, role: str) -> list[Symptom]:
    """The AI Core clock falls >= 5 % below its maximum while the run executes (the trace's "AI Core Freq"
    counter, `run.extras["aicore_freq"]` with ts_us and mhz), or a busy `npu-smi info -t common` reading
    (`run.extras["npu_smi"]`) shows the current clock >= 5 % below the rated one. Temperature and power
    from `npu-smi` are added when attached. Silent without either record: not observable."""
    smi = npu_smi_readings(side)
    found = _trace_drop(side) or _smi_drop(smi)
    if found is None:
        return []
    max_mhz, min_mhz, mean_drop, basis = found
    temp = _column_max(smi, "temperature_c")
    power = _column_max(smi, "power_w")
    extra = "".join(
        [f", {temp:g} °C" if temp is not None else "", f", {power:g} W" if power is not None else ""]
    )
    return [
        Symptom(
            "frequency-drop",
            f"The AI Core clock of the {role} drops from {max_mhz:g} MHz to {min_mhz:g} MHz "
            f"({basis}; {mean_drop:.0%} below the maximum on average{extra}).",
            source=role,
            strength=min(1.0, 0.5 + mean_drop * 5),
            values={
                "max_mhz": rnd(max_mhz),
                "min_mhz": rnd(min_mhz),
                "mean_drop": rnd(mean_drop),
                "temperature_c": temp,
                "power_w": power,
            },
        )
    ]


def _trace_drop(side: Side) -> tuple[float, float, float, str] | None:
    freq = side.run.extras.get("aicore_freq")
    if freq is None or freq.empty:
        return None
    prof = frequency_profile(freq, run_window(side))
    if prof.empty:
        return None
    mhz, held = prof["mhz"].to_numpy(), prof["held_us"].to_numpy()
    top, low = float(mhz.max()), float(mhz.min())
    if top <= 0 or low > (1 - FREQ_DROP) * top:
        return None
    mean = float(np.average(mhz, weights=held)) if held.sum() > 0 else float(mhz.mean())
    return top, low, 1 - mean / top, "trace AI Core Freq counter"


def _smi_drop(smi: pd.DataFrame | None) -> tuple[float, float, float, str] | None:
    """Busy `-t common` readings (AI Core usage > 0: an idle chip reports its idle clock)."""
    if smi is None or not {"aicore_freq_mhz", "aicore_rated_mhz", "aicore_pct"} <= set(smi.columns):
        return None
    busy = smi.loc[(smi["aicore_pct"] > 0) & smi["aicore_freq_mhz"].notna() & (smi["aicore_rated_mhz"] > 0)]
    if busy.empty:
        return None
    rated = float(busy["aicore_rated_mhz"].max())
    low = float(busy["aicore_freq_mhz"].min())
    if low > (1 - FREQ_DROP) * rated:
        return None
    return (
        rated,
        low,
        1 - float(busy["aicore_freq_mhz"].mean()) / rated,
        "npu-smi curFreq against the rated clock",
    )


def _column_max(frame: pd.DataFrame | None, col: str) -> float | None:
    if frame is None or col not in frame.columns or frame[col].isna().all():
        return None
    return rnd(float(frame[col].max()), 1)


# ---------------------------------------------------------------------------------------------- npu-smi

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


def _smi_key(label: str) -> str:
    """`Pwr(W)` -> power_w, `Aicore curFreq(MHZ)` -> aicore_freq_mhz; unknown labels snake-cased."""
    base = re.sub(r"\([^)]*\)", "", label).strip().lower()
    return _SMI_NAMES.get(base, re.sub(r"[^a-z0-9]+", "_", base).strip("_"))


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None  # "NA", "-" and the like


def parse_npu_smi(text: str) -> dict[str, Any]:
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
    devices = []
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
    """All `npu-smi` readings of a text as one frame (column `source`: info, watch or common) — the form
    to attach as ``run.extras["npu_smi"]``."""
    parsed = parse_npu_smi(text)
    parts = [
        pd.DataFrame(parsed[key]).assign(source=source)
        for key, source in (("devices", "info"), ("samples", "watch"), ("common", "common"))
        if parsed[key]
    ]
    if not parts:
        return pd.DataFrame()
    frame = pd.concat(parts, ignore_index=True)
    if "hbm_mb_used" in frame.columns:
        frame = frame.rename(columns={"hbm_mb_used": "hbm_used_mb", "hbm_mb_total": "hbm_total_mb"})
    return frame


# ----------------------------------------------------------------------------------------- communication


@run_analyzer
def communication_share(side: Side, role: str) -> list[Symptom]:
    """Exposed collective communication (step_trace Communication(Not Overlapped)) above 10 % of the
    step in a run that is not training; silent when the run records no communication column."""
    steps = side.run.steps
    if side.run.meta.phase == "train" or steps.empty or steps["communication_us"].isna().all():
        return []
    comm = steps["communication_us"].astype("float64").fillna(0.0)
    wall = steps["duration_us"].astype("float64")
    total = float(wall.sum())
    if total <= 0:
        return []
    share = float(comm.sum()) / total
    if share <= COMM_SHARE:
        return []
    ms = float(comm.median()) / 1000
    return [
        Symptom(
            "communication-share",
            f"Collective communication not hidden by computation takes {share:.0%} of each {role} step "
            f"({ms:.3f} ms per step).",
            source=role,
            strength=min(1.0, share / 0.3),
            values={"communication_share": rnd(share), "ms_per_step": rnd(ms, 4)},
            evidence=rows(steps, ["step", "duration_us", "communication_us"]),
            recoverable_ms_per_step=rnd(ms, 4),
        )
    ]


# -------------------------------------------------------------------------------------------- memory


def memory_series(side: Side) -> pd.DataFrame | None:
    """Allocated memory over time (time_us, mb) from whichever memory record the run has: the CPU
    reader's `memory`, memory_record.csv (one component) or npu_module_mem.csv (largest component)."""
    extras = side.run.extras
    if "memory" in extras and {"time_us", "allocated_mb"} <= set(extras["memory"].columns):
        m = extras["memory"]
        frame = pd.DataFrame({"time_us": m["time_us"], "mb": m["allocated_mb"]})
        return frame.apply(pd.to_numeric, errors="coerce").astype("float64").dropna()
    if "memory_record" in extras:
        return _component_series(extras["memory_record"], "Total Allocated")
    if "npu_module_mem" in extras:
        return _component_series(extras["npu_module_mem"], "Total Reserved")
    return None


def _component_series(table: pd.DataFrame, prefix: str) -> pd.DataFrame | None:
    value_col = next((c for c in table.columns if str(c).startswith(prefix)), None)
    if value_col is None or "Timestamp(us)" not in table.columns:
        return None
    scale = 1 / 1024 if "(KB)" in str(value_col) else 1.0
    frame = pd.DataFrame(
        {
            "component": table["Component"].astype(str) if "Component" in table.columns else "",
            # a damaged cell becomes NaN and is dropped: the record is optional evidence, not input
            "time_us": pd.to_numeric(table["Timestamp(us)"], errors="coerce").astype("float64"),
            "mb": pd.to_numeric(table[value_col], errors="coerce").astype("float64") * scale,
        }
    ).dropna()
    if frame.empty:
        return None
    present = set(frame["component"])
    chosen = next((c for c in MEMORY_COMPONENTS if c in present), None)
    if chosen is None:
        chosen = frame.groupby("component")["mb"].max().idxmax()
    return frame.loc[frame["component"] == chosen, ["time_us", "mb"]].sort_values("time_us")


def window_peaks(series: pd.DataFrame, steps: pd.DataFrame, run_end: float | None) -> np.ndarray:
    """Peak memory per step (per equal-time window when steps do not cover the samples): per-step peaks
    ignore the allocate/free cycle inside a step and keep what persists across steps. The last step
    ends at its recorded end or, when that is missing, at the run's last kernel end."""
    t = series["time_us"].to_numpy()
    if len(steps) >= MEMORY_MIN_WINDOWS and steps["start_us"].notna().all():
        edges = steps["start_us"].astype("float64").to_numpy()
        ends = (steps["start_us"] + steps["duration_us"]).astype("float64").to_numpy()
        last_end = max(np.nanmax(ends) if np.isfinite(ends).any() else -np.inf, run_end or -np.inf)
        idx = np.searchsorted(edges, t, side="right") - 1
        inside = (idx >= 0) & (t <= last_end)
        if inside.mean() >= 0.5:
            return series.loc[inside].groupby(idx[inside])["mb"].max().to_numpy()
    bins = np.linspace(t.min(), t.max(), MEMORY_FALLBACK_WINDOWS + 1)
    idx = np.clip(np.searchsorted(bins, t, side="right") - 1, 0, MEMORY_FALLBACK_WINDOWS - 1)
    return series.groupby(idx)["mb"].max().to_numpy()


@run_analyzer
def memory_growth(side: Side, role: str) -> list[Symptom]:
    """Allocated memory whose per-step peak rises steadily over the run (median of the last third of the
    steps > 10 % above that of the first third, Kendall's tau > 0.5): a leak, or a pool that keeps
    re-allocating. Silent without a memory record."""
    series = memory_series(side)
    if series is None or len(series) < MEMORY_MIN_WINDOWS:
        return []
    window = run_window(side)
    peaks = window_peaks(series, side.run.steps, window[1] if window else None)
    if len(peaks) < MEMORY_MIN_WINDOWS:
        return []
    third = len(peaks) // 3
    start, end = float(np.median(peaks[:third])), float(np.median(peaks[-third:]))
    if start <= 0:
        return []
    growth = end - start
    relative = growth / start
    tau = kendall_tau(peaks)
    if relative <= MEMORY_GROWTH or tau <= MEMORY_TAU:
        return []
    return [
        Symptom(
            "memory-growth",
            f"The per-step peak of allocated memory of the {role} grows from {start:.3f} MB to {end:.3f} MB "
            f"over {len(peaks)} steps (+{relative:.0%}, Kendall tau {tau:.2f}).",
            source=role,
            strength=min(1.0, relative / 0.5) * min(1.0, tau),
            values={
                "start_mb": rnd(start, 4),
                "end_mb": rnd(end, 4),
                "growth_mb": rnd(growth, 4),
                "relative_growth": rnd(relative),
            },
        )
    ]

"""Device symptoms: AI CPU fallback, operators that changed core, AI Core frequency drops (from the
trace's "AI Core Freq" counter or an `npu-smi` reading), exposed communication and memory growth.

`npu-smi` readings are not part of a profiler folder: diagnosis.readers.npu_smi attaches them to the
run as ``run.npu_smi`` (core.model.NPU_SMI_SCHEMA).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from core.model import NPU_SMI_SCHEMA
from core.symptoms import Emits, Kind, Symptom, SymptomValues
from core.text import Text, say
from diagnosis.analyzers import pair_analyzer, run_analyzer
from diagnosis.analyzers.common import OP_COLS, rnd, rows
from diagnosis.compare import Comparison, Side
from diagnosis.stats import kendall_tau


@dataclass(frozen=True, kw_only=True)
class AiCpuOps(SymptomValues):
    """Operators run on AI CPU in the target (share of time, ops >= 20 us)."""

    KIND = Kind("ai-cpu-ops", ("run",), ("ai-cpu-ops",))
    aicpu_share: float | None
    aicpu_ms_per_step: float | None
    ops: list[str]  # operator names


@dataclass(frozen=True, kw_only=True)
class CoreChange(SymptomValues):
    """The same operator runs on a different accelerator core in the two runs (e.g. AI_CORE ->
    AI_CPU)."""

    KIND = Kind("core-change", ("pair",), ("core-change",))
    ops: list[str]  # operator names
    ms_per_step: float | None


@dataclass(frozen=True, kw_only=True)
class MemoryGrowth(SymptomValues):
    """Allocated device/host memory grows across the run."""

    KIND = Kind("memory-growth", ("run",), ("memory-growth",))
    start_mb: float | None
    end_mb: float | None
    growth_mb: float | None
    relative_growth: float | None


@dataclass(frozen=True, kw_only=True)
class FrequencyDrop(SymptomValues):
    """AI Core frequency falls below its maximum while AI Core kernels run (throttling; a clock that
    drops only between kernels is power saving and not this symptom), or a busy npu-smi reading shows
    it. From the clock counter: `min_mhz` in effect during kernels, `mean_drop` weighted by kernel
    busy time, `low_clock_ms`/`low_clock_share` of busy time and `kernels_affected` at a low clock."""

    KIND = Kind(
        "frequency-drop",
        ("run",),
        (
            "frequency-drop.kernels",
            "frequency-drop",
        ),
    )
    max_mhz: float | None
    min_mhz: float | None
    mean_drop: float | None
    low_clock_ms: float | None
    low_clock_share: float | None
    kernels_affected: int | None
    idle_downclock: bool | None
    temperature_c: float | None
    power_w: float | None


@dataclass(frozen=True, kw_only=True)
class CommunicationShare(SymptomValues):
    """Collective communication takes a share of the inference step."""

    KIND = Kind("communication-share", ("run",), ("communication-share",))
    communication_share: float | None
    ms_per_step: float | None


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(AiCpuOps, CoreChange, MemoryGrowth, FrequencyDrop, CommunicationShare)

AICPU_SHARE = 0.05
AICPU_OP_US = 20.0
FREQ_DROP = 0.05  # a sample >= 5 % below the run's maximum (msprof-analyze frequency_threshold)
FREQ_MIN_BUSY_SHARE = 0.01  # ... in effect for at least 1 % of the AI Core kernels' busy time
# Overlaps shorter than this are clock resolution, not a clock that held: an epoch time in µs (~1.7e15) is
# resolved to 0.25 µs in float64, so a sample written at a kernel's end can land just inside it.
CLOCK_TOLERANCE_US = 1.0
COMM_SHARE = 0.10
MEMORY_GROWTH = 0.10
MEMORY_TAU = 0.5
MEMORY_MIN_WINDOWS = 4
MEMORY_FALLBACK_WINDOWS = 8


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
        AiCpuOps(
            aicpu_share=rnd(share),
            aicpu_ms_per_step=rnd(aicpu_us / 1000, 4),
            ops=aicpu["operator"].astype(str).tolist(),
        ).symptom(
            say(
                "ai-cpu-ops",
                ops=len(aicpu),
                role=say(f"role.{role}"),
                share=share,
                ms=aicpu_us / 1000,
                slow=len(slow),
                slow_us=AICPU_OP_US,
            ),
            role,
            min(1.0, max(share / 0.15, 0.6 if len(slow) else 0.0)),
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
        CoreChange(ops=changed["operator"].astype(str).tolist(), ms_per_step=rnd(ms, 4)).symptom(
            say("core-change", ops=len(changed), text=text, ms=ms),
            "pair",
            1.0 if to_aicpu.any() else 0.6,
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


def npu_smi_readings(side: Side) -> pd.DataFrame | None:
    """The run's attached `npu-smi` readings (run.npu_smi) with numbers as float64, or None."""
    smi = side.run.npu_smi
    if smi.empty:
        return None
    return smi.astype({c: "float64" for c, dtype in NPU_SMI_SCHEMA.items() if dtype == "double[pyarrow]"})


@run_analyzer
def frequency_drop(side: Side, role: str) -> list[Symptom]:
    """The AI Core clock while AI Core kernels run falls >= 5 % below the run's highest clock (the "AI Core
    Freq" counter of trace_view.json or msprof_*.json, or the AICORE_FREQ table: `run.frequency`), or a
    busy `npu-smi info -t common` reading (`run.npu_smi`) shows the current clock >= 5 % below the rated
    one. A clock that drops only while the device idles is power saving, not throttling: it stays quiet.
    Temperature and power from `npu-smi` are added when attached. Silent without either record."""
    smi = npu_smi_readings(side)
    during = kernel_clock(side)
    if during is not None and during.fires:
        return [_kernel_clock_symptom(during, smi, role)]
    found = _smi_drop(smi)
    if found is None:
        return []
    max_mhz, min_mhz, mean_drop, basis = found
    return [
        FrequencyDrop(
            max_mhz=rnd(max_mhz),
            min_mhz=rnd(min_mhz),
            mean_drop=rnd(mean_drop),
            low_clock_ms=None,
            low_clock_share=None,
            kernels_affected=None,
            idle_downclock=None,
            temperature_c=_column_max(smi, "temperature_c"),
            power_w=_column_max(smi, "power_w"),
        ).symptom(
            say(
                "frequency-drop",
                role=say(f"role.{role}"),
                max_mhz=max_mhz,
                min_mhz=min_mhz,
                basis=basis,
                drop=mean_drop,
                extra=_smi_extra(smi),
            ),
            role,
            min(1.0, 0.5 + mean_drop * 5),
        )
    ]


def _smi_extra(smi: pd.DataFrame | None) -> str:
    """ ", 88 °C, 250 W" from the attached npu-smi readings (empty without them)."""
    temp = _column_max(smi, "temperature_c")
    power = _column_max(smi, "power_w")
    return "".join(
        [f", {temp:g} °C" if temp is not None else "", f", {power:g} W" if power is not None else ""]
    )


@dataclass(frozen=True)
class KernelClock:
    """The AI Core clock while AI Core kernels ran (busy time: the union of their intervals)."""

    max_mhz: float  # the highest clock the counter recorded
    min_mhz: float  # the lowest clock in effect while a kernel ran
    mean_drop: float  # 1 - busy-time-weighted mean clock / max_mhz
    low_busy_us: float  # busy time at a clock >= FREQ_DROP below max_mhz
    busy_us: float
    low_kernels: pd.DataFrame  # the kernels that ran (partly) at such a clock
    idle_low: bool  # the clock also dropped while no kernel ran

    @property
    def fires(self) -> bool:
        """A low clock held for at least FREQ_MIN_BUSY_SHARE of the kernels' busy time."""
        return self.low_busy_us > 0 and self.low_busy_us >= FREQ_MIN_BUSY_SHARE * self.busy_us


def kernel_clock(side: Side) -> KernelClock | None:
    """The clock during the run's AI Core kernels (HCCL operators and AI CPU tasks do not run on the AI
    Core clock), or None without frequency samples or kernel times. Each sample holds from its time until
    the next one; the first also holds before it."""
    freq = side.run.frequency.astype({"ts_us": "float64", "mhz": "float64"}).dropna()
    kernels = side.run.kernels
    core = kernels["core"].astype("string").str.upper().fillna("")
    start = kernels["start_us"].to_numpy(dtype="float64", na_value=np.nan)
    end = start + kernels["duration_us"].to_numpy(dtype="float64", na_value=0.0)
    keep: np.ndarray = np.isfinite(start) & np.isfinite(end) & ~core.isin(["HCCL", "AI_CPU"]).to_numpy()
    if freq.empty or not keep.any():
        return None
    freq = freq.sort_values("ts_us", kind="stable")
    ts, mhz = freq["ts_us"].to_numpy(), freq["mhz"].to_numpy()
    top = float(mhz.max())
    if top <= 0:
        return None
    lows, highs = _union(start[keep], end[keep])
    bounds = np.append(ts, max(highs[-1], ts[-1]))
    bounds[0] = min(ts[0], lows[0])
    busy = np.diff(_busy_before(bounds, lows, highs))  # busy time inside each sample's segment
    if busy.sum() <= 0:
        return None
    low = mhz < (1 - FREQ_DROP) * top
    ran = busy >= CLOCK_TOLERANCE_US
    affected: np.ndarray = _low_time(start[keep], end[keep], bounds, low) >= CLOCK_TOLERANCE_US
    return KernelClock(
        max_mhz=top,
        min_mhz=float(mhz[ran].min()) if ran.any() else top,
        mean_drop=float(1 - np.average(mhz, weights=busy) / top),
        low_busy_us=float(busy[low & ran].sum()),
        busy_us=float(busy.sum()),
        low_kernels=kernels.loc[keep].loc[affected],
        idle_low=bool(((np.diff(bounds) - busy)[low] > 0).any()),
    )


def _union(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of [start, end) intervals as ordered, disjoint (lows, highs)."""
    order = np.argsort(start, kind="stable")
    start, reach = start[order], np.maximum.accumulate(end[order])
    new = np.ones(len(start), dtype=bool)
    new[1:] = start[1:] > reach[:-1]
    heads = np.flatnonzero(new)
    return start[heads], np.maximum.reduceat(reach, heads)


def _busy_before(t: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """Busy time (inside the disjoint intervals) before each time in `t`."""
    done = np.concatenate([[0.0], np.cumsum(highs - lows)])  # busy time before interval i starts
    i = np.searchsorted(lows, t, side="right")  # intervals started at or before t
    last = np.maximum(i - 1, 0)
    inside = np.clip(np.minimum(t, highs[last]) - lows[last], 0, None) * (i > 0)
    return done[last] * (i > 0) + inside


def _low_time(start: np.ndarray, end: np.ndarray, bounds: np.ndarray, low: np.ndarray) -> np.ndarray:
    """Time each kernel spent at a low clock (segment j runs from bounds[j] to bounds[j + 1])."""
    held = np.diff(bounds) * low
    before = np.concatenate([[0.0], np.cumsum(held)])  # low time before each bound

    def low_until(t: np.ndarray) -> np.ndarray:
        j = np.clip(np.searchsorted(bounds, t, side="right") - 1, 0, len(low) - 1)
        return before[j] + np.clip(t - bounds[j], 0, np.diff(bounds)[j]) * low[j]

    return low_until(end) - low_until(start)


def _kernel_clock_symptom(clock: KernelClock, smi: pd.DataFrame | None, role: str) -> Symptom:
    """The symptom of a clock that fell while kernels ran: its depth, duration and the kernels it slowed."""
    share = clock.low_busy_us / clock.busy_us
    groups = clock.low_kernels.groupby(clock.low_kernels["op_type"].astype("string").fillna("?"))[
        "duration_us"
    ]
    table = pd.DataFrame({"kernels": groups.size(), "kernel_us": groups.sum().astype("float64")})
    table = table.sort_values("kernel_us", ascending=False, kind="stable").reset_index(names="op_type")
    return FrequencyDrop(
        max_mhz=rnd(clock.max_mhz),
        min_mhz=rnd(clock.min_mhz),
        mean_drop=rnd(clock.mean_drop),
        low_clock_ms=rnd(clock.low_busy_us / 1000, 4),
        low_clock_share=rnd(share),
        kernels_affected=len(clock.low_kernels),
        idle_downclock=clock.idle_low,
        temperature_c=_column_max(smi, "temperature_c"),
        power_w=_column_max(smi, "power_w"),
    ).symptom(
        say(
            "frequency-drop.kernels",
            role=say(f"role.{role}"),
            max_mhz=clock.max_mhz,
            min_mhz=clock.min_mhz,
            kernels=len(clock.low_kernels),
            ms=clock.low_busy_us / 1000,
            share=share,
            drop=clock.mean_drop,
            extra=_smi_extra(smi),
        ),
        role,
        min(1.0, 0.5 + clock.mean_drop * 5),
        evidence=rows(table.head(10), ["op_type", "kernels", "kernel_us"]),
    )


def _smi_drop(smi: pd.DataFrame | None) -> tuple[float, float, float, Text] | None:
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
        say("frequency.smi"),
    )


def _column_max(frame: pd.DataFrame | None, col: str) -> float | None:
    if frame is None or col not in frame.columns or frame[col].isna().all():
        return None
    return rnd(float(frame[col].max()), 1)


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
        CommunicationShare(communication_share=rnd(share), ms_per_step=rnd(ms, 4)).symptom(
            say("communication-share", share=share, role=say(f"role.{role}"), ms=ms),
            role,
            min(1.0, share / 0.3),
            evidence=rows(steps, ["step", "duration_us", "communication_us"]),
            recoverable_ms_per_step=rnd(ms, 4),
        )
    ]


# -------------------------------------------------------------------------------------------- memory


def memory_series(side: Side) -> pd.DataFrame | None:
    """Memory held over time (time_us, mb as float64) from the run's memory record, or None."""
    memory = side.run.memory
    if memory.empty:
        return None
    return pd.DataFrame(
        {"time_us": memory["time_us"].astype("float64"), "mb": memory["mb"].astype("float64")}
    )


def window_peaks(series: pd.DataFrame, steps: pd.DataFrame, run_end: float | None) -> np.ndarray:
    """Peak memory per step (per equal-time window when steps do not cover the samples): per-step peaks
    ignore the allocate/free cycle inside a step and keep what persists across steps. The last step
    ends at its recorded end or, when that is missing, at the run's last kernel end."""
    t: np.ndarray = series["time_us"].to_numpy()
    if len(steps) >= MEMORY_MIN_WINDOWS and steps["start_us"].notna().all():
        edges = steps["start_us"].astype("float64").to_numpy()
        ends = (steps["start_us"] + steps["duration_us"]).astype("float64").to_numpy()
        last_end = max(np.nanmax(ends) if np.isfinite(ends).any() else -np.inf, run_end or -np.inf)
        idx = np.searchsorted(edges, t, side="right") - 1
        inside = (idx >= 0) & (t <= last_end)
        if inside.mean() >= 0.5:
            return series.loc[inside].groupby(idx[inside])["mb"].max().to_numpy()
    # cast: numpy's overloads of linspace give no single result for an array of unknown dtype
    bins = cast("np.ndarray", np.linspace(t.min(), t.max(), MEMORY_FALLBACK_WINDOWS + 1))
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
        MemoryGrowth(
            start_mb=rnd(start, 4),
            end_mb=rnd(end, 4),
            growth_mb=rnd(growth, 4),
            relative_growth=rnd(relative),
        ).symptom(
            say(
                "memory-growth",
                role=say(f"role.{role}"),
                start=start,
                end=end,
                steps=len(peaks),
                relative=relative,
                tau=tau,
            ),
            role,
            min(1.0, relative / 0.5) * min(1.0, tau),
        )
    ]

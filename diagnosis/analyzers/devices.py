"""Device symptoms: AI CPU fallback, operators that changed core, AI Core frequency drops (from the
trace's "AI Core Freq" counter or an `npu-smi` reading), exposed communication and memory growth.

`npu-smi` readings are not part of a profiler folder: diagnosis.readers.npu_smi attaches them to the
run as ``run.npu_smi`` (core.model.NPU_SMI_SCHEMA).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.model import NPU_SMI_SCHEMA
from core.symptoms import Emits, Symptom
from core.text import Text, say
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
            say(
                "ai-cpu-ops",
                ops=len(aicpu),
                role=say(f"role.{role}"),
                share=share,
                ms=aicpu_us / 1000,
                slow=len(slow),
                slow_us=AICPU_OP_US,
            ),
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
            say("core-change", ops=len(changed), text=text, ms=ms),
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
    """The run's attached `npu-smi` readings (run.npu_smi) with numbers as float64, or None."""
    smi = side.run.npu_smi
    if smi.empty:
        return None
    return smi.astype({c: "float64" for c, dtype in NPU_SMI_SCHEMA.items() if dtype == "double[pyarrow]"})


@run_analyzer
def frequency_drop(side: Side, role: str) -> list[Symptom]:
    """The AI Core clock falls >= 5 % below its maximum while the run executes (the trace's "AI Core Freq"
    counter, `run.frequency`), or a busy `npu-smi info -t common` reading
    (`run.npu_smi`) shows the current clock >= 5 % below the rated one. Temperature and power
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
            say(
                "frequency-drop",
                role=say(f"role.{role}"),
                max_mhz=max_mhz,
                min_mhz=min_mhz,
                basis=basis,
                drop=mean_drop,
                extra=extra,
            ),
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


def _trace_drop(side: Side) -> tuple[float, float, float, Text] | None:
    freq = side.run.frequency
    if freq.empty:
        return None
    prof = frequency_profile(freq, run_window(side))
    if prof.empty:
        return None
    mhz, held = prof["mhz"].to_numpy(), prof["held_us"].to_numpy()
    top, low = float(mhz.max()), float(mhz.min())
    if top <= 0 or low > (1 - FREQ_DROP) * top:
        return None
    mean = float(np.average(mhz, weights=held)) if held.sum() > 0 else float(mhz.mean())
    return top, low, 1 - mean / top, say("frequency.trace")


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
        Symptom(
            "communication-share",
            say("communication-share", share=share, role=say(f"role.{role}"), ms=ms),
            source=role,
            strength=min(1.0, share / 0.3),
            values={"communication_share": rnd(share), "ms_per_step": rnd(ms, 4)},
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
            say(
                "memory-growth",
                role=say(f"role.{role}"),
                start=start,
                end=end,
                steps=len(peaks),
                relative=relative,
                tau=tau,
            ),
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

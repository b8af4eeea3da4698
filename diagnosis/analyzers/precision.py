"""Precision symptoms: FP16/BF16 on the baseline but FP32 on the target (from dtype columns, or
from Cast ops and AMP scope markers where a layout has no dtypes), and Cast-heavy targets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.symptoms import Emits, Kind, Symptom, SymptomValues
from core.text import say
from diagnosis.analyzers import pair_analyzer, run_analyzer
from diagnosis.analyzers.common import (
    COMPUTE_OPS,
    FULL_PRECISION,
    LOW_PRECISION,
    MEASURED_STRENGTH,
    OP_COLS,
    first_dtype,
    rnd,
    rows,
)
from diagnosis.analyzers.kernels import side_layout_mask
from diagnosis.compare import Comparison, Side


@dataclass(frozen=True, kw_only=True)
class PrecisionChange(SymptomValues):
    """Compute-heavy ops run in FP32 on the target but FP16/BF16 on the baseline (dtype columns), or
    Cast ops/AMP scope markers exist on one side only (CPU evidence)."""

    KIND = Kind(
        "precision-change",
        ("pair",),
        (
            "precision-change.casts",
            "precision-change.dtypes",
        ),
    )
    ops_changed: int
    ops_changed_share: float | None
    fp32_share_target: float | None
    lost_ms_per_step: float | None
    lost_share_target: float | None
    baseline_casts_per_step: float | None
    target_casts_per_step: float | None
    evidence_basis: str


@dataclass(frozen=True, kw_only=True)
class CastHeavy(SymptomValues):
    """Cast kernels take a large share of the target's time or outnumber compute ops."""

    KIND = Kind("cast-heavy", ("run",), ("cast-heavy",))
    cast_share: float | None
    casts_per_step: float | None
    compute_ops_per_step: float | None
    cast_ms_per_step: float | None


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(PrecisionChange, CastHeavy)

MIN_AMP_CASTS_PER_STEP = 2.0
CAST_MIN_SHARE = 0.01  # below 1 % of a run's operator time Casts are negligible
CASTS_PER_COMPUTE = 2.0


def _compute_rows(table: pd.DataFrame) -> pd.DataFrame:
    matched = table["match"].isin(["scope", "sequence"])
    return table.loc[matched & table["op_type"].isin(COMPUTE_OPS)]


@pair_analyzer
def precision_change(c: Comparison) -> list[Symptom]:
    """Compute ops that ran in low precision on the baseline and in FP32 on the target."""
    if _has_dtypes(c.baseline) and _has_dtypes(c.target):
        return _from_dtypes(c)
    return _from_casts(c)


def _has_dtypes(side: Side) -> bool:
    return bool(side.kernels["input_dtypes"].notna().any())


def _from_dtypes(c: Comparison) -> list[Symptom]:
    compute = _compute_rows(c.table)
    if compute.empty:
        return []
    b = first_dtype(compute["baseline_input_dtypes"])
    t = first_dtype(compute["target_input_dtypes"])
    low_on_baseline = b.isin(LOW_PRECISION).fillna(False).to_numpy()
    changed = compute.loc[low_on_baseline & t.isin(FULL_PRECISION).fillna(False).to_numpy()]
    if changed.empty:
        return []
    share = _fp32_share(c.table)
    lost = float(changed["delta_us_per_step"].clip(lower=0).sum()) / 1000
    ev = changed.assign(baseline_dtype=b.loc[changed.index], target_dtype=t.loc[changed.index]).sort_values(
        "delta_us_per_step", ascending=False
    )
    return [
        PrecisionChange(
            ops_changed=len(changed),
            ops_changed_share=rnd(len(changed) / int(low_on_baseline.sum())),
            fp32_share_target=rnd(share),
            lost_ms_per_step=rnd(lost),
            lost_share_target=rnd(lost / max(c.target.ms_per_step, 1e-9)),
            baseline_casts_per_step=c.baseline.run.meta.amp.get("cast_ops_per_step"),
            target_casts_per_step=c.target.run.meta.amp.get("cast_ops_per_step"),
            evidence_basis="dtype columns",
        ).symptom(
            say(
                "precision-change.dtypes",
                ops=len(changed),
                of=int(low_on_baseline.sum()),
                share=share,
                lost=lost,
            ),
            "pair",
            min(1.0, 0.6 + share * 0.4),
            evidence=rows(ev, [*OP_COLS, "baseline_dtype", "target_dtype"]),
            recoverable_ms_per_step=rnd(lost),
        )
    ]


def _fp32_share(table: pd.DataFrame) -> float:
    """Share of the target's compute-operator time spent in FP32 kernels (matched or not)."""
    all_target = table.loc[table["op_type"].isin(COMPUTE_OPS)]
    t_all = first_dtype(all_target["target_input_dtypes"])
    fp32_time = float(
        all_target.loc[t_all.isin(FULL_PRECISION).fillna(False).to_numpy(), "target_us_per_step"].sum()
    )
    return fp32_time / max(float(all_target["target_us_per_step"].sum()), 1e-9)


def _from_casts(c: Comparison) -> list[Symptom]:
    b_amp, t_amp = c.baseline.run.meta.amp, c.target.run.meta.amp
    b_casts = float(b_amp.get("cast_ops_per_step") or 0.0)
    t_casts = float(t_amp.get("cast_ops_per_step") or 0.0)
    baseline_amp = b_casts >= MIN_AMP_CASTS_PER_STEP or b_amp.get("output_to16_scopes")
    target_amp = t_casts >= MIN_AMP_CASTS_PER_STEP or t_amp.get("output_to16_scopes")
    if not baseline_amp or target_amp:
        return []
    compute = _compute_rows(c.table)
    slower = compute.loc[compute["delta_us_per_step"] > 0].sort_values("delta_us_per_step", ascending=False)
    lost = float(slower["delta_us_per_step"].sum()) / 1000
    return [
        PrecisionChange(
            ops_changed=len(slower),
            ops_changed_share=1.0,
            fp32_share_target=1.0,
            lost_ms_per_step=rnd(lost),
            lost_share_target=rnd(lost / max(c.target.ms_per_step, 1e-9)),
            baseline_casts_per_step=rnd(b_casts),
            target_casts_per_step=rnd(t_casts),
            evidence_basis="cast ops and AMP scopes",
        ).symptom(
            say(
                "precision-change.casts",
                b_casts=b_casts,
                scopes=say("precision.scopes") if b_amp.get("output_to16_scopes") else "",
                t_casts=t_casts,
                cost=say("precision.lose", lost=lost) if lost > 0 else say("precision.not_slower"),
            ),
            "pair",
            0.9 if b_amp.get("output_to16_scopes") else 0.7,
            evidence=rows(slower, OP_COLS),
            recoverable_ms_per_step=rnd(lost) if lost > 0 else None,
        )
    ]


@run_analyzer
def cast_heavy(side: Side, role: str) -> list[Symptom]:
    """Cast kernels in absolute time per step, whenever they are not negligible (1 % of the run's
    operator time) or outnumber compute ops. CANN's `trans_Cast_N` kernels are layout conversions,
    counted by format-conversion only, so no kernel is reported by two rules."""
    k = side.kernels
    total = float(side.ops["us_per_step"].sum())
    is_cast = (k["op_type"] == "Cast").fillna(False).to_numpy(dtype=bool) & ~side_layout_mask(side)
    count = int(is_cast.sum())
    if not count or total <= 0:
        return []
    steps = max(side.steps, 1)
    cast_us = float(k["duration_us"].astype("float64").to_numpy()[is_cast].sum()) / steps
    share = cast_us / total
    per_step = count / steps
    compute = float(side.ops.loc[side.ops["op_type"].isin(COMPUTE_OPS), "launches_per_step"].sum())
    if share < CAST_MIN_SHARE and per_step <= CASTS_PER_COMPUTE * max(compute, 1.0):
        return []
    return [
        CastHeavy(
            cast_share=rnd(share),
            casts_per_step=rnd(per_step),
            compute_ops_per_step=rnd(compute),
            cast_ms_per_step=rnd(cast_us / 1000),
        ).symptom(
            say(
                "cast-heavy",
                share=share,
                role=say(f"role.{role}"),
                ms=cast_us / 1000,
                per_step=per_step,
                compute=compute,
            ),
            role,
            MEASURED_STRENGTH,
            evidence=_cast_evidence(side, k["key"].to_numpy()[is_cast]),
            recoverable_ms_per_step=rnd(cast_us / 1000),
        )
    ]


def _cast_evidence(side: Side, cast_keys: np.ndarray) -> tuple[dict[str, object], ...]:
    """The Cast operators (the operator keys of the Cast kernels), slowest first."""
    keys = pd.Index(pd.unique(cast_keys)).astype(str)
    ops = side.ops.loc[side.ops.index.isin(keys)]
    top = ops.sort_values("us_per_step", ascending=False).reset_index(names="operator")
    return rows(top, ["operator", "op_type", "us_per_step", "launches_per_step"])

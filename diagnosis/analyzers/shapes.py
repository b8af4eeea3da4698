"""Shape symptoms: different shapes between the runs (batch), many shapes for one operator
(recompiles, dynamic kernels), and a small inference batch that leaves the device under-used."""

from __future__ import annotations

import numpy as np

from diagnosis.analyzers import pair_analyzer, run_analyzer
from diagnosis.analyzers.common import rnd, rows
from diagnosis.analyzers.timing import utilisation
from diagnosis.compare import Comparison, Side
from diagnosis.symptoms import Symptom

SHAPE_CHANGED_SHARE = 0.2
DISTINCT_SHAPES = 3
DYNAMIC_SHARE = 0.5
SMALL_BATCH_FACTOR = 4
RECOMPILE_RATIO = 3.0


@pair_analyzer
def shape_mismatch(c: Comparison) -> list[Symptom]:
    """Matched operators see different input shapes: durations are not comparable as they stand."""
    matched = c.table.loc[c.table["match"].isin(["scope", "sequence"])]
    if matched.empty or not matched["baseline_input_shapes"].notna().any():
        return []
    known = matched["baseline_input_shapes"].notna() & matched["target_input_shapes"].notna()
    changed = matched.loc[matched["input_shapes_changed"]]
    share = len(changed) / max(int(known.sum()), 1)
    b, t = c.baseline.batch, c.target.batch
    if share < SHAPE_CHANGED_SHARE and not (b and t and b != t):
        return []
    return [
        Symptom(
            "shape-mismatch",
            f"{len(changed)} of {int(known.sum())} matched operators see different input shapes"
            + (f"; batch {b} on the baseline, {t} on the target" if b and t and b != t else "")
            + ": compare per sample, or profile both runs with the same shapes.",
            strength=min(1.0, 0.5 + share),
            values={"baseline_batch": b, "target_batch": t, "ops_with_different_shapes": len(changed)},
            evidence=rows(changed, ["operator", "op_type", "baseline_input_shapes", "target_input_shapes"]),
        )
    ]


@run_analyzer
def dynamic_shapes(side: Side, role: str) -> list[Symptom]:
    """Many distinct shapes for one operator, dynamic OP State, and slow steps at new shapes."""
    ops = side.ops
    distinct = ops.get("input_shapes_distinct")
    max_distinct = int(distinct.max()) if distinct is not None and distinct.notna().any() else 0
    dynamic_share = _dynamic_share(side)
    recompiles = _recompile_steps(side)
    if max_distinct < DISTINCT_SHAPES and (dynamic_share or 0.0) < DYNAMIC_SHARE and not recompiles:
        return []
    if max_distinct < DISTINCT_SHAPES and not recompiles and dynamic_share is None:
        return []
    worst = ops.reset_index(names="operator")
    if distinct is not None:
        worst = worst.sort_values("input_shapes_distinct", ascending=False)
    parts = []
    if max_distinct >= DISTINCT_SHAPES:
        parts.append(f"an operator sees {max_distinct} distinct input shapes")
    if dynamic_share and dynamic_share >= DYNAMIC_SHARE:
        parts.append(f"{dynamic_share:.0%} of kernels are dynamic-shape kernels")
    if recompiles:
        parts.append(
            f"{len(recompiles)} steps are {RECOMPILE_RATIO:g}x slower than the median at a new shape"
        )
    return [
        Symptom(
            "dynamic-shapes",
            "Input shapes change during the run: " + "; ".join(parts) + ".",
            source=role,
            strength=min(1.0, 0.4 + 0.2 * max_distinct / DISTINCT_SHAPES + 0.2 * len(recompiles)),
            values={
                "max_distinct_shapes": max_distinct,
                "dynamic_ops_share": rnd(dynamic_share),
                "recompile_steps": len(recompiles),
            },
            evidence=rows(worst, ["operator", "op_type", "input_shapes_distinct", "input_shapes"]),
            recoverable_ms_per_step=_recompile_cost(side, recompiles),
        )
    ]


def _dynamic_share(side: Side) -> float | None:
    state = side.kernels["op_state"].dropna().astype(str).str.lower()
    if state.empty:
        return None  # OP State missing: unknown, never assumed dynamic
    return float((state == "dynamic").mean())


def _recompile_steps(side: Side) -> list[int]:
    """Steps far slower than the median in which some operator meets a shape it had not seen."""
    steps = side.run.steps
    k = side.kernels
    if len(steps) < 3 or k["input_shapes"].isna().all() or k["step"].isna().all():
        return []
    d = steps["duration_us"].astype("float64").fillna(steps["busy_us"].astype("float64")).to_numpy()
    slow = set(steps["step"].to_numpy()[d >= RECOMPILE_RATIO * np.median(d)].tolist())
    first_seen = k.dropna(subset=["input_shapes"]).groupby(["key", "input_shapes"])["step"].min()
    first_step = int(k["step"].min())
    new_shape_steps = set(first_seen[first_seen > first_step].astype(int).tolist())
    return sorted(slow & new_shape_steps)


def _recompile_cost(side: Side, recompile_steps: list[int]) -> float | None:
    if not recompile_steps:
        return None
    steps = side.run.steps
    d = steps.set_index("step")["duration_us"].astype("float64")
    median = float(d.median())
    extra = float((d.loc[recompile_steps] - median).clip(lower=0).sum())
    return rnd(extra / 1000 / len(steps))


@pair_analyzer
def small_batch(c: Comparison) -> list[Symptom]:
    """The target's batch is far smaller than the baseline's and the device is mostly idle."""
    b, t = c.baseline.batch, c.target.batch
    if not (b and t) or t * SMALL_BATCH_FACTOR > b:
        return []
    util = utilisation(c.target)
    if util is not None and util > 0.7:
        return []
    return [
        Symptom(
            "small-batch",
            f"The target runs batch {t} against {b} on the baseline"
            + (f"; the device is busy {util:.0%} of the time" if util is not None else "")
            + ".",
            strength=min(1.0, (b / t) / 16),
            values={"baseline_batch": b, "target_batch": t, "utilisation": rnd(util)},
        )
    ]

"""Compare two canonical runs: roles, forward-pass filtering, alignment, the operator table and
the symptoms. Pure functions over DataFrames; `compare_runs` is the facade.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pandas as pd

from core.model import Run
from core.symptoms import Symptom
from core.text import say
from diagnosis.align import Alignment, align, operator_aggregates, per_step_times
from diagnosis.forward import forward_kernels
from diagnosis.stats import MIN_RELATIVE_EFFECT, Z_THRESHOLD, median_shift_z, row_medians_mads
from diagnosis.unique import per_unique_mask

T = TypeVar("T")

# Operator types whose first input's leading dimension is the batch size.
BATCH_OPS = ("Conv2D", "Conv3D", "Conv2DFusion", "MatMul", "BatchMatMul", "MatMulV2", "Dense", "Conv")
LEADERBOARD = 10


@dataclass
class Side:
    """One run prepared for comparison: forward kernels, per-operator aggregates, per-step samples."""

    run: Run
    kernels: pd.DataFrame
    ops: pd.DataFrame
    step_samples: pd.DataFrame
    steps: int
    batch: int | None
    typical: Side | None = None  # a multi-rank job's typical rank, read to diagnose its slow rank against

    @property
    def ms_per_step(self) -> float:
        return float(self.ops["us_per_step"].sum()) / 1000.0

    def memo(self, key: str, compute: Callable[[Side], T]) -> T:
        """`compute(self)`, computed once per Side and kept on it under `key`: several analyzers ask the
        same question of one prepared run, and a Side is not changed after preparation."""
        cache = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            cache[key] = compute(self)
        return cache[key]


@dataclass
class Comparison:
    """Everything the symptom analyzers and the report need about a pair of runs."""

    baseline: Side
    target: Side
    alignment: Alignment
    table: pd.DataFrame
    notes: list[str] = field(default_factory=list[str])
    symptoms: list[Symptom] = field(default_factory=list[Symptom])

    @property
    def per_sample(self) -> bool:
        return self.batches is not None

    @property
    def batches(self) -> tuple[int, int] | None:
        """(baseline, target) batch sizes when both are known and differ (times are judged per sample)."""
        b, t = self.baseline.batch, self.target.batch
        return (b, t) if b and t and b != t else None


def assign_roles(first: Run, second: Run, baseline: str | None = None) -> tuple[Run, Run]:
    """(baseline, target): the caller's choice ('first'/'second'), else the training run is the baseline."""
    if baseline == "second":
        return second, first
    if baseline == "first":
        return first, second
    if second.meta.phase == "train" and first.meta.phase != "train":
        return second, first
    return first, second


def prepare(run: Run) -> Side:
    """Forward kernels, aggregates and per-step samples of one run."""
    kernels = forward_kernels(run)
    steps = run.step_count
    ops = operator_aggregates(kernels, steps)
    return Side(run, kernels, ops, per_step_times(kernels), steps, batch_size(ops))


def batch_size(ops: pd.DataFrame) -> int | None:
    """Leading dimension of the first input of the earliest compute-heavy operator."""
    compute = ops.loc[ops["op_type"].isin(BATCH_OPS) & ops["input_shapes"].notna()]
    if compute.empty:
        return None
    first = str(compute.sort_values("order")["input_shapes"].iloc[0]).split(";")[0].split(",")[0]
    return int(first) if first.strip().isdigit() else None


def compare_runs(first: Run, second: Run, *, baseline: str | None = None) -> Comparison:
    """Align two runs and build the operator table (symptoms are added by `diagnosis.analyze`)."""
    return compare_sides(prepare(first), prepare(second), baseline=baseline)


def compare_sides(first: Side, second: Side, *, baseline: str | None = None) -> Comparison:
    """`compare_runs` for runs already prepared (a run's preparation does not depend on its role)."""
    base_run, target_run = assign_roles(first.run, second.run, baseline)
    base, target = (first, second) if base_run is first.run else (second, first)
    use_scopes = "pynative" not in (base_run.meta.execution_mode, target_run.meta.execution_mode)
    alignment = align(base.ops, target.ops, use_scopes=use_scopes)
    notes = _notes(base, target, alignment, use_scopes)
    table = operator_table(base, target, alignment)
    return Comparison(base, target, alignment, table, notes)


def _notes(base: Side, target: Side, alignment: Alignment, use_scopes: bool) -> list[str]:
    notes = [
        say(
            "note.matched",
            baseline=alignment.baseline_matched_share,
            target=alignment.target_matched_share,
            method=alignment.method,
        )
    ]
    if not use_scopes:
        notes.append(say("note.no-scopes"))
    if base.run.meta.phase == "train":
        notes.append(say("note.forward-only"))
    if base.batch and target.batch and base.batch != target.batch:
        notes.append(say("note.batch", baseline=base.batch, target=target.batch))
    notes += schedule_notes(base, target)
    notes += op_state_notes(base, target)
    return notes


def dynamic_kernel_share(side: Side) -> float | None:
    """Share of the run's kernels compiled as dynamic-shape kernels (OP State), None when unrecorded.

    A fact about compilation (every aclnn kernel of torch_npu is `dynamic`), never evidence of
    changing shapes on its own."""
    return side.memo("dynamic-kernel-share", _dynamic_kernel_share)


def _dynamic_kernel_share(side: Side) -> float | None:
    state = side.kernels["op_state"]
    known = int(state.notna().sum())
    if not known:
        return None  # OP State missing: unknown, never assumed dynamic
    dynamic = per_unique_mask(state, lambda values: values.str.strip().str.lower() == "dynamic")
    return float(dynamic.sum() / known)


def op_state_notes(base: Side, target: Side) -> list[str]:
    """The OP State shares as a fact: how the kernels were compiled, which shows no shape change."""
    b, t = dynamic_kernel_share(base), dynamic_kernel_share(target)
    if b is None and t is None:
        return []
    unknown = say("note.op-state.unknown")
    return [
        say(
            "note.op-state",
            baseline=unknown if b is None else f"{b:.0%}",
            target=unknown if t is None else f"{t:.0%}",
        )
    ]


def schedule_notes(base: Side, target: Side) -> list[str]:
    """A note when both runs recorded profiler schedules that differ: the windows cover different
    steps, but per-step numbers stay comparable, so it is no evidence of a cause."""
    a, b = base.run.meta.config.schedule, target.run.meta.config.schedule
    if not a or not b or a == b:
        return []
    return [say("note.schedules", a=a, b=b, a_steps=base.steps, b_steps=target.steps)]


def operator_table(base: Side, target: Side, alignment: Alignment) -> pd.DataFrame:
    """One row per operator: matched pairs first, then one-side-only operators with a reason."""
    pairs = alignment.pairs
    b = base.ops.add_prefix("baseline_")
    t = target.ops.add_prefix("target_")
    matched = pairs.join(b, on="baseline_key").join(t, on="target_key")
    only_b = b.loc[~b.index.isin(pairs["baseline_key"])].reset_index(names="baseline_key")
    only_b["match"] = "baseline-only"
    only_t = t.loc[~t.index.isin(pairs["target_key"])].reset_index(names="target_key")
    only_t["match"] = "target-only"
    table = pd.concat([matched, only_b, only_t], ignore_index=True)
    table["operator"] = table["target_key"].fillna(table["baseline_key"])
    table["op_type"] = table["target_op_type"].fillna(table["baseline_op_type"])
    for side in ("baseline", "target"):
        table[f"{side}_us_per_step"] = table[f"{side}_us_per_step"].astype("float64").fillna(0.0)
        total = table[f"{side}_us_per_step"].sum()
        table[f"{side}_share"] = table[f"{side}_us_per_step"] / total if total > 0 else 0.0
        table[f"{side}_rank"] = (
            table[f"{side}_us_per_step"]
            .where(table[f"{side}_us_per_step"] > 0)
            .rank(ascending=False, method="first")
        )
    table["delta_us_per_step"] = table["target_us_per_step"] - table["baseline_us_per_step"]
    with np.errstate(divide="ignore", invalid="ignore"):
        table["ratio"] = table["target_us_per_step"] / table["baseline_us_per_step"].replace(0.0, np.nan)
    _add_changes(table)
    for side in ("baseline", "target"):
        table[f"{side}_bound"] = bound_by_pipes(table, side)
    _add_significance(table, base, target)
    _add_per_sample(table, base, target)
    table["one_side_reason"] = one_side_reasons(table, base)
    return table.sort_values("delta_us_per_step", ascending=False, key=np.abs, kind="stable").reset_index(
        drop=True
    )


def _add_changes(table: pd.DataFrame) -> None:
    """Flags for every attribute that changed between the matched sides."""
    for attr in ("input_dtypes", "input_formats", "input_shapes", "core", "output_dtypes", "block_dim"):
        b, t = table.get(f"baseline_{attr}"), table.get(f"target_{attr}")
        if b is None or t is None:
            table[f"{attr}_changed"] = False
            continue
        both = b.notna() & t.notna()
        table[f"{attr}_changed"] = (
            (both & (b.astype("string") != t.astype("string"))).fillna(False).astype(bool)
        )


BOUND_RATIO = 0.8  # a pipe busy >= 80 % of the kernel's time bounds it (msprof-analyze uses the same)
PIPES = (("memory", ("aic_mte2_ratio", "aiv_mte2_ratio")), ("compute", ("aic_mac_ratio", "aiv_vec_ratio")))


def bound_by_pipes(table: pd.DataFrame, side: str) -> pd.Series:
    """What bounds an operator from its PipeUtilization counters: memory (MTE2), compute (MAC/vector),
    none (no pipe >= 80 %), or missing when the layout has no counters."""
    out = pd.Series(pd.NA, index=table.index, dtype="object")
    seen = pd.Series(False, index=table.index)
    for label, columns in PIPES:
        cols = [f"{side}_{c}" for c in columns if f"{side}_{c}" in table]
        if not cols:
            continue
        ratios = table[cols].apply(pd.to_numeric, errors="coerce").astype("float64").max(axis=1)
        seen |= ratios.notna()
        hit = (ratios >= BOUND_RATIO).fillna(False).to_numpy(dtype=bool) & out.isna().to_numpy()
        out[hit] = label
    return out.where(out.notna() | ~seen, "none")


def _add_significance(table: pd.DataFrame, base: Side, target: Side) -> None:
    """z of the per-step median shift per matched operator, and whether it exceeds the noise."""
    table["z"] = np.nan
    matched = table["match"].isin(["scope", "sequence"]).to_numpy()
    sb, st = base.step_samples, target.step_samples
    if sb.empty or st.empty or sb.shape[1] < 3 or st.shape[1] < 3:
        rel = (table["ratio"] - 1.0).abs()
        table["significant"] = matched & (rel > 0.25).fillna(False).to_numpy()
        return
    rows = table.loc[matched]
    mb, ab = row_medians_mads(sb.reindex(rows["baseline_key"]).fillna(0.0).to_numpy())
    mt, at = row_medians_mads(st.reindex(rows["target_key"]).fillna(0.0).to_numpy())
    z = median_shift_z(mb, ab, sb.shape[1], mt, at, st.shape[1])
    table.loc[matched, "z"] = z
    rel = (table["ratio"] - 1.0).abs().fillna(0.0)
    table["significant"] = matched & (table["z"].abs() > Z_THRESHOLD).to_numpy() & (rel > MIN_RELATIVE_EFFECT)


def _add_per_sample(table: pd.DataFrame, base: Side, target: Side) -> None:
    if base.batch and target.batch and base.batch != target.batch:
        table["baseline_us_per_sample"] = table["baseline_us_per_step"] / base.batch
        table["target_us_per_sample"] = table["target_us_per_step"] / target.batch
        with np.errstate(divide="ignore", invalid="ignore"):
            table["ratio_per_sample"] = table["target_us_per_sample"] / table[
                "baseline_us_per_sample"
            ].replace(0.0, np.nan)


FUSED_NAME_HINTS = ("Fusion", "Fused", "fused_", "BNInfer", "ConvBN", "Conv2DBn", "ReluV2")
EXTRA_WORK_TYPES = ("Cast", "TransData", "Transpose", "TransposeD", "MemcpyAsync", "Identity", "TensorMove")


def one_side_reasons(table: pd.DataFrame, base: Side) -> pd.Series:
    """Why an operator exists on one side only: fused on the other side, training-only, extra work."""
    reason = pd.Series("", index=table.index, dtype="object")
    names = table["operator"].astype(str)
    types = table["op_type"].astype(str)
    fused = names.str.contains("|".join(FUSED_NAME_HINTS), regex=True)
    extra = types.isin(EXTRA_WORK_TYPES) | names.str.contains("trans_", regex=False)
    dropout = types.str.contains("Dropout", case=False, regex=False)
    bn_train = types.isin(("BNTrainingReduce", "BNTrainingUpdate", "BatchNormTraining"))
    only_b = table["match"] == "baseline-only"
    only_t = table["match"] == "target-only"
    reason[only_b & fused] = say("reason.fused-baseline")
    reason[only_t & fused] = say("reason.fused-target")
    reason[only_b & (dropout | bn_train)] = say("reason.training-only")
    reason[only_t & (dropout | bn_train)] = say("reason.training-mode")
    reason[only_t & extra & (reason == "")] = say("reason.extra-target")
    reason[only_b & extra & (reason == "")] = say("reason.extra-baseline")
    reason[(only_b | only_t) & (reason == "")] = say("reason.no-counterpart")
    return reason


def leaderboard(table: pd.DataFrame, side: str, n: int = LEADERBOARD) -> pd.DataFrame:
    """The top-n operators of one side by time per step (the list users look at first)."""
    col = f"{side}_us_per_step"
    board = table[["operator", "op_type", col, f"{side}_share"]]  # four columns, not the whole table
    return board.loc[board[col] > 0].nlargest(n, col).reset_index(drop=True)

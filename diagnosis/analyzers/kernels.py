"""Kernel-shape symptoms of device runs: fusion split apart (or Conv+BN not folded), fused
attention run as BatchMatMul/Softmax kernels, format conversions, short elementwise kernels, float64
inputs and host synchronisation after launches.

Every analyzer here needs an Ascend or GPU run: a CPU run never fuses or folds (MindSpore's CPU
backend runs Conv, BatchNorm and activations as separate ops in training and inference alike), has no
layout conversions and no device synchronisation, so these analyzers stay silent on CPU.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from core.symptoms import Emits, Symptom
from diagnosis.analyzers import pair_analyzer, run_analyzer
from diagnosis.analyzers.common import MEASURED_STRENGTH, rnd, rows
from diagnosis.compare import Comparison, Side
from diagnosis.unique import factorize

# The symptom kinds this module emits (see diagnosis/analyzers/__init__.py).
EMITS = Emits(
    pair=("fusion-split", "format-conversion", "attention-split"),
    run=("fusion-split", "format-conversion", "elementwise-heavy", "float64-input", "sync-heavy"),
)

DEVICES = ("Ascend", "GPU")

# BatchNorm kernels that inference runs (eval mode) when the BN was not folded into the conv.
BN_INFER_TYPES = (
    "BatchNorm",
    "BNInfer",
    "BNInferD",
    "BNInference",
    "BNInferenceD",
    "BatchNormExt",
    "FusedBatchNorm",
    "FusedBatchNormEx",
    "FusedBatchNormV3",
)
ACTIVATION_TYPES = (
    "ReLU",
    "Relu",
    "ReluV2",
    "ReLU6",
    "Relu6",
    "LeakyRelu",
    "Sigmoid",
    "HSwish",
    "HSigmoid",
    "Swish",
    "SiLU",
    "GeLU",
    "Gelu",
    "FastGelu",
    "Mish",
)
# Kernels a fused baseline kernel would have absorbed: BN, activation, bias.
SEPARATE_TYPES = (*BN_INFER_TYPES, *ACTIVATION_TYPES, "BiasAdd")
CONV_TYPES = ("Conv2D", "Conv3D", "Conv2DV2", "Conv", "Convolution", "DepthwiseConv2dNative", "Conv2DFusion")
# A kernel name or type that says "several ops in one kernel": CANN/MindSpore UB fusion ("..._fusion",
# "FusionOp_..."), graph-kernel fusion ("Fused_..."), or Conv fused with BN/activation ("Conv2DBNInfer").
FUSED_PATTERN = r"(?i)(?:fusion|fused|conv[a-z0-9]*_?(?:bn|batchnorm|relu))"
BN_TRAINING_PATTERN = r"BNTraining"  # training BN reduce/update fusions are not foldable Conv+BN

BN_COUNT_RANGE = (0.5, 1.5)  # standalone BN kernels ~ one per conv
BN_TIME_SHARE = 0.10  # BN time > 10 % of conv time (diagnosis-knowledge convbn-not-folded)

LAYOUT_TYPES = ("TransData", "TransDataRNN", "TransposeD", "Transpose", "TransposeNOD")
LAYOUT_NAME = r"^trans_(?:TransData|Cast|TransposeD?)_\d+$"  # CANN-inserted conversions
LAYOUT_MIN_SHARE = 0.01  # below 1 % of a run's kernel time layout conversions are negligible
LAYOUT_COUNT_RATIO = 2.0  # "target count per step >> baseline": at least twice ...
LAYOUT_COUNT_EXTRA = 2.0  # ... and at least two more per step

ELEMENTWISE_TYPES = (
    "Add",
    "AddN",
    "Adds",
    "Sub",
    "Mul",
    "Muls",
    "RealDiv",
    "Div",
    "Maximum",
    "Minimum",
    "Neg",
    "Abs",
    "Exp",
    "Log",
    "Sqrt",
    "Rsqrt",
    "Square",
    "Pow",
    "Reciprocal",
    # no Cast: Casts are cast-overhead's evidence (a kernel is counted by one rule, not two)
    "BiasAdd",
    "Select",
    "Equal",
    "NotEqual",
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    "Tanh",
    "Erf",
    "Floor",
    "Round",
    "Sign",
    *ACTIVATION_TYPES,
)
ELEMENTWISE_SHORT_US = 20.0
ELEMENTWISE_SHARE = 0.30
ELEMENTWISE_MIN_KERNELS = 10

DOUBLE_PATTERN = r"(?:^|;)\s*(?:DOUBLE|FLOAT64|DT_DOUBLE)\s*(?:;|$)"
SHAPE_ARG_MAX = 8  # an INT64 vector this short is a shape or axis argument, not data

SYNC_PATTERN = r"(?i)Synchronize(?:Stream|Device|Event)"
SYNC_PER_LAUNCH = 0.5  # msprof-analyze's co-occurrence threshold (peer-msprof-analyze.md rule 13)


def on_device(side: Side) -> bool:
    """Whether the run executed on an accelerator (fusion, layouts and AI CPU exist only there)."""
    return side.run.meta.device in DEVICES


def per_unique(values: pd.Series, test: Callable[[pd.Series], pd.Series]) -> pd.Series:
    """A vectorised string test evaluated once per distinct value and scattered back (kernel tables repeat
    a few hundred names over millions of launches); missing values give False."""
    strings = values if isinstance(values.dtype, pd.StringDtype) else values.astype("string")
    codes, uniques = factorize(strings)
    verdict = test(pd.Series(uniques, dtype="string")).fillna(False).to_numpy(dtype=bool)
    hits = np.append(verdict, False)[codes] if len(verdict) else np.zeros(len(codes), dtype=bool)
    return pd.Series(hits, index=values.index)


def _last_segment(names: pd.Series) -> pd.Series:
    return names.str.rsplit("/", n=1).str[-1]


def kernel_name_test(kernels: pd.DataFrame, test: Callable[[pd.Series], pd.Series]) -> pd.Series:
    """`test` applied to the kernel part of `<launch op>/<kernel>` names, once per distinct name."""
    return per_unique(kernels["name"], lambda names: test(_last_segment(names)))


def _types(frame: pd.DataFrame) -> pd.Series:
    return frame["op_type"].fillna("").astype(str)


def _ops(side: Side) -> pd.DataFrame:
    return side.ops.reset_index(names="operator")


# ------------------------------------------------------------------------------------------ fusion split


def fused_keys(side: Side) -> pd.Index:
    """Operator keys of `side` that ran a fused kernel (not counting training-BN fusions or BN kernels)."""
    k = side.kernels

    def has(pattern: str) -> pd.Series:
        by_name = kernel_name_test(k, lambda names: names.str.contains(pattern, regex=True))
        return by_name | per_unique(k["op_type"], lambda types: types.str.contains(pattern, regex=True))

    fused = has(FUSED_PATTERN) & ~has(BN_TRAINING_PATTERN) & ~_types(k).isin(SEPARATE_TYPES)
    return pd.Index(k.loc[fused.to_numpy(), "key"].unique())


def _split_on_target(c: Comparison) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(baseline operators that ran fused but whose target counterpart is not fused or missing,
    target-only BN/activation/bias operators that a fused kernel would have absorbed)."""
    t = c.table
    base_fused, target_fused = fused_keys(c.baseline), fused_keys(c.target)
    groups = t.loc[t["baseline_key"].isin(base_fused) & ~t["target_key"].isin(target_fused)]
    separate = t.loc[(t["match"] == "target-only") & t["target_op_type"].isin(SEPARATE_TYPES)]
    if groups.empty:
        separate = separate.iloc[0:0]
    return groups, separate


def unfolded_bn(side: Side) -> tuple[pd.DataFrame, float]:
    """Standalone eval-mode BN operators (plus the activation right after each) of an inference run whose
    BN count is about the conv count and whose BN time exceeds 10 % of the conv time; and BN per step."""
    if side.run.meta.phase != "inference" or not on_device(side):
        return pd.DataFrame(), 0.0
    ops = _ops(side)
    types = _types(ops)
    bn = ops.loc[types.isin(BN_INFER_TYPES)]
    conv = ops.loc[types.isin(CONV_TYPES)]
    bn_n, conv_n = float(bn["launches_per_step"].sum()), float(conv["launches_per_step"].sum())
    bn_us, conv_us = float(bn["us_per_step"].sum()), float(conv["us_per_step"].sum())
    low, high = BN_COUNT_RANGE
    if conv_n <= 0 or not low * conv_n <= bn_n <= high * conv_n or bn_us <= BN_TIME_SHARE * conv_us:
        return pd.DataFrame(), 0.0
    return ops.loc[
        ops["operator"].isin(bn["operator"]) | ops["operator"].isin(_activations_after_bn(side))
    ], bn_n


def _activations_after_bn(side: Side) -> pd.Index:
    """Keys of activation kernels launched right after a BN kernel (Conv -> BN -> ReLU chains)."""
    k = side.kernels[["start_us", "op_type", "key"]].sort_values("start_us", kind="stable")
    types = _types(k)
    after_bn = types.shift(1).isin(BN_INFER_TYPES) & types.isin(ACTIVATION_TYPES)
    return pd.Index(k.loc[after_bn.to_numpy(), "key"].unique())


@pair_analyzer
def fusion_split(c: Comparison) -> list[Symptom]:
    """Kernels fused on the baseline (UB / graph-kernel fusion) whose target counterpart runs as a plain
    kernel followed by separate BN, activation or bias kernels. Device runs only: CPU never fuses."""
    if not (on_device(c.baseline) and on_device(c.target)):
        return []
    groups, separate = _split_on_target(c)
    if separate.empty:
        return []
    split = _ops(c.target).set_index("operator").loc[pd.Index(separate["target_key"])]
    split_ms = float(split["us_per_step"].sum()) / 1000
    extra = float(split["launches_per_step"].sum())
    kinds = ", ".join(sorted(set(split["op_type"].astype(str))))
    return [
        Symptom(
            "fusion-split",
            f"{len(groups)} kernels fused on the baseline run split on the target: {extra:g} extra kernels "
            f"per step ({kinds}) take {split_ms:.3f} ms per step.",
            strength=min(1.0, 0.5 + 0.1 * extra),
            values={
                "split_groups": len(groups),
                "extra_kernels_per_step": rnd(extra),
                "split_ms_per_step": rnd(split_ms, 4),
            },
            evidence=rows(groups, ["operator", "baseline_key", "op_type", "baseline_us_per_step"])
            + _split_rows(split),
            recoverable_ms_per_step=rnd(split_ms, 4),
        )
    ]


@run_analyzer
def conv_bn_unfolded(side: Side, role: str) -> list[Symptom]:
    """Standalone eval-mode BatchNorm kernels in an Ascend/GPU inference run, about one per convolution
    and more than 10 % of the convolution time: Conv+BN was not folded (diagnosis-knowledge
    convbn-not-folded). Emitted as `fusion-split` for that run; never on CPU, which never folds."""
    unfolded, bn_per_step = unfolded_bn(side)
    if unfolded.empty:
        return []
    split_ms = float(unfolded["us_per_step"].sum()) / 1000
    extra = float(unfolded["launches_per_step"].sum())
    return [
        Symptom(
            "fusion-split",
            f"{bn_per_step:g} BatchNorm kernels per step run after the convolutions of the {role} instead of "
            f"being folded into them: with the activations after them, {extra:g} kernels per step take "
            f"{split_ms:.3f} ms per step.",
            source=role,
            strength=0.7,
            values={
                "split_groups": round(bn_per_step),
                "extra_kernels_per_step": rnd(extra),
                "split_ms_per_step": rnd(split_ms, 4),
            },
            evidence=_split_rows(unfolded.set_index("operator")),
            recoverable_ms_per_step=rnd(split_ms, 4),
        )
    ]


def _split_rows(split: pd.DataFrame) -> tuple[dict, ...]:
    return rows(
        split.reset_index(names="operator").sort_values("us_per_step", ascending=False),
        ["operator", "op_type", "us_per_step", "launches_per_step"],
    )


# ------------------------------------------------------------------------------------- format conversion


def layout_mask(kernels: pd.DataFrame) -> pd.Series:
    """TransData / Transpose / CANN `trans_*` layout-conversion kernels."""
    by_name = kernel_name_test(kernels, lambda names: names.str.match(LAYOUT_NAME))
    return (_types(kernels).isin(LAYOUT_TYPES) | by_name).astype(bool)


def layout_stats(side: Side) -> tuple[float, float, float]:
    """(share of forward kernel time, count per step, ms per step) of layout conversions."""
    k = side.kernels
    dur = k["duration_us"].astype("float64").fillna(0.0)
    mask = layout_mask(k).to_numpy()
    total = float(dur.sum())
    layout_us = float(dur[mask].sum())
    steps = max(side.steps, 1)
    return (layout_us / total if total > 0 else 0.0), float(mask.sum()) / steps, layout_us / steps / 1000


def _layout_evidence(side: Side) -> tuple[dict, ...]:
    ops = _ops(side)
    names = ops["operator"].astype(str).str.rsplit("/", n=1).str[-1]
    mask = _types(ops).isin(LAYOUT_TYPES) | names.str.match(LAYOUT_NAME)
    return rows(
        ops.loc[mask.to_numpy()].sort_values("us_per_step", ascending=False),
        ["operator", "op_type", "us_per_step", "launches_per_step", "input_formats"],
    )


@run_analyzer
def format_conversion_share(side: Side, role: str) -> list[Symptom]:
    """Layout conversions (TransData, Transpose, CANN trans_TransData/trans_Cast) of a device run, in
    absolute time per step, whenever they are not negligible (1 % of its kernel time): the rule decides
    what is worth fixing, and the engine weighs the target's time against the baseline's."""
    if not on_device(side):
        return []
    share, per_step, ms = layout_stats(side)
    if share < LAYOUT_MIN_SHARE:
        return []
    return [
        Symptom(
            "format-conversion",
            f"Layout conversions take {share:.0%} of the {role}'s kernel time ({per_step:g} per step, "
            f"{ms:.3f} ms per step).",
            source=role,
            strength=MEASURED_STRENGTH,
            values={
                "transdata_share": rnd(share),
                "transdata_ms_per_step": rnd(ms, 4),
                "baseline_count_per_step": None,
                "target_count_per_step": rnd(per_step),
            },
            evidence=_layout_evidence(side),
            recoverable_ms_per_step=rnd(ms, 4),
        )
    ]


@pair_analyzer
def format_conversion_count(c: Comparison) -> list[Symptom]:
    """Many more layout conversions per step on the target than on the baseline, at any share of its
    time. Strength and recoverable time come from the extra time per step: the part of the target's
    conversion time the baseline does not spend."""
    if not (on_device(c.baseline) and on_device(c.target)):
        return []
    share, t_count, t_ms = layout_stats(c.target)
    _, b_count, b_ms = layout_stats(c.baseline)
    if t_count < LAYOUT_COUNT_RATIO * b_count or t_count - b_count < LAYOUT_COUNT_EXTRA:
        return []
    extra_ms = max(t_ms - b_ms, 0.0)
    return [
        Symptom(
            "format-conversion",
            f"The target runs {t_count:g} layout conversions per step against {b_count:g} on the baseline "
            f"({share:.0%} of its kernel time, {extra_ms:.3f} ms per step more).",
            strength=MEASURED_STRENGTH * extra_ms / max(t_ms, 1e-9),
            values={
                "transdata_share": rnd(share),
                "transdata_ms_per_step": rnd(t_ms, 4),
                "baseline_count_per_step": rnd(b_count),
                "target_count_per_step": rnd(t_count),
            },
            evidence=_layout_evidence(c.target),
            recoverable_ms_per_step=rnd(extra_ms, 4),
        )
    ]


# --------------------------------------------------------------------------------------- elementwise


@run_analyzer
def elementwise_heavy(side: Side, role: str) -> list[Symptom]:
    """More than 30 % of a device run's kernels are elementwise and shorter than 20 µs: graph-kernel
    fusion (jit_level O1) would merge them. `kernels_per_step` counts those short elementwise kernels."""
    if not on_device(side):
        return []
    k = side.kernels[["core", "duration_us", "op_type"]]
    k = k.loc[(k["core"].astype("string") != "CPU").fillna(True).to_numpy()]  # host ops are not kernels
    if len(k) < ELEMENTWISE_MIN_KERNELS:
        return []
    dur = k["duration_us"].astype("float64")
    short_ew = (_types(k).isin(ELEMENTWISE_TYPES) & (dur < ELEMENTWISE_SHORT_US)).fillna(False).to_numpy()
    share = float(short_ew.mean())
    if share <= ELEMENTWISE_SHARE:
        return []
    steps = max(side.steps, 1)
    ms = float(dur[short_ew].sum()) / steps / 1000
    per_step = float(short_ew.sum()) / steps
    ops = _ops(side)
    ew_ops = ops.loc[_types(ops).isin(ELEMENTWISE_TYPES).to_numpy() & (ops["mean_us"] < ELEMENTWISE_SHORT_US)]
    return [
        Symptom(
            "elementwise-heavy",
            f"{share:.0%} of the {role}'s kernels are elementwise and shorter than "
            f"{ELEMENTWISE_SHORT_US:g} µs ({per_step:g} per step, {ms:.3f} ms per step).",
            source=role,
            strength=min(1.0, share / 0.6),
            values={
                "elementwise_share": rnd(share),
                "elementwise_ms_per_step": rnd(ms, 4),
                "kernels_per_step": rnd(per_step),
            },
            evidence=rows(
                ew_ops.sort_values("launches_per_step", ascending=False),
                ["operator", "op_type", "launches_per_step", "mean_us"],
            ),
        )
    ]


# ------------------------------------------------------------------------------------------- float64


def int64_data_inputs(kernels: pd.DataFrame) -> pd.Series:
    """True where an INT64 input is a data tensor, not a shape/axis argument (a vector of at most
    SHAPE_ARG_MAX values, such as DropOutGenMask's shape input). Judged once per distinct
    (dtypes, shapes) pair; an INT64 input of unknown shape counts as data."""
    pairs = pd.DataFrame(
        {
            "d": kernels["input_dtypes"].astype("string").fillna("").to_numpy(dtype=object),
            "s": kernels["input_shapes"].astype("string").fillna("?").to_numpy(dtype=object),
        }
    )
    uniq = pairs.drop_duplicates().reset_index(drop=True)
    uniq["data"] = [_int64_data(d, s) for d, s in zip(uniq["d"], uniq["s"], strict=True)]
    judged = pairs.merge(uniq, on=["d", "s"], how="left")["data"].to_numpy(dtype=bool)
    return pd.Series(judged, index=kernels.index)


def _int64_data(dtypes: str, shapes: str) -> bool:
    dims_of = shapes.split(";")
    for i, dtype in enumerate(dtypes.upper().split(";")):
        if dtype.strip() not in ("INT64", "DT_INT64"):
            continue
        dims = [d.strip() for d in dims_of[i].split(",") if d.strip()] if i < len(dims_of) else ["?"]
        if len(dims) > 1 or (len(dims) == 1 and (not dims[0].isdigit() or int(dims[0]) > SHAPE_ARG_MAX)):
            return True
    return False


@run_analyzer
def float64_input(side: Side, role: str) -> list[Symptom]:
    """DOUBLE inputs on the device (a Cast from DOUBLE, any kernel reading FLOAT64) and AI CPU kernels
    reading INT64. Silent when the run has no dtype columns (Level0): that cannot be observed."""
    k = side.kernels
    if not on_device(side) or k["input_dtypes"].isna().all():
        return []
    double = per_unique(k["input_dtypes"], lambda d: d.str.upper().str.contains(DOUBLE_PATTERN, regex=True))
    on_aicpu = per_unique(k["core"], lambda core: core.str.upper() == "AI_CPU")
    int64_data = pd.Series(False, index=k.index)
    # AI CPU kernels are few
    int64_data[on_aicpu] = int64_data_inputs(k.loc[on_aicpu.to_numpy(), ["input_dtypes", "input_shapes"]])
    hit = (double | int64_data).to_numpy()
    if not hit.any():
        return []
    found = k.loc[hit, ["key", "op_type", "input_dtypes", "core", "duration_us"]]
    per_op = (
        found.assign(_d=found["duration_us"].astype("float64"))
        .groupby("key", sort=False)
        .agg(
            op_type=("op_type", "first"),
            input_dtypes=("input_dtypes", "first"),
            core=("core", "first"),
            total_us=("_d", "sum"),
        )
        .reset_index(names="operator")
    )
    per_op["us_per_step"] = per_op["total_us"] / max(side.steps, 1)
    per_op = per_op.sort_values("us_per_step", ascending=False, kind="stable")
    ms = float(per_op["us_per_step"].sum()) / 1000
    casts = int((per_op["op_type"] == "Cast").sum())
    return [
        Symptom(
            "float64-input",
            f"{len(per_op)} operators of the {role} read DOUBLE (or INT64 on AI CPU) inputs"
            + (f", {casts} of them Casts" if casts else "")
            + f", {ms:.3f} ms per step: the script feeds float64/int64 arrays.",
            source=role,
            strength=1.0 if double.any() else 0.7,
            values={"ops": per_op["operator"].astype(str).tolist(), "ms_per_step": rnd(ms, 4)},
            evidence=rows(per_op, ["operator", "op_type", "input_dtypes", "core", "us_per_step"]),
            recoverable_ms_per_step=rnd(ms, 4),
        )
    ]


# ---------------------------------------------------------------------------------------------- sync


def sync_events(side: Side) -> tuple[float, float] | None:
    """(count, total µs) of host stream/device synchronisations over the profiled window, from
    api_statistic.csv (CANN API calls such as aclrtSynchronizeStream) or kernel names; None when the
    run records neither, which means synchronisation cannot be observed."""
    stats = side.run.api_calls
    if len(stats):
        hit = stats["api"].astype("string").str.contains(SYNC_PATTERN, regex=True).fillna(False)
        timed = stats["time_us"].notna().any()
        total = float(stats.loc[hit, "time_us"].astype("float64").sum()) if timed else float("nan")
        return float(stats.loc[hit, "count"].astype("float64").sum()), total
    names = per_unique(side.run.kernels["name"], lambda n: n.str.contains(SYNC_PATTERN, regex=True))
    if names.any():
        dur = side.run.kernels.loc[names.to_numpy(), "duration_us"].astype("float64")
        return float(names.sum()), float(dur.sum())
    return None


@run_analyzer
def sync_heavy(side: Side, role: str) -> list[Symptom]:
    """The host synchronises after most launches (more than 0.5 synchronisations per kernel launch):
    synchronous execution such as ASCEND_LAUNCH_BLOCKING=1. Runs without a record of synchronisation
    calls (no api_statistic.csv, no sync events among the kernels) return nothing: not observable."""
    found = sync_events(side)
    launches = len(side.run.kernels)
    if found is None or launches == 0:
        return []
    count, total_us = found
    per_launch = count / launches
    if per_launch <= SYNC_PER_LAUNCH:
        return []
    steps = max(side.run.step_count, 1)
    ms = total_us / steps / 1000 if np.isfinite(total_us) else None
    return [
        Symptom(
            "sync-heavy",
            f"The host synchronises {count:g} times for {launches} kernel launches "
            f"({per_launch:.2f} per launch, {count / steps:g} per step): execution is synchronous.",
            source=role,
            strength=min(1.0, per_launch),
            values={"sync_events_per_step": rnd(count / steps), "sync_ms_per_step": rnd(ms, 4)},
            recoverable_ms_per_step=rnd(ms, 4),
        )
    ]


# ---------------------------------------------------------------------------- fused vs split attention

# A fused kernel of the baseline and, on the target, the run of kernels doing the same work in its place:
# an anchor kernel with a required kernel type before and after it (within SPLIT_WINDOW kernels, passing
# only `between` types). Declared as data, like the graph patterns of graph.patterns.
ATTENTION_FUSED = (
    "FlashAttentionScore",
    "PromptFlashAttention",
    "IncreFlashAttention",
    "FusedInferAttentionScore",
    "FlashAttention",
)
MATMUL_TYPES = (
    "BatchMatMul",
    "BatchMatMulV2",
    "BatchMatMulV3",
    "MatMul",
    "MatMulV2",
    "MatMulV3",
    "MatMulExt",
)
SOFTMAX_TYPES = ("Softmax", "SoftmaxV2", "SoftmaxV3", "SoftmaxExt")
ATTENTION_BETWEEN = (
    "Mul",
    "Muls",
    "RealDiv",
    "Div",
    "Add",
    "Adds",
    "Cast",
    "Transpose",
    "TransposeD",
    "Reshape",
    "Dropout",
    "DropoutDoMask",
    "DropOutDoMask",
    "DropOutGenMask",
    "DropoutV3",
    "StatelessDropOutGenMask",
    "MaskedFill",
    "Select",
)
SPLIT_WINDOW = 4


def _kernel_sequence(side: Side) -> pd.DataFrame:
    """The side's forward kernels in launch order within each step."""
    k = side.kernels
    keys = ["step", "start_us"] if "step" in k.columns else ["start_us"]
    frame = k.sort_values(keys, kind="stable").reset_index(drop=True)
    return frame.assign(op_type=_types(frame))


def _split_groups(seq: pd.DataFrame) -> list[list[int]]:
    """Row ranges (indices of `seq`) of MatMul -> (scale, mask, dropout) -> Softmax -> ... -> MatMul runs."""
    types = seq["op_type"].tolist()
    groups: list[list[int]] = []
    taken = -1
    for i, op in enumerate(types):
        if op not in SOFTMAX_TYPES or i <= taken:
            continue
        first = _reach(types, i, -1, taken)
        last = _reach(types, i, +1, len(types))
        if first is not None and last is not None:
            groups.append(list(range(first, last + 1)))
            taken = last
    return groups


def _reach(types: list[str], start: int, step: int, limit: int) -> int | None:
    """Index of the nearest MatMul from `start` in direction `step`, passing only ATTENTION_BETWEEN."""
    i = start + step
    for _ in range(SPLIT_WINDOW):
        if (step < 0 and i <= limit) or (step > 0 and i >= limit):
            return None
        if types[i] in MATMUL_TYPES:
            return i
        if types[i] not in ATTENTION_BETWEEN:
            return None
        i += step
    return None


@pair_analyzer
def attention_split(c: Comparison) -> list[Symptom]:
    """Fused attention kernels of the baseline that run as BatchMatMul + Softmax (+ Dropout) + BatchMatMul
    on the target: the k-th fused kernel of a step against the k-th split run of the target's step, with
    the split kernels' time per step. Attention-grad kernels are backward: a training baseline drops them."""
    if not (on_device(c.baseline) and on_device(c.target)):
        return []
    base = _kernel_sequence(c.baseline)
    fused = base.loc[base["op_type"].isin(ATTENTION_FUSED)]
    target = _kernel_sequence(c.target)
    target_fused = int(target["op_type"].isin(ATTENTION_FUSED).sum())
    groups = _split_groups(target)
    b_steps, t_steps = max(c.baseline.steps, 1), max(c.target.steps, 1)
    fused_per_step, target_fused_per_step = len(fused) / b_steps, target_fused / t_steps
    split_per_step = len(groups) / t_steps
    if fused.empty or not groups or target_fused_per_step >= fused_per_step:
        return []
    rows_ = [i for g in groups for i in g]
    split_ms = float(target.loc[rows_, "duration_us"].sum()) / 1000 / t_steps
    fused_ms = float(fused["duration_us"].sum()) / 1000 / b_steps
    matched = min(len(groups), len(fused))
    saved = max(0.0, split_ms - fused_ms * min(1.0, split_per_step / fused_per_step))
    return [
        Symptom(
            "attention-split",
            f"{fused_per_step:g} fused attention kernels per step on the baseline "
            f"({', '.join(sorted(set(fused['op_type'])))}, {fused_ms:.3f} ms) run split on the target: "
            f"{split_per_step:g} BatchMatMul/Softmax/BatchMatMul runs of {len(rows_) / t_steps:g} kernels "
            f"take {split_ms:.3f} ms per step ({split_ms / fused_ms:.1f}x).",
            strength=min(1.0, 0.6 + 0.1 * split_per_step),
            values={
                "fused_per_step": rnd(fused_per_step),
                "split_per_step": rnd(split_per_step),
                "split_kernels_per_step": rnd(len(rows_) / t_steps),
                "fused_ms_per_step": rnd(fused_ms, 4),
                "split_ms_per_step": rnd(split_ms, 4),
            },
            evidence=tuple(_position_rows(fused.head(matched), target, groups[:matched])),
            recoverable_ms_per_step=rnd(saved, 4),
        )
    ]


def _position_rows(fused: pd.DataFrame, target: pd.DataFrame, groups: list[list[int]]) -> list[dict]:
    """One row per position: the baseline's fused kernel and the target's split kernels in its place."""
    out = []
    for position, ((_, kernel), group) in enumerate(zip(fused.iterrows(), groups, strict=True), start=1):
        split = target.loc[group]
        out.append(
            {
                "position": position,
                "baseline_kernel": str(kernel["name"]),
                "baseline_op_type": str(kernel["op_type"]),
                "baseline_us": rnd(float(kernel["duration_us"]), 3),
                "target_kernels": ">".join(split["op_type"]),
                "target_us": rnd(float(split["duration_us"].sum()), 3),
            }
        )
    return out

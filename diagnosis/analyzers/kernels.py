"""Kernel-shape symptoms of device runs: fusion split apart (or Conv+BN not folded), fused
attention or norm kernels run as their decomposed kernels, format conversions, short elementwise
kernels, float64 inputs and host synchronisation after launches.

Every analyzer here needs an Ascend or GPU run: a CPU run never fuses or folds (MindSpore's CPU
backend runs Conv, BatchNorm and activations as separate ops in training and inference alike), has no
layout conversions and no device synchronisation, so these analyzers stay silent on CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.symptoms import Emits, Kind, Symptom, SymptomValues
from core.text import say
from diagnosis.analyzers import pair_analyzer, run_analyzer
from diagnosis.analyzers.common import MEASURED_STRENGTH, rnd, rows
from diagnosis.compare import Comparison, Side
from diagnosis.unique import factorize


@dataclass(frozen=True, kw_only=True)
class FusedSplit(SymptomValues):
    """The values of a fused kernel family run as its decomposed kernels (a `SplitPattern`)."""

    fused_per_step: float | None
    split_per_step: float | None
    split_kernels_per_step: float | None
    fused_ms_per_step: float | None
    split_ms_per_step: float | None


@dataclass(frozen=True, kw_only=True)
class AttentionSplit(FusedSplit):
    """Fused attention kernels (FlashAttentionScore, PromptFlashAttention, IncreFlashAttention) of the
    baseline run as BatchMatMul + Softmax (+ Dropout) + BatchMatMul kernels on the target."""

    KIND = Kind("attention-split", ("pair",), ("fused-split",))


@dataclass(frozen=True, kw_only=True)
class NormSplit(FusedSplit):
    """Fused LayerNorm / RmsNorm kernels of the baseline run as ReduceMean, Pow, Rsqrt|Sqrt, Mul and
    Add kernels on the target."""

    KIND = Kind("norm-split", ("pair",), ("fused-split",))


@dataclass(frozen=True, kw_only=True)
class ActivationSplit(FusedSplit):
    """Fused GeLU / FastGelu / SiLU (Swish) kernels of the baseline run as Sigmoid|Tanh|Erf|Exp with
    Mul, Add and Div kernels on the target."""

    KIND = Kind("activation-split", ("pair",), ("fused-split",))


@dataclass(frozen=True, kw_only=True)
class RotarySplit(FusedSplit):
    """Fused rotary embedding kernels (RotaryPositionEmbedding ...) of the baseline run as
    StridedSlice, Neg|Sub, Mul, Add and Concat kernels on the target."""

    KIND = Kind("rotary-split", ("pair",), ("fused-split",))


@dataclass(frozen=True, kw_only=True)
class FusionSplit(SymptomValues):
    """Kernels fused on the baseline run as separate kernels on the target (or Conv and BN run as
    separate kernels in an Ascend/GPU inference run)."""

    KIND = Kind(
        "fusion-split",
        (
            "pair",
            "run",
        ),
        (
            "fusion-split",
            "fusion-split.bn",
        ),
    )
    split_groups: int
    extra_kernels_per_step: float | None
    split_ms_per_step: float | None


@dataclass(frozen=True, kw_only=True)
class FormatConversion(SymptomValues):
    """TransData / format-conversion kernels take a share of the target or appear more than on
    baseline."""

    KIND = Kind(
        "format-conversion",
        (
            "pair",
            "run",
        ),
        (
            "format-conversion.count",
            "format-conversion.share",
        ),
    )
    transdata_share: float | None
    transdata_ms_per_step: float | None
    baseline_count_per_step: float | None
    target_count_per_step: float | None


@dataclass(frozen=True, kw_only=True)
class ElementwiseHeavy(SymptomValues):
    """Many short elementwise kernels (Add/Mul/ReLU/Cast...) that graph-kernel fusion would merge."""

    KIND = Kind("elementwise-heavy", ("run",), ("elementwise-heavy",))
    elementwise_share: float | None
    elementwise_ms_per_step: float | None
    kernels_per_step: float | None


@dataclass(frozen=True, kw_only=True)
class Float64Input(SymptomValues):
    """DOUBLE inputs reach the device (Cast from DOUBLE, AI CPU ops on DOUBLE/INT64)."""

    KIND = Kind("float64-input", ("run",), ("float64-input",))
    ops: list[str]  # operator names
    ms_per_step: float | None


@dataclass(frozen=True, kw_only=True)
class SyncHeavy(SymptomValues):
    """Host synchronisation after launches (SynchronizeStream) dominates gaps: synchronous execution."""

    KIND = Kind("sync-heavy", ("run",), ("sync-heavy",))
    sync_events_per_step: float | None
    sync_ms_per_step: float | None


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(
    AttentionSplit,
    NormSplit,
    ActivationSplit,
    RotarySplit,
    FusionSplit,
    FormatConversion,
    ElementwiseHeavy,
    Float64Input,
    SyncHeavy,
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
        FusionSplit(
            split_groups=len(groups), extra_kernels_per_step=rnd(extra), split_ms_per_step=rnd(split_ms, 4)
        ).symptom(
            say("fusion-split", groups=len(groups), extra=extra, kinds=kinds, ms=split_ms),
            "pair",
            min(1.0, 0.5 + 0.1 * extra),
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
        FusionSplit(
            split_groups=round(bn_per_step),
            extra_kernels_per_step=rnd(extra),
            split_ms_per_step=rnd(split_ms, 4),
        ).symptom(
            say("fusion-split.bn", bn=bn_per_step, role=say(f"role.{role}"), extra=extra, ms=split_ms),
            role,
            0.7,
            evidence=_split_rows(unfolded.set_index("operator")),
            recoverable_ms_per_step=rnd(split_ms, 4),
        )
    ]


def _split_rows(split: pd.DataFrame) -> tuple[dict[str, object], ...]:
    return rows(
        split.reset_index(names="operator").sort_values("us_per_step", ascending=False),
        ["operator", "op_type", "us_per_step", "launches_per_step"],
    )


# ------------------------------------------------------------------------------------- format conversion


def layout_mask(kernels: pd.DataFrame) -> pd.Series:
    """TransData / Transpose / CANN `trans_*` layout-conversion kernels."""
    by_name = kernel_name_test(kernels, lambda names: names.str.match(LAYOUT_NAME))
    return (_types(kernels).isin(LAYOUT_TYPES) | by_name).astype(bool)


def side_layout_mask(side: Side) -> np.ndarray:
    """layout_mask of a prepared run's kernels as a boolean array, computed once per Side and kept on
    it: three analyzers ask, and on 1M kernels each mask costs ~15 ms (a Side is not changed after
    preparation)."""
    return side.memo("layout_mask", lambda s: layout_mask(s.kernels).to_numpy(dtype=bool))


def layout_stats(side: Side) -> tuple[float, float, float]:
    """(share of forward kernel time, count per step, ms per step) of layout conversions."""
    k = side.kernels
    dur = k["duration_us"].astype("float64").fillna(0.0)
    mask = side_layout_mask(side)
    total = float(dur.sum())
    layout_us = float(dur[mask].sum())
    steps = max(side.steps, 1)
    return (layout_us / total if total > 0 else 0.0), float(mask.sum()) / steps, layout_us / steps / 1000


def _layout_evidence(side: Side) -> tuple[dict[str, object], ...]:
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
        FormatConversion(
            transdata_share=rnd(share),
            transdata_ms_per_step=rnd(ms, 4),
            baseline_count_per_step=None,
            target_count_per_step=rnd(per_step),
        ).symptom(
            say("format-conversion.share", share=share, role=say(f"role.{role}"), per_step=per_step, ms=ms),
            role,
            MEASURED_STRENGTH,
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
        FormatConversion(
            transdata_share=rnd(share),
            transdata_ms_per_step=rnd(t_ms, 4),
            baseline_count_per_step=rnd(b_count),
            target_count_per_step=rnd(t_count),
        ).symptom(
            say("format-conversion.count", t=t_count, b=b_count, share=share, ms=extra_ms),
            "pair",
            MEASURED_STRENGTH * extra_ms / max(t_ms, 1e-9),
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
        ElementwiseHeavy(
            elementwise_share=rnd(share), elementwise_ms_per_step=rnd(ms, 4), kernels_per_step=rnd(per_step)
        ).symptom(
            say(
                "elementwise-heavy",
                share=share,
                role=say(f"role.{role}"),
                short_us=ELEMENTWISE_SHORT_US,
                per_step=per_step,
                ms=ms,
            ),
            role,
            min(1.0, share / 0.6),
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
        Float64Input(ops=per_op["operator"].astype(str).tolist(), ms_per_step=rnd(ms, 4)).symptom(
            say(
                "float64-input",
                ops=len(per_op),
                role=say(f"role.{role}"),
                casts=say("float64-input.casts", n=casts) if casts else "",
                ms=ms,
            ),
            role,
            1.0 if double.any() else 0.7,
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
        SyncHeavy(sync_events_per_step=rnd(count / steps), sync_ms_per_step=rnd(ms, 4)).symptom(
            say("sync-heavy", count=count, launches=launches, per_launch=per_launch, per_step=count / steps),
            role,
            min(1.0, per_launch),
            recoverable_ms_per_step=rnd(ms, 4),
        )
    ]


# ---------------------------------------------------------------------- fused vs split attention and norms

MATMUL_TYPES = (
    "BatchMatMul",
    "BatchMatMulV2",
    "BatchMatMulV3",
    "MatMul",
    "MatMulV2",
    "MatMulV3",
    "MatMulExt",
)
CAST_LAYOUT = ("Cast", "Transpose", "TransposeD", "Reshape")
SUMS = ("ReduceSum", "ReduceSumD")
DIVS = ("RealDiv", "Div", "Divs", "Muls")
WRITTEN_SOFTMAX = ("ReduceMax", "ReduceMaxD", "ArgMaxWithValue", "Sub", "Exp", *SUMS)
LANES = ("StridedSlice", "StridedSliceD", "StridedSliceV2", "Slice", "SliceD", "Split", "SplitD", "SplitV")


@dataclass(frozen=True)
class SplitPattern:
    """A fused kernel family and, in a run, the run of kernels doing its work instead: an `anchor`
    kernel, the nearest `before` kernel and the nearest `after` kernel within `window` launches on each
    side, passing only `between` kernels (an empty `before` means the run starts at the anchor, with
    `between` kernels just before it included). Declared as data, like the graph patterns of
    graph.patterns; the k-th fused kernel of a baseline step stands against the k-th run of the target."""

    kind: str
    fused: tuple[str, ...]
    anchor: tuple[str, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]
    between: tuple[str, ...]
    window: int = 4
    tail: tuple[str, ...] = ()  # kernels right after the `after` one that still belong to the run
    tail_max: int = 2
    lead: tuple[str, ...] = ()  # without `before`: kernels right before the anchor that belong to the run
    # (anchor, kernels): a run from that anchor holds one of the kernels (an Exp is a softmax only with
    # its ReduceSum); the written-out forms of graph.canonical as kernels
    needs: tuple[tuple[str, tuple[str, ...]], ...] = ()


SPLIT_PATTERNS: tuple[SplitPattern, ...] = (
    SplitPattern(
        "attention-split",
        fused=(
            "FlashAttentionScore",
            "PromptFlashAttention",
            "IncreFlashAttention",
            "FusedInferAttentionScore",
            "FlashAttention",
        ),
        anchor=("Softmax", "SoftmaxV2", "SoftmaxV3", "SoftmaxExt", "Exp"),
        before=MATMUL_TYPES,
        after=MATMUL_TYPES,
        between=(
            *CAST_LAYOUT,
            *WRITTEN_SOFTMAX,
            "Mul",
            "Muls",
            "RealDiv",
            "Div",
            "Add",
            "Adds",
            "Dropout",
            "DropoutDoMask",
            "DropOutDoMask",
            "DropOutGenMask",
            "DropoutV3",
            "StatelessDropOutGenMask",
            "MaskedFill",
            "Select",
        ),
        needs=(("Exp", SUMS),),
        window=6,  # a written softmax: BatchMatMul > Muls > Add > ReduceMax > Sub > Exp
    ),
    SplitPattern(
        "norm-split",
        fused=(
            "LayerNorm",
            "LayerNormV3",
            "LayerNormV4",
            "LayerNormExt",
            "RmsNorm",
            "AddRmsNorm",
            "AddLayerNorm",
        ),
        anchor=("ReduceMean", "ReduceMeanD", "MeanExt", *SUMS),  # a mean, or sum / N
        before=(),
        after=("Rsqrt", "Sqrt"),
        between=(
            *CAST_LAYOUT,
            "Pow",
            "Square",
            "Sub",
            "Add",
            "Adds",
            "Mul",
            "Muls",
            "ReduceMean",
            "ReduceMeanD",
            *SUMS,
            *DIVS,
        ),
        tail=("Mul", "Muls", "RealDiv", "Div", "Add", "Adds"),
        tail_max=3,  # x * rstd, * gamma (RMSNorm); (x - mean) / std, * gamma, + beta (LayerNorm)
        lead=("Pow", "Square", "Mul", "Cast"),  # RMSNorm squares x (Pow, Square or x * x) before its mean
        needs=tuple((op, DIVS) for op in SUMS),  # a sum is a mean only divided by N
        window=8,  # LayerNorm with sums: ReduceSum > Divs > Sub > Mul > ReduceSum > Divs > Add > Sqrt
    ),
    SplitPattern(
        "activation-split",
        fused=("Gelu", "GeLU", "GeluV2", "FastGelu", "FastGeluV2", "FastGeLU", "Swish", "SiLU", "Silu"),
        anchor=("Sigmoid", "Tanh", "Erf", "Exp"),  # SiLU / FastGelu, tanh GeLU, erf GeLU, x / (1 + exp(-x))
        before=(),
        after=("Mul", "RealDiv", "Div"),
        between=("Add", "Adds", "Cast"),
        # scalar ops only: a tensor Add or Mul before the run is the residual or a projection's bias
        lead=("Muls", "Pow", "Neg", "Divs", "Cast"),
        needs=(("Exp", ("Neg", "Muls", "Sub")),),  # exp(-x): not a softmax's Exp
        window=6,  # tanh GeLU: Muls (k) before its Tanh; its x + c x^3 Add stops the lead
    ),
    SplitPattern(
        "rotary-split",
        fused=(
            "RotaryPositionEmbedding",
            "ApplyRotaryPosEmb",
            "ApplyRotaryPosEmbV2",
            "RotaryMul",
            "RopeWithSinCosCache",
        ),
        anchor=("Neg", "Sub", "Complex"),  # rotate-half's -x2, interleaved x1 cos - x2 sin, complex form
        before=(),
        after=("ConcatD", "Concat", "ConcatV2", "Pack", "Stack"),
        between=(*LANES, "Mul", "Muls", "Add", "Adds", "Real", "Imag", "Cast", "Reshape"),
        tail=("Mul", "Muls", "Add", "Reshape"),  # rotate-half: concat(-x2, x1) * sin, x * cos, +
        tail_max=3,
        lead=(*LANES, "Mul", "Muls", "Cast", "Reshape", "Transpose"),
        needs=(("Sub", ("Mul",)),),
        window=6,  # interleaved: Sub > Mul > Mul > Add > ConcatD
    ),
)


SPLIT_VALUES = {kind.KIND.id: kind for kind in (AttentionSplit, NormSplit, ActivationSplit, RotarySplit)}
SPLIT_WHAT = {
    "attention-split": "kernels.attention",
    "norm-split": "kernels.norm",
    "activation-split": "kernels.activation",
    "rotary-split": "kernels.rotary",
}
_ALL_FUSED = frozenset(op for pattern in SPLIT_PATTERNS for op in pattern.fused)


def _kernel_sequence(side: Side) -> pd.DataFrame:
    """The side's forward kernels in launch order within each step."""
    k = side.kernels
    keys = ["step", "start_us"] if "step" in k.columns else ["start_us"]
    frame = k.sort_values(keys, kind="stable").reset_index(drop=True)
    return frame.assign(op_type=_types(frame))


def split_runs(types: list[str], pattern: SplitPattern) -> list[list[int]]:
    """Index ranges of the runs of `pattern` in a launch-ordered list of kernel types (non-overlapping)."""
    runs: list[list[int]] = []
    taken = -1
    for i, op in enumerate(types):
        if op not in pattern.anchor or i <= taken:
            continue
        first = _reach(types, i, -1, taken, pattern) if pattern.before else _lead(types, i, taken, pattern)
        last = _reach(types, i, +1, len(types), pattern)
        if first is not None and last is not None and _has_needed(types, op, first, last, pattern):
            last = _tail(types, last, pattern)
            runs.append(list(range(first, last + 1)))
            taken = last
    return runs


def _has_needed(types: list[str], anchor: str, first: int, last: int, pattern: SplitPattern) -> bool:
    """Whether a run from `anchor` holds the kernel its pattern `needs` for that anchor (if any)."""
    needed = dict(pattern.needs).get(anchor)
    return needed is None or any(t in needed for t in types[first : last + 1])


def _reach(types: list[str], start: int, step: int, limit: int, pattern: SplitPattern) -> int | None:
    """Index of the nearest `before` (step -1) or `after` (+1) kernel, passing only `between` kernels."""
    wanted = pattern.before if step < 0 else pattern.after
    i = start + step
    for _ in range(pattern.window):
        if (step < 0 and i <= limit) or (step > 0 and i >= limit):
            return None
        if types[i] in wanted:
            return i
        if types[i] not in pattern.between:
            return None
        i += step
    return None


def _tail(types: list[str], last: int, pattern: SplitPattern) -> int:
    """The last index of the `tail` kernels right after the run's `after` kernel (at most tail_max)."""
    for _ in range(pattern.tail_max):
        if last + 1 >= len(types) or types[last + 1] not in pattern.tail:
            break
        last += 1
    return last


def _lead(types: list[str], start: int, limit: int, pattern: SplitPattern) -> int:
    """The first index of the `lead` kernels right before the anchor (an RMSNorm's Pow)."""
    i = start
    while i - 1 > limit and start - (i - 1) <= pattern.window and types[i - 1] in pattern.lead:
        i -= 1
    return i


@pair_analyzer
def fused_kernels_split(c: Comparison) -> list[Symptom]:
    """Fused attention (FlashAttentionScore ...) or norm (LayerNorm, RmsNorm ...) kernels of the baseline
    that run as their decomposed kernels on the target, position by position, with the split kernels'
    time per step. Attention-grad kernels are backward: a training baseline drops them."""
    if not (on_device(c.baseline) and on_device(c.target)):
        return []
    # Only patterns whose fused kernels the baseline runs can be split on the target: most pairs have
    # none, and then neither run is put in launch order nor scanned kernel by kernel.
    types = c.baseline.kernels["op_type"]  # isin on the column itself: no string copy of every launch
    present = set(types[types.isin(_ALL_FUSED)].unique())
    patterns = [p for p in SPLIT_PATTERNS if present.intersection(p.fused)]
    if not patterns:
        return []
    base, target = _kernel_sequence(c.baseline), _kernel_sequence(c.target)
    return [s for s in (_split_symptom(c, base, target, p) for p in patterns) if s is not None]


def _split_symptom(
    c: Comparison, base: pd.DataFrame, target: pd.DataFrame, pattern: SplitPattern
) -> Symptom | None:
    fused = base.loc[base["op_type"].isin(pattern.fused)]
    target_fused = int(target["op_type"].isin(pattern.fused).sum())
    runs = split_runs(target["op_type"].tolist(), pattern)
    b_steps, t_steps = max(c.baseline.steps, 1), max(c.target.steps, 1)
    fused_per_step, split_per_step = len(fused) / b_steps, len(runs) / t_steps
    if fused.empty or not runs or target_fused / t_steps >= fused_per_step:
        return None
    rows_ = [i for run in runs for i in run]
    split_ms = float(target.loc[rows_, "duration_us"].sum()) / 1000 / t_steps
    fused_ms = float(fused["duration_us"].sum()) / 1000 / b_steps
    matched = min(len(runs), len(fused))
    saved = max(0.0, split_ms - fused_ms * min(1.0, split_per_step / fused_per_step))
    values = SPLIT_VALUES[pattern.kind](
        fused_per_step=rnd(fused_per_step),
        split_per_step=rnd(split_per_step),
        split_kernels_per_step=rnd(len(rows_) / t_steps),
        fused_ms_per_step=rnd(fused_ms, 4),
        split_ms_per_step=rnd(split_ms, 4),
    )
    return values.symptom(
        say(
            "fused-split",
            fused=fused_per_step,
            what=say(SPLIT_WHAT[pattern.kind]),
            types=", ".join(sorted(set(fused["op_type"]))),
            fused_ms=fused_ms,
            runs=split_per_step,
            kernels=len(rows_) / t_steps,
            chain=">".join(target.loc[runs[0], "op_type"]),
            ms=split_ms,
            ratio=split_ms / fused_ms,
        ),
        "pair",
        min(1.0, 0.6 + 0.1 * split_per_step),
        evidence=tuple(_position_rows(fused.head(matched), target, runs[:matched])),
        recoverable_ms_per_step=rnd(saved, 4),
    )


def _position_rows(
    fused: pd.DataFrame, target: pd.DataFrame, runs: list[list[int]]
) -> list[dict[str, object]]:
    """One row per position: the baseline's fused kernel and the target's split kernels in its place."""
    out: list[dict[str, object]] = []
    for position, ((_, kernel), run) in enumerate(zip(fused.iterrows(), runs, strict=True), start=1):
        split = target.loc[run]
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

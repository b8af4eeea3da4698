"""Symptoms of an outputs comparison (source "pair"): where and how two runs' outputs part ways, read by the
same knowledge engine as the profile symptoms (knowledge/rules/outputs-*.yaml)."""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass

from core.symptoms import Emits, Kind, Symptom, SymptomValues, declared_in
from core.text import say
from outputs.compare import LayerDiff, OutputsComparison
from outputs.layers import Layer
from outputs.stats import FLOAT16_MAX, TensorStats


@dataclass(frozen=True, kw_only=True)
class OutputDivergence(SymptomValues):
    """The first layer (in execution order) whose output statistics differ beyond the dtype's
    tolerance."""

    KIND = Kind(
        "output-divergence",
        ("pair",),
        (
            "outputs.diverge",
            "outputs.diverge-non-finite",
            "outputs.diverge-shape",
        ),
    )
    layer: str
    op_type: str
    family: str
    rel_diff: float
    tolerance: float
    dtype: str
    stat: str
    depth: int
    layers: int
    diverged_layers: int
    one_sided_dropouts: int
    inputs_differ: bool


@dataclass(frozen=True, kw_only=True)
class OutputInputsDiffer(SymptomValues):
    """A network input differs between the runs: other statistics, or equal statistics over other
    values."""

    KIND = Kind("output-inputs-differ", ("pair",), ("outputs.inputs-differ",))
    input: str
    rel_diff: float
    same_statistics: bool
    inputs: int


@dataclass(frozen=True, kw_only=True)
class OutputWeightsDiffer(SymptomValues):
    """Parameters (weights, not BatchNorm's moving statistics) differ between the runs."""

    KIND = Kind("output-weights-differ", ("pair",), ("outputs.weights-differ",))
    parameters: int
    total: int
    first: str
    rel_diff: float


@dataclass(frozen=True, kw_only=True)
class OutputOverflow(SymptomValues):
    """An FP16/BF16 tensor of the target holds inf or values at the FP16 limit (65504); the baseline
    not."""

    KIND = Kind("output-overflow", ("pair",), ("outputs.overflow",))
    layer: str
    non_finite: int
    max_abs: float
    dtype: str


@dataclass(frozen=True, kw_only=True)
class OutputDtypeDiffer(SymptomValues):
    """Matched layers compute in other floating dtypes (another precision mode or mixed-precision
    level)."""

    KIND = Kind("output-dtype-differ", ("pair",), ("outputs.dtype-differ",))
    layers: int
    baseline_dtype: str
    target_dtype: str
    layer: str


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(OutputDivergence, OutputInputsDiffer, OutputWeightsDiffer, OutputOverflow, OutputDtypeDiffer)


def symptom_declarations() -> dict[str, tuple[type[SymptomValues], ...]]:
    """The symptom kinds this stage declares, by module name (the vocabulary is made of them)."""
    return {__name__: declared_in(sys.modules[__name__])}


# What kind of op a layer is, by its op type or API name (case-insensitive), first match wins.
FAMILIES = (
    ("dropout", re.compile(r"dropout", re.I)),
    ("batchnorm", re.compile(r"batch_?norm|bntraining", re.I)),
    ("cast", re.compile(r"^cast$", re.I)),
    (
        "reduction",
        re.compile(
            r"reduce|sum|mean|all_?reduce|scatter|index_?add|segment|cumsum|matmul|norm|softmax", re.I
        ),
    ),
)
LOW_PRECISION = ("float16", "bfloat16")
BUFFERS = re.compile(r"moving_mean|moving_var|running_mean|running_var", re.I)  # BN statistics, not weights
NEAR_FP16_MAX = 0.9 * FLOAT16_MAX
CLEAR_FACTOR = 10.0  # a difference this many tolerances wide is beyond doubt


def family(layer: Layer) -> str:
    """dropout, batchnorm, cast, reduction or other."""
    return op_family(layer.op_type)


def op_family(op_type: str) -> str:
    """The family of an op type or API name (also used on a profile's operators: what deterministic
    kernels can slow)."""
    return next((name for name, pattern in FAMILIES if pattern.search(op_type)), "other")


def output_symptoms(comparison: OutputsComparison) -> list[Symptom]:
    """Every outputs symptom of a compared pair; an identical pair gives none."""
    found = [
        divergence(comparison),
        inputs_differ(comparison),
        weights_differ(comparison),
        overflow(comparison),
        dtype_differ(comparison),
    ]
    return [s for s in found if s is not None]


def divergence(comparison: OutputsComparison) -> Symptom | None:
    """The first layer whose outputs part ways, with what kind of op it is and whether a Dropout ran on
    one side only before it (an eval graph has no Dropout op at all)."""
    first = comparison.first
    if first is None or first.output is None:
        return None
    one_sided = comparison.alignment.only_baseline + comparison.alignment.only_target
    dropouts = sum(family(layer) == "dropout" for layer in one_sided)
    kind = "dropout" if dropouts else family(first.baseline)
    rel = first.output.rel_diff
    layers = comparison.layers
    values = OutputDivergence(
        layer=first.baseline.name,
        op_type=first.baseline.op_type,
        family=kind,
        rel_diff=_json_float(rel),
        tolerance=first.output.tolerance,
        dtype=first.output.dtype,
        stat=first.output.stat,
        depth=layers.index(first),
        layers=len(layers),
        diverged_layers=sum(d.diverged for d in layers),
        one_sided_dropouts=dropouts,
        inputs_differ=first.inputs_diverged,
    )
    clear = rel > CLEAR_FACTOR * first.output.tolerance
    summary = _divergence_summary(first)
    return values.symptom(summary, "pair", 1.0 if clear else 0.7, evidence=_rows([first]))


def _divergence_summary(first: LayerDiff) -> str:
    """What parts ways at the first layer: a statistic beyond its tolerance, the shapes, or inf/nan counts."""
    assert first.output is not None
    named = {"layer": first.baseline.name, "op_type": first.baseline.op_type}
    if first.output.stat == "shape":
        return say("outputs.diverge-shape", **named)
    if first.output.stat == "inf/nan":
        return say("outputs.diverge-non-finite", **named)
    return say(
        "outputs.diverge",
        **named,
        stat=first.output.stat,
        rel=first.output.rel_diff,
        dtype=first.output.dtype,
        tol=first.output.tolerance,
    )


def inputs_differ(comparison: OutputsComparison) -> Symptom | None:
    """A network input differs: by content with equal statistics (reordered: a random flip or crop
    position) or by its statistics (other data)."""
    differing = [d for d in comparison.of_role("input") if d.diverged]
    if not differing:
        return None
    worst = differing[0]
    assert worst.output is not None
    same = worst.output.rel_diff <= worst.output.tolerance
    how = say("outputs.same-stats") if same else say("outputs.other-stats", rel=worst.output.rel_diff)
    values = OutputInputsDiffer(
        input=worst.baseline.name,
        rel_diff=_json_float(worst.output.rel_diff),
        same_statistics=same,
        inputs=len(differing),
    )
    summary = say("outputs.inputs-differ", layer=worst.baseline.name, how=how)
    return values.symptom(summary, "pair", 1.0, evidence=_rows(differing))


def weights_differ(comparison: OutputsComparison) -> Symptom | None:
    """Parameters whose statistics (or bytes) differ; BatchNorm's moving statistics are left out, since
    training-mode BatchNorm updates them during the run (the divergence symptom shows that)."""
    weights = [d for d in comparison.of_role("weight") if not BUFFERS.search(d.baseline.name)]
    differing = [d for d in weights if d.diverged]
    if not differing:
        return None
    first = differing[0]
    assert first.output is not None
    values = OutputWeightsDiffer(
        parameters=len(differing),
        total=len(weights),
        first=first.baseline.name,
        rel_diff=_json_float(first.output.rel_diff),
    )
    summary = say(
        "outputs.weights-differ",
        n=len(differing),
        total=len(weights),
        first=first.baseline.name,
        rel=first.output.rel_diff,
    )
    return values.symptom(summary, "pair", 1.0, evidence=_rows(differing))


def overflow(comparison: OutputsComparison) -> Symptom | None:
    """A low-precision tensor of the target holds inf, or values at the FP16 limit, where the baseline's
    counterpart (or the baseline as a whole, for a one-sided layer) does not."""
    baseline_hit = any(_overflowing(t) for layer in comparison.baseline.layers for t in layer.outputs)
    for layer in sorted(comparison.target.layers, key=lambda item: item.order):
        for tensor in layer.outputs:
            if tensor is not None and _overflowing(tensor) and not baseline_hit:
                return _overflow_symptom(layer, tensor)
    return None


def _overflowing(tensor: TensorStats | None) -> bool:
    """inf in an FP16/BF16 tensor, or an FP16 maximum within 10 % of 65504 without nan (a nan-holding
    tensor near the limit is how a mislabelled FP32 buffer reads, see tests/fixtures/outputs/README.md)."""
    if tensor is None or tensor.dtype not in LOW_PRECISION:
        return False
    if (tensor.inf or 0) > 0 or (tensor.inf is None and tensor.non_finite):
        return True
    extreme = max(
        (abs(v) for v in (tensor.max, tensor.min) if v is not None and math.isfinite(v)), default=0.0
    )
    return tensor.dtype == "float16" and extreme >= NEAR_FP16_MAX and not tensor.nan


def _overflow_symptom(layer: Layer, tensor: TensorStats) -> Symptom:
    extreme = max(
        (abs(v) for v in (tensor.max, tensor.min) if v is not None and math.isfinite(v)), default=0.0
    )
    values = OutputOverflow(
        layer=layer.name,
        non_finite=tensor.non_finite,
        max_abs=extreme,
        dtype=tensor.dtype,
    )
    summary = say(
        "outputs.overflow",
        layer=layer.name,
        non_finite=tensor.non_finite,
        max_abs=extreme,
        dtype=tensor.dtype,
        other=say("outputs.finite"),
    )
    row = {"layer": layer.name, "op_type": layer.op_type, "side": "target", **values.as_values()}
    return values.symptom(summary, "pair", 1.0, evidence=(row,))


def dtype_differ(comparison: OutputsComparison) -> Symptom | None:
    """Matched layers whose outputs are computed in other floating dtypes (a precision mode or AMP level)."""
    differing = [d for d in comparison.layers if _dtypes(d) is not None]
    if not differing:
        return None
    first = differing[0]
    base_dtype, target_dtype = _dtypes(first) or ("", "")
    values = OutputDtypeDiffer(
        layers=len(differing),
        baseline_dtype=base_dtype,
        target_dtype=target_dtype,
        layer=first.baseline.name,
    )
    summary = say(
        "outputs.dtype-differ",
        n=len(differing),
        baseline_dtype=base_dtype,
        target_dtype=target_dtype,
        layer=first.baseline.name,
    )
    return values.symptom(summary, "pair", 1.0, evidence=_rows(differing))


def _dtypes(diff: LayerDiff) -> tuple[str, str] | None:
    """(baseline, target) dtype of the first output when both are floating and differ."""
    pairs = zip(diff.baseline.outputs, diff.target.outputs, strict=False)
    for a, b in pairs:
        if (
            a is not None
            and b is not None
            and a.dtype != b.dtype
            and _floating(a.dtype)
            and _floating(b.dtype)
        ):
            return a.dtype, b.dtype
    return None


def _floating(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


def _rows(diffs: list[LayerDiff]) -> tuple[dict[str, object], ...]:
    """Evidence rows: the matched layers (at most 10) with their worst difference."""
    return tuple(
        {
            "layer": d.baseline.name,
            "target_layer": d.target.name,
            "op_type": d.baseline.op_type,
            "rel_diff": None if d.output is None else _json_float(d.output.rel_diff),
            "stat": None if d.output is None else d.output.stat,
            "tolerance": None if d.output is None else d.output.tolerance,
            "dtype": None if d.output is None else d.output.dtype,
        }
        for d in diffs[:10]
    )


def _json_float(value: float) -> float:
    """A float JSON can hold (inf: the inf/nan counts or the shapes differ)."""
    return float(value) if math.isfinite(value) else 1e30

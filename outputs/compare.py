"""Compare aligned layers statistic by statistic with a dtype-aware tolerance, and find where the two runs
part ways (the first layer, in execution order, whose outputs differ beyond the tolerance)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from outputs.align import Alignment, align
from outputs.layers import Dump, Layer
from outputs.stats import TensorStats

# Relative tolerance by the less precise dtype of the two tensors: about one unit in the last place of
# a value after a short reduction (FP32 ~1e-6, FP16 ~1e-3, BF16 ~1e-2); integers and booleans are exact.
TOLERANCES = {"float64": 1e-6, "float32": 1e-6, "float16": 1e-3, "bfloat16": 1e-2}
EXACT = 0.0
STATS = ("max", "min", "mean", "norm")
# MindSpore ops that write their first input in place (a Ref input: ScatterNdAdd, ScatterAdd, InplaceIndexAdd,
# Assign ...). The dump saves an op's inputs after the op ran, so that input holds the op's own output.
IN_PLACE = re.compile(r"^(Scatter\w*|Inplace\w*|Assign\w*)$")


@dataclass(frozen=True)
class TensorDiff:
    """How far two tensors' statistics are apart, relative to the tensors' magnitude."""

    rel_diff: float
    stat: str  # the statistic that differs most
    tolerance: float
    dtype: str  # the dtype whose tolerance was used
    content_differs: bool = False  # statistics equal, bytes not (whole-tensor dumps only)

    @property
    def diverged(self) -> bool:
        """Beyond the tolerance, or equal statistics over other bytes."""
        return self.rel_diff > self.tolerance or self.content_differs


@dataclass(frozen=True)
class LayerDiff:
    """One matched layer: the worst output (and input) difference and whether it parts ways."""

    baseline: Layer
    target: Layer
    output: TensorDiff | None
    input: TensorDiff | None

    @property
    def diverged(self) -> bool:
        return self.output is not None and self.output.diverged

    @property
    def inputs_diverged(self) -> bool:
        return self.input is not None and self.input.diverged


@dataclass(frozen=True)
class OutputsComparison:
    """Two dumps aligned and compared: every matched layer in the baseline's order, and one-sided layers."""

    baseline: Dump
    target: Dump
    diffs: tuple[LayerDiff, ...]
    alignment: Alignment

    @property
    def layers(self) -> tuple[LayerDiff, ...]:
        """The matched op/API calls (not network inputs or weights), in execution order."""
        return tuple(d for d in self.diffs if d.baseline.role == "layer")

    @property
    def first(self) -> LayerDiff | None:
        """The first layer whose outputs part ways."""
        return next((d for d in self.layers if d.diverged), None)

    def of_role(self, role: str) -> tuple[LayerDiff, ...]:
        """Matched network inputs ("input") or parameters ("weight")."""
        return tuple(d for d in self.diffs if d.baseline.role == role)


def compare_dumps(baseline: Dump, target: Dump) -> OutputsComparison:
    """Align two dumps and compare every matched layer's outputs and inputs."""
    alignment = align(baseline, target)
    diffs = tuple(
        LayerDiff(b, t, worst(b.outputs, t.outputs, whole=b.role != "layer"), worst(_data(b), _data(t)))
        for b, t in alignment.pairs
    )
    return OutputsComparison(baseline, target, diffs, alignment)


def _data(layer: Layer) -> tuple[TensorStats | None, ...]:
    """A layer's data input: its first floating-point input, not the weights, moving statistics, flags and
    attributes an op dump also lists as inputs (BatchNorm's mean, variance and is_training, axes ...), nor
    the buffer an in-place op wrote (ScatterNdAdd's accumulator: its data input is the updates)."""
    floating = ("float", "bfloat")
    inputs = layer.inputs[1:] if _wrote_first_input(layer) else layer.inputs
    return tuple(t for t in inputs if t is not None and t.dtype.startswith(floating))[:1]


def _wrote_first_input(layer: Layer) -> bool:
    """An in-place op whose dumped first input is one of its outputs: the buffer after the op wrote it,
    which differs wherever the op's result differs, so it cannot say whether what went in differed."""
    first = layer.inputs[0] if layer.inputs else None
    return first is not None and bool(IN_PLACE.match(layer.op_type)) and first in layer.outputs


def worst(
    baseline: Sequence[TensorStats | None], target: Sequence[TensorStats | None], *, whole: bool = False
) -> TensorDiff | None:
    """The largest difference over the tensor slots both sides have; `whole` also compares raw bytes."""
    found = [tensor_diff(a, b, whole=whole) for a, b in zip(baseline, target, strict=False) if a and b]
    found = [d for d in found if d is not None]
    if not found:
        return None
    return max(found, key=lambda d: (d.diverged, d.rel_diff / (d.tolerance or 1e-12)))


def tolerance(first: str, second: str) -> tuple[float, str]:
    """The looser tolerance of two dtypes and the dtype it belongs to."""
    known = [(TOLERANCES.get(d, EXACT), d) for d in (first, second)]
    return max(known)


def tensor_diff(a: TensorStats, b: TensorStats, *, whole: bool = False) -> TensorDiff | None:
    """Relative difference of max/min/mean (to the tensors' magnitude) and norm (to itself)."""
    tol, dtype = tolerance(a.dtype, b.dtype)
    if a.shape != b.shape:
        return TensorDiff(math.inf, "shape", tol, dtype)
    if a.non_finite != b.non_finite:
        return TensorDiff(math.inf, "inf/nan", tol, dtype)
    scale = max(
        (abs(v) for v in (a.max, a.min, b.max, b.min) if v is not None and math.isfinite(v)), default=0.0
    )
    best = (0.0, "max")
    for stat in STATS:
        x, y = getattr(a, stat), getattr(b, stat)
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)):
            continue
        base = max(abs(x), abs(y)) if stat == "norm" else scale
        rel = abs(x - y) / base if base > 0 else 0.0
        best = max(best, (rel, stat))
    content = whole and best[0] <= tol and a.crc is not None and b.crc is not None and a.crc != b.crc
    return TensorDiff(best[0], best[1], tol, dtype, content)


def depth_profile(comparison: OutputsComparison) -> list[dict[str, object]]:
    """The divergence along the network's depth: one point per matched layer (for the plot and the CSV)."""
    return [
        {
            "depth": index,
            "layer": d.baseline.name,
            "op_type": d.baseline.op_type,
            "rel_diff": None if d.output is None else _finite(d.output.rel_diff),
            "tolerance": None if d.output is None else d.output.tolerance,
            "diverged": d.diverged,
        }
        for index, d in enumerate(comparison.layers)
    ]


def _finite(value: float) -> float:
    """inf (inf/nan counts differ) as a large finite number JSON can hold."""
    return value if math.isfinite(value) else 1e30


__all__ = ["LayerDiff", "OutputsComparison", "TensorDiff", "compare_dumps", "depth_profile", "tolerance"]

"""What data would decide a divergence no known cause explains: the outputs part ways, no outputs-* rule
fits, and the report says so and asks for what is missing instead of "nothing significant"."""

from __future__ import annotations

from typing import Literal

from outputs.compare import OutputsComparison

# The asks, in the order a user would act on them (stable ids: the report model and translations use them).
Ask = Literal["shapes", "layer-inputs", "network-inputs", "weights", "repeat"]


def divergence_asks(comparison: OutputsComparison) -> tuple[Ask, ...]:
    """The data that would decide where the first divergence comes from, leaving out what the dumps hold;
    empty when the outputs do not part ways."""
    first = comparison.first
    if first is None or first.output is None:
        return ()
    asks: list[Ask] = []
    if first.output.stat == "shape":
        asks.append("shapes")  # other shapes: other code or other inputs at that call, not the arithmetic
    if not any(first.baseline.inputs) or not any(first.target.inputs):
        asks.append("layer-inputs")  # a side's dump holds none of the layer's inputs
    if not comparison.of_role("input"):
        asks.append("network-inputs")
    if not comparison.of_role("weight"):
        asks.append("weights")
    asks.append("repeat")  # always decides whether the baseline itself repeats
    return tuple(asks)

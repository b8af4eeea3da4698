"""The run model of an outputs comparison: one dump as an ordered list of layers (API calls or ops)."""

from __future__ import annotations

from dataclasses import dataclass, field

from outputs.stats import TensorStats

ROLES = ("layer", "input", "weight")  # an op/API call, a network input, a parameter


@dataclass(frozen=True)
class Layer:
    """One call of an op or API (or one network input or parameter) with the statistics of its tensors.

    `key` is what aligns it with the other run (name without call numbers, mapped across frameworks),
    `name` what the user reads (the dump's own name), `order` its place in execution order.
    """

    name: str
    key: str
    op_type: str
    order: int
    role: str = "layer"
    direction: str = "forward"
    inputs: tuple[TensorStats | None, ...] = ()
    outputs: tuple[TensorStats | None, ...] = ()
    scope: str = ""  # the calling module's path (msprobe construct.json), names mapped; "" when unknown
    call_site: str = ""  # the user's code that made the call (msprobe stack.json): "file:line in func: code"


@dataclass(frozen=True)
class Dump:
    """One run's dump: its format, framework and layers in execution order."""

    source: str  # what the user gave (a file or folder name, for messages)
    layout: str  # "msprobe", "mindspore-npy", "mindspore-statistic"
    framework: str  # "mindspore", "pytorch"
    layers: tuple[Layer, ...]
    files: int = 0  # tensor or statistics files read
    bytes_read: int = 0
    notes: tuple[str, ...] = field(default=())

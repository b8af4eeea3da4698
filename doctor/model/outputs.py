"""The outputs comparison as a typed report part: two runs' dumps compared layer by layer, where they
first part ways, the divergence along depth, and the ranked causes (the same Cause model as profiles)."""

from __future__ import annotations

from doctor.model.base import Count, NonNegative, Number, Record
from doctor.model.findings import Cause, SymptomRecord


class DumpInfo(Record):
    """One side's dump: what the user gave, its layout and framework, how much was read."""

    source: str
    layout: str  # msprobe | mindspore-npy | mindspore-statistic
    framework: str
    layers: Count
    files: Count
    bytes_read: Count


class LayerPoint(Record):
    """One matched layer along the depth of the network."""

    depth: Count
    layer: str
    target_layer: str
    op_type: str
    rel_diff: NonNegative | None  # the worst relative difference of max/min/mean/norm over its outputs
    stat: str | None  # which statistic (or "shape", "inf/nan") differs most
    tolerance: NonNegative | None
    dtype: str | None  # the dtype whose tolerance was used
    diverged: bool


class FirstDivergence(Record):
    """The first layer, in execution order, whose outputs differ beyond the tolerance."""

    layer: str
    target_layer: str
    op_type: str
    depth: Count
    rel_diff: Number
    stat: str
    tolerance: NonNegative
    dtype: str
    inputs_differ: bool


class OutputsSection(Record):
    """The outputs comparison of two runs."""

    baseline: DumpInfo
    target: DumpInfo
    tolerances: dict[str, NonNegative]  # relative tolerance by dtype
    matched: Count
    only_baseline: list[str]
    only_target: list[str]
    first_divergence: FirstDivergence | None
    depth: list[LayerPoint]
    symptoms: list[SymptomRecord]
    causes: list[Cause]
    nothing_found: bool

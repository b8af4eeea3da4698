"""The report's tables: operators compared side by side, the ten slowest per side, and step times.

OperatorRow's fields are the operator table's columns, in order: `OPERATOR_COLUMNS` (each with its JSON
type) is derived from them for the builder, the CSV download, the app's table and `Report.operators()`.
"""

from __future__ import annotations

import types
from typing import Annotated, Literal, Union, get_args, get_origin

from pydantic import Field

from doctor.model.base import Count, Integer, NonNegative, Number, Positive, Record
from doctor.model.runs import ProfileRole

MatchKind = Literal["scope", "sequence", "baseline-only", "target-only", "single"]
MODAL = "Modal {what} (`;` between inputs, `,` between dimensions); `null` when not recorded."
PIPE = "Mean PipeUtilization {what} ratio; `null` when the layout has none."
BOUND = "What bounds the operator: `memory` (MTE2 ≥ 0.8), `compute` (MAC or vector ≥ 0.8), `none`, or `null`."


class OperatorRow(Record):
    """One operator of the comparison, its time on each side and what changed between the sides."""

    operator: str = Field(description="Operator name (scope in graph mode, name/order key in PyNative).")
    op_type: str | None = Field(description="Operator type, e.g. `Conv2D`.")
    match: MatchKind = Field(description="How it was paired; `single` in a single-run report.")
    baseline_us_per_step: Number | None = Field(description="Baseline time per step, µs (0 where absent).")
    target_us_per_step: Number | None = Field(description="Target time per step, µs (0 where absent).")
    delta_us_per_step: Number | None = Field(description="Target − baseline, µs per step.")
    ratio: Number | None = Field(description="Target ÷ baseline.")
    baseline_share: Number | None = Field(description="Share of the baseline's operator time.")
    target_share: Number | None = Field(description="Share of the target's operator time.")
    baseline_rank: Integer | None = Field(description="Rank by time on the baseline.")
    target_rank: Integer | None = Field(description="Rank by time on the target.")
    baseline_launches_per_step: Number | None = Field(description="Baseline launches per step.")
    target_launches_per_step: Number | None = Field(description="Target launches per step.")
    baseline_input_shapes: str | None = Field(description=MODAL.format(what="baseline input shapes"))
    target_input_shapes: str | None = Field(description=MODAL.format(what="target input shapes"))
    baseline_input_dtypes: str | None = Field(description=MODAL.format(what="baseline input dtypes"))
    target_input_dtypes: str | None = Field(description=MODAL.format(what="target input dtypes"))
    baseline_input_formats: str | None = Field(description=MODAL.format(what="baseline input formats"))
    target_input_formats: str | None = Field(description=MODAL.format(what="target input formats"))
    baseline_core: str | None = Field(description="Core the baseline ran it on (AI_CORE, AI_CPU ...).")
    target_core: str | None = Field(description="Core the target ran it on.")
    input_dtypes_changed: bool = Field(description="Input dtypes differ between the matched sides.")
    input_formats_changed: bool = Field(description="Input formats differ.")
    input_shapes_changed: bool = Field(description="Input shapes differ.")
    core_changed: bool = Field(description="The core differs.")
    z: Number | None = Field(description="Robust z of the per-step median shift.")
    significant: bool = Field(description="The change is beyond noise.")
    baseline_output_dtypes: str | None = Field(description="Modal baseline output dtypes.")
    target_output_dtypes: str | None = Field(description="Modal target output dtypes.")
    output_dtypes_changed: bool = Field(description="Output dtypes differ.")
    baseline_block_dim: Integer | None = Field(description="Modal baseline block dim (Ascend).")
    target_block_dim: Integer | None = Field(description="Modal target block dim (Ascend).")
    block_dim_changed: bool = Field(description="Block dim differs.")
    baseline_bound: str | None = Field(description=BOUND)
    target_bound: str | None = Field(description=BOUND)
    baseline_aic_mac_ratio: Number | None = Field(description=PIPE.format(what="baseline AI Core MAC"))
    target_aic_mac_ratio: Number | None = Field(description=PIPE.format(what="target AI Core MAC"))
    baseline_aic_mte2_ratio: Number | None = Field(description=PIPE.format(what="baseline AI Core MTE2"))
    target_aic_mte2_ratio: Number | None = Field(description=PIPE.format(what="target AI Core MTE2"))
    baseline_aiv_vec_ratio: Number | None = Field(description=PIPE.format(what="baseline AI Vector"))
    target_aiv_vec_ratio: Number | None = Field(description=PIPE.format(what="target AI Vector"))
    baseline_aiv_mte2_ratio: Number | None = Field(description=PIPE.format(what="baseline AI Vector MTE2"))
    target_aiv_mte2_ratio: Number | None = Field(description=PIPE.format(what="target AI Vector MTE2"))
    one_side_reason: str = Field(description="Why it exists on one side only; empty for matched ones.")
    baseline_us_per_sample: Number | None = Field(description="Per-sample time when batches differ, µs.")
    target_us_per_sample: Number | None = Field(description="Per-sample time when batches differ, µs.")
    ratio_per_sample: Number | None = Field(description="Per-sample ratio when batches differ.")


class Operators(Record):
    """The operator table, largest absolute change first (slowest first in a single-run report)."""

    columns: list[str] = Field(description="The record keys, in order.")
    total: Count = Field(description="Number of records.")
    records: list[OperatorRow] = Field(description="The rows.")


class BoardRow(Record):
    """One of the ten operators with the most time per step on a side."""

    rank: Positive = Field(description="Rank on the side, from 1.")
    operator: str = Field(description="Operator name.")
    op_type: str | None = Field(description="Operator type.")
    us_per_step: NonNegative = Field(description="Time per step, µs.")
    share: Number | None = Field(description="Share of the side's operator time.")


class Leaderboards(Record):
    """The top operators of each side (a single-run report fills only the target)."""

    baseline: list[BoardRow] = Field(description="The baseline's top operators.")
    target: list[BoardRow] = Field(description="The target's top operators.")


class Step(Record):
    """One step of one run."""

    role: ProfileRole = Field(description="The run.")
    step: Integer = Field(description="Step id.")
    wall_ms: Number | None = Field(description="Step wall time, when the profile records steps.")
    busy_ms: Number | None = Field(description="Device busy time in the step.")
    free_ms: Number | None = Field(description="Device idle time in the step.")
    op_ms: Number | None = Field(description="The compared operators' time (training: forward only).")


def model_columns() -> tuple[tuple[str, str], ...]:
    """OperatorRow's fields with their JSON types, read from its JSON schema (OPERATOR_COLUMNS equals it)."""
    return tuple(
        (name, _json_kind(schema)) for name, schema in OperatorRow.model_json_schema()["properties"].items()
    )


def _json_kind(schema: dict) -> str:
    """The JSON type of one column's schema: its non-null type, "string" for an enum."""
    if "enum" in schema:
        return "string"
    if "anyOf" in schema:
        return next(_json_kind(s) for s in schema["anyOf"] if s.get("type") != "null")
    return str(schema["type"])


def json_kind(annotation: object) -> str:
    """The JSON type of a column's annotation: "string", "number", "integer" or "boolean" (null aside)."""
    if get_origin(annotation) is Annotated:
        return json_kind(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        kinds = {json_kind(arg) for arg in get_args(annotation) if arg is not type(None)}
        return "number" if kinds == {"integer", "number"} else kinds.pop()
    if annotation is bool:
        return "boolean"
    if annotation is int:
        return "integer"
    if annotation is float:
        return "number"
    return "string"  # str and Literal strings


# (column, JSON type), in the table's order: OperatorRow's fields.
OPERATOR_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (name, json_kind(info.annotation)) for name, info in OperatorRow.model_fields.items()
)
OPERATOR_COLUMN_NAMES: tuple[str, ...] = tuple(name for name, _ in OPERATOR_COLUMNS)

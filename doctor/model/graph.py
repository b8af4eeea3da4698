"""The MINDIR section: what the model is, its fusion chains by pattern, and how each chain ran."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from doctor.model.base import Count, Integer, Number, Positive, Record


class Tensor(Record):
    """A graph input or output."""

    name: str = Field(description="Tensor name.")
    dtype: str = Field(description="Element type.")
    shape: list[Integer] = Field(description="Dimensions, -1 for a dynamic one.")


class Parameters(Record):
    """The model's parameters."""

    count: Integer = Field(description="Number of parameters.")
    total_bytes: Integer = Field(description="Their size in bytes.")
    absent: Integer = Field(description="Parameters without weight data (stripped export).")


class PatternCount(Record):
    """The chains of one pattern."""

    pattern: str = Field(description="Chain pattern, e.g. `conv-bn-act`.")
    count: Positive = Field(description="Chains of this pattern.")
    fusible: Count = Field(description="Of which the backend can fuse.")
    blocked: Count = Field(description="Of which something blocks fusion.")
    replaced_by: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Decomposed patterns (attention, norms, activations): the fused op(s) replacing them, "
        "`, `-separated; absent for linear chains.",
    )


class Chain(Record):
    """One fusion chain found in the graph."""

    pattern: str = Field(description="Chain pattern.")
    nodes: list[str] = Field(description="Graph node names, in order.")
    scopes: list[str] = Field(description="Their scopes.")
    ops: list[str] = Field(description="Their operator types.")
    fusible: bool = Field(description="Whether the backend can fuse it.")
    blocked_reason: str = Field(description="What blocks fusion (empty when fusible).")
    depthwise: bool = Field(description="Whether the convolution is depthwise.")
    casts: Count = Field(description="Cast nodes inside the chain.")
    replaced_by: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Decomposed patterns: the fused op replacing them (e.g. `FlashAttentionScore`); absent "
        "for linear chains.",
    )


class Chains(Record):
    """The fusion chains: totals, counts by pattern and the chains themselves (at most 500)."""

    total: Integer = Field(description="Chains found.")
    fusible: Integer = Field(description="Chains the backend can fuse.")
    blocked: Integer = Field(description="Chains something blocks.")
    by_pattern: list[PatternCount] = Field(description="Counts per pattern, most frequent first.")
    items: list[Chain] = Field(description="The chains, up to 500.")


class CrosslinkRow(Record):
    """How one fusion chain ran in the profiled run (graph.profile_join)."""

    chain: Count = Field(description="Index of the chain in `chains.items` order of discovery.")
    pattern: str = Field(description="Chain pattern.")
    ops: str = Field(description="Operator types of the chain, joined by `>`.")
    anchor_scope: str | None = Field(description="Scope of the chain's first node, the join key.")
    fusible: bool = Field(description="The backend can fuse the chain.")
    blocked_reason: str | None = Field(description="What blocks fusion, empty when nothing does.")
    status: Literal["fused", "split", "partly-fused", "not-found"] = Field(
        description="`fused`: one kernel; `split`: every node its own kernel; `partly-fused`; "
        "`not-found`: no kernel of the chain in the profile."
    )
    matched_nodes: Count = Field(description="Chain nodes found among the kernels.")
    separate_kernels: Count = Field(description="Nodes after the anchor that ran as their own kernels.")
    separate_us_per_step: Number | None = Field(description="Time of those kernels per step, µs.")
    recoverable_us_per_step: Number | None = Field(description="Their time when the chain is fusible, µs.")
    separate_kernel_names: str | None = Field(description="Those kernels' names, `;`-separated.")
    join: Literal["scope", "op-type-order"] | None = Field(
        description="How chain and kernels were matched: by scope, or by operator-type order."
    )


class Graph(Record):
    """The MINDIR summary."""

    file: str = Field(description="The model's file name.")
    producer: str = Field(description="Who exported it.")
    model_version: str = Field(description="The MindSpore version that exported it.")
    mind_ir_version: Integer = Field(description="MindIR format version.")
    training: bool | None = Field(description="The graph's training flag, `null` when absent.")
    inputs: list[Tensor] = Field(description="Graph inputs.")
    outputs: list[Tensor] = Field(description="Graph outputs.")
    op_nodes: Count = Field(description="Operator nodes.")
    op_counts: dict[str, Count] = Field(description="Operator nodes by type, most frequent first.")
    parameters: Parameters = Field(description="Parameter count and size.")
    chains: Chains = Field(description="The fusion chains.")
    crosslink: list[CrosslinkRow] | None = Field(
        description="With a profile, one row per chain on how it ran; `null` without one."
    )

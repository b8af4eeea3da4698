"""Typed results of the graph package: the loaded model and the fusion chains found in it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias, cast

import networkx as nx

OpGraph: TypeAlias = "nx.DiGraph[str]"
"""The collapsed op graph: nodes are string ids, node and edge data are attribute dicts (below)."""

# Node attributes of MindirModel.graph (every node has `kind`; op nodes have all of these):
#   kind         "op" | "parameter" | "input" | "call" (a recursive call left opaque)
#   op           operator type, e.g. "Conv2D" (parameters: "Parameter", inputs: "Input")
#   name         MINDIR node / value name (ids of inlined copies add "#<k>")
#   scope        NodeProto.domain, e.g. "Default/conv-Conv2d/Conv2D-op0" ("" when absent)
#   dtype        dtype name of output 0 (None when unknown or a monad)
#   shape        tuple of dims of output 0 (-1 = dynamic), None when unknown
#   out_types    for multi-output ops: tuple of (dtype, shape) per output
#   attrs        primitive attributes (Conv2D group, stride, pad_mode, format ...); shared, read-only
#   args         constant arguments: named for known ops (BatchNorm is_training, Cast dst_type ...),
#                "arg<i>" otherwise
#   instance     primitive instance_name (bn_infer / bn_train / conv2d ...)
#   function     name of the function graph the node comes from (None for the main graph)
#   call_site    id of the call that inlined it (None for the main graph), plus `branch` for if/while
# Edge attributes: index (input position in the consumer), out_index (producer output, None = whole).


def node_args(data: Mapping[str, object]) -> dict[str, object]:
    """A node's constant arguments (`args`), {} when it has none: one typed read of the attribute."""
    args: object = data.get("args") or {}
    return cast("dict[str, object]", args)  # the builder writes `args` as a dict by argument name


@dataclass(frozen=True)
class TensorInfo:
    """A graph input, output or parameter: dtype and dims (-1 = dynamic)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int = 0  # size from dims x itemsize (0 when dynamic or unknown)
    storage: str = ""  # parameters: "inline" | "external" | "absent"

    @property
    def dynamic(self) -> bool:
        return any(d < 0 for d in self.shape)


@dataclass(frozen=True)
class ParameterSummary:
    """What the model's weights look like without keeping their bytes."""

    count: int
    total_bytes: int  # from dims x itemsize
    inline_bytes: int  # raw_data present in the file (read, then dropped)
    external_bytes: int  # declared in external_data records
    dtypes: dict[str, int]  # dtype -> number of parameters
    external_files: tuple[str, ...] = ()  # locations named by external_data (relative to the file)
    missing_external: tuple[str, ...] = ()  # of those, the ones not found next to the file
    absent: int = 0  # parameters with neither raw_data nor external_data (weights stripped)
    items: tuple[TensorInfo, ...] = ()


@dataclass(frozen=True)
class FunctionInfo:
    """A function graph of the file and how it is used."""

    name: str
    role: str  # lazy_inline | if-true | if-false | while-header | while-body | while-exit | function
    nodes: int  # NodeProto count of the function
    call_sites: int  # times it was inlined into the graph (recursive calls excluded)


@dataclass
class MindirModel:
    """A MINDIR file as a graph of compute ops with side-effect plumbing collapsed."""

    path: str
    graph: OpGraph
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    parameters: ParameterSummary
    producer: str
    model_version: str  # MindSpore version that wrote the file, e.g. "2.10.0"
    ir_version: str  # e.g. "1.1"
    mind_ir_version: int  # 1 (2.0-2.2), 2, 3 (2.10)
    functions: tuple[FunctionInfo, ...] = ()
    training: bool | None = None  # graph attribute `training`, when present
    op_counts: dict[str, int] = field(
        default_factory=dict[str, int]
    )  # MINDIR node counts by op, pre-collapse
    warnings: list[str] = field(default_factory=list[str])
    file_bytes: int = 0

    def op_nodes(self, *ops: str) -> list[str]:
        """Ids of op nodes, optionally only those whose op type is one of `ops`."""
        wanted = set(ops)
        return [
            n
            for n, d in self.graph.nodes(data=True)
            if d.get("kind") == "op" and (not wanted or d.get("op") in wanted)
        ]


@dataclass(frozen=True)
class Chain:
    """A run of ops a backend can fuse into one kernel (e.g. Conv2D -> BatchNorm -> ReLU), or a decomposed
    operator that one fused op replaces (attention -> FlashAttentionScore; `replaced_by` set)."""

    pattern: str  # e.g. "conv-bn-act"
    nodes: tuple[str, ...]  # graph node ids in order (Casts excluded)
    scopes: tuple[str, ...]  # scope of each node in `nodes`
    ops: tuple[str, ...]  # op type of each node in `nodes`
    fusible: bool
    blocked_reason: str = ""
    depthwise: bool = False
    casts: tuple[str, ...] = ()  # Cast nodes passed through inside the chain (AMP)
    replaced_by: str = ""  # DAG patterns (graph.patterns): the fused op that replaces the decomposed ops

    @property
    def anchor(self) -> str:
        """The first node (the Conv/MatMul; a DAG pattern's first member slot)."""
        return self.nodes[0]

    def to_dict(self) -> dict[str, object]:
        """JSON-able form used as symptom evidence."""
        out: dict[str, object] = {
            "pattern": self.pattern,
            "nodes": list(self.nodes),
            "scopes": list(self.scopes),
            "ops": list(self.ops),
            "fusible": self.fusible,
            "blocked_reason": self.blocked_reason,
            "depthwise": self.depthwise,
            "casts": len(self.casts),
        }
        if self.replaced_by:
            out["replaced_by"] = self.replaced_by
        return out

"""Fusion-chain walker: find Conv/MatMul chains a backend can fuse into one kernel.

Patterns are data: a name and a sequence of op groups; adding a chain is one line in PATTERNS (and,
for a new kind of op, one entry in OP_GROUPS). The walker takes every anchor (Conv/MatMul) in graph
order and keeps the first pattern, in PATTERNS order (longest first), that matches from it:

* each step follows an edge from the previous node's data output into a data input of the next
  (DATA_INPUTS), passing through Casts (counted, not matched: AMP puts them between ops);
* chains never overlap: a node already in a chain cannot join another one;
* an Add reached through its second input is left to the chain arriving on input 0 when input 0 also
  ends the same prefix (ResNet downsample blocks: the main path owns the Add, the shortcut is conv-bn);
* a chain is fusible only when every intermediate output has a single consumer and no BatchNorm in
  it runs in training mode; otherwise it is reported as blocked with the reason.

Before the linear walk, the DAG patterns of graph.patterns (decomposed attention, norms, activations,
rotary embedding) claim their nodes, so a Softmax's MatMul is not also reported as `matmul-add`; their
chains follow the linear ones in the result. A graph without those patterns gives the same linear
chains as the walk alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from core.text import join, say
from graph.model import Chain, MindirModel, OpGraph
from graph.patterns import DAG_PATTERNS, DagPattern, find_dag_chains

OP_GROUPS: dict[str, frozenset[str]] = {
    "conv": frozenset(
        {"Conv2D", "Conv3D", "Conv2DExt", "Conv3DExt", "Convolution", "Conv1D", "DepthwiseConv2dNative"}
    ),
    "matmul": frozenset({"MatMul", "MatMulExt", "BatchMatMul", "BatchMatMulExt", "Dense"}),
    "bn": frozenset({"BatchNorm", "BatchNormExt", "BNInfer", "FusedBatchNorm"}),
    "act": frozenset(
        {
            "ReLU",
            "ReLU6",
            "ReLUV2",
            "GeLU",
            "FastGeLU",
            "SiLU",
            "Swish",
            "HSwish",
            "HSigmoid",
            "Sigmoid",
            "LeakyReLU",
            "Elu",
            "Tanh",
            "Mish",
            "PReLU",
            "SeLU",
        }
    ),
    "add": frozenset({"Add", "AddExt"}),
    "biasadd": frozenset({"BiasAdd"}),
}
TRANSPARENT = frozenset({"Cast"})  # passed through inside a chain, counted in Chain.casts
DATA_INPUTS: dict[str, tuple[int, ...]] = {"bn": (0,), "act": (0,), "biasadd": (0,), "add": (0, 1)}
MAX_CAST_HOPS = 4


@dataclass(frozen=True)
class Pattern:
    """A fusible chain: its name and the op groups of its steps, anchor first."""

    name: str
    steps: tuple[str, ...]


# Longest first: the first pattern that matches from an anchor is the chain (chains are maximal).
PATTERNS: tuple[Pattern, ...] = (
    Pattern("conv-bn-add-act", ("conv", "bn", "add", "act")),
    Pattern("conv-bn-act", ("conv", "bn", "act")),
    Pattern("conv-bn", ("conv", "bn")),
    Pattern("conv-act", ("conv", "act")),
    Pattern("matmul-biasadd-act", ("matmul", "biasadd", "act")),
    Pattern("matmul-biasadd", ("matmul", "biasadd")),
    Pattern("matmul-add", ("matmul", "add")),
)


def find_chains(
    model: MindirModel,
    patterns: tuple[Pattern, ...] = PATTERNS,
    dag_patterns: tuple[DagPattern, ...] = DAG_PATTERNS,
) -> list[Chain]:
    """All fusion chains of the model's graph: linear chains in graph order, then the DAG patterns in
    graph order; each node is in at most one chain."""
    g = model.graph
    outputs = set(g.graph.get("outputs", ()))
    claimed: set[str] = set()
    dag_chains = find_dag_chains(g, outputs, claimed, dag_patterns, present=model.op_counts.keys())
    anchors = {p.steps[0] for p in patterns}
    anchor_ops = frozenset[str]().union(*(OP_GROUPS[a] for a in anchors))
    chains: list[Chain] = []
    for node, data in g.nodes(data=True):
        if data.get("op") not in anchor_ops or node in claimed:
            continue
        for pattern in patterns:
            if data["op"] not in OP_GROUPS[pattern.steps[0]]:
                continue
            match = _match(g, node, pattern, claimed)
            if match is not None:
                nodes, casts = match
                claimed.update(nodes)
                claimed.update(casts)
                chains.append(_chain(g, pattern, nodes, casts, outputs))
                break
    return chains + dag_chains


def chain_counts(chains: list[Chain]) -> dict[str, int]:
    """Number of chains per pattern name."""
    return dict(Counter(c.pattern for c in chains))


def _match(
    g: OpGraph, anchor: str, pattern: Pattern, claimed: set[str]
) -> tuple[list[str], list[str]] | None:
    nodes = [anchor]
    casts: list[str] = []
    for position, group in enumerate(pattern.steps[1:], start=1):
        step = _next_step(g, nodes[-1], group, claimed, pattern.steps[:position])
        if step is None:
            return None
        nxt, through = step
        nodes.append(nxt)
        casts.extend(through)
    return nodes, casts


def _next_step(
    g: OpGraph, node: str, group: str, claimed: set[str], prefix: tuple[str, ...]
) -> tuple[str, list[str]] | None:
    """The consumer of `node`'s data output in `group` (through Casts), or None."""
    ops = OP_GROUPS[group]
    inputs = DATA_INPUTS.get(group, (0,))
    for succ, through, index in _consumers(g, node, []):
        if succ in claimed or g.nodes[succ].get("op") not in ops or index not in inputs:
            continue
        if index > 0 and _input0_ends_prefix(g, succ, prefix):
            continue
        return succ, through
    return None


def _consumers(g: OpGraph, node: str, through: list[str], hops: int = 0) -> list[tuple[str, list[str], int]]:
    """(consumer, casts passed, input index) for each use of `node`'s data output."""
    found: list[tuple[str, list[str], int]] = []
    for succ, edge in g.succ[node].items():
        if edge.get("out_index") not in (None, 0):
            continue
        if g.nodes[succ].get("op") in TRANSPARENT and hops < MAX_CAST_HOPS:
            found.extend(_consumers(g, succ, [*through, succ], hops + 1))
        else:
            found.append((succ, through, edge.get("index", 0)))
    return found


def _producer(g: OpGraph, node: str, index: int) -> str | None:
    """The op feeding input `index` of `node`, looking back through Casts."""
    for pred, edge in g.pred[node].items():
        if edge.get("index") == index:
            hops = 0
            while g.nodes[pred].get("op") in TRANSPARENT and hops < MAX_CAST_HOPS:
                back = [p for p, e in g.pred[pred].items() if e.get("index") == 0]
                if not back:
                    break
                pred, hops = back[0], hops + 1
            return pred
    return None


def _input0_ends_prefix(g: OpGraph, node: str, prefix: tuple[str, ...]) -> bool:
    """Whether input 0 of `node` comes from a run of ops matching `prefix` (its own chain's claim)."""
    current = _producer(g, node, 0)
    for group in reversed(prefix):
        if current is None or g.nodes[current].get("op") not in OP_GROUPS[group]:
            return False
        if group != prefix[0]:
            current = _producer(g, current, 0)
    return True


def _chain(g: OpGraph, pattern: Pattern, nodes: list[str], casts: list[str], outputs: set[str]) -> Chain:
    data = [g.nodes[n] for n in nodes]
    reason = _blocked_reason(g, nodes, casts, outputs)
    return Chain(
        pattern=pattern.name,
        nodes=tuple(nodes),
        scopes=tuple(d.get("scope", "") for d in data),
        ops=tuple(d.get("op", "") for d in data),
        fusible=not reason,
        blocked_reason=reason,
        depthwise=is_depthwise(data[0]),
        casts=tuple(casts),
    )


def _blocked_reason(g: OpGraph, nodes: list[str], casts: list[str], outputs: set[str]) -> str:
    """Why the chain cannot be fused ("" when it can)."""
    reasons: list[str] = []
    last = nodes[-1]
    for node in [*nodes[:-1], *casts]:
        if node == last:
            continue
        uses = len(g.succ[node]) + (node in outputs)
        if uses > 1:
            users = sorted(
                {g.nodes[s].get("op", "?") for s in g.succ[node]}
                | ({say("chain.graph-output")} if node in outputs else set())
            )
            reasons.append(
                say("chain.consumers", op=g.nodes[node]["op"], uses=uses, users=join(users, "sep.comma"))
            )
    for node in nodes:
        if _training_bn(g.nodes[node]):
            reasons.append(say("chain.training-bn", op=g.nodes[node]["op"]))
    return join(reasons) if reasons else ""


def _training_bn(data: dict[str, Any]) -> bool:
    if data.get("op") not in OP_GROUPS["bn"]:
        return False
    args: dict[str, Any] = data.get("args") or {}
    return bool(args.get("is_training", args.get("training", False)))


def is_depthwise(data: Mapping[str, object]) -> bool:
    """A convolution with one group per output channel (group == out_channel > 1)."""
    if data.get("op") not in OP_GROUPS["conv"]:
        return False
    attrs = cast("dict[str, object]", data.get("attrs") or {})  # the builder's attribute values by name
    group = attrs.get("group", attrs.get("groups", 1))
    channels = attrs.get("out_channel")
    shape = data.get("shape")
    dims = cast("Sequence[object]", shape) if isinstance(shape, tuple | list) else ()
    if channels is None and len(dims) >= 2:
        channels = dims[1]
    return isinstance(group, int) and group > 1 and group == channels

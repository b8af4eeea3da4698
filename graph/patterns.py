"""DAG patterns: decomposed attention, norms, activations and rotary embedding, each replaceable by one
fused operator (FlashAttentionScore, RmsNorm, LayerNorm, GeLU, FastGelu, SiLU, RotaryPositionEmbedding).

A pattern is data (DAG_PATTERNS): slots (an op group each, optional or required, member of the pattern
or only an external input such as the normalised tensor), edges between slots (producer -> consumer)
and the ops that are transparent on an edge (Transpose/Reshape inside attention, Casts everywhere).
Optional slots are compiled away into variants, largest first: an absent slot's in- and out-edges are
joined. Matching is anchored and local, so the walk stays linear in the graph size: for each node of
the anchor's op group (found through one op index built per graph), slots are bound in breadth-first
order from the anchor, each candidate taken among the neighbours of a bound slot (through transparent
ops), with backtracking over those few candidates only. Patterns run in DAG_PATTERNS order (layer-norm
before rms-norm, fast-gelu before silu) and never share a member node.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from itertools import pairwise, product
from typing import Any

import networkx as nx

from core.text import join, say
from graph.model import Chain

GROUPS: dict[str, frozenset[str]] = {
    "matmul": frozenset({"MatMul", "MatMulExt", "BatchMatMul", "BatchMatMulExt", "Dense", "BatchMatMulV2"}),
    "scale": frozenset({"Mul", "Muls", "MulExt", "RealDiv", "Div", "Divs", "DivExt"}),
    "mul": frozenset({"Mul", "Muls", "MulExt"}),
    "div": frozenset({"RealDiv", "Div", "Divs", "DivExt"}),
    "add": frozenset({"Add", "AddExt", "Adds", "AddScalar"}),
    "sub": frozenset({"Sub", "SubExt", "SubScalar"}),
    "softmax": frozenset({"Softmax", "SoftmaxV2", "SoftmaxExt"}),
    "dropout": frozenset({"Dropout", "DropoutExt", "DropoutDoMask", "StatelessDropOut"}),
    "mean": frozenset({"ReduceMean", "MeanExt", "Mean"}),
    "square": frozenset({"Pow", "Square", "PowTensorScalar", "PowScalarTensor"}),
    "sqrt": frozenset({"Sqrt"}),
    "rsqrt": frozenset({"Rsqrt"}),
    "erf": frozenset({"Erf"}),
    "tanh": frozenset({"Tanh"}),
    "sigmoid": frozenset({"Sigmoid"}),
    "neg": frozenset({"Neg"}),
    "concat": frozenset({"Concat"}),
}
ANY = "any"  # a slot matching every op (an external input: the tensor normalised or activated)
CASTS = frozenset({"Cast"})
LAYOUT = frozenset({"Transpose", "Reshape", "ExpandDims", "Squeeze", "TransposeExtView"})
SLICES = frozenset({"StridedSlice", "Slice", "SliceExt", "Split", "SplitWithSize", "Narrow"})
MAX_HOPS = 4  # transparent ops passed on one edge
CONST_TOLERANCE = 1e-3


@dataclass(frozen=True)
class Slot:
    """One node of a pattern: its op group, whether it may be absent, and whether it belongs to the chain
    (an external input is matched to check the wiring but is neither reported nor claimed)."""

    name: str
    group: str
    optional: bool = False
    member: bool = True
    const: float | None = None  # a constant argument the op must have (FastGelu's 1.702)


@dataclass(frozen=True)
class DagPattern:
    """A decomposed operator: slots, producer->consumer edges between them, the anchor slot the search
    starts from, the fused op that replaces it and the ops passed through on an edge."""

    name: str
    family: str  # attention | norm | activation | rotary
    fused: str
    anchor: str
    slots: tuple[Slot, ...]
    edges: tuple[tuple[str, str], ...]
    transparent: frozenset[str] = CASTS
    decode_fused: str = ""  # the fused op when the query has one position (a decode step)
    variants: tuple[_Variant, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "variants", _compile(self))


@dataclass(frozen=True)
class _Variant:
    """A pattern with some optional slots dropped: slots in binding order, and the edges among them."""

    slots: tuple[Slot, ...]
    order: tuple[tuple[Slot, str, str], ...]  # (slot, bound neighbour, "succ" | "pred") after the anchor
    edges: frozenset[tuple[str, str]]


def _s(name: str, group: str, **kw: Any) -> Slot:
    return Slot(name, group, **kw)


def _x(name: str = "x") -> Slot:
    return Slot(name, ANY, member=False)


def _chain_edges(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple(pairwise(names))


# ------------------------------------------------------------------------------------------ compile


def _compile(pattern: DagPattern) -> tuple[_Variant, ...]:
    """Every combination of optional slots, most slots first, each with its binding order."""
    optional = [s for s in pattern.slots if s.optional]
    combos = sorted(product((True, False), repeat=len(optional)), key=lambda c: -sum(c))
    return tuple(
        _variant(pattern, {s.name for s, keep in zip(optional, c, strict=True) if not keep}) for c in combos
    )


def _variant(pattern: DagPattern, dropped: set[str]) -> _Variant:
    edges = set(pattern.edges)
    for name in (s.name for s in pattern.slots if s.name in dropped):
        ins = {a for a, b in edges if b == name}
        outs = {b for a, b in edges if a == name}
        edges = {(a, b) for a, b in edges if name not in (a, b)} | {(a, b) for a in ins for b in outs}
    slots = {s.name: s for s in pattern.slots if s.name not in dropped}
    order: list[tuple[Slot, str, str]] = []
    bound = [pattern.anchor]
    while len(bound) < len(slots):
        a, b = next((a, b) for a, b in sorted(edges) if (a in bound) != (b in bound))
        order.append((slots[b], a, "succ") if a in bound else (slots[a], b, "pred"))
        bound.append(order[-1][0].name)
    return _Variant(tuple(slots[n] for n in bound), tuple(order), frozenset(edges))


_LN_TAIL = (_s("gamma", "mul", optional=True), _s("beta", "add", optional=True))
DAG_PATTERNS: tuple[DagPattern, ...] = (
    DagPattern(
        "attention",
        "attention",
        "FlashAttentionScore",
        "softmax",
        (
            _s("qk", "matmul"),
            _s("scale", "scale", optional=True),
            _s("mask", "add", optional=True),
            _s("softmax", "softmax"),
            _s("dropout", "dropout", optional=True),
            _s("pv", "matmul"),
        ),
        _chain_edges("qk", "scale", "mask", "softmax", "dropout", "pv"),
        transparent=CASTS | LAYOUT,
        decode_fused="IncreFlashAttention",
    ),
    DagPattern(
        "layer-norm",
        "norm",
        "LayerNorm",
        "mean",
        (
            _x(),
            _s("mean", "mean"),
            _s("sub", "sub"),
            _s("square", "square"),
            _s("var", "mean"),
            _s("eps", "add"),
            _s("sqrt", "sqrt"),
            _s("div", "div"),
            *_LN_TAIL,
        ),
        (
            ("x", "mean"),
            ("x", "sub"),
            ("mean", "sub"),
            ("sub", "square"),
            ("square", "var"),
            ("var", "eps"),
            ("eps", "sqrt"),
            ("sqrt", "div"),
            ("sub", "div"),
            ("div", "gamma"),
            ("gamma", "beta"),
        ),
    ),
    DagPattern(
        "layer-norm",
        "norm",
        "LayerNorm",
        "mean",
        (
            _x(),
            _s("mean", "mean"),
            _s("sub", "sub"),
            _s("square", "square"),
            _s("var", "mean"),
            _s("eps", "add"),
            _s("rsqrt", "rsqrt"),
            _s("norm", "mul"),
            *_LN_TAIL,
        ),
        (
            ("x", "mean"),
            ("x", "sub"),
            ("mean", "sub"),
            ("sub", "square"),
            ("square", "var"),
            ("var", "eps"),
            ("eps", "rsqrt"),
            ("rsqrt", "norm"),
            ("sub", "norm"),
            ("norm", "gamma"),
            ("gamma", "beta"),
        ),
    ),
    DagPattern(
        "rms-norm",
        "norm",
        "RmsNorm",
        "mean",
        (
            _x(),
            _s("square", "square"),
            _s("mean", "mean"),
            _s("eps", "add"),
            _s("rsqrt", "rsqrt"),
            _s("norm", "mul"),
            _s("weight", "mul", optional=True),
        ),
        (
            ("x", "square"),
            ("square", "mean"),
            ("mean", "eps"),
            ("eps", "rsqrt"),
            ("rsqrt", "norm"),
            ("x", "norm"),
            ("norm", "weight"),
        ),
    ),
    DagPattern(
        "rms-norm",
        "norm",
        "RmsNorm",
        "mean",
        (
            _x(),
            _s("square", "square"),
            _s("mean", "mean"),
            _s("eps", "add"),
            _s("sqrt", "sqrt"),
            _s("norm", "div"),
            _s("weight", "mul", optional=True),
        ),
        (
            ("x", "square"),
            ("square", "mean"),
            ("mean", "eps"),
            ("eps", "sqrt"),
            ("sqrt", "norm"),
            ("x", "norm"),
            ("norm", "weight"),
        ),
    ),
    DagPattern(  # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
        "gelu",
        "activation",
        "GeLU",
        "tanh",
        (
            _x(),
            _s("cube", "square"),
            _s("coef", "mul"),
            _s("inner", "add"),
            _s("k", "mul"),
            _s("tanh", "tanh"),
            _s("one", "add"),
            _s("half", "mul", optional=True),
            _s("out", "mul"),
        ),
        (
            ("x", "cube"),
            ("cube", "coef"),
            ("coef", "inner"),
            ("x", "inner"),
            ("inner", "k"),
            ("k", "tanh"),
            ("tanh", "one"),
            ("one", "out"),
            ("x", "half"),
            ("half", "out"),
        ),
    ),
    DagPattern(  # 0.5 * x * (1 + erf(x / sqrt(2)))
        "gelu",
        "activation",
        "GeLU",
        "erf",
        (
            _x(),
            _s("scale", "scale"),
            _s("erf", "erf"),
            _s("one", "add"),
            _s("half", "mul", optional=True),
            _s("out", "mul"),
        ),
        (("x", "scale"), ("scale", "erf"), ("erf", "one"), ("one", "out"), ("x", "half"), ("half", "out")),
    ),
    DagPattern(  # x * sigmoid(1.702 x)
        "fast-gelu",
        "activation",
        "FastGelu",
        "sigmoid",
        (_x(), _s("coef", "mul", const=1.702), _s("sigmoid", "sigmoid"), _s("out", "mul")),
        (("x", "coef"), ("coef", "sigmoid"), ("sigmoid", "out"), ("x", "out")),
    ),
    DagPattern(  # x * sigmoid(x): SiLU, Swish with beta 1
        "silu",
        "activation",
        "SiLU",
        "sigmoid",
        (_x(), _s("sigmoid", "sigmoid"), _s("out", "mul")),
        (("x", "sigmoid"), ("sigmoid", "out"), ("x", "out")),
    ),
    DagPattern(  # x * cos + rotate_half(x) * sin, rotate_half(x) = concat(-x2, x1)
        "rotary",
        "rotary",
        "RotaryPositionEmbedding",
        "neg",
        (
            _x(),
            _s("neg", "neg"),
            _s("concat", "concat"),
            _s("sin", "mul"),
            _s("cos", "mul"),
            _s("add", "add"),
        ),
        (
            ("x", "neg"),
            ("neg", "concat"),
            ("x", "concat"),
            ("concat", "sin"),
            ("sin", "add"),
            ("x", "cos"),
            ("cos", "add"),
        ),
        transparent=CASTS | SLICES,
    ),
)
FAMILY_OF: dict[str, str] = {p.name: p.family for p in DAG_PATTERNS}
FUSED_OF: dict[str, str] = {p.name: p.fused for p in DAG_PATTERNS}


# ------------------------------------------------------------------------------------------ match


def find_dag_chains(
    g: nx.DiGraph,
    outputs: set[str],
    claimed: set[str],
    patterns: tuple[DagPattern, ...] = DAG_PATTERNS,
    present: Collection[str] | None = None,
) -> list[Chain]:
    """Every decomposed pattern of the graph, pattern by pattern in DAG_PATTERNS order, reported in graph
    order; adds the member nodes (and the Casts passed between them) to `claimed`. With `present` (the op
    types the file holds, MindirModel.op_counts), patterns whose anchor op never occurs are skipped, and
    with none left the graph is not even scanned."""
    if present is not None:
        patterns = tuple(p for p in patterns if GROUPS[_anchor_group(p)] & set(present))
    if not patterns:
        return []
    index = _op_index(g, {_anchor_group(p) for p in patterns})
    found: list[tuple[int, Chain]] = []
    for pattern in patterns:
        for position, node in index.get(_anchor_group(pattern), ()):
            if node in claimed:
                continue
            match = _match_any(g, pattern, node, claimed)
            if match is None:
                continue
            members, passed = match
            claimed.update(members.values())
            claimed.update(passed)
            found.append((position, _chain(g, pattern, members, passed, outputs)))
    found.sort(key=lambda item: item[0])
    return [c for _, c in found]


def _anchor_group(pattern: DagPattern) -> str:
    return next(s.group for s in pattern.slots if s.name == pattern.anchor)


def _op_index(g: nx.DiGraph, groups: set[str]) -> dict[str, list[tuple[int, str]]]:
    """(graph position, node) per anchor group, in graph order: one pass over the nodes."""
    groups_of: dict[str, list[str]] = defaultdict(list)
    for group in sorted(groups):
        for op in GROUPS[group]:
            groups_of[op].append(group)
    index: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for position, (node, op) in enumerate(g.nodes(data="op")):
        for group in groups_of.get(op, ()):
            index[group].append((position, node))
    return index


def _match_any(
    g: nx.DiGraph, pattern: DagPattern, anchor: str, claimed: set[str]
) -> tuple[dict[str, str], list[str]] | None:
    for variant in pattern.variants:
        found = _bind(g, pattern, variant, 0, {pattern.anchor: anchor}, claimed)
        if found is not None:
            passed = _passed_casts(g, pattern, variant, found)
            # members in declaration order, which is the data flow order (qk before softmax)
            return {s.name: found[s.name] for s in pattern.slots if s.member and s.name in found}, passed
    return None


def _bind(
    g: nx.DiGraph,
    pattern: DagPattern,
    variant: _Variant,
    step: int,
    bound: dict[str, str],
    claimed: set[str],
) -> dict[str, str] | None:
    """Bind the slots of `variant.order[step:]`, backtracking over the neighbour candidates."""
    if step == len(variant.order):
        return dict(bound)
    slot, via, direction = variant.order[step]
    reach = _successors if direction == "succ" else _predecessors
    used = set(bound.values())
    for candidate in reach(g, bound[via], pattern.transparent):
        if candidate in used or not _fits(g.nodes[candidate], slot, claimed, candidate):
            continue
        bound[slot.name] = candidate
        if _edges_hold(g, pattern, variant, slot.name, bound):
            result = _bind(g, pattern, variant, step + 1, bound, claimed)
            if result is not None:
                return result
        del bound[slot.name]
    return None


def _fits(data: dict[str, Any], slot: Slot, claimed: set[str], node: str) -> bool:
    if slot.group == ANY:
        return data.get("kind") != "call"
    if data.get("op") not in GROUPS[slot.group] or (slot.member and node in claimed):
        return False
    return slot.const is None or _has_const(data, slot.const)


def _has_const(data: dict[str, Any], value: float) -> bool:
    """Whether a constant argument of the op equals `value` (scalars, or a one-element list)."""
    for arg in (data.get("args") or {}).values():
        item = arg[0] if isinstance(arg, list | tuple) and len(arg) == 1 else arg
        number = isinstance(item, int | float) and not isinstance(item, bool)
        if number and math.isclose(float(item), value, rel_tol=CONST_TOLERANCE):
            return True
    return False


def _edges_hold(
    g: nx.DiGraph, pattern: DagPattern, variant: _Variant, name: str, bound: dict[str, str]
) -> bool:
    """Every variant edge between `name` and an already bound slot exists in the graph."""
    for a, b in variant.edges:
        if name not in (a, b) or a not in bound or b not in bound:
            continue
        if bound[b] not in _successors(g, bound[a], pattern.transparent):
            return False
    return True


def _successors(g: nx.DiGraph, node: str, transparent: frozenset[str]) -> list[str]:
    """Consumers of `node`, looking through up to MAX_HOPS transparent ops."""
    return _through_transparent(g.succ, g, node, transparent)


def _predecessors(g: nx.DiGraph, node: str, transparent: frozenset[str]) -> list[str]:
    """Producers of `node`'s inputs, looking back through up to MAX_HOPS transparent ops."""
    return _through_transparent(g.pred, g, node, transparent)


def _through_transparent(adjacency: Any, g: nx.DiGraph, node: str, transparent: frozenset[str]) -> list[str]:
    """The first non-transparent nodes reached from `node` along `adjacency` (g.succ or g.pred)."""
    out: list[str] = []
    frontier, hops = [node], 0
    while frontier and hops <= MAX_HOPS:
        nxt: list[str] = []
        for current in frontier:
            for other in adjacency[current]:
                if g.nodes[other].get("op") in transparent:
                    nxt.append(other)
                else:
                    out.append(other)
        frontier, hops = nxt, hops + 1
    return out


def _passed_casts(g: nx.DiGraph, pattern: DagPattern, variant: _Variant, bound: dict[str, str]) -> list[str]:
    """Casts on the edges between two member slots (AMP puts them inside the pattern)."""
    members = {s.name for s in variant.slots if s.member}
    casts: list[str] = []
    for a, b in sorted(variant.edges):
        if a in members and b in members:
            casts.extend(_casts_between(g, bound[a], bound[b]))
    return sorted(set(casts))


def _casts_between(g: nx.DiGraph, src: str, dst: str) -> Iterator[str]:
    for succ in g.succ[src]:
        hops, current = 0, succ
        path = []
        while g.nodes[current].get("op") in CASTS and hops < MAX_HOPS:
            path.append(current)
            nxt = [s for s in g.succ[current]]
            if len(nxt) != 1:
                break
            current, hops = nxt[0], hops + 1
        if current == dst:
            yield from path


# ------------------------------------------------------------------------------------------ result


def _chain(
    g: nx.DiGraph, pattern: DagPattern, members: dict[str, str], passed: list[str], outputs: set[str]
) -> Chain:
    nodes = list(members.values())
    data = [g.nodes[n] for n in nodes]
    reason = _shared_outputs(g, nodes, outputs)
    return Chain(
        pattern=pattern.name,
        nodes=tuple(nodes),
        scopes=tuple(d.get("scope", "") for d in data),
        ops=tuple(d.get("op", "") for d in data),
        fusible=not reason,
        blocked_reason=reason,
        casts=tuple(passed),
        replaced_by=_fused_op(g, pattern, members),
    )


def _shared_outputs(g: nx.DiGraph, nodes: list[str], outputs: set[str]) -> str:
    """Intermediate results that something outside the pattern also reads (kept alive, noted only)."""
    inside = set(nodes)
    notes = []
    for node in nodes:
        users = set(g.succ[node])
        if not users & inside:
            continue  # an output of the pattern
        outside = sorted({g.nodes[u].get("op", "?") for u in users - inside})
        if node in outputs:
            outside.append(say("chain.graph-output"))
        if outside:
            notes.append(say("chain.also-read", op=g.nodes[node].get("op"), users=join(outside, "sep.comma")))
    return join(notes) if notes else ""


def _fused_op(g: nx.DiGraph, pattern: DagPattern, members: dict[str, str]) -> str:
    """The fused op for this instance: the decode variant when the query has a single position."""
    if not pattern.decode_fused:
        return pattern.fused
    shape = g.nodes[members[pattern.anchor]].get("shape") or ()
    return pattern.decode_fused if len(shape) >= 2 and shape[-2] == 1 else pattern.fused

"""DAG patterns: decomposed attention, norms, activations, softmax and rotary embedding, each replaceable
by one fused operator (FlashAttentionScore, RmsNorm, LayerNorm, GeLU, FastGelu, SiLU, Softmax,
RotaryPositionEmbedding).

A pattern is data (DAG_PATTERNS): slots (an op group each, optional or required, member of the pattern
or only an external input such as the normalised tensor), edges between slots (producer -> consumer)
and the ops that are transparent on an edge (Transpose/Reshape inside attention, Casts everywhere).
Optional slots are compiled away into variants, largest first: an absent slot's in- and out-edges are
joined.

Equivalent forms by canonicalising, not by equivalence classes per slot. Before matching, graph.canonical
labels every spelling of one computation with one name (Mul(x, x), Pow(x, 2) and Square are ~Square;
a / sqrt(b) is a ~Mul of a ~Rsqrt; sum / N is ~Mean; Sub(0, x) and Mul(x, -1) are ~Neg;
1 + exp(-x) under a Div is ~Sigmoid; exp / sum(exp) is ~Softmax) and folds the extra nodes of a
multi-node spelling into the labelled one as its parts. Per-slot classes were rejected because the
spellings are not per slot: a / sqrt(b) against a * rsqrt(b) changes two slots together, sum / N
and x / (1 + exp(-x)) change how many nodes there are, and x * x * x spreads one slot over several
nodes; a class per slot would need those combinations written into every pattern that uses them
(norms, GeLU, SiLU, attention), a canonical label is written once and every pattern gets it. The
graph is not copied: the Canon holds only the renamed nodes and parts, made from the trigger ops
(Pow, Mul, Sub, Sqrt, Div, Exp) found by the same single pass that indexes the anchors.

Matching is anchored and local, so the walk stays linear in the graph size: for each node of the
anchor's group (by canonical label), slots are bound in breadth-first order from the anchor, each
candidate taken among the neighbours of a bound slot (through transparent ops and through the parts
of a labelled node), with backtracking over those few candidates only. An external input read by
several slots must be one output of its op (two outputs of one Split are two tensors). Patterns run
in DAG_PATTERNS order (attention before softmax, layer-norm before rms-norm, fast-gelu before silu)
and never share a member node; a block's chain lists its parts before each member.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise, product
from typing import Any

from core.text import join, say
from graph.canonical import SOURCES, TRIGGERS, Canon, canonicalise, scalars
from graph.model import Chain, OpGraph

GROUPS: dict[str, frozenset[str]] = {
    "matmul": frozenset({"MatMul", "MatMulExt", "BatchMatMul", "BatchMatMulExt", "Dense", "BatchMatMulV2"}),
    "scale": frozenset({"Mul", "Muls", "MulExt", "RealDiv", "Div", "Divs", "DivExt", "~Mul"}),
    "mul": frozenset({"Mul", "Muls", "MulExt", "~Mul"}),
    "div": frozenset({"RealDiv", "Div", "Divs", "DivExt"}),
    "add": frozenset({"Add", "AddExt", "Adds", "AddScalar"}),
    "mask": frozenset({"Add", "AddExt", "Adds", "Select", "SelectV2", "MaskedFill", "Where"}),
    "sub": frozenset({"Sub", "SubExt", "SubScalar"}),
    "softmax": frozenset({"Softmax", "SoftmaxV2", "SoftmaxExt", "~Softmax"}),
    "written-softmax": frozenset({"~Softmax"}),
    "dropout": frozenset({"Dropout", "DropoutExt", "DropoutDoMask", "StatelessDropOut"}),
    "mean": frozenset({"ReduceMean", "MeanExt", "Mean", "~Mean"}),
    "square": frozenset({"Square", "~Square"}),
    "cube": frozenset({"~Cube"}),
    "rsqrt": frozenset({"Rsqrt", "~Rsqrt"}),
    "erf": frozenset({"Erf"}),
    "tanh": frozenset({"Tanh"}),
    "sigmoid": frozenset({"Sigmoid", "~Sigmoid"}),
    "neg": frozenset({"Neg", "~Neg"}),
    "concat": frozenset({"Concat", "Stack"}),
    "complex": frozenset({"Complex"}),
    "real": frozenset({"Real"}),
    "imag": frozenset({"Imag"}),
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
    scalar: bool = False  # the op must have a scalar constant argument (a scale, not a weight)


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
_RMS_CORE = (_x(), _s("square", "square"), _s("mean", "mean"), _s("eps", "add"), _s("rsqrt", "rsqrt"))
_RMS_EDGES = (("x", "square"), ("square", "mean"), ("mean", "eps"), ("eps", "rsqrt"), ("rsqrt", "norm"))
_ROTARY = CASTS | SLICES
# Every spelling graph.canonical folds into one label (Mul(x, x) is ~Square, a / sqrt(b) is a * ~Rsqrt(b),
# sum / N is ~Mean, ...) is matched by the one pattern below that names the label's group.
DAG_PATTERNS: tuple[DagPattern, ...] = (
    DagPattern(  # softmax(q @ k^T * scale + mask) @ v; q or k may be scaled before the MatMul instead
        "attention",
        "attention",
        "FlashAttentionScore",
        "softmax",
        (
            _s("prescale", "scale", optional=True, scalar=True),
            _s("qk", "matmul"),
            _s("scale", "scale", optional=True),
            _s("mask", "mask", optional=True),
            _s("softmax", "softmax"),
            _s("dropout", "dropout", optional=True),
            _s("pv", "matmul"),
        ),
        _chain_edges("prescale", "qk", "scale", "mask", "softmax", "dropout", "pv"),
        transparent=CASTS | LAYOUT,
        decode_fused="IncreFlashAttention",
    ),
    DagPattern(  # (x - mean) * rsqrt(mean((x - mean)^2) + eps) [* gamma] [+ beta]
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
    DagPattern(  # x * rsqrt(mean(x^2) + eps) [* w]
        "rms-norm",
        "norm",
        "RmsNorm",
        "mean",
        (*_RMS_CORE, _s("norm", "mul"), _s("weight", "mul", optional=True)),
        (*_RMS_EDGES, ("x", "norm"), ("norm", "weight")),
    ),
    DagPattern(  # (w * x) * rsqrt(mean(x^2) + eps): the weight applied before the root
        "rms-norm",
        "norm",
        "RmsNorm",
        "mean",
        (*_RMS_CORE, _s("weight", "mul"), _s("norm", "mul")),
        (*_RMS_EDGES, ("x", "weight"), ("weight", "norm")),
    ),
    DagPattern(  # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))); the 0.044715 is folded in ~Cube
        "gelu",
        "activation",
        "GeLU",
        "tanh",
        (
            _x(),
            _s("cube", "cube"),
            _s("inner", "add"),
            _s("k", "mul"),
            _s("tanh", "tanh"),
            _s("one", "add"),
            _s("half", "mul", optional=True),
            _s("out", "mul"),
        ),
        (
            ("x", "cube"),
            ("cube", "inner"),
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
    DagPattern(  # x * sigmoid(x): SiLU, Swish with beta 1; x / (1 + exp(-x)) through ~Sigmoid and ~Mul
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
        transparent=_ROTARY,
    ),
    DagPattern(  # interleaved: x1, x2 = even, odd lanes; concat|stack(x1 cos - x2 sin, x1 sin + x2 cos)
        "rotary",
        "rotary",
        "RotaryPositionEmbedding",
        "sub",
        (
            _x(),
            _s("x1cos", "mul"),
            _s("x2sin", "mul"),
            _s("sub", "sub"),
            _s("x1sin", "mul"),
            _s("x2cos", "mul"),
            _s("add", "add"),
            _s("join", "concat"),
        ),
        (
            ("x", "x1cos"),
            ("x", "x2sin"),
            ("x1cos", "sub"),
            ("x2sin", "sub"),
            ("x", "x1sin"),
            ("x", "x2cos"),
            ("x1sin", "add"),
            ("x2cos", "add"),
            ("sub", "join"),
            ("add", "join"),
        ),
        transparent=_ROTARY,
    ),
    DagPattern(  # complex multiply: stack(real, imag)(complex(x_even, x_odd) * complex(cos, sin))
        "rotary",
        "rotary",
        "RotaryPositionEmbedding",
        "complex",
        (
            _x(),
            _s("complex", "complex"),
            _s("rotate", "mul"),
            _s("real", "real"),
            _s("imag", "imag"),
            _s("join", "concat"),
        ),
        (
            ("x", "complex"),
            ("complex", "rotate"),
            ("rotate", "real"),
            ("rotate", "imag"),
            ("real", "join"),
            ("imag", "join"),
        ),
        transparent=_ROTARY,
    ),
    DagPattern(  # exp(x [- max x]) / sum(exp(...)) outside an attention: one ~Softmax
        "softmax",
        "activation",
        "Softmax",
        "softmax",
        (_s("softmax", "written-softmax"),),
        (),
    ),
)
FAMILY_OF: dict[str, str] = {p.name: p.family for p in DAG_PATTERNS}
FUSED_OF: dict[str, str] = {p.name: p.fused for p in DAG_PATTERNS}


# ------------------------------------------------------------------------------------------ match


def find_dag_chains(
    g: OpGraph,
    outputs: set[str],
    claimed: set[str],
    patterns: tuple[DagPattern, ...] = DAG_PATTERNS,
    present: Collection[str] | None = None,
) -> list[Chain]:
    """Every decomposed pattern of the graph, pattern by pattern in DAG_PATTERNS order, reported in graph
    order; adds the member nodes (their folded parts and the Casts passed between them) to `claimed`.
    With `present` (the op types the file holds, MindirModel.op_counts), patterns whose anchor cannot
    occur are skipped, and with none left the graph is not even scanned."""
    if present is not None:
        patterns = tuple(p for p in patterns if _anchor_sources(p) & set(present))
    if not patterns:
        return []
    index, canon = _op_index(g, {_anchor_group(p) for p in patterns})
    found: list[tuple[int, Chain]] = []
    for pattern in patterns:
        for position, node in index.get(_anchor_group(pattern), ()):
            if node in claimed:
                continue
            match = _match_any(g, canon, pattern, node, claimed)
            if match is None:
                continue
            members, passed = match
            nodes = _with_parts(canon, members.values())
            claimed.update(nodes)
            claimed.update(passed)
            found.append((position, _chain(g, pattern, members, nodes, passed, outputs)))
    found.sort(key=lambda item: item[0])
    return [c for _, c in found]


def _anchor_group(pattern: DagPattern) -> str:
    return next(s.group for s in pattern.slots if s.name == pattern.anchor)


def _anchor_sources(pattern: DagPattern) -> frozenset[str]:
    """The raw op types whose presence can give the pattern's anchor (its group, and what folds into it)."""
    group = GROUPS[_anchor_group(pattern)]
    return group.union(*(SOURCES.get(op, ()) for op in group))


def _op_index(g: OpGraph, groups: set[str]) -> tuple[dict[str, list[tuple[int, str]]], Canon]:
    """(graph position, node) per anchor group, in graph order, by canonical label; one pass over the
    nodes collects the anchors and the trigger ops the canonical view is made from."""
    wanted = frozenset[str]().union(*(GROUPS[group] for group in groups))
    raw = wanted.union(TRIGGERS, *(SOURCES.get(op, ()) for op in wanted))
    candidates = [(pos, node, op) for pos, (node, op) in enumerate(g.nodes(data="op")) if op in raw]
    canon = canonicalise(g, [node for _, node, op in candidates if op in TRIGGERS])
    groups_of: dict[str, list[str]] = defaultdict(list)
    for group in sorted(groups):
        for op in GROUPS[group]:
            groups_of[op].append(group)
    index: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for position, node, op in candidates:
        if node in canon.part_of:
            continue
        for group in groups_of.get(canon.label.get(node, op), ()):  # op None: no group
            index[group].append((position, node))
    return index, canon


def _with_parts(canon: Canon, members: Iterable[str]) -> list[str]:
    """The member nodes, each preceded by the nodes folded into it (data order)."""
    return [n for member in members for n in (*canon.parts.get(member, ()), member)]


def _match_any(
    g: OpGraph, canon: Canon, pattern: DagPattern, anchor: str, claimed: set[str]
) -> tuple[dict[str, str], list[str]] | None:
    for variant in pattern.variants:
        found = _Binder(g, canon, pattern, variant, claimed).bind(0, {pattern.anchor: anchor})
        if found is not None:
            passed = _passed_casts(g, pattern, variant, found)
            # members in declaration order, which is the data flow order (qk before softmax)
            return {s.name: found[s.name] for s in pattern.slots if s.member and s.name in found}, passed
    return None


@dataclass
class _Binder:
    """Binds one variant from an anchor, backtracking over the few neighbour candidates of each slot."""

    g: OpGraph
    canon: Canon
    pattern: DagPattern
    variant: _Variant
    claimed: set[str]

    def bind(self, step: int, bound: dict[str, str]) -> dict[str, str] | None:
        """Bind the slots of `variant.order[step:]`."""
        if step == len(self.variant.order):
            return dict(bound) if self._inputs_are_one_tensor(bound) else None
        slot, via, direction = self.variant.order[step]
        used = set(bound.values())
        for candidate in self.near(bound[via], direction == "succ"):
            if candidate in used or not self._fits(slot, candidate):
                continue
            bound[slot.name] = candidate
            if self._edges_hold(slot.name, bound):
                result = self.bind(step + 1, bound)
                if result is not None:
                    return result
            del bound[slot.name]
        return None

    def near(self, node: str, forward: bool) -> list[str]:
        """Consumers (forward) or producers of `node`, looking through up to MAX_HOPS transparent ops and
        through any node folded into a canonical one (a part leads to the node it belongs to)."""
        adjacency = self.g.succ if forward else self.g.pred
        transparent, part_of = self.pattern.transparent, self.canon.part_of
        out: list[str] = []
        frontier, hops, seen = [node], 0, {node}
        while frontier and hops <= MAX_HOPS:
            nxt: list[str] = []
            for current in frontier:
                for other in adjacency[current]:
                    if other in seen:
                        continue
                    seen.add(other)
                    if other in part_of:  # forward: the labelled node; backward: on to its inputs
                        (out if forward else nxt).append(part_of[other] if forward else other)
                    elif self.g.nodes[other].get("op") in transparent:
                        nxt.append(other)
                    else:
                        out.append(other)
            frontier, hops = nxt, hops + 1
        return list(dict.fromkeys(out))

    def _fits(self, slot: Slot, node: str) -> bool:
        data = self.g.nodes[node]
        if slot.group == ANY:
            return data.get("kind") != "call"
        if self.canon.op(self.g, node) not in GROUPS[slot.group] or (slot.member and node in self.claimed):
            return False
        if slot.scalar and not scalars(data):
            return False
        return slot.const is None or _has_const(data, slot.const)

    def _edges_hold(self, name: str, bound: dict[str, str]) -> bool:
        """Every variant edge between `name` and an already bound slot exists in the graph."""
        for a, b in self.variant.edges:
            if name not in (a, b) or a not in bound or b not in bound:
                continue
            if bound[b] not in self.near(bound[a], True):
                return False
        return True

    def _inputs_are_one_tensor(self, bound: dict[str, str]) -> bool:
        """An external input read by several slots is one output of its op: a * sigmoid(b) with a and b
        two outputs of one Split is no SiLU."""
        for slot in self.variant.slots:
            if slot.group != ANY or not any(
                e.get("out_index") is not None for e in self.g.succ[bound[slot.name]].values()
            ):
                continue
            readers = {b for a, b in self.variant.edges if a == slot.name}
            common: set[Any] | None = None
            for reader in readers:
                reached = self._outputs_reaching(bound[slot.name], bound[reader])
                common = reached if common is None else common & reached
            if common is not None and not common:
                return False
        return True

    def _outputs_reaching(self, src: str, dst: str) -> set[Any]:
        """The out_index of each edge leaving `src` on a path to `dst` (through transparent ops)."""
        found: set[Any] = set()
        for succ, edge in self.g.succ[src].items():
            passable = succ in self.canon.part_of or self.g.nodes[succ].get("op") in self.pattern.transparent
            if succ == dst or (passable and dst in self.near(succ, True)):
                found.update(edge.get("out_indices") or (edge.get("out_index"),))
        return found


def _has_const(data: dict[str, Any], value: float) -> bool:
    """Whether a constant argument of the op equals `value` (scalars, or a one-element list)."""
    return any(math.isclose(v, value, rel_tol=CONST_TOLERANCE) for v in scalars(data).values())


def _passed_casts(g: OpGraph, pattern: DagPattern, variant: _Variant, bound: dict[str, str]) -> list[str]:
    """Casts on the edges between two member slots (AMP puts them inside the pattern)."""
    members = {s.name for s in variant.slots if s.member}
    casts: list[str] = []
    for a, b in sorted(variant.edges):
        if a in members and b in members:
            casts.extend(_casts_between(g, bound[a], bound[b]))
    return sorted(set(casts))


def _casts_between(g: OpGraph, src: str, dst: str) -> Iterator[str]:
    for succ in g.succ[src]:
        hops, current = 0, succ
        path: list[str] = []
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
    g: OpGraph,
    pattern: DagPattern,
    members: dict[str, str],
    nodes: list[str],
    passed: list[str],
    outputs: set[str],
) -> Chain:
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


def _shared_outputs(g: OpGraph, nodes: list[str], outputs: set[str]) -> str:
    """Intermediate results that something outside the pattern also reads (kept alive, noted only)."""
    inside = set(nodes)
    notes: list[str] = []
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


def _fused_op(g: OpGraph, pattern: DagPattern, members: dict[str, str]) -> str:
    """The fused op for this instance: the decode variant when the query has a single position."""
    if not pattern.decode_fused:
        return pattern.fused
    shape = g.nodes[members[pattern.anchor]].get("shape") or ()
    return pattern.decode_fused if len(shape) >= 2 and shape[-2] == 1 else pattern.fused

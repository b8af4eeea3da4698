"""Canonical op labels: the spellings of one computation given one name before the patterns match.

graph.patterns matches the canonical label of a node instead of its op type. The graph itself is not
copied or rewritten (views, hygiene and reports keep reading the real ops); a Canon holds only the
nodes whose label differs and the nodes folded into a labelled one ("parts"), which the matcher looks
through like Casts and claims with the node they belong to. Labels start with "~":

* ~Square / ~Cube: Pow(x, 2) / Pow(x, 3), Mul(x, x), and any product of x with itself and scalars
  (0.044715 * x * x * x is one ~Cube whose parts are the inner Muls);
* ~Sqrt / ~Rsqrt: Pow(x, 0.5) / Pow(x, -0.5); a Sqrt read only as the divisor of Divs is a ~Rsqrt and
  those Divs are ~Mul (a / sqrt(b) == a * rsqrt(b));
* ~Neg: Sub(0, x) and Mul(x, -1);
* ~Mean: ReduceSum(x) divided by a constant N (or multiplied by 1/N); the sum is a part;
* ~Sigmoid: 1 + exp(-x) read as a divisor (x / (1 + exp(-x)) is x * sigmoid(x): the Div is ~Mul) or
  1 / (1 + exp(-x)); Neg and Exp are parts;
* ~Softmax: exp(v) / sum(exp(v)), or with v = x - max(x); Exp, the sum, Sub and the max are parts.

Each rule looks at a node and its direct neighbours only, so one pass over the trigger ops is linear.
A part has no reader outside its labelled node (otherwise the rule does not apply): folding it cannot
hide a value the rest of the graph uses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from graph.model import OpGraph, node_args

MUL = frozenset({"Mul", "Muls", "MulExt"})
DIV = frozenset({"RealDiv", "Div", "Divs", "DivExt"})
ADD = frozenset({"Add", "AddExt", "Adds", "AddScalar"})
SUB = frozenset({"Sub", "SubExt", "SubScalar"})
POW = frozenset({"Pow", "PowTensorScalar"})
SUM = frozenset({"ReduceSum", "SumExt", "Sum"})
MAX = frozenset({"ReduceMax", "ArgMaxWithValue", "Max", "AMax", "MaxDim"})
EXP = frozenset({"Exp"})
SQRT = frozenset({"Sqrt"})
NEG = frozenset({"Neg"})
SQUARE = frozenset({"Square"})
# the raw ops a canonical label can come from (a pattern anchored on a label runs when one is present)
SOURCES: dict[str, frozenset[str]] = {
    "~Square": POW | MUL | SQUARE,
    "~Cube": POW | MUL,
    "~Sqrt": POW,
    "~Rsqrt": POW | SQRT,
    "~Mul": DIV,
    "~Neg": SUB | MUL,
    "~Mean": DIV | MUL,
    "~Sigmoid": ADD | DIV,
    "~Softmax": DIV,
}
TRIGGERS = POW | MUL | SUB | SQRT | DIV | EXP  # the ops a rule starts from
TOLERANCE = 1e-6


@dataclass
class Canon:
    """Labels that differ from the op type, and the nodes folded into a labelled node."""

    label: dict[str, str] = field(default_factory=dict[str, str])
    part_of: dict[str, str] = field(default_factory=dict[str, str])  # part -> the labelled node it belongs to
    parts: dict[str, list[str]] = field(
        default_factory=dict[str, list[str]]
    )  # labelled node -> its parts, data order

    def op(self, g: OpGraph, node: str) -> str:
        """The canonical label of `node` (its op type when no rule renamed it)."""
        return self.label.get(node) or g.nodes[node].get("op", "")

    def fold(self, head: str, label: str, parts: list[str]) -> None:
        """Label `head` and fold `parts` into it (a part that was itself a head hands over its parts)."""
        self.label[head] = label
        merged: list[str] = []
        for part in parts:
            merged.extend(self.parts.pop(part, ()))
            self.label.pop(part, None)
            merged.append(part)
        merged = list(dict.fromkeys([*self.parts.get(head, ()), *merged]))
        for part in merged:
            self.part_of[part] = head
        self.parts[head] = merged


def canonicalise(g: OpGraph, nodes: list[str]) -> Canon:
    """The canonical view of `g` from the trigger-op `nodes` (in graph order)."""
    canon = Canon()
    powers: dict[str, tuple[str, int, list[str]] | None] = {}
    for node in nodes:
        op = g.nodes[node].get("op")
        if op in POW or op in MUL:
            _power_rule(g, canon, node, powers)
        if op in SUB or op in MUL:
            _neg_rule(g, canon, node)
        if op in SQRT:
            _root_rule(g, canon, node)
        if op in DIV or op in MUL:
            _mean_rule(g, canon, node)
        if op in EXP:
            _sigmoid_rule(g, canon, node)
        if op in DIV:
            _softmax_rule(g, canon, node)
    return canon


# ------------------------------------------------------------------------------------------ helpers


def scalars(data: Mapping[str, object]) -> dict[str, float]:
    """The numeric scalar constant arguments of a node, by argument name."""
    out: dict[str, float] = {}
    for name, value in node_args(data).items():
        item = _only_item(value)
        if isinstance(item, int | float) and not isinstance(item, bool):
            out[name] = float(item)
    return out


def _only_item(value: object) -> object:
    """The element of a one-element list or tuple (how MINDIR stores some scalars), else `value`."""
    if isinstance(value, list | tuple):
        items = cast("Sequence[object]", value)  # isinstance leaves the element type unknown
        return items[0] if len(items) == 1 else items
    return value


def _is(value: float | None, wanted: float) -> bool:
    return value is not None and math.isclose(value, wanted, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _only_reader(g: OpGraph, node: str, reader: str) -> bool:
    """`node` is read by `reader` alone and is no graph output."""
    return list(g.succ[node]) == [reader] and node not in g.graph.get("outputs", ())


def _single_tensor(g: OpGraph, src: str, dst: str) -> bool:
    """Every input of `dst` fed by `src` reads the same output of it (a Split's a * b is not a square)."""
    return len(g.edges[src, dst].get("out_indices", ())) <= 1


def _input_index(g: OpGraph, src: str, dst: str) -> int:
    return int(g.edges[src, dst].get("index", 0) or 0)


# ------------------------------------------------------------------------------------------ rules


def _power(
    g: OpGraph, node: str, powers: dict[str, tuple[str, int, list[str]] | None]
) -> tuple[str, int, list[str]] | None:
    """(base, exponent, inner nodes) when `node` is a product of one tensor with itself and scalars."""
    if node in powers:
        return powers[node]
    powers[node] = None  # cycle guard
    data = g.nodes[node]
    op, preds, consts = data.get("op"), list(g.pred[node]), scalars(data)
    scalar_only = len(consts) == len(node_args(data))  # no tensor constant (cos, a mask)
    result: tuple[str, int, list[str]] | None = None
    if op in POW and len(preds) == 1:
        exponent = next(iter(consts.values()), None)
        if exponent is not None and float(exponent).is_integer() and exponent >= 1:
            result = (preds[0], int(exponent), [])
    elif not scalar_only:
        result = None
    elif op in MUL and len(preds) == 1 and not consts and _single_tensor(g, preds[0], node):
        result = (preds[0], 2, [])
    elif op in MUL and len(preds) == 1 and len(consts) == 1:
        result = _extend(g, node, preds[0], 0, powers)  # c * p: p's power, scaled
    elif op in MUL and len(preds) == 2 and not consts:
        a, b = preds
        result = _extend(g, node, a, 1, powers, base=b) or _extend(g, node, b, 1, powers, base=a)
    powers[node] = result
    return result


def _extend(
    g: OpGraph,
    node: str,
    inner: str,
    more: int,
    powers: dict[str, tuple[str, int, list[str]] | None],
    base: str | None = None,
) -> tuple[str, int, list[str]] | None:
    """`inner`'s power (when only `node` reads it) times `base` (`more` times), or `inner` itself as the
    base when it is no power."""
    known = _power(g, inner, powers) if _only_reader(g, inner, node) else None
    if known is None:
        return (inner, 1, []) if base is None else None
    root, exponent, parts = known
    if base is not None and base != root:
        return None
    return root, exponent + more, [*parts, inner]


def _power_rule(g: OpGraph, canon: Canon, node: str, powers: dict[str, Any]) -> None:
    op = g.nodes[node].get("op")
    if op in POW:
        exponent = next(iter(scalars(g.nodes[node]).values()), None)
        if _is(exponent, 0.5):
            canon.label[node] = "~Sqrt"
            return
        if _is(exponent, -0.5):
            canon.label[node] = "~Rsqrt"
            return
    found = _power(g, node, powers)
    if found is not None and found[1] in (2, 3):
        canon.fold(node, "~Square" if found[1] == 2 else "~Cube", found[2])


def _neg_rule(g: OpGraph, canon: Canon, node: str) -> None:
    data = g.nodes[node]
    consts = scalars(data)
    if len(g.pred[node]) != 1 or node in canon.label:
        return
    if len(node_args(data)) != 1:
        return
    zero_minus = data.get("op") in SUB and _is(consts.get("arg0", consts.get("input")), 0.0)
    times_minus_one = data.get("op") in MUL and _is(next(iter(consts.values()), None), -1.0)
    if zero_minus or times_minus_one:
        canon.label[node] = "~Neg"


def _root_rule(g: OpGraph, canon: Canon, node: str) -> None:
    """A Sqrt read only as the divisor of Divs: ~Rsqrt, and each Div a ~Mul."""
    readers = list(g.succ[node])
    if not readers or node in g.graph.get("outputs", ()):
        return
    if all(g.nodes[r].get("op") in DIV and _input_index(g, node, r) == 1 for r in readers):
        canon.label[node] = "~Rsqrt"
        for reader in readers:
            canon.label[reader] = "~Mul"


def _mean_rule(g: OpGraph, canon: Canon, node: str) -> None:
    """sum(x) / N or sum(x) * (1 / N), N > 1: a ~Mean with the sum as its part."""
    data = g.nodes[node]
    preds, consts = list(g.pred[node]), scalars(data)
    if len(preds) != 1 or len(consts) != 1 or g.nodes[preds[0]].get("op") not in SUM:
        return
    value = next(iter(consts.values()))
    by_n = value >= 2 and value.is_integer() if data.get("op") in DIV else 0 < value < 1
    if by_n and _only_reader(g, preds[0], node):
        canon.fold(node, "~Mean", [preds[0]])


def _sigmoid_rule(g: OpGraph, canon: Canon, exp: str) -> None:
    """exp(-x) + 1 read as a divisor: x / that is x * ~Sigmoid, 1 / that is ~Sigmoid."""
    preds, readers = list(g.pred[exp]), list(g.succ[exp])
    if len(preds) != 1 or len(readers) != 1 or not _only_reader(g, preds[0], exp):
        return
    neg, add = preds[0], readers[0]
    negated = g.nodes[neg].get("op") in NEG or canon.label.get(neg) == "~Neg"
    consts = scalars(g.nodes[add])
    if not negated or g.nodes[add].get("op") not in ADD or len(consts) != 1:
        return
    if not _is(next(iter(consts.values())), 1.0) or len(g.pred[add]) != 1:
        return
    divs = list(g.succ[add])
    if not divs or not all(g.nodes[d].get("op") in DIV and _input_index(g, add, d) == 1 for d in divs):
        return
    if len(divs) == 1 and _is(scalars(g.nodes[divs[0]]).get("arg0"), 1.0):
        canon.fold(divs[0], "~Sigmoid", [neg, exp, add])  # 1 / (1 + exp(-x))
        return
    canon.fold(add, "~Sigmoid", [neg, exp])
    for div in divs:
        canon.label[div] = "~Mul"


def _softmax_rule(g: OpGraph, canon: Canon, div: str) -> None:
    """e / sum(e), e = exp(v) or exp(x - max(x)): a ~Softmax."""
    preds = list(g.pred[div])
    if len(preds) != 2 or scalars(g.nodes[div]):
        return
    exp = next((p for p in preds if g.nodes[p].get("op") in EXP), None)
    total = next((p for p in preds if g.nodes[p].get("op") in SUM), None)
    if exp is None or total is None or list(g.pred[total]) != [exp] or _input_index(g, total, div) != 1:
        return
    if set(g.succ[exp]) != {total, div} or not _only_reader(g, total, div):
        return
    parts = [exp, total]
    (shifted,) = g.pred[exp] if len(g.pred[exp]) == 1 else (None,)
    if shifted is not None and g.nodes[shifted].get("op") in SUB and _only_reader(g, shifted, exp):
        peak = next((p for p in g.pred[shifted] if g.nodes[p].get("op") in MAX), None)
        if peak is not None and _only_reader(g, peak, shifted) and set(g.pred[peak]) <= set(g.pred[shifted]):
            parts = [peak, shifted, *parts]
    canon.fold(div, "~Softmax", parts)

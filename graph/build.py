"""Build the compute graph of a decoded MINDIR: resolve references, collapse plumbing, inline calls.

Values flowing between MINDIR nodes are resolved to *refs* while walking each graph in file order
(which is topological): a node id (str), a selected output ``(id, index)``, a constant, a tuple of
refs (MakeTuple), the alternatives of an if/while call, a partial application or a function name.
Plumbing nodes only produce refs and never become graph nodes (format guide §4):

* ``Load(param, U)`` and ``Depend(a, b)`` -> the ref of their first input;
* ``UpdateState`` and side-effect monads -> dropped;
* ``MakeTuple(...)`` -> a tuple ref, so ``TupleGetItem(MakeTuple(a, b), 1)`` is ``b`` and a real op
  consuming a tuple gets one edge per element;
* ``TupleGetItem(x, i)`` -> output ``i`` of ``x`` (an edge with ``out_index=i``).

Function graphs are inlined at every call site (a ``@lazy_inline`` block called three times gives
three copies, ids suffixed ``#1``, ``#2``); both branches of an ``if`` are inlined; a recursive call
(a ``while`` body calling the loop header again) stays one opaque ``call`` node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import networkx as nx

from core.text import say
from graph.dtypes import type_id_name
from graph.model import OpGraph
from graph.values import IOMONAD, MONAD, UMONAD, attribute_value, output_types, text

MAX_CALL_DEPTH = 64
MAX_GRAPH_NODES = 500_000  # budget of decoded nodes plus expanded calls (PERF_DOCTOR_MAX_GRAPH_NODES)
MAX_VALUE_NESTING = 256  # MakeTuple / Partial / branch results nested in one another (real models: < 10)
MAX_LISTED_UNKNOWN = 5

# Scalar arguments of PRIMITIVE_FUNCTION ops, by input position (format guide §3.5). Constant inputs
# land in the node's `args` under these names; other ops get "arg<i>".
ARG_NAMES: dict[str, tuple[str, ...]] = {
    "BatchNorm": (
        "x",
        "scale",
        "bias",
        "mean",
        "variance",
        "is_training",
        "epsilon",
        "momentum",
        "data_format",
    ),
    "BatchNormExt": (
        "input",
        "weight",
        "bias",
        "running_mean",
        "running_var",
        "is_training",
        "momentum",
        "eps",
    ),
    "Cast": ("x", "dst_type"),
    "MatMul": ("a", "b", "transpose_a", "transpose_b"),
    "BatchMatMul": ("x", "y", "transpose_a", "transpose_b"),
    "BiasAdd": ("x", "bias", "data_format"),
    "ReduceMean": ("x", "axis", "keep_dims"),
    "ReduceSum": ("x", "axis", "keep_dims", "skip_mode"),
    "Dropout": ("x", "keep_prob", "seed0", "seed1"),
    "TopK": ("x", "k", "sorted"),
    "Softmax": ("x", "axis"),
}
# Where MindSpore 2.0-2.2 (mind_ir_version 1) is expected to keep the same values: primitive
# attributes (inferred, not verified on real files). Attribute name per argument name.
ATTR_FALLBACK: dict[str, dict[str, str]] = {
    "BatchNorm": {
        "is_training": "is_training",
        "epsilon": "epsilon",
        "momentum": "momentum",
        "data_format": "format",
    },
    "Cast": {"dst_type": "dst_type"},
    "MatMul": {"transpose_a": "transpose_a", "transpose_b": "transpose_b"},
    "BatchMatMul": {"transpose_a": "transpose_a", "transpose_b": "transpose_b"},
    "ReduceMean": {"keep_dims": "keep_dims"},
    "ReduceSum": {"keep_dims": "keep_dims"},
    "Dropout": {"keep_prob": "keep_prob"},
}
# Function graph roles, from the markers MindSpore puts in function names (format guide §7).
ROLE_MARKERS = (
    ("✓", "if-true"),
    ("✗", "if-false"),
    ("↵", "while-header"),
    ("↻", "while-body"),
    ("↓", "while-exit"),
    ("_CR_", "lazy_inline"),
)


def function_role(name: str) -> str:
    """What a function graph is for, from its name."""
    return next((role for marker, role in ROLE_MARKERS if marker in name), "function")


@dataclass(frozen=True)
class Primitive:
    """A PrimitiveProto: operator type, attributes and kind (1 classic, 2 PRIMITIVE_FUNCTION)."""

    op: str
    attrs: dict[str, object]  # attribute name -> its Python value (graph.values.attribute_value)
    prim_type: int
    instance: str


class GraphBudgetError(Exception):
    """The graph is over one of the builder's budgets; the loader turns it into an InputError.
    `node_budget` is True when it is the node budget (which the operator can raise)."""

    def __init__(self, problem: str, *, node_budget: bool = False) -> None:
        super().__init__(problem)
        self.problem = problem  # a core.text message, said in the report's language
        self.node_budget = node_budget


class _Const:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _TupleRef:
    __slots__ = ("depth", "items")

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self.depth = _nesting(items)


class _AltRef:
    """The result of an if/while call: any of the branch results."""

    __slots__ = ("depth", "options")

    def __init__(self, options: list[Any]) -> None:
        self.options = options
        self.depth = _nesting(options)


class _FuncRef:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class _PartialRef:
    __slots__ = ("args", "depth", "fn")

    def __init__(self, fn: Any, args: list[Any]) -> None:
        self.fn = fn
        self.args = args
        self.depth = _nesting([fn, *args])


def _nesting(items: list[Any]) -> int:
    """How deeply the refs in `items` nest, plus one; over MAX_VALUE_NESTING is refused here, before
    the recursive walks over refs (_connect, _collect_ids, _call_value) could exhaust the stack."""
    depth = 1 + max((getattr(item, "depth", 0) for item in items), default=0)
    if depth > MAX_VALUE_NESTING:
        raise GraphBudgetError(say("mindir.nesting", limit=MAX_VALUE_NESTING))
    return depth


class _SwitchRef:
    __slots__ = ("options",)

    def __init__(self, options: list[Any]) -> None:
        self.options = options


class _Frame:
    """One graph instance being walked: its local names and where it was called from."""

    __slots__ = ("call_site", "env", "first", "function", "parent", "role", "suffix")

    def __init__(
        self,
        env: dict[str, Any],
        parent: _Frame | None = None,
        function: str | None = None,
        suffix: str = "",
        call_site: str | None = None,
        role: str | None = None,
        first: bool = True,
    ) -> None:
        self.env = env
        self.parent = parent
        self.function = function
        self.suffix = suffix
        self.call_site = call_site
        self.role = role
        self.first = first


# Any: protobuf the MINDIR messages are built at run time from a descriptor (graph.schema): untyped
def expanded_calls_at_least(proto: Any, prims: dict[str, Primitive]) -> int:
    """A lower bound of the calls the walk will inline: every direct `REF::<function>` call site, nested
    calls counted per site, up to MAX_CALL_DEPTH. Counted per (function, depth) in O(functions x depth),
    so a model whose functions each call the next twice (2^depth calls) is known to be too big before any
    node is built. Calls through Switch or Partial values are not counted; a call graph with a cycle
    (inlined until the recursion is cut) gets 0, since a count per function could exceed the walk's."""
    functions = {text(f.name): f for f in proto.functions}
    sites = {name: _direct_calls(graph, functions, prims) for name, graph in functions.items()}
    if _has_cycle(sites):
        return 0
    memo: dict[tuple[str, int], int] = {}

    def calls(callees: list[str], depth: int) -> int:
        if depth >= MAX_CALL_DEPTH:
            return 0  # deeper calls stay opaque call nodes
        total = 0
        for callee in callees:
            key = (callee, depth + 1)
            if key not in memo:
                memo[key] = calls(sites[callee], depth + 1)
            total += 1 + memo[key]
        return total

    return calls(_direct_calls(proto.graph, functions, prims), 0)


def _direct_calls(graph: Any, functions: dict[str, Any], prims: dict[str, Any]) -> list[str]:
    """The functions a graph calls by name (`REF::<function>` nodes), once per call site."""
    refs = (node.op_type[5:] for node in graph.node if node.op_type.startswith("REF::"))
    return [ref for ref in refs if ref not in prims and ref in functions]


def _has_cycle(sites: dict[str, list[str]]) -> bool:
    """True when the call graph of the functions (name -> callees) has a cycle (iterative DFS)."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    for root in sites:
        if root in state:
            continue
        stack = [(root, iter(sites[root]))]
        state[root] = 1
        while stack:
            name, callees = stack[-1]
            callee = next(callees, None)
            if callee is None:
                state[name] = 2
                stack.pop()
            elif state.get(callee) == 1:
                return True
            elif callee not in state:
                state[callee] = 1
                stack.append((callee, iter(sites[callee])))
    return False


class GraphBuilder:
    """Walks a decoded ModelProto once and produces the collapsed networkx graph."""

    # Any: protobuf the MINDIR messages are built at run time from a descriptor (graph.schema): untyped
    def __init__(self, proto: Any, *, max_nodes: int = MAX_GRAPH_NODES) -> None:
        self.proto = proto
        self.max_nodes = max_nodes
        self.nodes: list[tuple[str, dict[str, object]]] = []
        self.edges: list[tuple[str, str, dict[str, object]]] = []
        # (producer, consumer) -> outputs of a multi-output producer the consumer reads: a DiGraph keeps
        # one edge per pair, so a * b from one Split would look like a * a without it
        self.tuple_reads: dict[tuple[str, str], set[int]] = {}
        self.prims = {text(p.name): _primitive(p) for p in proto.primitives}
        self.functions = {text(f.name): f for f in proto.functions}
        self.instances: Counter[str] = Counter()
        self.op_counts: Counter[str] = Counter()
        self.stack: list[str] = []
        self.warnings: list[str] = []
        self._globals: dict[str, Any] | None = None
        self._unknown: Counter[str] = Counter()
        self._truncated = 0
        self._spent = 0  # graph nodes plus expanded call sites, against max_nodes

    # ------------------------------------------------------------------ entry point

    def add_source(self, node_id: str, **attrs: object) -> None:
        """Add a graph input or parameter node (before build)."""
        self.nodes.append((node_id, attrs))

    def build(self, main_env: dict[str, object]) -> OpGraph:
        """Walk the main graph (and every call it makes); `main_env` binds inputs and parameters."""
        main = self.proto.graph
        if expanded_calls_at_least(self.proto, self.prims) > self.max_nodes:
            self._refuse_over_budget()  # an exponential call tree is refused before a node is built
        frame = _Frame(main_env)
        self._walk(main, frame)
        outputs: list[str] = []
        for out in main.output:
            self._collect_ids(self._lookup(text(out.name), frame), outputs)
        self._report()
        g: OpGraph = nx.DiGraph(outputs=list(dict.fromkeys(outputs)))
        g.add_nodes_from(self.nodes)
        g.add_edges_from(self.edges)
        for pair, indices in self.tuple_reads.items():
            if len(indices) > 1:
                g.edges[pair]["out_indices"] = tuple(sorted(indices))
        return g

    def _report(self) -> None:
        if self._unknown:
            listed = ", ".join(text(name) for name in list(self._unknown)[:MAX_LISTED_UNKNOWN])
            self.warnings.append(say("mindir.unknown-names", n=len(self._unknown), listed=listed))
        if self._truncated:
            self.warnings.append(say("mindir.not-inlined", n=self._truncated, depth=MAX_CALL_DEPTH))

    # ------------------------------------------------------------------ graph walking

    def _walk(self, graph: Any, frame: _Frame) -> None:
        env = frame.env
        for node in graph.node:
            op_type = node.op_type
            name = node.name
            if op_type == "Constant":
                value = _constant_value(node)
                env[name] = MONAD if value is MONAD else _Const(value)
                if frame.first:
                    self.op_counts["Constant"] += 1
                continue
            if op_type.startswith("REF::"):
                ref = op_type[5:]
                prim = self.prims.get(ref)
                if prim is None:
                    if frame.first:
                        self.op_counts["Call"] += 1
                    env[name] = self._call_ref(ref, node, frame)
                    continue
            else:
                prim = Primitive(op_type, {}, 0, "")
            if frame.first:
                self.op_counts[prim.op] += 1
            handler = self._PLUMBING.get(prim.op)
            env[name] = handler(self, node, frame) if handler else self._add_op(node, prim, frame)
            if node.output and node.output[0] != name:
                env[node.output[0]] = env[name]

    def _lookup(self, name: str, frame: _Frame) -> Any:
        f: _Frame | None = frame
        while f is not None:
            ref = f.env.get(name)
            if ref is not None:
                return ref
            f = f.parent
        ref = self._global_constants().get(name)
        if ref is not None:
            return ref
        if name in self.functions:
            return _FuncRef(name)
        self._unknown[name] += 1
        return MONAD

    def _global_constants(self) -> dict[str, Any]:
        """Constants of every graph by name (built on the first cross-graph reference)."""
        if self._globals is None:
            table: dict[str, Any] = {}
            for graph in [self.proto.graph, *self.proto.functions]:
                for node in graph.node:
                    if node.op_type == "Constant" and node.name not in table:
                        value = _constant_value(node)
                        table[node.name] = MONAD if value is MONAD else _Const(value)
            self._globals = table
        return self._globals

    # ------------------------------------------------------------------ compute ops

    def _add_op(self, node: Any, prim: Primitive, frame: _Frame) -> str:
        nid = node.name + frame.suffix
        names = ARG_NAMES.get(prim.op)
        args: dict[str, Any] = {}
        for i, inp in enumerate(node.input):
            self._connect(self._lookup(inp, frame), nid, i, args, names)
        if names and prim.attrs:
            for arg, attr in ATTR_FALLBACK.get(prim.op, {}).items():
                if arg not in args and attr in prim.attrs:
                    args[arg] = prim.attrs[attr]
        if prim.op == "Cast" and isinstance(args.get("dst_type"), int):
            args["dst_dtype"] = type_id_name(args["dst_type"])
        self._emit(nid, node, "op", prim.op, prim, frame, args)
        return nid

    def _emit(
        self, nid: str, node: Any, kind: str, op: str, prim: Primitive, frame: _Frame, args: dict[str, Any]
    ) -> dict[str, Any]:
        """Record one graph node with the attributes documented in graph.model."""
        types = output_types(node)
        dtype, shape = types[0] if types else (None, None)
        data: dict[str, object] = {
            "kind": kind,
            "op": op,
            "name": node.name,
            "scope": text(node.domain),
            "dtype": dtype,
            "shape": shape,
            "attrs": prim.attrs,
            "args": args,
            "instance": prim.instance,
        }
        if len(types) > 1:
            data["out_types"] = tuple(types)
        if frame.function is not None:
            data["function"] = frame.function
            data["call_site"] = frame.call_site
            data["role"] = frame.role
        self.nodes.append((nid, data))
        self._charge()
        return data

    def _charge(self) -> None:
        """Count one more node or expanded call against the budget; over it, refuse the graph."""
        self._spent += 1
        if self._spent > self.max_nodes:
            self._refuse_over_budget()

    def _refuse_over_budget(self) -> None:
        raise GraphBudgetError(
            say("mindir.node-budget", limit=self.max_nodes),
            node_budget=True,
        )

    def _connect(self, ref: Any, nid: str, index: int, args: dict[str, Any], names: Any) -> None:
        kind: type[object] = ref.__class__
        if kind is str:
            self.edges.append((ref, nid, {"index": index, "out_index": None}))
        elif kind is tuple:
            self.edges.append((ref[0], nid, {"index": index, "out_index": ref[1]}))
            self.tuple_reads.setdefault((ref[0], nid), set()).add(ref[1])
        elif kind is _Const:
            args[names[index] if names and index < len(names) else f"arg{index}"] = ref.value
        elif kind is _TupleRef:
            for item in ref.items:
                self._connect(item, nid, index, args, names)
        elif kind is _AltRef:
            for option in ref.options:
                self._connect(option, nid, index, args, names)

    def _collect_ids(self, ref: Any, out: list[str]) -> None:
        kind: type[object] = ref.__class__
        if kind is str:
            out.append(ref)
        elif kind is tuple:
            out.append(ref[0])
        elif kind in (_TupleRef, _AltRef):
            for item in ref.items if kind is _TupleRef else ref.options:
                self._collect_ids(item, out)

    # ------------------------------------------------------------------ plumbing

    def _first_input(self, node: Any, frame: _Frame) -> Any:
        return self._lookup(node.input[0], frame) if node.input else MONAD

    def _drop(self, node: Any, frame: _Frame) -> Any:
        return MONAD

    def _make_tuple(self, node: Any, frame: _Frame) -> Any:
        return _TupleRef([self._lookup(i, frame) for i in node.input])

    def _tuple_get_item(self, node: Any, frame: _Frame) -> Any:
        if len(node.input) < 2:
            return MONAD
        index = self._lookup(node.input[1], frame)
        index = index.value if type(index) is _Const else None
        return _select(self._lookup(node.input[0], frame), index)

    def _partial(self, node: Any, frame: _Frame) -> Any:
        if not node.input:
            return MONAD
        return _PartialRef(
            self._lookup(node.input[0], frame), [self._lookup(i, frame) for i in node.input[1:]]
        )

    def _switch(self, node: Any, frame: _Frame) -> Any:
        """A Switch stays a node (fed by its condition); the branches are picked at the call."""
        inputs = list(node.input)
        nid = node.name + frame.suffix
        if inputs:
            self._connect(self._lookup(inputs[0], frame), nid, 0, {}, None)
        self._emit(nid, node, "op", "Switch", Primitive("Switch", {}, 1, ""), frame, {})
        return _SwitchRef([self._lookup(i, frame) for i in inputs[1:]])

    # the plumbing ops, which collapse into the refs they pass on instead of becoming nodes
    _PLUMBING: ClassVar[dict[str, Callable[[GraphBuilder, Any, _Frame], Any]]] = {
        "Load": _first_input,
        "Depend": _first_input,
        "UpdateState": _drop,
        "MakeTuple": _make_tuple,
        "TupleGetItem": _tuple_get_item,
        "Partial": _partial,
        "Switch": _switch,
    }

    # ------------------------------------------------------------------ calls

    def _call_ref(self, ref: str, node: Any, frame: _Frame) -> Any:
        """A node whose op_type names a function graph or a Switch/Partial result: inline the call."""
        call_args = [self._lookup(i, frame) for i in node.input]
        target = _FuncRef(ref) if ref in self.functions else self._lookup(ref, frame)
        if type(target) is _SwitchRef:
            results = [self._call_value(option, call_args, node, frame) for option in target.options]
            unique = list({id(r): r for r in results}.values())
            return unique[0] if len(unique) == 1 else _AltRef(unique)
        if type(target) in (_FuncRef, _PartialRef):
            return self._call_value(target, call_args, node, frame)
        return self._add_op(node, Primitive(ref, {}, 0, ""), frame)

    def _call_value(self, target: Any, call_args: list[Any], node: Any, frame: _Frame) -> Any:
        if type(target) is _PartialRef:
            return self._call_value(target.fn, [*target.args, *call_args], node, frame)
        if type(target) is _FuncRef:
            return self._inline(target.name, call_args, node, frame)
        return MONAD

    def _inline(self, fn_name: str, args: list[Any], node: Any, frame: _Frame) -> Any:
        call_id = node.name + frame.suffix
        too_big = len(self.stack) >= MAX_CALL_DEPTH
        if fn_name in self.stack or too_big:
            self._truncated += too_big
            return self._opaque_call(fn_name, args, node, frame, recursive=not too_big)
        self._charge()
        fn = self.functions[fn_name]
        k = self.instances[fn_name]
        self.instances[fn_name] += 1
        child = _Frame(
            {},
            parent=frame,
            function=fn_name,
            suffix=frame.suffix + (f"#{k}" if k else ""),
            call_site=call_id,
            role=function_role(fn_name),
            first=frame.first and k == 0,
        )
        for i, value_info in enumerate(fn.input):
            monad = value_info.attr_info.type in (UMONAD, IOMONAD)
            child.env[value_info.name] = MONAD if monad or i >= len(args) else args[i]
        self.stack.append(fn_name)
        try:
            self._walk(fn, child)
        finally:
            self.stack.pop()
        if not fn.output:
            return MONAD
        return self._lookup(fn.output[0].name, child)

    def _opaque_call(self, fn_name: str, args: list[Any], node: Any, frame: _Frame, recursive: bool) -> str:
        nid = node.name + frame.suffix
        for i, ref in enumerate(args):
            self._connect(ref, nid, i, {}, None)
        data = self._emit(nid, node, "call", "Call", Primitive("Call", {}, 0, ""), frame, {})
        data.update(target=fn_name, recursive=recursive)
        return nid


def _select(ref: Any, index: Any) -> Any:
    """Output `index` of a ref (TupleGetItem)."""
    kind: type[object] = ref.__class__
    if kind is str:
        return (ref, index)
    if kind is tuple:
        return ref
    if kind is _TupleRef:
        return ref.items[index] if isinstance(index, int) and 0 <= index < len(ref.items) else MONAD
    if kind is _AltRef:
        return _AltRef([_select(option, index) for option in ref.options])
    return MONAD


def _primitive(proto: Any) -> Primitive:
    attrs = {text(a.name): attribute_value(a) for a in proto.attribute}
    return Primitive(text(proto.op_type), attrs, proto.prim_type, text(proto.instance_name))


def _constant_value(node: Any) -> Any:
    for attr in node.attribute:
        if attr.name == "value":
            return attribute_value(attr)
    return None

"""Plotly views of a MINDIR graph: an overview with fusion chains highlighted and a chain close-up.

Layout is computed apart from plotting (``overview_layout`` / ``chain_layout`` return a GraphLayout;
``layout_figure`` draws one). Nodes are placed in layers by topological depth. Big graphs are
summarised so a figure never holds more than ``max_nodes`` markers: ops are collapsed into groups
by scope prefix (the deepest prefix level that fits), or, when that leaves too few groups, into
consecutive runs of the topological order. Text from the file is HTML-escaped before display.
"""

from __future__ import annotations

import html
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import plotly.graph_objects as go  # pyright: ignore[reportMissingTypeStubs]  # plotly ships no stubs

from core.text import in_lang, say
from graph.model import Chain, MindirModel, OpGraph

MAX_NODES = 2000
MIN_GROUPS = 10  # a scope grouping with fewer groups than this is too coarse to show
# The block view (the overview up to this many units: one per chain, one per other op) lays the graph
# out in rows, one per scope block (e.g. a ResNet Bottleneck) in execution order, every unit labelled
# and read left to right like text.
MAX_UNITS = 800
MAX_BLOCKS = 60  # the deepest scope level that gives at most this many blocks is used
# A longer block continues on the next row. Labels alternate between two lines below their markers, so
# each has two units of width: on a 390 px phone (about 300 px of plot) six units leave a label ~75 px,
# LABEL_CHARS characters of 10 px text; a longer label is wrapped at its word boundaries.
MAX_PER_ROW = 6
LABEL_CHARS = 11
WORD_END = re.compile(r".+?(?:-|\s|(?<=[a-z])(?=[A-Z])|$)")  # a word with the hyphen or space ending it
BLANK = "\u00a0"  # an empty line of a label (a no-break space: plotly keeps the line)
ROW_PX = 84  # the height of a row: its marker and two staggered labels of up to two lines
SMALL_BLOCK = 3  # consecutive blocks of fewer units than this share a row (a stem, a head)
SHOWN_KINDS = frozenset({"op", "input", "call"})
PALETTE = {
    "conv-bn-add-act": "#d62728",
    "conv-bn-act": "#1f77b4",
    "conv-bn": "#17becf",
    "conv-act": "#9467bd",
    "matmul-biasadd-act": "#2ca02c",
    "matmul-biasadd": "#98df8a",
    "matmul-add": "#bcbd22",
    "blocked": "#ff7f0e",
    "input": "#7f7f7f",
    "parameter": "#c7c7c7",
    "other": "#b0b0b0",
    "group": "#8c8c8c",
}


@dataclass
class GraphLayout:
    """Positions and labels of what a figure draws (one entry per marker)."""

    ids: list[str] = field(default_factory=list[str])
    x: list[float] = field(default_factory=list[float])
    y: list[float] = field(default_factory=list[float])
    hover: list[str] = field(default_factory=list[str])
    category: list[str] = field(default_factory=list[str])
    size: list[float] = field(default_factory=list[float])
    edges: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])
    members: list[int] = field(default_factory=list[int])  # graph nodes behind each marker
    note: str = ""  # how the graph was summarised ("" when drawn in full)
    labels: list[str] = field(default_factory=list[str])  # text beside each marker (empty: hover only)
    headers: list[tuple[float, float, str]] = field(
        default_factory=list[tuple[float, float, str]]
    )  # (x, y, text) column titles

    def add(
        self, node_id: str, hover: str, category: str, size: float, members: int = 1, label: str = ""
    ) -> int:
        """Append one marker (position set later) and return its index."""
        self.ids.append(node_id)
        self.hover.append(hover)
        self.category.append(category)
        self.size.append(size)
        self.members.append(members)
        self.labels.append(label)
        return len(self.ids) - 1


# ---------------------------------------------------------------- layout (no plotting)


def depths(g: OpGraph, nodes: list[str]) -> dict[str, int]:
    """Longest-path depth of each node from the graph's sources, restricted to `nodes`."""
    keep = set(nodes)
    sub = g.subgraph(keep)
    depth: dict[str, int] = {}
    for node in nx.topological_sort(sub):
        depth[node] = max((depth[p] + 1 for p in sub.pred[node]), default=0)
    return depth


def chain_membership(chains: list[Chain]) -> dict[str, Chain]:
    """Chain of each node that belongs to one (Casts inside a chain included)."""
    return {n: c for c in chains for n in (*c.nodes, *c.casts)}


def _said(key: str, lang: str, **values: object) -> str:
    """The message `key` with `values` in `lang` (core/messages.py has both languages)."""
    return in_lang(say(key, **values), lang)


def overview_layout(
    model: MindirModel, chains: list[Chain], max_nodes: int = MAX_NODES, lang: str = "en"
) -> GraphLayout:
    """Layered layout of the whole graph, summarised to at most `max_nodes` markers."""
    g = model.graph
    nodes = [n for n, d in g.nodes(data=True) if d.get("kind") in SHOWN_KINDS]
    depth = depths(g, nodes)
    in_chain = chain_membership(chains)
    if len(nodes) <= max_nodes:
        return _full_layout(g, nodes, depth, in_chain, lang)
    groups, how = _groups(g, nodes, depth, max_nodes)
    return _group_layout(g, groups, depth, in_chain, _said(how, lang), len(nodes), lang)


def _full_layout(
    g: OpGraph, nodes: list[str], depth: dict[str, int], in_chain: dict[str, Chain], lang: str
) -> GraphLayout:
    layout = GraphLayout()
    index: dict[str, int] = {}
    for node in nodes:
        data = g.nodes[node]
        chain = in_chain.get(node)
        hover = node_hover(g, node, chain, lang)
        index[node] = layout.add(node, hover, _category(data, chain), 9 if chain else 7)
    # sorted: a subgraph view iterates its node set in hash order, which changes from process to process
    layout.edges = sorted(
        (index[a], index[b]) for a, b in g.subgraph(nodes).edges() if a in index and b in index
    )
    _place(layout, [depth[n] for n in nodes])
    return layout


def _category(data: Mapping[str, Any], chain: Chain | None) -> str:
    if chain is not None:
        return chain.pattern if chain.fusible else "blocked"
    return "input" if data.get("kind") == "input" else "other"


def _groups(
    g: OpGraph, nodes: list[str], depth: dict[str, int], max_nodes: int
) -> tuple[dict[str, list[str]], str]:
    """Collapse nodes into at most `max_nodes` groups: by scope prefix, else by runs of the order."""
    scopes = {n: g.nodes[n].get("scope") or g.nodes[n].get("op", "?") for n in nodes}
    deepest = max(s.count("/") for s in scopes.values())
    best: dict[str, list[str]] | None = None
    for level in range(deepest, 0, -1):
        grouped: dict[str, list[str]] = defaultdict(list)
        for node in nodes:
            grouped["/".join(scopes[node].split("/")[:level])].append(node)
        if len(grouped) <= max_nodes:
            best = grouped
            break
    if best is not None and len(best) >= MIN_GROUPS:
        return dict(best), "view.by-scope"
    ordered = sorted(nodes, key=lambda n: depth[n])
    per_group = -(-len(ordered) // max_nodes)
    runs: dict[str, list[str]] = {}
    for start in range(0, len(ordered), per_group):
        members = ordered[start : start + per_group]
        runs[f"{_common_prefix([scopes[m] for m in members])} [{start}:{start + len(members)}]"] = members
    return runs, "view.by-order"


def _common_prefix(scopes: list[str]) -> str:
    parts = [s.split("/") for s in scopes]
    common: list[str] = []
    for segs in zip(*parts, strict=False):
        if len(set(segs)) != 1:
            break
        common.append(segs[0])
    return "/".join(common) or "(mixed scopes)"


def _group_layout(
    g: OpGraph,
    groups: dict[str, list[str]],
    depth: dict[str, int],
    in_chain: dict[str, Chain],
    how: str,
    total: int,
    lang: str = "en",
) -> GraphLayout:
    layout = GraphLayout(note=_said("view.collapsed", lang, total=total, groups=len(groups), how=how))
    owner: dict[str, int] = {}
    levels: list[int] = []
    for name, members in groups.items():
        ops = Counter(g.nodes[m].get("op", "?") for m in members)
        patterns = Counter(in_chain[m].pattern for m in members if m in in_chain)
        top = ", ".join(f"{html.escape(str(op))} x{n}" for op, n in ops.most_common(4))
        hover = (
            f"<b>{html.escape(name)}</b><br>{_said('view.group-ops', lang, n=len(members), top=top)}"
            f"<br>{_said('view.in-chains', lang, n=sum(patterns.values()))}"
        )
        category = patterns.most_common(1)[0][0] if patterns else "group"
        index = layout.add(name, hover, category, 6 + min(14.0, len(members) ** 0.5), len(members))
        for m in members:
            owner[m] = index
        levels.append(min(depth[m] for m in members))
    edges: set[tuple[int, int]] = set()
    for a, b in g.edges():
        ia, ib = owner.get(a), owner.get(b)
        if ia is not None and ib is not None and ia != ib:
            edges.add((ia, ib))
    layout.edges = sorted(edges)
    _place(layout, levels)
    return layout


def _place(layout: GraphLayout, levels: list[int]) -> None:
    """x = position within the layer, y = -layer (dense rank of depth), centred per layer."""
    rank = {d: i for i, d in enumerate(sorted(set(levels)))}
    rows: dict[int, list[int]] = defaultdict(list)
    for i, level in enumerate(levels):
        rows[rank[level]].append(i)
    layout.x = [0.0] * len(levels)
    layout.y = [0.0] * len(levels)
    for row, members in rows.items():
        offset = (len(members) - 1) / 2
        for position, i in enumerate(members):
            layout.x[i] = position - offset
            layout.y[i] = -float(row)


def node_hover(g: OpGraph, node: str, chain: Chain | None = None, lang: str = "en") -> str:
    """Hover text of one node: op, scope, dtype, shape (and its chain), HTML-escaped."""
    data = g.nodes[node]
    shape = data.get("shape")
    lines = [
        f"<b>{html.escape(str(data.get('op', '?')))}</b>",
        _said("view.scope", lang, scope=html.escape(data.get("scope") or "-")),
        f"dtype: {html.escape(str(data.get('dtype')))}",
        f"shape: {list(shape) if shape is not None else '-'}",
    ]
    if chain is not None:
        lines.append(
            _said("view.chain", lang, pattern=chain.pattern)
            + (f" → {html.escape(chain.replaced_by)}" if chain.replaced_by else "")
            + (
                ""
                if chain.fusible
                else _said("view.blocked-paren", lang, reason=_escaped(chain.blocked_reason, lang))
            )
        )
    return "<br>".join(lines)


def _escaped(text: str, lang: str) -> str:
    """A text said in `lang`, HTML-escaped for a figure."""
    return html.escape(in_lang(text, lang))


def chain_layout(model: MindirModel, chain: Chain, lang: str = "en") -> GraphLayout:
    """The chain's nodes (and Casts inside it) with their direct producers and consumers."""
    g = model.graph
    core = [*chain.nodes, *chain.casts]
    around = {p for n in core for p in g.pred[n]} | {s for n in core for s in g.succ[n]}
    nodes = [n for n in g.nodes if n in set(core) | around]
    depth = depths(g, nodes)
    layout = GraphLayout(
        note=_said(
            "view.chain-note", lang, pattern=chain.pattern, ops=len(chain.nodes), casts=len(chain.casts)
        )
    )
    index: dict[str, int] = {}
    for node in nodes:
        data = g.nodes[node]
        mine = chain if node in core else None
        category = _category(data, mine) if data.get("kind") != "parameter" else "parameter"
        index[node] = layout.add(node, node_hover(g, node, mine, lang), category, 16 if mine else 10)
    layout.edges = sorted((index[a], index[b]) for a, b in g.subgraph(nodes).edges())
    _place(layout, [depth[n] for n in nodes])
    return layout


# ---------------------------------------------------------------- block view (chains as units)


@dataclass
class _Unit:
    """What one marker of the block view stands for: a whole chain, or one op outside every chain."""

    nodes: list[str]
    chain: Chain | None
    order: int  # position of its first node in the topological order
    scope: str  # cell scope of its first node (the chain's anchor)


def _cell(scope: str) -> str:
    """The cell part of an op's scope: `Default/conv1-Conv2d/Conv2D-op0` -> `Default/conv1-Conv2d`."""
    return scope.rsplit("/", 1)[0] if "/" in scope else ""


def _units(g: OpGraph, nodes: list[str], chains: list[Chain]) -> list[_Unit]:
    """The view's units in execution order: each chain whole (Casts inside it included), each other op."""
    order = {n: i for i, n in enumerate(nx.topological_sort(g.subgraph(nodes)))}
    in_chain = chain_membership(chains)
    units: list[_Unit] = []
    for chain in chains:
        members = [n for n in (*chain.nodes, *chain.casts) if n in order]
        if members:
            first = min(members, key=order.__getitem__)
            units.append(_Unit(members, chain, order[first], _cell(g.nodes[chain.anchor].get("scope") or "")))
    for node in nodes:
        if node not in in_chain:
            units.append(_Unit([node], None, order[node], _cell(g.nodes[node].get("scope") or "")))
    return sorted(units, key=lambda u: u.order)


def _blocks(units: list[_Unit]) -> list[tuple[str, list[_Unit]]]:
    """Consecutive units grouped by scope prefix at the deepest level giving at most MAX_BLOCKS blocks
    of two units or more on average;
    consecutive small blocks share one row; a block longer than MAX_PER_ROW continues on the next."""
    deepest = max((u.scope.count("/") + 1 for u in units if u.scope), default=1)
    runs: list[tuple[str, list[_Unit]]] = []  # deepest >= 1: the loop sets it at least once
    for level in range(deepest, 0, -1):
        runs = _runs(units, level)
        if len(runs) <= MAX_BLOCKS and len(units) >= 2 * len(runs):
            break  # blocks of a few units each: deeper levels split a block into its cells
    merged: list[tuple[str, list[_Unit]]] = []
    small = False  # whether the last block is a run of small ones
    for key, members in runs:
        if merged and small and len(members) < SMALL_BLOCK:
            keys = [k for k in (merged[-1][0], key) if k]
            merged[-1] = (_common_prefix(keys) if keys else "", merged[-1][1] + members)
        else:
            merged.append((key, members))
            small = len(members) < SMALL_BLOCK
    return [(key, part) for key, members in merged for part in _chunks(members, MAX_PER_ROW)]


def _runs(units: list[_Unit], level: int) -> list[tuple[str, list[_Unit]]]:
    runs: list[tuple[str, list[_Unit]]] = []
    for unit in units:
        key = "/".join(unit.scope.split("/")[:level])
        if runs and runs[-1][0] == key:
            runs[-1][1].append(unit)
        else:
            runs.append((key, [unit]))
    return runs


def _chunks(items: Sequence[_Unit], size: int) -> list[list[_Unit]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def block_layout(model: MindirModel, chains: list[Chain], lang: str = "en") -> GraphLayout:
    """The graph as labelled units in rows: one row per scope block in execution order (a ResNet
    Bottleneck each), left to right in the block; a chain is one unit coloured by its pattern, a blocked
    one orange, labelled "blocked", with its reason in the hover; edges join units that exchange tensors."""
    g = model.graph
    nodes = [n for n, d in g.nodes(data=True) if d.get("kind") in SHOWN_KINDS]
    units = _units(g, nodes, chains)
    blocks = _blocks(units)
    blocked = sum(not c.fusible for c in chains)
    layout = GraphLayout(
        note=_said(
            "view.block-note",
            lang,
            ops=len(nodes),
            units=len(units),
            chains=len(chains),
            blocked=blocked,
            blocks=len(blocks),
        )
    )
    owner: dict[str, int] = {}
    for row, (key, members) in enumerate(blocks):
        layout.headers.append((-0.6, -float(row), html.escape(key.rsplit("/", 1)[-1] or "graph")))
        for position, unit in enumerate(members):
            index = _add_unit(layout, g, unit, lang)
            layout.x.append(float(position))
            layout.y.append(-float(row))
            for node in unit.nodes:
                owner[node] = index
    edges = {(owner[a], owner[b]) for a, b in g.subgraph(nodes).edges() if a in owner and b in owner}
    layout.edges = sorted((a, b) for a, b in edges if a != b)
    return layout


def _add_unit(layout: GraphLayout, g: OpGraph, unit: _Unit, lang: str = "en") -> int:
    chain = unit.chain
    if chain is None:
        node = unit.nodes[0]
        data = g.nodes[node]
        label = _said("view.input", lang) if data.get("kind") == "input" else str(data.get("op", "?"))
        hover = node_hover(g, node, None, lang)
        return layout.add(node, hover, _category(data, None), 9, label=html.escape(label))
    state = _state(chain, lang)
    hover = "<br>".join(
        [
            f"<b>{html.escape(chain.pattern)}</b> ({html.escape(state)})",
            _said("view.ops", lang, ops=html.escape(" → ".join(chain.ops))),
            _said(
                "view.scope",
                lang,
                scope=html.escape(_common_prefix(list(chain.scopes)) if any(chain.scopes) else "-"),
            ),
        ]
        + ([_said("view.replaced-by", lang, op=html.escape(chain.replaced_by))] if chain.replaced_by else [])
        + ([_said("view.casts-inside", lang, n=len(chain.casts))] if chain.casts else [])
    )
    label = chain.pattern if chain.fusible else _said("view.blocked-label", lang, pattern=chain.pattern)
    return layout.add(
        chain.anchor, hover, _category({}, chain), 14, members=len(unit.nodes), label=html.escape(label)
    )


# ---------------------------------------------------------------- plotting


LEGEND_KEYS = {"blocked": "view.legend-blocked", "other": "view.legend-other", "input": "view.input"}


def _legend_name(category: str, lang: str) -> str:
    """A category's legend entry in `lang`: the words translated, a pattern's name (data) as it is."""
    key = LEGEND_KEYS.get(category)
    return html.escape(_said(key, lang) if key else category)


def layout_figure(layout: GraphLayout, title: str, lang: str = "en") -> go.Figure:
    """Draw a GraphLayout: one line trace for edges, one marker trace per category (legend in `lang`)."""
    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    for a, b in layout.edges:
        edge_x += [layout.x[a], layout.x[b], None]
        edge_y += [layout.y[a], layout.y[b], None]
    traces = [
        go.Scatter(
            x=edge_x,
            y=edge_y,
            mode="lines",
            line={"width": 0.6, "color": "#c0c0c0"},
            hoverinfo="skip",
            name=_said("view.legend-edges", lang),
        )
    ]
    by_category: dict[str, list[int]] = defaultdict(list)
    for i, category in enumerate(layout.category):
        by_category[category].append(i)
    labelled = any(layout.labels)
    texts = _staggered(layout) if labelled else layout.labels
    for category, members in sorted(by_category.items()):
        traces.append(
            go.Scatter(
                x=[layout.x[i] for i in members],
                y=[layout.y[i] for i in members],
                mode="markers+text" if labelled else "markers",
                name=_legend_name(category, lang),
                marker={"size": [layout.size[i] for i in members], "color": PALETTE.get(category, "#555555")},
                text=[texts[i] for i in members] if labelled else None,
                textposition="bottom center",
                textfont={"size": 10},
                hovertext=[layout.hover[i] for i in members],
                hoverinfo="text",
            )
        )
    figure = go.Figure(traces)
    for x, y, text in layout.headers:  # block titles, right-aligned left of their row
        figure.add_annotation(  # pyright: ignore[reportUnknownMemberType]  # plotly is untyped
            x=x, y=y, text=f"<b>{text}</b>", showarrow=False, xanchor="right", font={"size": 10}
        )
    subtitle = f"<br><sup>{html.escape(layout.note)}</sup>" if layout.note else ""
    figure.update_layout(  # pyright: ignore[reportUnknownMemberType]  # plotly is untyped
        title={"text": html.escape(title) + subtitle},
        showlegend=True,
        xaxis={"visible": False},
        yaxis={"visible": False},
        hovermode="closest",
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        plot_bgcolor="white",
    )
    return figure


def overview_figure(
    model: MindirModel, chains: list[Chain], max_nodes: int = MAX_NODES, lang: str = "en"
) -> go.Figure:
    """The whole model: up to MAX_UNITS units the labelled block view (a column per scope block, each
    chain one unit coloured by pattern, blocked ones orange), beyond that the layered summary."""
    nodes = sum(1 for _, d in model.graph.nodes(data=True) if d.get("kind") in SHOWN_KINDS)
    chained = sum(len(c.nodes) + len(c.casts) for c in chains)
    if nodes - chained + len(chains) <= MAX_UNITS:
        layout = block_layout(model, chains, lang)
    else:
        layout = overview_layout(model, chains, max_nodes, lang)
    name = model.path.replace("\\", "/").rsplit("/", 1)[-1]
    figure = layout_figure(layout, _said("view.title", lang, name=name, n=len(chains)), lang)
    if layout.headers:  # a row per block: tall enough for all, room on the left for their titles
        rows = 1 - min(layout.y, default=0.0)
        figure.update_layout(  # pyright: ignore[reportUnknownMemberType]  # plotly is untyped
            height=max(300, int(ROW_PX * rows) + 200),
            xaxis={"range": [-2.2, max(layout.x, default=0) + 0.6]},
            yaxis={"range": [min(layout.y, default=0.0) - 0.75, 0.4]},
            # the legend below the graph: beside it, it takes a third of a phone's width from the labels
            legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 0, "yanchor": "top"},
        )
    return figure


def _wrapped(label: str) -> list[str]:
    """A label as lines of at most LABEL_CHARS characters, broken after a hyphen, at a space or between
    the words of a CamelCase name (a single longer word stays whole)."""
    lines: list[str] = []
    for word in WORD_END.findall(label):
        if lines and len(lines[-1]) + len(word.rstrip()) <= LABEL_CHARS:
            lines[-1] += word
        else:
            lines.append(word)
    return [line.strip() for line in lines if line.strip()] or [label]


def _staggered(layout: GraphLayout) -> list[str]:
    """Each label wrapped, and every second unit of a row set a blank line below the lines of its
    neighbours, so two labels side by side never share or touch a line (a row's units are one x unit
    apart). Every label of a row
    gets the same number of lines (blank ones a no-break space): plotly places a text block by its
    line count, so blocks of different heights would not line up line for line."""
    lines = [_wrapped(label) for label in layout.labels]
    depth: dict[tuple[float, int], int] = defaultdict(int)  # (row, parity): the most lines of its labels
    for i, parts in enumerate(lines):
        key = (layout.y[i], int(layout.x[i]) % 2)
        depth[key] = max(depth[key], len(parts))
    texts: list[str] = []
    for i, parts in enumerate(lines):
        row, odd = layout.y[i], int(layout.x[i]) % 2
        above = depth[(row, 0)] + 1 if odd else 0  # a blank line between the two, or they read as one
        below = depth[(row, 0)] + 1 + depth[(row, 1)] - above - len(parts)
        texts.append("<br>".join([BLANK] * above + parts + [BLANK] * below))
    return texts


def _state(chain: Chain, lang: str) -> str:
    """'fusible', or 'blocked: <why>', in `lang` (not yet escaped)."""
    if chain.fusible:
        return _said("view.fusible", lang)
    return _said("view.blocked", lang, reason=in_lang(chain.blocked_reason, lang))


def chain_figure(model: MindirModel, chain: Chain, lang: str = "en") -> go.Figure:
    """One chain with its neighbours; the title says whether it is fusible and why not."""
    state = _state(chain, lang)
    kind = " (depthwise)" if chain.depthwise else ""
    kind += f" → {chain.replaced_by}" if chain.replaced_by else ""
    return layout_figure(chain_layout(model, chain, lang), f"{chain.pattern}{kind}: {state}", lang)

"""Graph views: layered layouts computed apart from plotting, summarised big graphs, chain close-ups."""

from __future__ import annotations

import sys
from dataclasses import replace
from functools import cache
from pathlib import Path

import plotly.graph_objects as go
import pytest

import graph
from graph import view
from graph.model import MindirModel

FIXTURES = Path(__file__).parent / "fixtures" / "mindir"
sys.path.insert(0, str(FIXTURES))
from mindir_synthetic import synthetic_model  # noqa: E402


@cache
def load(name: str) -> MindirModel:
    return graph.load_mindir(FIXTURES / f"{name}.mindir")


@cache
def synthetic(blocks: int) -> MindirModel:
    from graph.loader import model_from_proto

    return model_from_proto(synthetic_model(blocks), Path("synthetic.mindir"))


def test_small_graph_is_drawn_in_full_with_chains_coloured():
    model = load("resnet50_noweights")
    chains = graph.find_chains(model)
    layout = view.overview_layout(model, chains)
    shown = [n for n, d in model.graph.nodes(data=True) if d["kind"] in ("op", "input")]
    assert sorted(layout.ids) == sorted(shown) and layout.note == ""
    category = dict(zip(layout.ids, layout.category, strict=True))
    assert category[chains[0].anchor] == "conv-bn-act"
    assert category[model.op_nodes("MaxPool")[0]] == "other"
    assert sum(c == "conv-bn-add-act" for c in layout.category) == 16 * 4
    assert len(layout.edges) == model.graph.subgraph(shown).number_of_edges()


def test_layers_follow_topological_depth():
    model = load("conv_bn_relu_eval")
    layout = view.overview_layout(model, graph.find_chains(model))
    y = dict(zip(layout.ids, layout.y, strict=True))
    conv, bn, relu = (model.op_nodes(op)[0] for op in ("Conv2D", "BatchNorm", "ReLU"))
    assert y[conv] > y[bn] > y[relu]  # deeper layers are drawn lower
    for a, b in layout.edges:
        assert layout.y[a] > layout.y[b]


def test_hover_shows_scope_dtype_shape_and_escapes_file_text():
    model = load("conv_bn_relu_eval")
    conv = model.op_nodes("Conv2D")[0]
    text = view.node_hover(model.graph, conv)
    assert "Default/conv-Conv2d/Conv2D-op0" in text and "float32" in text and "[1, 8, 16, 16]" in text
    model.graph.nodes[conv]["scope"] = "<img src=x onerror=alert(1)>"
    try:
        assert "<img" not in view.node_hover(model.graph, conv)
    finally:
        model.graph.nodes[conv]["scope"] = "Default/conv-Conv2d/Conv2D-op0"


@pytest.mark.slow
def test_big_graph_is_summarised_under_the_marker_limit():
    model = synthetic(1200)  # 3,601 shown nodes
    chains = graph.find_chains(model)
    layout = view.overview_layout(model, chains, max_nodes=1000)
    assert 10 <= len(layout.ids) <= 1000
    assert sum(layout.members) == 3601 and "collapsed" in layout.note
    assert all(0 <= a < len(layout.ids) and 0 <= b < len(layout.ids) for a, b in layout.edges)
    figure = view.overview_figure(model, chains, max_nodes=1000)
    assert sum(len(t.x) for t in figure.data if t.mode == "markers") == len(layout.ids)


def test_big_graph_is_collapsed_by_scope_prefix_when_that_fits():
    model = synthetic(300)  # 901 shown nodes, 300 blocks
    layout = view.overview_layout(model, graph.find_chains(model), max_nodes=400)
    assert "scope prefix" in layout.note
    assert sorted(layout.members, reverse=True)[:2] == [3, 3] and len(layout.ids) == 301  # 300 blocks + input
    assert any(i.startswith("Default/blocks-SequentialCell/299-Block") for i in layout.ids)


@pytest.mark.slow
def test_default_limit_is_about_2000_markers():
    model = synthetic(2500)
    layout = view.overview_layout(model, graph.find_chains(model))
    assert len(layout.ids) <= view.MAX_NODES == 2000


def test_chain_close_up_has_the_chain_and_its_neighbours():
    model = load("resnet50_noweights")
    chain = next(c for c in graph.find_chains(model) if c.pattern == "conv-bn-add-act")
    layout = view.chain_layout(model, chain)
    ids = set(layout.ids)
    assert set(chain.nodes) <= ids
    add = chain.nodes[2]
    assert set(model.graph.pred[add]) <= ids  # the shortcut input of the Add is shown
    category = dict(zip(layout.ids, layout.category, strict=True))
    assert all(category[n] == "conv-bn-add-act" for n in chain.nodes)
    assert "parameter" in layout.category  # weights are neighbours too
    figure = view.chain_figure(model, chain)
    assert isinstance(figure, go.Figure) and "conv-bn-add-act: fusible" in figure.layout.title.text


@pytest.mark.parametrize(
    ("name", "words"),
    [("branch_block", "blocked: Conv2D output has 2 consumers"), ("mobilenet_block", "(depthwise)")],
)
def test_chain_figure_title_says_why(name, words):
    model = load(name)
    chains = graph.find_chains(model)
    chain = next(c for c in chains if not c.fusible or c.depthwise)
    assert words in view.chain_figure(model, chain).layout.title.text


def test_amp_chain_close_up_includes_its_casts():
    model = load("amp_o2")
    chain = next(c for c in graph.find_chains(model) if c.casts)
    layout = view.chain_layout(model, chain)
    assert set(chain.casts) <= set(layout.ids)
    assert "2 casts" in layout.note


def test_layout_is_plain_data_and_figure_only_draws_it():
    layout = view.GraphLayout()
    a = layout.add("a", "A", "conv-bn-act", 9)
    b = layout.add("b", "B", "other", 7)
    layout.edges = [(a, b)]
    layout.x, layout.y = [0.0, 0.0], [0.0, -1.0]
    figure = view.layout_figure(layout, "two <nodes>")
    assert [t.name for t in figure.data] == ["edges", "conv-bn-act", "other"]
    assert list(figure.data[0].x) == [0.0, 0.0, None]
    assert "&lt;nodes&gt;" in figure.layout.title.text


def test_the_legend_is_in_the_report_language_and_pattern_names_stay_data():
    """Issue 31: a Chinese page showed the graph legend as "edges", "blocked", "other"."""
    layout = view.GraphLayout()
    for i, category in enumerate(("conv-bn-act", "blocked", "other", "input")):
        layout.add(str(i), "", category, 9)
    layout.x, layout.y = [0.0] * 4, [0.0, -1.0, -2.0, -3.0]
    figure = view.layout_figure(layout, "t", lang="zh")
    assert [t.name for t in figure.data] == ["连线", "受阻", "conv-bn-act", "输入", "其他算子"]


def test_resnet50_overview_is_a_labelled_block_view_not_one_column():
    """The real ResNet-50: a row per Bottleneck, every chain one labelled unit, every op accounted for."""
    model = load("resnet50_noweights")
    chains = graph.find_chains(model)
    layout = view.block_layout(model, chains)
    shown = [n for n, d in model.graph.nodes(data=True) if d["kind"] in ("op", "input")]
    assert sum(layout.members) == len(shown) == 176 and len(layout.ids) == 57
    assert all(layout.labels) and layout.labels.count("conv-bn-add-act") == 16
    assert "MaxPool" in layout.labels and "matmul-biasadd" in layout.labels
    headers = [text for _, _, text in layout.headers]
    assert [h for h in headers if h.endswith("-Bottleneck")] == [f"{i}-Bottleneck" for i in range(16)]
    assert len(set(layout.x)) >= 4 and len(set(layout.y)) == len(headers) == 18  # not one column
    assert all(0 <= a < len(layout.ids) and 0 <= b < len(layout.ids) for a, b in layout.edges)
    figure = view.overview_figure(model, chains)
    markers = [t for t in figure.data if t.name != "edges"]
    assert all(t.mode == "markers+text" and all(t.text) for t in markers)
    assert "<b>0-Bottleneck</b>" in {note.text for note in figure.layout.annotations}


def test_a_blocked_chain_is_labelled_orange_and_its_hover_says_why():
    model = load("branch_block")
    layout = view.block_layout(model, graph.find_chains(model))
    [i] = [i for i, label in enumerate(layout.labels) if "blocked" in label]
    assert layout.category[i] == "blocked" and layout.labels[i] == "conv-bn-act ✗ blocked"
    assert "Conv2D output has 2 consumers (Add, BatchNorm)" in layout.hover[i]
    # In the ResNet-50 view a blocked chain stands out the same way among the 54.
    resnet = load("resnet50_noweights")
    chains = graph.find_chains(resnet)
    reason = "BatchNorm is in training mode (is_training=True)"
    chains[20] = replace(chains[20], fusible=False, blocked_reason=reason)
    big = view.block_layout(resnet, chains)
    blocked = [i for i, c in enumerate(big.category) if c == "blocked"]
    assert [big.ids[i] for i in blocked] == [chains[20].anchor]
    assert "blocked" in big.labels[blocked[0]] and reason in big.hover[blocked[0]]


@pytest.mark.parametrize("name", ["mobilenet_block", "resblock", "lazy_inline", "resnet50_noweights"])
def test_labels_side_by_side_never_share_or_touch_a_line(name):
    """Issue 31 point 8 (the browser test measures the drawn boxes): in the block view every label of a
    row has the same number of lines, and two units one apart have no text on the same or adjacent
    lines, so their labels cannot overlap however narrow the plot."""
    model = load(name)
    figure = view.overview_figure(model, graph.find_chains(model))
    traces = figure.data[1:]  # after the edges: one marker trace per category
    points = [point for trace in traces for point in zip(trace.x, trace.y, trace.text, strict=True)]
    rows: dict[float, dict[float, list[str]]] = {}
    for x, y, text in points:
        rows.setdefault(y, {})[x] = text.split("<br>")
    for units in rows.values():
        assert len({len(lines) for lines in units.values()}) == 1
        for x, lines in units.items():
            assert all(len(line) <= view.LABEL_CHARS for line in lines if "-" in line or " " in line)
            beside = units.get(x + 1)
            if beside is None:
                continue
            used = {i for i, line in enumerate(lines) if line != view.BLANK}
            near = {j + d for j, line in enumerate(beside) if line != view.BLANK for d in (-1, 0, 1)}
            assert not used & near, (lines, beside)

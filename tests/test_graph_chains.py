"""Fusion-chain walker on real exports: ResNet-50 ground truth, blocked chains, AMP casts, functions."""

from __future__ import annotations

import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

import graph
from graph.chains import OP_GROUPS, PATTERNS, Pattern, is_depthwise
from graph.model import Chain, MindirModel

FIXTURES = Path(__file__).parent / "fixtures" / "mindir"
sys.path.insert(0, str(FIXTURES))
from mindir_synthetic import synthetic_model  # noqa: E402


@cache
def load(name: str) -> MindirModel:
    return graph.load_mindir(FIXTURES / f"{name}.mindir")


@cache
def chains_of(name: str) -> tuple[Chain, ...]:
    return tuple(graph.find_chains(load(name)))


# ---------------------------------------------------------------- ResNet-50 ground truth


def test_resnet50_chain_counts_are_exact():
    counts = graph.chain_counts(list(chains_of("resnet50_noweights")))
    assert counts["conv-bn-act"] == 33
    assert counts["conv-bn-add-act"] == 16
    assert counts["conv-bn"] == 4
    assert counts == {"conv-bn-act": 33, "conv-bn-add-act": 16, "conv-bn": 4, "matmul-biasadd": 1}


def test_resnet50_every_conv_is_in_exactly_one_chain():
    model = load("resnet50_noweights")
    convs = model.op_nodes("Conv2D")
    assert len(convs) == 53
    membership = Counter(n for c in chains_of("resnet50_noweights") for n in c.nodes)
    assert all(membership[c] == 1 for c in convs)
    assert max(membership.values()) == 1  # no node (BN, Add, ReLU) in two chains
    assert sum(1 for c in chains_of("resnet50_noweights") for n in c.nodes if n in convs) == 53


def test_resnet50_add_goes_to_the_main_path_and_the_shortcut_is_conv_bn():
    chains = chains_of("resnet50_noweights")
    shortcuts = [c for c in chains if c.pattern == "conv-bn"]
    residual = [c for c in chains if c.pattern == "conv-bn-add-act"]
    assert all("/dconv-Conv2d/" in c.scopes[0] and "/dbn-BatchNorm2d/" in c.scopes[1] for c in shortcuts)
    assert all(
        "/conv3-Conv2d/" in c.scopes[0] and c.ops == ("Conv2D", "BatchNorm", "Add", "ReLU") for c in residual
    )
    stem = chains[0]
    assert stem.scopes[0] == "Default/conv1-Conv2d/Conv2D-op0" and stem.pattern == "conv-bn-act"
    assert all(c.fusible and not c.depthwise and not c.casts for c in chains)


def test_find_chains_is_deterministic_and_in_graph_order():
    first = graph.find_chains(load("resnet50_noweights"))
    again = graph.find_chains(load("resnet50_noweights"))
    assert first == again
    order = {n: i for i, n in enumerate(load("resnet50_noweights").graph.nodes)}
    anchors = [order[c.anchor] for c in first]
    assert anchors == sorted(anchors)


# ---------------------------------------------------------------- per-fixture expectations


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("conv_bn_relu_eval", {"conv-bn-act": 1}),
        ("resblock", {"conv-bn-act": 1, "conv-bn-add-act": 1}),
        ("mobilenet_block", {"conv-bn-act": 2, "conv-bn": 1}),
        ("mlp_gelu", {"matmul-biasadd-act": 1, "matmul-add": 1}),
        ("dropout_eval", {"matmul-biasadd-act": 1, "matmul-biasadd": 1}),
        ("amp_o2", {"conv-bn-act": 1, "matmul-biasadd": 1}),
        ("fp16_to_float", {"conv-bn-act": 1, "matmul-biasadd": 1}),
        ("if_net", {"conv-bn-act": 1, "conv-act": 1}),
        ("while_net", {"conv-act": 1}),
        ("lazy_inline", {"conv-bn-act": 3}),
        ("topk_int32", {}),
    ],
)
def test_chain_counts_per_fixture(name, expected):
    assert graph.chain_counts(list(chains_of(name))) == expected


def test_gelu_chain_and_matmul_ext_add():
    chains = {c.pattern: c for c in chains_of("mlp_gelu")}
    assert chains["matmul-biasadd-act"].ops == ("MatMul", "BiasAdd", "GeLU")
    assert chains["matmul-add"].ops == ("MatMulExt", "Add")  # ops.matmul(x, w) + b


def test_depthwise_conv_is_named():
    chains = chains_of("mobilenet_block")
    depthwise = [c for c in chains if c.depthwise]
    assert len(depthwise) == 1
    assert depthwise[0].ops == ("Conv2D", "BatchNorm", "ReLU6")
    assert "/depthwise-Conv2d/" in depthwise[0].scopes[0]
    assert [c.depthwise for c in chains_of("resnet50_noweights")].count(True) == 0


def test_is_depthwise_reads_group_and_channels():
    assert is_depthwise({"op": "Conv2D", "attrs": {"group": 32, "out_channel": 32}})
    assert is_depthwise({"op": "Conv2D", "attrs": {"groups": 16}, "shape": (1, 16, 8, 8)})
    assert not is_depthwise(
        {"op": "Conv2D", "attrs": {"group": 2, "out_channel": 32}}
    )  # grouped, not depthwise
    assert not is_depthwise({"op": "Conv2D", "attrs": {"group": 1, "out_channel": 1}})
    assert not is_depthwise({"op": "MatMul", "attrs": {"group": 8, "out_channel": 8}})


# ---------------------------------------------------------------- blocked chains


def test_second_consumer_blocks_the_chain():
    (chain,) = chains_of("branch_block")
    assert chain.pattern == "conv-bn-act" and not chain.fusible
    assert chain.blocked_reason == "Conv2D output has 2 consumers (Add, BatchNorm)"


def test_training_mode_batchnorm_blocks_the_chain():
    (chain,) = chains_of("conv_bn_relu_train")
    assert chain.pattern == "conv-bn-act" and not chain.fusible
    assert "training mode" in chain.blocked_reason
    (eval_chain,) = chains_of("conv_bn_relu_eval")
    assert eval_chain.fusible and eval_chain.blocked_reason == ""


def test_graph_output_in_the_middle_blocks_the_chain():
    model = load("conv_bn_relu_eval")
    conv = model.op_nodes("Conv2D")[0]
    model.graph.graph["outputs"] = [*model.graph.graph["outputs"], conv]
    try:
        (chain,) = graph.find_chains(model)
    finally:
        model.graph.graph["outputs"] = model.graph.graph["outputs"][:-1]
    assert not chain.fusible and "graph output" in chain.blocked_reason


# ---------------------------------------------------------------- AMP casts


def test_casts_are_transparent_but_counted_under_amp():
    chains = {c.pattern: c for c in chains_of("amp_o2")}
    conv_chain = chains["conv-bn-act"]
    assert conv_chain.ops == ("Conv2D", "BatchNorm", "ReLU")
    g = load("amp_o2").graph
    assert [g.nodes[c]["args"]["dst_dtype"] for c in conv_chain.casts] == ["float32", "float16"]
    assert conv_chain.fusible
    assert chains["matmul-biasadd"].casts == ()


def test_without_cast_transparency_the_amp_chain_is_shorter(monkeypatch):
    monkeypatch.setattr("graph.chains.TRANSPARENT", frozenset())
    counts = graph.chain_counts(graph.find_chains(load("amp_o2")))
    assert counts == {"matmul-biasadd": 1}  # Conv2D -> Cast -> BatchNorm no longer matches


# ---------------------------------------------------------------- patterns are data


def test_patterns_are_data_and_a_new_chain_is_one_line():
    extra = (Pattern("conv-sigmoid", ("conv", "act")),)
    chains = graph.find_chains(load("if_net"), patterns=extra)
    assert [(c.pattern, c.ops) for c in chains] == [("conv-sigmoid", ("Conv2D", "Sigmoid"))]
    assert all(set(p.steps) <= set(OP_GROUPS) for p in PATTERNS)


def test_pattern_order_makes_chains_maximal():
    only_short = (Pattern("conv-bn", ("conv", "bn")),)
    short = graph.find_chains(load("resnet50_noweights"), patterns=only_short)
    assert graph.chain_counts(short) == {"conv-bn": 53}
    reordered = (PATTERNS[2], PATTERNS[0], PATTERNS[1])  # conv-bn first: it always wins
    assert graph.chain_counts(graph.find_chains(load("resnet50_noweights"), patterns=reordered)) == {
        "conv-bn": 53
    }


def test_synthetic_graph_chains_scale_with_blocks(tmp_path):
    path = tmp_path / "synthetic.mindir"
    path.write_bytes(synthetic_model(300).SerializeToString())
    chains = graph.find_chains(graph.load_mindir(path))
    assert graph.chain_counts(chains) == {"conv-bn-act": 300}
    assert all(c.fusible for c in chains)

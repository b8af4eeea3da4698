"""DAG patterns (graph.patterns) on real MindSpore 2.10 transformer exports: decomposed attention, norms,
activations and rotary embedding, each with the fused op replacing it; linear chains unchanged."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import graph
from graph.patterns import DAG_PATTERNS, GROUPS, find_dag_chains
from tests.support.scripts import load_script

FIXTURES = Path(__file__).parent / "fixtures"
TRANSFORMER = FIXTURES / "transformer"
MINDIRS = [*sorted((FIXTURES / "mindir").glob("*.mindir")), FIXTURES / "cpu" / "fixture_net_fp32_eval.mindir"]


def load(path: Path) -> graph.MindirModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return graph.load_mindir(path)


def counts(name: str) -> dict[str, int]:
    return graph.chain_counts(graph.find_chains(load(TRANSFORMER / f"{name}.mindir")))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("bert_encoder_eval", {"matmul-add": 8, "matmul-biasadd": 4, "attention": 2, "gelu": 2}),
        ("bert_encoder_train", {"matmul-add": 8, "matmul-biasadd": 4, "attention": 2, "gelu": 2}),
        ("llama_decoder_eval", {"rms-norm": 3, "rotary": 2, "attention": 1, "silu": 1}),
        ("llama_decoder_amp", {"rms-norm": 3, "rotary": 2, "attention": 1, "silu": 1}),
        ("llama_decoder_kvcache", {"rms-norm": 3, "rotary": 2, "attention": 1, "silu": 1}),
        ("gelu_mlp", {"matmul-biasadd": 3, "gelu": 2, "fast-gelu": 1, "layer-norm": 1}),
        ("fused_decoder", {}),
    ],
)
def test_pattern_counts_per_transformer_export(name: str, expected: dict[str, int]) -> None:
    assert counts(name) == expected


def test_every_existing_mindir_keeps_exactly_its_linear_chains() -> None:
    for path in MINDIRS:
        model = load(path)
        assert graph.find_chains(model) == graph.find_chains(model, dag_patterns=()), path.name


def test_attention_ops_and_fused_op_follow_the_export() -> None:
    chains = graph.find_chains(load(TRANSFORMER / "llama_decoder_eval.mindir"))
    (attention,) = [c for c in chains if c.pattern == "attention"]
    assert attention.ops == (
        "MatMulExt",
        "Muls",
        "Add",
        "Softmax",
        "MatMulExt",
    )  # qk, scale, mask, softmax, pv
    assert attention.replaced_by == "FlashAttentionScore" and attention.fusible
    train = graph.find_chains(load(TRANSFORMER / "bert_encoder_train.mindir"))
    # nn.TransformerEncoderLayer scales q (and k) before the first MatMul: the q scale is a member
    assert {c.ops for c in train if c.pattern == "attention"} == {
        ("Div", "MatMulExt", "Softmax", "Dropout", "MatMulExt")
    }
    decode = graph.find_chains(load(TRANSFORMER / "llama_decoder_kvcache.mindir"))
    assert [c.replaced_by for c in decode if c.pattern == "attention"] == ["IncreFlashAttention"]


def test_norm_and_activation_members_and_fused_ops() -> None:
    llama = graph.find_chains(load(TRANSFORMER / "llama_decoder_eval.mindir"))
    norms = [c for c in llama if c.pattern == "rms-norm"]
    assert {c.ops for c in norms} == {("Pow", "ReduceMean", "Add", "Rsqrt", "Mul", "Mul")}
    assert {c.replaced_by for c in llama if c.replaced_by} == {
        "RmsNorm",
        "RotaryPositionEmbedding",
        "FlashAttentionScore",
        "SiLU",
    }
    mlp = {c.pattern: c for c in graph.find_chains(load(TRANSFORMER / "gelu_mlp.mindir")) if c.replaced_by}
    assert mlp["fast-gelu"].ops == ("Muls", "Sigmoid", "Mul") and mlp["fast-gelu"].replaced_by == "FastGelu"
    assert mlp["layer-norm"].ops == (
        "ReduceMean",
        "Sub",
        "Pow",
        "ReduceMean",
        "Add",
        "Sqrt",
        "Div",
        "Mul",
        "Add",
    )
    gelus = sorted(
        len(c.ops) for c in graph.find_chains(load(TRANSFORMER / "gelu_mlp.mindir")) if c.pattern == "gelu"
    )
    assert gelus == [5, 8]  # erf form (5 ops), tanh approximation (8 ops)


def test_amp_casts_are_looked_through_and_never_members() -> None:
    model = load(TRANSFORMER / "llama_decoder_amp.mindir")
    chains = graph.find_chains(model)
    assert model.op_counts["Cast"] == 13  # O2: the input, the weights and the output are cast
    first = next(c for c in chains if c.pattern == "rms-norm")
    pow_node = first.nodes[0]
    # x, the graph input, is reached through its Cast
    assert [model.graph.nodes[p]["op"] for p in model.graph.pred[pow_node]] == ["Cast"]
    assert all("Cast" not in c.ops for c in chains)
    assert graph.chain_counts(chains) == counts("llama_decoder_eval")


def test_no_node_is_in_two_chains() -> None:
    for path in sorted(TRANSFORMER.glob("*.mindir")):
        nodes = [n for c in graph.find_chains(load(path)) for n in (*c.nodes, *c.casts)]
        assert len(nodes) == len(set(nodes)), path.name


def test_patterns_are_data_over_known_groups_with_variants_largest_first() -> None:
    for pattern in DAG_PATTERNS:
        groups = {s.group for s in pattern.slots} - {"any"}
        assert groups <= set(GROUPS), pattern.name
        sizes = [len(v.slots) for v in pattern.variants]
        assert sizes == sorted(sizes, reverse=True)
        assert len(pattern.variants) == 2 ** sum(s.optional for s in pattern.slots)
    attention = next(p for p in DAG_PATTERNS if p.name == "attention")
    smallest = attention.variants[-1]
    assert {s.name for s in smallest.slots} == {"qk", "softmax", "pv"}
    assert smallest.edges == {("qk", "softmax"), ("softmax", "pv")}  # optional slots joined across


def test_a_pattern_subset_finds_only_its_own_kind() -> None:
    model = load(TRANSFORMER / "llama_decoder_eval.mindir")
    only_norms = tuple(p for p in DAG_PATTERNS if p.family == "norm")
    claimed: set[str] = set()
    found = find_dag_chains(model.graph, set(), claimed, only_norms)
    assert [c.pattern for c in found] == ["rms-norm"] * 3
    assert claimed == {n for c in found for n in (*c.nodes, *c.casts)}


def test_chain_dict_names_the_fused_op_only_for_dag_patterns() -> None:
    chains = graph.find_chains(load(TRANSFORMER / "gelu_mlp.mindir"))
    linear = next(c for c in chains if c.pattern == "matmul-biasadd")
    assert "replaced_by" not in linear.to_dict()
    gelu = next(c for c in chains if c.pattern == "gelu")
    assert gelu.to_dict()["replaced_by"] == "GeLU"


def test_hygiene_symptoms_of_a_llama_block() -> None:
    model = load(TRANSFORMER / "llama_decoder_eval.mindir")
    found = {s.kind: s for s in graph.hygiene_symptoms(model, graph.find_chains(model))}
    assert found["mindir-unfused-attention"].values == {
        "patterns": 1,
        "decode": 0,
        "blocked": 0,
        "casts_in_patterns": 0,
    }
    assert found["mindir-unfused-norm"].values == {"patterns": 3, "rms-norm": 3, "blocked": 0}
    assert found["mindir-decomposed-activation"].values == {
        "patterns": 3,
        "rotary": 2,
        "silu": 1,
        "blocked": 0,
    }
    assert "mindir-fusible-chains" not in found  # no linear chain: the MatMuls are in the patterns or bare


def test_fused_ops_named_by_the_patterns_are_what_mindspore_exports() -> None:
    # fused_decoder was exported with ops.rms_norm, ops.flash_attention_score and ops.silu
    ops = load(TRANSFORMER / "fused_decoder.mindir").op_counts
    assert {"RmsNorm", "FlashAttentionScore", "SiLU"} <= set(ops)
    assert {p.fused for p in DAG_PATTERNS} >= {"RmsNorm", "FlashAttentionScore", "SiLU"}


def test_graph_view_colours_patterns_and_names_the_fused_op() -> None:
    from graph import view

    model = load(TRANSFORMER / "llama_decoder_eval.mindir")
    chains = graph.find_chains(model)
    layout = view.overview_layout(model, chains)
    category = dict(zip(layout.ids, layout.category, strict=True))
    hover = dict(zip(layout.ids, layout.hover, strict=True))
    attention = next(c for c in chains if c.pattern == "attention")
    assert {category[n] for n in attention.nodes} == {"attention"}
    assert "chain: attention → FlashAttentionScore" in hover[attention.nodes[3]]
    figure = view.chain_figure(model, attention)
    assert "attention → FlashAttentionScore: fusible" in figure.layout.title.text


def test_every_transformer_fixture_of_the_generator_is_committed_and_small() -> None:
    generate = load_script(TRANSFORMER / "generate.py", "transformer_fixture_generate")
    assert sorted(p.stem for p in TRANSFORMER.glob("*.mindir")) == sorted(generate.FIXTURES)
    assert all((TRANSFORMER / f"{name}.mindir").stat().st_size < 100_000 for name in generate.FIXTURES)
    assert sorted(p.name for p in (TRANSFORMER / "profiles").iterdir()) == sorted(generate.PROFILES)


@pytest.mark.mindspore
@pytest.mark.slow
def test_reexport_gives_the_same_patterns(tmp_path: Path) -> None:
    generate = load_script(TRANSFORMER / "generate.py", "transformer_fixture_generate")
    for name in ("gelu_mlp", "llama_decoder_kvcache"):
        fresh = load(generate.export_one(name, tmp_path / name))
        committed = load(TRANSFORMER / f"{name}.mindir")
        assert fresh.op_counts == committed.op_counts
        assert graph.chain_counts(graph.find_chains(fresh)) == graph.chain_counts(
            graph.find_chains(committed)
        )

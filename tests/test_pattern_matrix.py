"""The generalisation matrix of graph.patterns (issue 29): every written form of every block, exported
with real MindSpore 2.10 by tests/fixtures/patterns/generate.py, gives exactly its blocks; nets holding
none give none."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import graph
from graph.canonical import canonicalise
from tests.support.scripts import load_script

FIXTURES = Path(__file__).parent / "fixtures"
MATRIX = FIXTURES / "patterns"
MINDIR = FIXTURES / "mindir"

# every form net holds its block twice (two layers); the linear chains are the Dense layers around it
LAYERS = {"matmul-biasadd": 2}
ATTENTION = {"matmul-biasadd": 4, "attention": 2}
EXPECTED: dict[str, dict[str, int]] = {
    **{
        name: {**LAYERS, "rms-norm": 2}
        for name in (
            "rms_pow",
            "rms_square",
            "rms_mul",
            "rms_div_sqrt",
            "rms_sum_n",
            "rms_weight_before",
            "rms_no_weight",
        )
    },
    **{
        name: {**LAYERS, "layer-norm": 2}
        for name in ("ln_affine", "ln_no_affine", "ln_rsqrt_mul", "ln_sum_n")
    },
    **{name: {**LAYERS, "gelu": 2} for name in ("gelu_tanh", "gelu_tanh_mul", "gelu_erf", "gelu_erf_mul")},
    "fast_gelu": {**LAYERS, "fast-gelu": 2},
    **{name: {**LAYERS, "silu": 2} for name in ("silu_sigmoid", "silu_exp", "silu_exp_sub", "silu_exp_mul")},
    **{name: {**LAYERS, "softmax": 2} for name in ("softmax_max", "softmax_plain")},
    **{
        name: {**LAYERS, "rotary": 2}
        for name in (
            "rope_half",
            "rope_half_sub",
            "rope_half_mul",
            "rope_interleaved_concat",
            "rope_interleaved_stack",
            "rope_complex",
        )
    },
    **{
        name: ATTENTION
        for name in (
            "attn_scale_after",
            "attn_scale_before",
            "attn_masked_fill",
            "attn_select",
            "attn_dropout",
            "attn_bmm",
            "attn_batchmatmul",
            "attn_written_softmax",
            "attn_transposed_k",
        )
    },
    "mha": {"matmul-add": 8, "attention": 2},
    "encoder_layer": {"matmul-add": 8, "matmul-biasadd": 4, "attention": 2},
    # issue 29's LLaMA-style decoder: 2 blocks, RMSNorm via Mul(x, x) and rsqrt, interleaved rotary
    "llama": {"rms-norm": 4, "rotary": 4, "attention": 2, "silu": 2},
    "mlp": {"matmul-biasadd": 3},
    "lstm_cell": {"matmul-biasadd": 1},
    "lookalike": {"matmul-biasadd": 1},
}
NEGATIVES = [
    MATRIX / "mlp.mindir",
    MATRIX / "lstm_cell.mindir",
    MATRIX / "lookalike.mindir",
    MINDIR / "resnet50_noweights.mindir",
    MINDIR / "resblock.mindir",
    MINDIR / "mobilenet_block.mindir",
]


def load(path: Path) -> graph.MindirModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return graph.load_mindir(path)


def chains(name: str) -> list[graph.Chain]:
    return graph.find_chains(load(MATRIX / f"{name}.mindir"))


def test_the_matrix_names_every_generated_net_and_every_file_is_committed_and_small() -> None:
    generate = load_script(MATRIX / "generate.py", "pattern_matrix_generate")
    assert sorted(EXPECTED) == sorted(generate.FIXTURES)
    assert sorted(p.stem for p in MATRIX.glob("*.mindir")) == sorted(generate.FIXTURES)
    assert all((MATRIX / f"{name}.mindir").stat().st_size < 60_000 for name in generate.FIXTURES)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_form_gives_exactly_its_blocks(name: str) -> None:
    found = chains(name)
    assert graph.chain_counts(found) == EXPECTED[name]
    nodes = [n for c in found for n in (*c.nodes, *c.casts)]
    assert len(nodes) == len(set(nodes))  # each node in one block: each block counted once


@pytest.mark.parametrize("path", NEGATIVES, ids=lambda p: p.stem)
def test_nets_without_a_block_give_no_block(path: Path) -> None:
    assert [c.pattern for c in graph.find_chains(load(path)) if c.replaced_by] == []


@pytest.mark.parametrize(
    ("name", "pattern", "ops"),
    [
        ("rms_mul", "rms-norm", ("Mul", "ReduceMean", "Add", "Rsqrt", "Mul", "Mul")),
        ("rms_div_sqrt", "rms-norm", ("Mul", "ReduceMean", "Add", "Sqrt", "Div", "Mul")),
        ("rms_sum_n", "rms-norm", ("Mul", "SumExt", "Divs", "Add", "Rsqrt", "Mul", "Mul")),
        ("rms_weight_before", "rms-norm", ("Pow", "ReduceMean", "Add", "Rsqrt", "Mul", "Mul")),
        ("gelu_tanh_mul", "gelu", ("Muls", "Mul", "Mul", "Add", "Muls", "Tanh", "Add", "Muls", "Mul")),
        ("silu_exp_sub", "silu", ("Sub", "Exp", "Add", "Div")),
        ("softmax_max", "softmax", ("ArgMaxWithValue", "Sub", "Exp", "SumExt", "Div")),
        ("rope_half_mul", "rotary", ("Muls", "Concat", "Mul", "Mul", "Add")),
        ("rope_interleaved_stack", "rotary", ("Mul", "Mul", "Sub", "Mul", "Mul", "Add", "Stack")),
        ("rope_complex", "rotary", ("Complex", "Mul", "Real", "Imag", "Stack")),
        ("attn_scale_before", "attention", ("Muls", "MatMulExt", "Add", "Softmax", "MatMulExt")),
        ("attn_masked_fill", "attention", ("MatMulExt", "Divs", "MaskedFill", "Softmax", "MatMulExt")),
    ],
)
def test_a_block_claims_every_op_of_its_written_form(name: str, pattern: str, ops: tuple[str, ...]) -> None:
    (first, *_) = [c for c in chains(name) if c.pattern == pattern]
    assert first.ops == ops


def test_a_written_softmax_inside_attention_is_part_of_the_attention() -> None:
    (first, second) = [c for c in chains("attn_written_softmax") if c.pattern == "attention"]
    assert first.ops == (
        "MatMulExt",
        "Muls",
        "Add",
        "ArgMaxWithValue",
        "Sub",
        "Exp",
        "SumExt",
        "Div",
        "MatMulExt",
    )
    assert second.replaced_by == "FlashAttentionScore"


def test_two_outputs_of_one_split_multiplied_are_no_square() -> None:
    g = load(MATRIX / "lookalike.mindir").graph
    split = next(n for n, op in g.nodes(data="op") if op == "Split")
    muls = [m for m in g.succ[split] if g.nodes[m]["op"] == "Mul" and len(g.pred[m]) == 1]
    cross = [m for m in muls if g.edges[split, m].get("out_indices") == (0, 1)]
    squares = [m for m in muls if m not in cross]
    assert len(cross) == 1 and len(squares) == 2  # a * b, then a * a and c * c
    canon = canonicalise(g, [*cross, *squares])
    assert [canon.label.get(m) for m in cross] == [None]
    assert [canon.label.get(m) for m in squares] == ["~Square", "~Square"]


@pytest.mark.mindspore
@pytest.mark.slow
def test_reexport_gives_the_same_blocks(tmp_path: Path) -> None:
    generate = load_script(MATRIX / "generate.py", "pattern_matrix_generate")
    for name in ("llama", "rope_interleaved_concat"):
        fresh = load(generate.export_one(name, tmp_path / name))
        assert fresh.op_counts == load(MATRIX / f"{name}.mindir").op_counts
        assert graph.chain_counts(graph.find_chains(fresh)) == EXPECTED[name]

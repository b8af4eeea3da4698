"""Split kernels against fused ones for the written-out forms of graph.canonical (issue 29): the kernel
runs of diagnosis.analyzers.kernels.SPLIT_PATTERNS for every form whose kernel names tell it, and the
activation / rotary pairs derived from the real BF16 LLM sample (tests/fixtures/ascend_llm)."""

from __future__ import annotations

import pytest

import knowledge
from diagnosis.analyzers.kernels import SPLIT_PATTERNS, split_runs
from tests.support.runs import fixture_pair, kinds, one

PATTERN = {p.kind: p for p in SPLIT_PATTERNS}


def runs(kind: str, types: list[str]) -> list[list[str]]:
    """The kernel types of each run of `kind` in `types`."""
    return [[types[i] for i in run] for run in split_runs(types, PATTERN[kind])]


@pytest.mark.parametrize(
    ("kind", "form"),
    [
        ("norm-split", ["Mul", "ReduceMean", "Add", "Rsqrt", "Mul", "Mul"]),  # x * x
        ("norm-split", ["Square", "ReduceMean", "Add", "Sqrt", "RealDiv", "Mul"]),  # a / sqrt(b)
        ("norm-split", ["Mul", "ReduceSum", "Divs", "Add", "Rsqrt", "Mul", "Mul"]),  # sum / N
        (
            "norm-split",
            ["ReduceSum", "Divs", "Sub", "Mul", "ReduceSum", "Divs", "Add", "Sqrt", "RealDiv", "Mul", "Add"],
        ),
        ("attention-split", ["BatchMatMulV2", "Muls", "Add", "SoftmaxV2", "BatchMatMulV2"]),
        (
            "attention-split",
            [
                "BatchMatMulV2",
                "Muls",
                "Add",
                "ReduceMax",
                "Sub",
                "Exp",
                "ReduceSum",
                "RealDiv",
                "BatchMatMulV2",
            ],
        ),
        ("attention-split", ["BatchMatMulV2", "Exp", "ReduceSum", "RealDiv", "MaskedFill", "BatchMatMulV2"]),
        ("activation-split", ["Sigmoid", "Mul"]),  # x * sigmoid(x)
        ("activation-split", ["Neg", "Exp", "Adds", "RealDiv"]),  # x / (1 + exp(-x))
        ("activation-split", ["Muls", "Sigmoid", "Mul"]),  # x * sigmoid(1.702 x)
        ("activation-split", ["Muls", "Divs", "Erf", "Adds", "Mul"]),  # erf GeLU
        ("activation-split", ["Muls", "Tanh", "Adds", "Mul"]),  # tanh GeLU from its last Muls
        ("rotary-split", ["StridedSlice", "StridedSlice", "Neg", "ConcatD", "Mul", "Mul", "Add"]),
        (
            "rotary-split",
            ["StridedSlice", "StridedSlice", "Mul", "Mul", "Sub", "Mul", "Mul", "Add", "ConcatD"],
        ),
        ("rotary-split", ["StridedSlice", "StridedSlice", "Mul", "Mul", "Sub", "Mul", "Mul", "Add", "Pack"]),
        ("rotary-split", ["StridedSlice", "StridedSlice", "Complex", "Mul", "Real", "Imag", "Pack"]),
    ],
)
def test_every_written_form_is_one_run(kind: str, form: list[str]) -> None:
    types = ["MatMulV2", *form, "MatMulV2"] if kind != "attention-split" else ["Add", *form, "Add"]
    assert runs(kind, types) == [form]


@pytest.mark.parametrize(
    ("kind", "types"),
    [
        ("norm-split", ["ReduceSum", "Add", "Rsqrt"]),  # a sum not divided by N is no mean
        ("norm-split", ["Mul", "ReduceMean", "MatMulV2", "Rsqrt"]),
        ("attention-split", ["MatMulV2", "Muls", "Exp", "Adds", "RealDiv", "Mul", "MatMulV2"]),  # a SiLU
        ("activation-split", ["Sigmoid", "MatMulV2", "Mul"]),
        ("activation-split", ["Sub", "Exp", "ReduceSum", "RealDiv"]),  # a softmax's Exp
        ("activation-split", ["Exp", "Adds", "RealDiv"]),  # exp(x), not exp(-x)
        ("rotary-split", ["ReduceMean", "Sub", "Pow", "ReduceMean"]),  # a LayerNorm's Sub
        ("rotary-split", ["Neg", "Exp", "Adds", "RealDiv"]),  # a SiLU's Neg
    ],
)
def test_lookalike_kernel_runs_are_no_run(kind: str, types: list[str]) -> None:
    assert runs(kind, types) == []


@pytest.mark.parametrize(
    ("kind", "short", "chain", "kernels"),
    [
        ("activation-split", "act", "Neg>Exp>Adds>RealDiv", 20.0),
        ("rotary-split", "rope", "StridedSlice>StridedSlice>Mul>Mul>Sub>Mul>Mul>Add>ConcatD", 45.0),
    ],
)
def test_fused_against_written_out_on_the_derived_llm_runs(
    kind: str, short: str, chain: str, kernels: float
) -> None:
    comparison, symptoms = fixture_pair(f"ascend_llm/{short}_fused", f"ascend_llm/{short}_split")
    symptom = one(symptoms, kind)
    assert symptom.values["fused_per_step"] == 5.0 and symptom.values["split_kernels_per_step"] == kernels
    assert {row["target_kernels"] for row in symptom.evidence} == {chain}
    found = knowledge.evaluate(list(symptoms), [], {"pair"}, comparison.target.ms_per_step)
    assert found.causes[0].id == "activation-decomposed"
    assert found.causes[0].recoverable_ms_per_step == pytest.approx(symptom.recoverable_ms_per_step)
    quiet = kinds(fixture_pair(f"ascend_llm/{short}_split", f"ascend_llm/{short}_split")[1])
    assert kind not in quiet  # the same written-out form on both runs

"""Fused against split attention (and norms) between two Ascend runs derived from the real BF16 LLM sample
(tests/fixtures/ascend_llm, made by the generate.py beside it from ../shared/samples/ascend)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import knowledge
from core.symptoms import Symptom
from diagnosis.compare import Comparison
from diagnosis.forward import forward_kernels
from tests.support.runs import fixture_pair, fixture_run, kinds, one
from tests.support.scripts import load_script

FIXTURES = Path(__file__).parent / "fixtures"
LLM = FIXTURES / "ascend_llm"
SAMPLE = "../../../shared/samples/ascend/kernel_details_2025_bf16_llm"
generate = load_script(LLM / "generate.py", "ascend_llm_generate")


def pair(baseline: str, target: str) -> tuple[Comparison, tuple[Symptom, ...]]:
    return fixture_pair(baseline, target)


def _kernels(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("folder", ["fused_infer", "split_infer", "norm_fused", "norm_split"])
def test_generator_rewrites_the_committed_folders_byte_for_byte(folder: str) -> None:
    assert (LLM / folder / "kernel_details.csv").read_text(encoding="utf-8") == getattr(generate, folder)()


def test_derived_runs_keep_the_sample_and_replace_only_attention() -> None:
    sample = _kernels(generate.SAMPLE)
    fused = _kernels(LLM / "fused_infer" / "kernel_details.csv")
    split = _kernels(LLM / "split_infer" / "kernel_details.csv")
    assert [r for r in sample if not r["Type"].endswith("Grad")] == fused
    assert len(sample) - len(fused) == 4  # the FlashAttentionScoreGrad rows
    fa = [r for r in fused if r["Type"] == "FlashAttentionScore"]
    assert len(fa) == 5
    assert [r["Type"] for r in split].count("SoftmaxV2") == 5
    assert not [r for r in split if r["Type"].startswith("FlashAttention")]
    fa_us = sum(float(r["Duration(us)"]) for r in fa)
    split_us = sum(float(r["Duration(us)"]) for r in split if r["Type"] in ("BatchMatMulV2", "SoftmaxV2"))
    assert split_us == pytest.approx(generate.SPLIT_FACTOR * fa_us, rel=1e-5)
    assert pytest.approx(3.6) == generate.SPLIT_FACTOR
    assert {r["Name"] for r in split} - {r["Name"] for r in fused} == {s[1] for s in generate.SPLIT}


def test_attention_grads_are_backward_and_dropped_from_a_training_run() -> None:
    run = fixture_run(SAMPLE)
    assert run.meta.phase == "train"
    types = set(forward_kernels(run)["op_type"].astype(str))
    assert "FlashAttentionScore" in types and "FlashAttentionScoreGrad" not in types
    assert "FlashAttentionScoreGrad" in set(run.kernels["op_type"].astype(str))


@pytest.mark.parametrize("baseline", [SAMPLE, "ascend_llm/fused_infer"])
@pytest.mark.slow
def test_fused_baseline_against_split_target_gives_positions_and_split_time(baseline: str) -> None:
    _, symptoms = pair(baseline, "ascend_llm/split_infer")
    symptom = one(symptoms, "attention-split")
    assert symptom.values == {
        "fused_per_step": 5.0,
        "split_per_step": 5.0,
        "split_kernels_per_step": 15.0,
        "fused_ms_per_step": 2.0338,
        "split_ms_per_step": 7.3216,
    }
    assert symptom.recoverable_ms_per_step == pytest.approx(7.3216 - 2.0338, abs=1e-3)
    first = symptom.evidence[0]
    assert first["position"] == 1 and first["baseline_op_type"] == "FlashAttentionScore"
    assert first["target_kernels"] == "BatchMatMulV2>SoftmaxV2>BatchMatMulV2"
    assert first["target_us"] == pytest.approx(3.6 * first["baseline_us"], rel=1e-3)


@pytest.mark.parametrize(
    ("baseline", "target"),
    [
        (SAMPLE, "ascend_llm/fused_infer"),  # both fused
        ("ascend_llm/split_infer", "ascend_llm/fused_infer"),  # the target is the fused one
        ("ascend_llm/split_infer", "ascend_llm/split_infer"),  # split on both: a shared trait
        ("cpu/infer_fp32_graph", "cpu/infer_fp32_graph_repeat"),  # CPU never fuses
    ],
)
@pytest.mark.slow
def test_attention_split_stays_quiet(baseline: str, target: str) -> None:
    assert "attention-split" not in kinds(pair(baseline, target)[1])


def test_the_issue_pair_now_names_attention_not_fused() -> None:
    comparison, symptoms = pair(SAMPLE, "ascend_llm/split_infer")
    found = knowledge.evaluate(list(symptoms), [], {"pair"}, comparison.target.ms_per_step)
    top = found.causes[0]
    assert top.id == "attention-not-fused"
    assert top.recoverable_ms_per_step == pytest.approx(5.288, abs=1e-3)


def test_norm_runs_are_found_in_launch_order() -> None:
    from diagnosis.analyzers.kernels import SPLIT_PATTERNS, split_runs

    norm = next(p for p in SPLIT_PATTERNS if p.kind == "norm-split")
    rms = ["Add", "Pow", "ReduceMean", "Add", "Rsqrt", "Mul", "Mul", "FlashAttentionScore"]
    assert split_runs(rms, norm) == [[1, 2, 3, 4, 5, 6]]  # the residual Add before is not part of it
    layer = [
        "MatMul",
        "ReduceMean",
        "Sub",
        "Pow",
        "ReduceMean",
        "Add",
        "Sqrt",
        "RealDiv",
        "Mul",
        "Add",
        "MatMul",
    ]
    assert split_runs(layer, norm) == [list(range(1, 10))]
    assert split_runs(["ReduceMean", "MatMul", "Rsqrt"], norm) == []  # a MatMul between: not a norm


def test_fused_norm_against_written_out_norm() -> None:
    comparison, symptoms = pair("ascend_llm/norm_fused", "ascend_llm/norm_split")
    symptom = one(symptoms, "norm-split")
    assert symptom.values["fused_per_step"] == 5.0 and symptom.values["split_kernels_per_step"] == 30.0
    assert symptom.evidence[0]["target_kernels"] == "Pow>ReduceMean>Add>Rsqrt>Mul>Mul"
    assert "attention-split" not in kinds(symptoms)  # attention is fused on both
    found = knowledge.evaluate(list(symptoms), [], {"pair"}, comparison.target.ms_per_step)
    assert found.causes[0].id == "norm-not-fused"
    assert found.causes[0].recoverable_ms_per_step == pytest.approx(symptom.recoverable_ms_per_step)

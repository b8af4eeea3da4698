"""Export-hygiene symptoms on real exports: each check fires on one fixture and stays quiet on another."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

import graph
from core.symptoms import Symptom
from graph.aicpu import AICPU_RULES, matching_rules
from graph.hygiene import CASTS_PER_COMPUTE_OP

FIXTURES = Path(__file__).parent / "fixtures" / "mindir"


@cache
def symptoms(name: str) -> dict[str, Symptom]:
    model = graph.load_mindir(FIXTURES / f"{name}.mindir")
    found = graph.hygiene_symptoms(model, graph.find_chains(model))
    assert len({s.kind for s in found}) == len(found)
    return {s.kind: s for s in found}


def test_every_symptom_is_a_mindir_symptom_with_numeric_values_and_json_evidence():
    for path in FIXTURES.glob("*.mindir"):
        for symptom in symptoms(path.stem).values():
            assert symptom.source == "mindir"
            assert symptom.kind.startswith("mindir-")
            assert symptom.evidence, symptom.kind
            numbers = symptom.values.values()
            assert all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers)
            assert 0 <= symptom.strength <= 1
            json.dumps(symptom.to_dict())


# ---------------------------------------------------------------- train mode


def test_train_mode_fires_on_training_batchnorm():
    s = symptoms("conv_bn_relu_train")["mindir-train-mode"]
    assert s.values == {"bn_training": 1, "bn_total": 1, "dropout_ops": 0, "graph_training_flag": 1}
    assert [e["op"] for e in s.evidence] == ["BatchNorm"]
    assert s.evidence[0]["scope"] == "Default/bn-BatchNorm2d/BatchNorm-op0" and s.evidence[0]["is_training"]
    assert "set_train(False)" in s.summary


def test_train_mode_fires_on_dropout():
    s = symptoms("dropout_train")["mindir-train-mode"]
    assert s.values["dropout_ops"] == 1 and s.values["bn_training"] == 0
    assert s.evidence[0]["scope"] == "Default/drop-Dropout/Dropout-op0"


@pytest.mark.parametrize("name", ["conv_bn_relu_eval", "dropout_eval", "resnet50_noweights", "lazy_inline"])
def test_train_mode_is_quiet_on_eval_exports(name):
    assert "mindir-train-mode" not in symptoms(name)


# ---------------------------------------------------------------- precision


def test_fp32_compute_on_an_fp32_export():
    s = symptoms("resnet50_noweights")["mindir-fp32-compute"]
    assert s.values == {"compute_ops": 54, "fp32_compute_ops": 54, "casts": 0, "fp32_parameters": 267}
    assert "mindir-low-precision" not in symptoms("resnet50_noweights")


@pytest.mark.parametrize(
    ("name", "dtype", "low_compute", "low_casts"),
    [("amp_o2", "float16", 2, 5), ("amp_o2_bf16", "bfloat16", 2, 5), ("fp16_to_float", "float16", 2, 8)],
)
def test_low_precision_on_amp_and_to_float_exports(name, dtype, low_compute, low_casts):
    found = symptoms(name)
    assert "mindir-fp32-compute" not in found
    s = found["mindir-low-precision"]
    assert s.values["low_precision_compute_ops"] == low_compute
    assert s.values["casts_to_low_precision"] == low_casts
    assert s.values[f"{dtype}_compute_ops"] == low_compute
    assert dtype in s.summary


def test_precision_check_is_quiet_without_conv_or_matmul():
    found = symptoms("topk_int32")
    assert "mindir-fp32-compute" not in found and "mindir-low-precision" not in found


def test_a_cast_out_of_float64_does_not_make_a_graph_low_precision():
    found = symptoms("float64_input")
    assert found["mindir-fp32-compute"].values["casts"] == 1
    assert "mindir-low-precision" not in found


# ---------------------------------------------------------------- inputs


def test_dynamic_input():
    s = symptoms("dynamic_batch")["mindir-dynamic-input"]
    assert s.values == {"dynamic_inputs": 1, "dynamic_dims": 1, "inputs": 1}
    assert s.evidence == ({"input": "x", "dtype": "float32", "shape": [-1, 3, 16, 16]},)
    assert "mindir-dynamic-input" not in symptoms("conv_bn_relu_eval")


def test_float64_input():
    s = symptoms("float64_input")["mindir-float64-input"]
    assert s.values == {"float64_inputs": 1, "inputs": 1}
    assert s.evidence[0]["dtype"] == "float64"
    assert "mindir-float64-input" not in symptoms("conv_bn_relu_eval")
    assert "mindir-float64-input" not in symptoms("topk_int32")  # int32 input


# ---------------------------------------------------------------- casts


def test_cast_ops_fire_when_casts_outnumber_compute_ops():
    s = symptoms("amp_o2")["mindir-cast-ops"]
    assert s.values == {"casts": 7, "compute_ops": 2, "casts_per_compute_op": 3.5}
    assert s.values["casts_per_compute_op"] > CASTS_PER_COMPUTE_OP
    assert len(s.evidence) == 7 and {e["dst_dtype"] for e in s.evidence} == {"float16", "float32"}
    assert symptoms("fp16_to_float")["mindir-cast-ops"].values["casts"] == 8


@pytest.mark.parametrize("name", ["float64_input", "resnet50_noweights"])
def test_cast_ops_quiet_with_few_or_no_casts(name):
    assert "mindir-cast-ops" not in symptoms(name)  # 1 cast per MatMul; 0 casts


# ---------------------------------------------------------------- AI CPU


def test_aicpu_risk_on_integer_topk():
    s = symptoms("topk_int32")["mindir-aicpu-risk"]
    assert s.values == {"aicpu_risk_ops": 1, "documented": 1, "heuristic": 0}
    assert s.evidence[0]["op"] == "TopK" and s.evidence[0]["input_dtypes"] == ["int32"]
    assert "TopK" in s.evidence[0]["rule"] and s.strength == 0.8


def test_aicpu_risk_heuristic_on_float64_compute():
    s = symptoms("float64_compute")["mindir-aicpu-risk"]
    assert s.values == {"aicpu_risk_ops": 1, "documented": 0, "heuristic": 1}
    assert s.evidence[0]["op"] == "Mul" and s.evidence[0]["output_dtypes"] == ["float64"]
    assert s.strength == 0.4


@pytest.mark.parametrize("name", ["resnet50_noweights", "amp_o2", "float64_input"])
def test_aicpu_risk_quiet_on_supported_dtypes(name):
    assert "mindir-aicpu-risk" not in symptoms(name)  # float64_input: its only float64 op is the Cast out


def test_aicpu_table_is_data_with_sources():
    assert all(rule.source and rule.confidence in ("documented", "heuristic") for rule in AICPU_RULES)
    assert [r.op for r in matching_rules("Cast", ["int32"], ["uint64"])] == ["Cast"]
    assert matching_rules("Cast", ["uint64"], ["int32"]) == []  # the rule looks at the output only
    assert [r.op for r in matching_rules("Mul", ["int16", "int16"], ["int16"])] == ["Mul"]
    assert matching_rules("Mul", ["float32"], ["float32"]) == []
    assert matching_rules("Cast", ["float64"], ["float32"]) == []  # excluded from the "*" rule


# ---------------------------------------------------------------- chains


def test_fusible_chains_values_are_counts_by_pattern():
    s = symptoms("resnet50_noweights")["mindir-fusible-chains"]
    assert s.values["conv-bn-act"] == 33 and s.values["conv-bn-add-act"] == 16 and s.values["conv-bn"] == 4
    assert s.values["chains"] == 54 and s.values["fusible"] == 54 and s.values["blocked"] == 0
    assert len(s.evidence) == 54 and s.evidence[0]["pattern"] == "conv-bn-act"


def test_fusible_chains_reports_blocked_ones():
    s = symptoms("branch_block")["mindir-fusible-chains"]
    assert s.values["blocked"] == 1 and s.values["fusible"] == 0
    assert "2 consumers" in s.evidence[0]["blocked_reason"]
    assert symptoms("mobilenet_block")["mindir-fusible-chains"].values["depthwise"] == 1


def test_fusible_chains_quiet_without_chains():
    assert "mindir-fusible-chains" not in symptoms("topk_int32")

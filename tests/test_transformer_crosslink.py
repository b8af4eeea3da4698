"""Decomposed transformer patterns cross-linked to kernels, and generation runs split into prefill and
decode: the transformer MINDIR exports joined to real MindSpore 2.10 CPU profiles of the same nets
(tests/fixtures/transformer/profiles, made by the generate.py there)."""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import Path

import pytest

import graph
from diagnosis.compare import prepare
from graph.patterns import FAMILY_OF
from tests.support.runs import fixture_run

TRANSFORMER = Path(__file__).parent / "fixtures" / "transformer"
PAIRS = {"llama_infer_graph": "llama_decoder_eval", "bert_infer_graph": "bert_encoder_eval"}


@cache
def join(profile: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = graph.load_mindir(TRANSFORMER / f"{PAIRS[profile]}.mindir")
    chains = graph.find_chains(model)
    run = fixture_run(f"transformer/profiles/{profile}")
    table, symptoms = graph.crosslink(model, chains, run)
    return chains, table, symptoms, run


@pytest.mark.parametrize("profile", list(PAIRS))
def test_every_pattern_is_joined_by_scope_and_ran_as_separate_kernels(profile: str) -> None:
    chains, table, _, run = join(profile)
    dag = table[table["pattern"].isin(FAMILY_OF.keys())]
    assert len(dag) == sum(bool(c.replaced_by) for c in chains) > 0
    assert set(dag["join"]) == {"scope"}
    # the CPU backend runs every op of a norm, activation or rotary pattern as its own kernel
    assert (dag.loc[dag["pattern"] != "attention", "status"] == "split").all()
    names = {n for cell in dag["separate_kernel_names"] for n in cell.split(";")}
    measured = run.kernels.loc[run.kernels["name"].isin(names), "duration_us"].sum() / run.step_count
    assert dag["separate_us_per_step"].sum() == pytest.approx(measured, rel=1e-3)


@pytest.mark.parametrize("profile", list(PAIRS))
def test_attention_matmuls_run_as_expanded_kernels_without_scope(profile: str) -> None:
    # MindSpore 2.10 CPU expands MatMulExt (and Muls) into `Expand/_MatMulExt/BatchMatMul-opN` kernels that
    # carry no cell scope: the attention's MatMuls cannot be joined by scope, its Softmax can.
    _, table, _, run = join(profile)
    rows = table[table["pattern"] == "attention"]
    assert (rows["status"] == "partly-fused").all()
    assert all("Softmax" in cell for cell in rows["separate_kernel_names"])
    names = set(run.kernels["name"].astype(str))
    assert {"Expand/_MatMulExt/BatchMatMul-op0", "Expand/_MatMulExt/BatchMatMul-op1"} <= names


def test_attention_row_of_the_llama_block() -> None:
    _, table, _, _ = join("llama_infer_graph")
    (row,) = table[table["pattern"] == "attention"].to_dict("records")
    assert row["ops"] == "MatMulExt>Muls>Add>Softmax>MatMulExt"
    assert row["matched_nodes"] == 2  # the mask Add and the Softmax


def test_chains_ran_split_counts_only_the_linear_chains() -> None:
    chains, _, symptoms, _ = join("bert_infer_graph")
    (split,) = [s for s in symptoms if s.kind == "chains-ran-split"]
    assert split.values["chains"] == sum(not c.replaced_by for c in chains) == 12
    _, _, llama_symptoms, _ = join("llama_infer_graph")
    assert not [s for s in llama_symptoms if s.kind == "chains-ran-split"]  # patterns only, no linear chain


# ---------------------------------------------------------------------------- generation: prefill / decode


def test_generation_profile_splits_into_one_prefill_and_four_decode_steps() -> None:
    from diagnosis.analyzers.timing import DECODE_HOST_BUSY, generation_phases, generation_steps

    side = prepare(fixture_run("transformer/profiles/llama_generate_graph"))
    assert generation_steps(side) == ([1], [2, 3, 4, 5])
    (symptom,) = generation_phases(side, "target")
    values = symptom.values
    assert (values["prefill_steps"], values["decode_steps"]) == (1, 4)
    record = side.run.steps.set_index("step")["duration_us"]
    assert values["prefill_ms_per_step"] == pytest.approx(float(record[1]) / 1000, abs=1e-4)
    decode = side.kernels[side.kernels["step"].isin([2, 3, 4, 5])]
    assert values["decode_median_kernel_us"] == pytest.approx(float(decode["duration_us"].median()), abs=1e-2)
    busy_ms = float(decode["duration_us"].sum()) / 4 / 1000
    assert values["decode_gap_ms_per_step"] == pytest.approx(values["decode_ms_per_step"] - busy_ms, abs=1e-3)
    # measured on this CPU: kernels fill just over half of a decode step, so it is not named host-bound
    assert values["decode_host_bound"] == int(values["decode_busy_share"] < DECODE_HOST_BUSY)


@pytest.mark.parametrize(
    "folder",
    [
        "transformer/profiles/llama_infer_graph",  # one phase: the same prompt three times
        "cpu/infer_fp32_graph_dynamic_shapes",  # shapes change, but no attention: not a generation
        "ascend_llm/split_infer",  # one step
    ],
)
def test_runs_that_are_not_generations_have_no_phases(folder: str) -> None:
    from diagnosis.analyzers.timing import generation_steps

    assert generation_steps(prepare(fixture_run(folder))) is None

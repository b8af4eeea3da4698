"""MINDIR <-> profile cross-link on real MindSpore output: the fixture net exported in eval mode
joined to real CPU profiles of the same net (inference, AMP training, PyNative)."""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import Path

import pytest

import graph
from tests.support.runs import cpu_run

MINDIR = Path(__file__).parent / "fixtures" / "cpu" / "fixture_net_fp32_eval.mindir"


@cache
def _model():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = graph.load_mindir(MINDIR)
    return model, graph.find_chains(model)


def _join(scenario: str):
    model, chains = _model()
    table, symptoms = graph.crosslink(model, chains, cpu_run(scenario))
    (split,) = [s for s in symptoms if s.kind == "chains-ran-split"]
    return table, split


def test_exported_net_has_the_profiled_chains():
    _, chains = _model()
    assert graph.chain_counts(chains) == {"conv-bn-act": 3, "matmul-biasadd": 1}


@pytest.mark.parametrize("scenario", ["infer_fp32_graph", "train_fp32_graph", "train_amp_o2_graph"])
def test_graph_mode_profiles_join_every_chain_by_scope(scenario):
    table, split = _join(scenario)
    assert set(table["join"]) == {"scope"}
    assert (table["status"] == "split").all()  # the CPU backend runs BN and ReLU as their own kernels
    assert split.values["approximate"] == 0 and split.values["cpu_run"] == 1
    # the separate BN/ReLU/BiasAdd kernels' time per step, from the profile itself
    run = cpu_run(scenario)
    names = {n for cell in table["separate_kernel_names"] for n in cell.split(";")}
    measured = run.kernels.loc[run.kernels["name"].isin(names), "duration_us"].sum() / run.step_count / 1000
    assert split.values["separate_ms_per_step"] == pytest.approx(measured, rel=1e-3)


def test_pynative_profile_join_is_approximate():
    table, split = _join("infer_fp32_pynative")
    assert set(table["join"]) == {"op-type-order"}
    assert split.values["approximate"] == 1
    assert "approximate" in split.summary

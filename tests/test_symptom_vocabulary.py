"""The symptom vocabulary is one contract: what the analyzers and graph checks emit, and every
value a rule reads, must be registered in core.symptoms.SYMPTOM_KINDS."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import graph
import knowledge
from core.symptoms import SYMPTOM_KINDS
from tests.support.runs import cpu_run

FIXTURES = Path(__file__).parent / "fixtures"
MINDIRS = [
    *sorted((FIXTURES / "mindir").glob("*.mindir")),
    *sorted((FIXTURES / "transformer").glob("*.mindir")),
    FIXTURES / "cpu" / "fixture_net_fp32_eval.mindir",
]


def _graph_symptoms():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in MINDIRS:
            model = graph.load_mindir(path)
            chains = graph.find_chains(model)
            yield from graph.hygiene_symptoms(model, chains)
        model = graph.load_mindir(FIXTURES / "cpu" / "fixture_net_fp32_eval.mindir")
        chains = graph.find_chains(model)
        for scenario in ("infer_fp32_graph", "infer_fp32_pynative", "train_amp_o2_graph"):
            yield from graph.crosslink(model, chains, cpu_run(scenario))[1]


@pytest.mark.slow
def test_graph_symptoms_use_registered_kinds_and_values():
    seen = set()
    for symptom in _graph_symptoms():
        assert symptom.kind in SYMPTOM_KINDS
        assert set(symptom.values) <= set(SYMPTOM_KINDS[symptom.kind].values), symptom.kind
        seen.add(symptom.kind)
    assert {"mindir-fusible-chains", "chains-ran-split", "mindir-train-mode", "mindir-fp32-compute"} <= seen


def _rule_references():
    for rule in knowledge.load_rules():
        for group in ("supports", "contradicts"):
            for signal in getattr(rule, group):
                keys = set(signal.when.keys()) if signal.when is not None else set()
                recoverable = getattr(signal, "recoverable", None)
                if recoverable and recoverable != "symptom":
                    keys.add(recoverable)
                yield rule.id, signal.symptom, keys


@pytest.mark.parametrize(("rule", "kind", "keys"), list(_rule_references()))
def test_rules_read_only_registered_values(rule, kind, keys):
    assert kind in SYMPTOM_KINDS, f"{rule} refers to unknown symptom {kind}"
    assert keys <= set(SYMPTOM_KINDS[kind].values), (
        f"{rule}: {sorted(keys - set(SYMPTOM_KINDS[kind].values))}"
    )

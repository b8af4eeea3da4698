"""The symptom vocabulary is one contract: what the analyzers and graph checks emit, and every
value a rule reads, must be registered in core.symptoms.SYMPTOM_KINDS, which is generated from the kinds
declared beside their emitters (`SymptomValues` subclasses) into core/symptom_kinds.json."""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import diagnosis
import graph
import knowledge
import outputs
from core.messages import MESSAGES
from core.symptoms import SYMPTOM_KINDS, UNSET, Emits, Kind, SymptomValues, Unset
from doctor import vocabulary
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


def _declarations() -> dict[str, tuple[type[SymptomValues], ...]]:
    """Every emitter module's declared kinds, by module name."""
    return {m: k for stage in (diagnosis, graph, outputs) for m, k in stage.symptom_declarations().items()}


def test_the_generated_vocabulary_is_fresh():
    """core/symptom_kinds.json is what the declarations give: run `python -m doctor.vocabulary`."""
    assert vocabulary.VOCABULARY_FILE.read_text(encoding="utf-8") == vocabulary.render()


def test_each_module_emits_exactly_the_kinds_it_declares():
    """`EMITS` is made of the module's declarations, and every declared kind is in the vocabulary."""
    for name, declared in _declarations().items():
        module = importlib.import_module(name)
        assert Emits.of(*declared) == module.EMITS, name
        for kind in declared:
            assert SYMPTOM_KINDS[kind.KIND.id].module == name


def test_declared_messages_exist_in_both_languages():
    for name, declared in _declarations().items():
        for kind in declared:
            assert kind.KIND.messages, f"{name}: {kind.KIND.id} names no message"
            for message in kind.KIND.messages:
                assert {"en", "zh"} <= set(MESSAGES[message]), f"{kind.KIND.id}: {message}"


@dataclass(frozen=True, kw_only=True)
class _Probe(SymptomValues):
    """A kind made up for this test."""

    KIND = Kind("probe", ("pair", "run"), ("step-time-gap",))
    first: int
    not_a_name: int | Unset = field(default=UNSET, metadata={"key": "not-a-name"})
    last: float | Unset | None = UNSET


def test_a_declaration_gives_values_in_its_order_without_unset_fields():
    """`as_values` keeps the declared order, names a key by its metadata and leaves out unset fields."""
    assert _Probe.keys() == ("first", "not-a-name", "last")
    assert _Probe(last=None, first=1).as_values() == {"first": 1, "last": None}
    assert list(_Probe(last=2.0, not_a_name=3, first=1).as_values()) == ["first", "not-a-name", "last"]
    symptom = _Probe(first=1).symptom("summary", "target", 0.5, recoverable_ms_per_step=1.0)
    assert (symptom.kind, symptom.source, symptom.strength) == ("probe", "target", 0.5)
    assert (symptom.values, symptom.recoverable_ms_per_step) == ({"first": 1}, 1.0)
    assert Emits.of(_Probe) == Emits(pair=("probe",), run=("probe",))
    assert _Probe.description() == "A kind made up for this test."

"""Engine semantics on hand-made rules (confidence, contradiction, undecided, recoverable time,
severity, ranking, verdict) and on the packaged rules (nothing wrong, same job twice, serialisation)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.model import Limitation
from core.symptoms import Symptom
from knowledge import evaluate
from knowledge.engine import (
    MATERIAL_SHARE,
    MIN_REPORTED_CONFIDENCE,
    Cause,
    adjust_severity,
    evaluate_rules,
    inference_step_ms,
    rank_key,
)
from knowledge.errors import RuleError
from knowledge.loader import parse_rule
from knowledge.schema import Rule

REPO = Path(__file__).resolve().parent.parent
TEXT = {"en": "text", "zh": "文本"}


def make_rule(rule_id: str = "test-rule", **overrides: Any) -> Rule:
    """A valid rule mapping with `overrides`, parsed by the real loader."""
    raw: dict[str, Any] = {
        "id": rule_id,
        "title": {"en": f"Title {rule_id}", "zh": "标题"},
        "severity": "high",
        "applies_to": ["pair", "single"],
        "supports": [{"symptom": "cast-heavy", "weight": 0.8, "recoverable": "cast_ms_per_step"}],
        "explanation": {"what_it_detects": TEXT, "why_it_matters": TEXT, "how_to_confirm": TEXT},
        "fix": {"code": "net.set_train(False)\n", "language": "python", "verify": "execute", "notes": TEXT},
        "references": [{"title": "ref", "url": "https://example.org"}],
    }
    raw.update(copy.deepcopy(overrides))
    return parse_rule(raw, source=f"{rule_id}.yaml")


def sym(
    kind: str, source: str = "target", strength: float = 1.0, rec: float | None = None, **values: Any
) -> Symptom:
    return Symptom(
        kind, f"{kind} seen", source=source, strength=strength, values=values, recoverable_ms_per_step=rec
    )


def run(rules: list[Rule], symptoms: list[Symptom], limitations: list[Limitation] = (), inputs=("single",)):
    return evaluate_rules(rules, symptoms, list(limitations), set(inputs))


# --- confidence -----------------------------------------------------------------------------------


def test_confidence_is_strength_times_weight() -> None:
    d = run([make_rule()], [sym("cast-heavy", strength=0.5, cast_ms_per_step=2.0)])
    assert d.causes[0].confidence == pytest.approx(0.4)


def test_independent_symptoms_combine_by_noisy_or_and_one_symptom_counts_once() -> None:
    rule = make_rule(
        supports=[
            {"symptom": "cast-heavy", "weight": 0.5},
            {
                "symptom": "cast-heavy",
                "weight": 0.9,
                "when": [{"value": "cast_share", "op": ">=", "threshold": 0.1}],
            },
            {"symptom": "mindir-cast-ops", "weight": 0.5},
        ]
    )
    one = run([rule], [sym("cast-heavy", cast_share=0.2)])
    assert one.causes[0].confidence == pytest.approx(0.9)  # the strongest entry, not 1-(0.5*0.1)
    both = run([rule], [sym("cast-heavy", cast_share=0.2), sym("mindir-cast-ops", source="mindir")])
    assert both.causes[0].confidence == pytest.approx(1 - 0.1 * 0.5)


def test_contradiction_subtracts_and_can_remove_the_cause() -> None:
    rule = make_rule(contradicts=[{"symptom": "shape-mismatch", "weight": 0.3}])
    weakened = run([rule], [sym("cast-heavy"), sym("shape-mismatch", source="pair")])
    assert weakened.causes[0].confidence == pytest.approx(0.8 - 0.3)
    strong = make_rule(contradicts=[{"symptom": "shape-mismatch", "weight": 0.7}])
    gone = run([strong], [sym("cast-heavy"), sym("shape-mismatch", source="pair")])
    assert MIN_REPORTED_CONFIDENCE > 0.8 - 0.7 and gone.causes == []
    assert [e.role for e in weakened.causes[0].evidence] == ["supports", "contradicts"]


def test_baseline_symptoms_never_support() -> None:
    assert run([make_rule()], [sym("cast-heavy", source="baseline")], inputs=("pair",)).causes == []


def test_a_trait_both_runs_share_supports_nothing() -> None:
    shared = [
        sym("cast-heavy", cast_ms_per_step=5.0),
        sym("cast-heavy", source="baseline", cast_ms_per_step=5.0),
    ]
    assert run([make_rule()], shared, inputs=("pair",)).causes == []
    unquantified = make_rule(supports=[{"symptom": "cast-heavy", "weight": 0.8}])
    both = [sym("cast-heavy"), sym("cast-heavy", source="baseline")]
    assert run([unquantified], both, inputs=("pair",)).causes == []


def test_quantified_support_counts_only_the_targets_extra_time() -> None:
    d = run(
        [make_rule()],
        [
            sym("cast-heavy", cast_ms_per_step=10.0),
            sym("cast-heavy", source="baseline", cast_ms_per_step=4.0),
        ],
        inputs=("pair",),
    )
    cause = d.causes[0]
    assert cause.recoverable_ms_per_step == pytest.approx(6.0)
    assert cause.confidence == pytest.approx(0.8 * 6.0 / 10.0)
    assert cause.basis == "differential"
    evidence = cause.evidence[0]
    assert evidence.recoverable_ms_per_step == pytest.approx(6.0)
    assert evidence.baseline_summary == "cast-heavy seen"


def test_unquantified_support_subtracts_the_baseline_only_where_its_condition_holds() -> None:
    rule = make_rule(
        supports=[
            {
                "symptom": "cast-heavy",
                "weight": 1.0,
                "when": [{"value": "cast_share", "op": ">=", "threshold": 0.1}],
            }
        ]
    )
    target = sym("cast-heavy", strength=0.9, cast_share=0.3)
    weaker = run(
        [rule], [target, sym("cast-heavy", source="baseline", strength=0.3, cast_share=0.2)], inputs=("pair",)
    )
    assert weaker.causes[0].confidence == pytest.approx(0.6)
    below = run(
        [rule],
        [target, sym("cast-heavy", source="baseline", strength=0.3, cast_share=0.05)],
        inputs=("pair",),
    )
    assert below.causes[0].confidence == pytest.approx(0.9)


def test_a_lone_input_is_not_subtracted_and_is_labelled_a_finding() -> None:
    d = run([make_rule()], [sym("cast-heavy", cast_ms_per_step=5.0)], inputs=("single",))
    assert d.causes[0].confidence == pytest.approx(0.8)
    assert d.causes[0].basis == "lone"
    assert d.causes[0].evidence[0].basis == "lone"


def test_a_rule_may_not_contradict_with_the_baseline_copy_of_its_own_support() -> None:
    with pytest.raises(RuleError, match="already subtracted by the engine"):
        make_rule(contradicts=[{"symptom": "cast-heavy", "weight": 0.8, "sources": ["baseline"]}])


def test_corroborating_support_alone_is_nothing_but_adds_when_primary_fires() -> None:
    rule = make_rule(
        supports=[
            {"symptom": "host-bound", "weight": 0.6},
            {
                "symptom": "device-idle",
                "weight": 0.5,
                "corroborating": True,
                "recoverable": "free_ms_per_step",
            },
        ]
    )
    assert run([rule], [sym("device-idle", free_ms_per_step=3.0)]).causes == []
    d = run([rule], [sym("host-bound"), sym("device-idle", free_ms_per_step=3.0)])
    assert d.causes[0].confidence == pytest.approx(1 - 0.4 * 0.5)
    assert d.causes[0].recoverable_ms_per_step == pytest.approx(3.0)


def test_strength_outside_unit_interval_is_clamped() -> None:
    d = run([make_rule()], [sym("cast-heavy", strength=7.0)])
    assert d.causes[0].confidence == pytest.approx(0.8)
    assert run([make_rule()], [sym("cast-heavy", strength=float("nan"))]).causes == []


# --- undecided ------------------------------------------------------------------------------------

NEEDS = [{"topic": "dtypes", "reason": {"en": "no dtypes.", "zh": "没有数据类型。"}, "remedy": TEXT}]


def test_missing_data_without_support_is_undecided_with_reason_and_remedy() -> None:
    rule = make_rule(needs=NEEDS)
    lim = Limitation("dtypes", "profiled at Level0", "re-profile")
    d = run([rule], [], [lim, lim])
    assert d.causes == [] and [u.id for u in d.undecided] == ["test-rule"]
    undecided = d.undecided[0]
    assert undecided.text("en") == "Cannot decide, because no dtypes."
    assert undecided.text("zh") == "无法判断，因为没有数据类型。"
    assert undecided.details == ("profiled at Level0",)
    assert d.nothing_found


def test_data_present_and_no_support_is_decided_absent() -> None:
    assert run([make_rule(needs=NEEDS)], [], [Limitation("steps", "no steps")]).undecided == []


def test_support_despite_missing_data_reports_the_cause_with_a_caveat() -> None:
    d = run([make_rule(needs=NEEDS)], [sym("cast-heavy")], [Limitation("dtypes", "Level0")])
    assert d.undecided == [] and d.causes[0].caveats[0].en.endswith("no dtypes.")


def test_contradicting_symptom_answers_the_question() -> None:
    rule = make_rule(needs=NEEDS, contradicts=[{"symptom": "mindir-low-precision", "weight": 0.9}])
    d = run([rule], [sym("mindir-low-precision", source="mindir")], [Limitation("dtypes", "Level0")])
    assert d.undecided == [] and d.causes == []


def test_need_limited_to_some_input_kinds() -> None:
    needs = [{**NEEDS[0], "inputs": ["pair"]}]
    rule = make_rule(needs=needs)
    assert run([rule], [], [Limitation("dtypes", "x")], inputs=("single",)).undecided == []
    assert len(run([rule], [], [Limitation("dtypes", "x")], inputs=("pair",)).undecided) == 1


def test_rule_not_applying_to_the_inputs_is_skipped() -> None:
    rule = make_rule(applies_to=["mindir"], needs=NEEDS)
    d = run([rule], [sym("cast-heavy")], [Limitation("dtypes", "x")], inputs=("pair",))
    assert d.causes == [] and d.undecided == []


# --- recoverable time, severity -------------------------------------------------------------------


def test_recoverable_max_or_sum_and_symptom_estimate() -> None:
    supports = [
        {"symptom": "cast-heavy", "weight": 0.8, "recoverable": "cast_ms_per_step"},
        {"symptom": "float64-input", "weight": 0.8, "recoverable": "symptom", "recoverable_scale": 0.5},
    ]
    symptoms = [sym("cast-heavy", cast_ms_per_step=2.0), sym("float64-input", rec=3.0)]
    maximum = run([make_rule(supports=supports)], symptoms).causes[0]
    assert maximum.recoverable_ms_per_step == pytest.approx(2.0)
    summed = make_rule(supports=supports, recoverable_combine="sum")
    assert run([summed], symptoms).causes[0].recoverable_ms_per_step == pytest.approx(3.5)


@pytest.mark.parametrize("bad", [None, -1.0, 0.0, "3", True])
def test_unusable_recoverable_values_give_no_estimate(bad: Any) -> None:
    cause = run([make_rule()], [sym("cast-heavy", cast_ms_per_step=bad)]).causes[0]
    assert cause.recoverable_ms_per_step is None and cause.expected_benefit_ms is None


def test_expected_benefit_is_confidence_times_recoverable() -> None:
    cause = run([make_rule()], [sym("cast-heavy", strength=0.5, cast_ms_per_step=10.0)]).causes[0]
    assert cause.expected_benefit_ms == pytest.approx(0.4 * 10.0)


@pytest.mark.parametrize(
    ("severity", "share", "expected"),
    [
        ("high", None, "high"),
        ("high", 0.25, "critical"),
        ("critical", 0.9, "critical"),
        ("medium", 0.1, "medium"),
        ("medium", 0.049, "low"),
        ("info", 0.0, "info"),
    ],
)
def test_severity_moves_with_the_recoverable_share(severity: str, share: float | None, expected: str) -> None:
    assert adjust_severity(severity, share) == expected


def test_step_time_prefers_the_pair_gap_then_target_runs() -> None:
    gap = sym("step-time-gap", source="pair", target_ms_per_step=20.0)
    jitter = sym("step-jitter", source="target", p50_ms=5.0)
    assert inference_step_ms([jitter, gap]) == 20.0
    assert inference_step_ms([jitter, sym("step-jitter", source="baseline", p50_ms=9.0)]) == 5.0
    assert inference_step_ms([sym("step-jitter", source="baseline", p50_ms=9.0)]) is None


def test_severity_and_share_follow_the_step_time() -> None:
    symptoms = [
        sym("cast-heavy", cast_ms_per_step=1.0),
        sym("step-time-gap", source="pair", target_ms_per_step=50.0),
    ]
    cause = run([make_rule()], symptoms, inputs=("pair",)).causes[0]
    assert cause.step_share == pytest.approx(0.02) and cause.severity == "medium"
    assert cause.default_severity == "high"


# --- ranking and verdict --------------------------------------------------------------------------


def test_ranking_by_benefit_then_unquantified_by_severity_then_confidence() -> None:
    rules = [
        make_rule(
            "big", supports=[{"symptom": "cast-heavy", "weight": 0.6, "recoverable": "cast_ms_per_step"}]
        ),
        make_rule("small", supports=[{"symptom": "host-bound", "weight": 0.9, "recoverable": "symptom"}]),
        make_rule("unq-high", supports=[{"symptom": "memory-growth", "weight": 0.7}]),
        make_rule("unq-crit", severity="critical", supports=[{"symptom": "step-drift", "weight": 0.6}]),
        make_rule("unq-high2", supports=[{"symptom": "memory-growth", "weight": 0.9}]),
        make_rule(
            "weak", supports=[{"symptom": "sync-heavy", "weight": 0.3, "recoverable": "sync_ms_per_step"}]
        ),
    ]
    symptoms = [
        sym("cast-heavy", cast_ms_per_step=10.0),
        sym("host-bound", rec=2.0),
        sym("memory-growth"),
        sym("step-drift"),
        sym("sync-heavy", sync_ms_per_step=100.0),
    ]
    d = run(rules, symptoms)
    assert [c.id for c in d.causes] == ["big", "small", "unq-crit", "unq-high2", "unq-high", "weak"]
    assert not d.causes[-1].significant  # 0.3 x 100 ms ranks after every significant cause


def test_rank_key_is_deterministic_on_ties() -> None:
    rules = [make_rule("b-rule"), make_rule("a-rule")]
    d = run(rules, [sym("cast-heavy", cast_ms_per_step=1.0)])
    assert [c.id for c in d.causes] == ["a-rule", "b-rule"]
    assert sorted(d.causes, key=rank_key) == d.causes


def test_nothing_found_when_only_weak_or_minor_causes() -> None:
    low = make_rule("low-sev", severity="low")
    weak = make_rule("weak", supports=[{"symptom": "memory-growth", "weight": 0.4}])
    d = run([low, weak], [sym("cast-heavy"), sym("memory-growth")])
    assert len(d.causes) == 2 and d.nothing_found
    assert d.verdict("en").startswith("Nothing significant found")
    assert d.verdict("zh").startswith("未发现显著问题")
    found = run([make_rule()], [sym("cast-heavy")], inputs=("pair",))
    assert not found.nothing_found and found.verdict("en").startswith("Significant causes found")
    assert found.status == "problem"


def test_a_lone_finding_is_a_problem_only_when_it_is_a_material_share_of_the_step() -> None:
    step = sym("step-jitter", p50_ms=100.0)
    unmeasured = run([make_rule()], [sym("cast-heavy")])
    assert unmeasured.status == "findings" and not unmeasured.nothing_found
    assert unmeasured.verdict("en").startswith("Findings of the input on its own")
    small = run([make_rule()], [sym("cast-heavy", cast_ms_per_step=MATERIAL_SHARE * 100.0 - 1.0), step])
    assert small.causes[0].significant and small.status == "findings"
    large = run([make_rule()], [sym("cast-heavy", cast_ms_per_step=MATERIAL_SHARE * 100.0 + 1.0), step])
    assert large.status == "problem"


def test_displayed_severity_is_capped_by_confidence_and_unquantified_without_a_share() -> None:
    weak = run([make_rule(severity="critical")], [sym("cast-heavy", strength=0.5)])
    assert weak.causes[0].confidence < 0.5 and weak.causes[0].severity == "low"
    assert weak.causes[0].severity_label == "unquantified"
    measured = run(
        [make_rule(severity="critical")],
        [sym("cast-heavy", cast_ms_per_step=1.0), sym("step-jitter", p50_ms=2.0)],
    )
    assert measured.causes[0].severity_label == "critical"


def test_a_root_cause_takes_the_symptom_causes_it_explains_as_evidence() -> None:
    root = make_rule(
        "root",
        supports=[{"symptom": "execution-mode-mismatch", "weight": 0.9}],
        explains=["step-jitter", "step-time-gap"],
    )
    jitter = make_rule(
        "jitter",
        severity="medium",
        supports=[{"symptom": "step-jitter", "weight": 0.8, "recoverable": "symptom"}],
    )
    symptoms = [
        sym("execution-mode-mismatch", source="pair"),
        sym("step-jitter", rec=20.0, p50_ms=50.0),
        sym("step-time-gap", source="pair"),
    ]
    d = run([root, jitter], symptoms, inputs=("pair",))
    assert [c.id for c in d.causes] == ["root"]
    cause = d.causes[0]
    assert cause.absorbed == ("jitter",)
    assert [(e.symptom, e.role) for e in cause.evidence] == [
        ("execution-mode-mismatch", "supports"),
        ("step-jitter", "explains"),
        ("step-time-gap", "explains"),
    ]
    assert cause.recoverable_ms_per_step == pytest.approx(20.0)
    # the absorbed time quantifies the root: 20 of the 50 ms step raises its severity one level
    assert cause.step_share == pytest.approx(0.4) and cause.severity == "critical"
    alone = run([root, jitter], symptoms[1:], inputs=("pair",))
    assert [c.id for c in alone.causes] == ["jitter"]


# --- inputs and errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("inputs", [set(), {"pairs"}, {"pair", "video"}])
def test_unknown_or_empty_input_kinds_are_rejected(inputs: set[str]) -> None:
    with pytest.raises(ValueError, match="input kinds"):
        evaluate([], [], inputs)


def test_inputs_given_as_a_string_are_rejected() -> None:
    with pytest.raises(TypeError):
        evaluate([], [], "pair")


def test_unknown_symptom_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown symptom kind 'made-up'"):
        evaluate([Symptom("made-up", "x")], [], {"pair"})


# --- packaged rules -------------------------------------------------------------------------------


@pytest.mark.parametrize("inputs", [{"pair"}, {"single"}, {"mindir"}, {"mindir+profile"}, {"pair", "mindir"}])
def test_no_symptoms_no_limitations_means_nothing_found(inputs: set[str]) -> None:
    d = evaluate([], [], inputs)
    assert d.causes == [] and d.undecided == [] and d.nothing_found


def test_same_job_twice_produces_no_significant_cause() -> None:
    """Two runs of one job: the run analyzers find the same traits on both sides, no pair symptom."""
    per_run = [
        (
            "host-bound",
            dict(tiny_kernel_share=0.8, median_kernel_us=6.0, median_gap_us=40.0, utilisation=0.3),
        ),
        ("device-idle", dict(utilisation=0.3, free_share=0.7, free_ms_per_step=4.0)),
        ("first-step-outlier", dict(first_ms=290.0, median_ms=2.0, ratio=145.0, outlier_steps=1)),
        (
            "step-jitter",
            dict(spread=0.8, p10_ms=1.8, p50_ms=2.0, p90_ms=3.4, p95_ms=4.0, tail_ms=1.4, steps=30),
        ),
        ("cast-heavy", dict(cast_share=0.1, casts_per_step=14, compute_ops_per_step=5, cast_ms_per_step=0.2)),
    ]
    symptoms = [
        sym(kind, source=role, strength=strength, rec=1.0, **values)
        for kind, values in per_run
        for role, strength in (("baseline", 0.8), ("target", 0.75))
    ]
    cpu_limits = [
        Limitation("dtypes", "CPU"),
        Limitation("cores", "CPU"),
        Limitation("profiler-config", "CPU"),
    ]
    d = evaluate(symptoms, cpu_limits, {"pair"})
    assert d.nothing_found, [(c.id, c.confidence, c.severity) for c in d.causes]
    assert not any(c.severity in ("high", "critical") and c.significant for c in d.causes)
    assert {"precision-mismatch", "ai-cpu-fallback", "profiler-config-mismatch"} <= {
        u.id for u in d.undecided
    }


def test_to_dict_is_json_and_bilingual() -> None:
    symptoms = [
        Symptom(
            "train-mode-kernels",
            "BNTrainingUpdate in inference",
            source="target",
            values={"bn_training_kernels": 4, "dropout_kernels": 0, "ms_per_step": 1.5},
            evidence=({"op_type": "BNTrainingUpdate", "count_per_step": 4},),
        )
    ]
    d = evaluate(symptoms, [Limitation("dtypes", "Level0")], {"pair"})
    en, zh = d.to_dict("en"), d.to_dict("zh")
    json.dumps(en, ensure_ascii=False)
    top = en["causes"][0]
    assert top["id"] == "train-mode-at-inference" and top["recoverable_ms_per_step"] == 1.5
    assert top["evidence"][0]["rows"] == [{"op_type": "BNTrainingUpdate", "count_per_step": 4}]
    assert "set_train(False)" in top["fix"]["code"]
    assert zh["causes"][0]["title"] == "网络以训练模式运行（或导出）"
    assert zh["undecided"][0]["text"].startswith("无法判断，因为")
    assert en["undecided"][0]["text"].startswith("Cannot decide, because")
    assert en["nothing_found"] is False and zh["verdict"].startswith("发现显著原因")
    with pytest.raises(ValueError, match="unknown language"):
        d.to_dict("fr")


def test_cause_exposes_fix_code_and_references() -> None:
    d = evaluate([sym("float64-input", ops=[{"op_type": "Cast"}], ms_per_step=0.4)], [], {"single"})
    cause: Cause = d.causes[0]
    assert cause.id == "float64-input" and "astype(np.float32)" in cause.fix_code
    assert cause.references and all(r.url.startswith("https://") for r in cause.references)


@pytest.mark.slow
def test_the_engine_never_imports_mindspore() -> None:
    """Only the fix-verification subprocess may import MindSpore (it costs seconds per process)."""
    code = (
        "import sys, knowledge\n"
        "knowledge.evaluate([], [], {'pair'}); knowledge.catalog_markdown()\n"
        "import knowledge.verify\n"
        "assert 'mindspore' not in sys.modules, 'mindspore imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr

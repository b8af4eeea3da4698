"""Calibration of severity and of the uniform-slowdown detector on both sides of each threshold."""

from __future__ import annotations

import pandas as pd
import pytest

from core.symptoms import Symptom
from diagnosis.analyzers import timing
from diagnosis.compare import prepare
from knowledge import evaluate
from knowledge.engine import NEGLIGIBLE_SHARE, adjust_severity
from tests.support.runs import cpu_run


def test_a_cause_worth_under_one_percent_of_the_step_is_never_more_than_low() -> None:
    assert adjust_severity("critical", NEGLIGIBLE_SHARE * 0.9) == "low"
    assert adjust_severity("critical", NEGLIGIBLE_SHARE * 1.1) == "high"  # the one-level drop below 5 %
    assert adjust_severity("high", None) == "high"


def test_the_measured_step_time_weighs_a_cause_when_no_symptom_carries_it() -> None:
    """A target that is not slower has no step-time-gap; the facade passes the measured step time."""
    change = Symptom("core-change", "4 ops moved core", values={"ops": ["a"], "ms_per_step": 0.37})
    alone = evaluate([change], [], {"pair"})
    assert alone.causes[0].severity_label == "unquantified" and alone.causes[0].significant
    weighed = evaluate([change], [], {"pair"}, step_ms=470.0)
    assert weighed.causes[0].severity == "low" and not weighed.causes[0].significant
    assert weighed.status == "nothing-found"


def _matched(shares: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"baseline_share": shares})


def test_a_small_net_is_judged_by_the_time_its_operators_hold() -> None:
    assert timing._enough_ops(_matched([0.41, 0.31, 0.27]), 3)  # three ops with 99 % of the time
    assert not timing._enough_ops(_matched([0.41, 0.31, 0.10]), 3)  # 82 %: too little to speak for all
    assert not timing._enough_ops(_matched([0.5, 0.45]), 2)
    assert timing._enough_ops(_matched([0.01] * 5), 5)


def test_uniform_strength_is_moderate_at_the_threshold_and_full_at_1_4x() -> None:
    assert timing._uniform_strength(timing.UNIFORM_MIN_RATIO, 0.0) == pytest.approx(0.6)
    assert timing._uniform_strength(1.4, 0.0) == pytest.approx(1.0)
    assert timing._uniform_strength(1.4, timing.UNIFORM_MAX_SPREAD) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("scenario", "varying"),
    [
        ("infer_fp32_graph_contention", True),  # the load starts at step 15 of 30: not one factor
        ("infer_fp32_graph", False),
        ("infer_fp32_graph_repeat", False),
    ],
)
def test_a_slowdown_that_changes_during_the_run_is_not_uniform(scenario: str, varying: bool) -> None:
    assert timing._time_varying(prepare(cpu_run(scenario))) is varying

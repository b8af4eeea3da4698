"""The structured condition language: parsing errors, semantics, missing values, descriptions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledge.conditions import AllOf, AnyOf, Compare, parse_condition
from knowledge.errors import RuleError


def holds(raw: object, values: dict) -> bool:
    return parse_condition(raw, "when").holds(values)


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [(">", 2, True), (">", 1, False), (">=", 1, True), ("<", 0, True), ("<=", 1, True), ("<=", 2, False)],
)
def test_numeric_operators(op: str, value: float, expected: bool) -> None:
    assert holds({"value": "n", "op": op, "threshold": 1}, {"n": value}) is expected


def test_threshold_from_another_value_scaled() -> None:
    cond = {"value": "target", "op": "<", "threshold": {"value": "baseline", "times": 0.25}}
    assert holds(cond, {"target": 7, "baseline": 32})
    assert not holds(cond, {"target": 8, "baseline": 32})
    assert not holds(cond, {"target": 0})  # the reference value is missing


def test_count_of_list_mapping_and_non_collection() -> None:
    cond = {"count": "ops", "op": ">=", "threshold": 2}
    assert holds(cond, {"ops": ["Cast", "Gather"]})
    assert holds(cond, {"ops": {"Cast": 1, "Gather": 2}})
    assert not holds(cond, {"ops": ["Cast"]})
    assert not holds(cond, {"ops": 5})


def test_dotted_path_and_case_insensitive_membership() -> None:
    cond = {"value": "variables.deterministic", "op": "in", "threshold": ["on", "1"]}
    assert holds(cond, {"variables": {"deterministic": " ON "}})
    assert not holds(cond, {"variables": {"deterministic": "OFF"}})
    assert not holds(cond, {"variables": {}})
    assert not holds(cond, {"variables": "deterministic"})


def test_not_in_and_equality() -> None:
    assert holds({"value": "mode", "op": "not-in", "threshold": ["graph"]}, {"mode": "pynative"})
    assert holds({"value": "mode", "op": "==", "threshold": "PyNative"}, {"mode": "pynative"})
    assert holds({"value": "mode", "op": "!=", "threshold": "graph"}, {"mode": "pynative"})
    assert not holds({"value": "mode", "op": "==", "threshold": "graph"}, {"mode": ["graph"]})


def test_booleans_count_as_numbers() -> None:
    assert holds({"value": "bn_training", "op": ">=", "threshold": 1}, {"bn_training": True})
    assert not holds({"value": "bn_training", "op": ">=", "threshold": 1}, {"bn_training": False})


def test_all_any_and_list_shorthand() -> None:
    raw = [
        {"value": "a", "op": ">", "threshold": 0},
        {"any": [{"value": "b", "op": ">", "threshold": 5}, {"value": "c", "op": "==", "threshold": "x"}]},
    ]
    cond = parse_condition(raw, "when")
    assert isinstance(cond, AllOf) and isinstance(cond.items[1], AnyOf)
    assert cond.holds({"a": 1, "c": "X"})
    assert not cond.holds({"a": 1, "b": 5})
    assert cond.keys() == {"a", "b", "c"}
    assert cond.describe() == 'a > 0 and (b > 5 or c == "x")'


@given(
    st.one_of(st.none(), st.floats(allow_nan=True), st.integers(), st.text(max_size=3)),
    st.sampled_from(["<", "<=", ">", ">="]),
)
def test_non_numeric_or_missing_never_satisfies_a_numeric_test(value: object, op: str) -> None:
    cond = parse_condition({"value": "v", "op": op, "threshold": 0.5}, "when")
    if not isinstance(value, (int, float)) or value != value:  # None, text or NaN
        assert not cond.holds({"v": value})
    assert not cond.holds({})


@given(st.floats(allow_nan=False, allow_infinity=False), st.floats(allow_nan=False, allow_infinity=False))
def test_ge_and_lt_are_complements_for_numbers(value: float, threshold: float) -> None:
    ge = parse_condition({"value": "v", "op": ">=", "threshold": threshold}, "when")
    lt = parse_condition({"value": "v", "op": "<", "threshold": threshold}, "when")
    assert ge.holds({"v": value}) != lt.holds({"v": value})


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"value": "x", "op": "=>", "threshold": 1}, "unknown operator '=>'"),
        ({"value": "x", "op": ">", "threshold": "high"}, "needs a number threshold"),
        ({"value": "x", "op": "in", "threshold": 3}, "needs a non-empty list"),
        ({"value": "x", "op": ">"}, "missing 'threshold'"),
        ({"value": "x", "op": ">", "threshold": 1, "extra": 2}, "unknown key(s) ['extra']"),
        ({"value": "", "op": ">", "threshold": 1}, "expected a value key"),
        ({"value": "a..b", "op": ">", "threshold": 1}, "expected a value key"),
        ({"any": []}, "non-empty list"),
        ({"count": "ops", "op": "==", "threshold": {"value": "y"}}, "needs a numeric operator"),
        ("x > 1", "must be a mapping"),
    ],
)
def test_bad_conditions_name_the_field(raw: object, message: str) -> None:
    with pytest.raises(RuleError) as err:
        parse_condition(raw, "supports[0].when")
    assert message in str(err.value)
    assert "supports[0].when" in str(err.value)


def test_compare_describes_counts_lists_and_refs() -> None:
    assert Compare(("ops",), ">=", 1, count=True).describe() == "count(ops) >= 1"
    assert (
        parse_condition({"value": "v", "op": "in", "threshold": ["0", 1]}, "w").describe() == 'v in ["0", 1]'
    )
    ref = parse_condition({"value": "t", "op": "<=", "threshold": {"value": "b", "times": 0.25}}, "w")
    assert ref.describe() == "t <= 0.25 × b"

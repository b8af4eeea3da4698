"""A tiny, structured condition language over a symptom's ``values`` (no eval of any code).

A condition is one of

* a comparison ``{value: <key>, op: <op>, threshold: <literal | list | {value: <key>, times: <k>}>}``;
  ``<key>`` may be a dotted path into nested mappings (``variables.ASCEND_LAUNCH_BLOCKING``);
* a count ``{count: <key>, op: <op>, threshold: <number>}`` comparing the number of items of a list,
  mapping or string value;
* ``{all: [<condition>, ...]}`` or ``{any: [<condition>, ...]}``; a bare list means ``all``.

A missing or ``None`` value makes a comparison false (the rule then does not fire on it): evidence
that was not measured never counts for or against a cause.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence, Sized
from dataclasses import dataclass
from typing import Any, TypeGuard, cast

from knowledge.errors import RuleError

NUMERIC_OPS = (">", ">=", "<", "<=")
EQUALITY_OPS = ("==", "!=")
MEMBERSHIP_OPS = ("in", "not-in")
OPS = NUMERIC_OPS + EQUALITY_OPS + MEMBERSHIP_OPS

_MISSING = object()


@dataclass(frozen=True)
class Ref:
    """A threshold taken from another value of the same symptom, scaled: ``times`` x values[path]."""

    path: tuple[str, ...]
    times: float = 1.0

    def describe(self) -> str:
        name = ".".join(self.path)
        return name if self.times == 1.0 else f"{_fmt(self.times)} × {name}"


@dataclass(frozen=True)
class Compare:
    """``value op threshold`` (or ``len(value) op threshold`` when ``count`` is set)."""

    path: tuple[str, ...]
    op: str
    threshold: object  # a YAML number, string or bool, a list of them, or a Ref
    count: bool = False

    def holds(self, values: Mapping[str, object]) -> bool:
        left = lookup(values, self.path)
        if left is _MISSING or left is None:
            return False
        if self.count:
            if not isinstance(left, (Sequence, Mapping)) or isinstance(left, bytes):
                return False
            left = len(cast(Sized, left))
        right = self.threshold
        if isinstance(right, Ref):
            base = lookup(values, right.path)
            if not _is_number(base):
                return False
            right = base * right.times
        return _apply(self.op, left, right)

    def keys(self) -> set[str]:
        top = {self.path[0]}
        if isinstance(self.threshold, Ref):
            top.add(self.threshold.path[0])
        return top

    def describe(self) -> str:
        name = ".".join(self.path)
        left = f"count({name})" if self.count else name
        if isinstance(self.threshold, Ref):
            right = self.threshold.describe()
        elif isinstance(items := cast("Sequence[Any]", self.threshold), (list, tuple)):
            right = "[" + ", ".join(_fmt(v) for v in items) + "]"
        else:
            right = _fmt(self.threshold)
        return f"{left} {self.op} {right}"


@dataclass(frozen=True)
class AllOf:
    """Every item holds."""

    items: tuple[Condition, ...]

    def holds(self, values: Mapping[str, object]) -> bool:
        return all(item.holds(values) for item in self.items)

    def keys(self) -> set[str]:
        return set[str]().union(*(item.keys() for item in self.items))

    def describe(self) -> str:
        return " and ".join(_nested(item) for item in self.items)


@dataclass(frozen=True)
class AnyOf:
    """At least one item holds."""

    items: tuple[Condition, ...]

    def holds(self, values: Mapping[str, object]) -> bool:
        return any(item.holds(values) for item in self.items)

    def keys(self) -> set[str]:
        return set[str]().union(*(item.keys() for item in self.items))

    def describe(self) -> str:
        return " or ".join(_nested(item) for item in self.items)


Condition = Compare | AllOf | AnyOf


def lookup(values: Mapping[str, object], path: tuple[str, ...]) -> object:
    """The value at a dotted path, or the _MISSING sentinel when any step is absent."""
    current: object = values
    for part in path:
        if not isinstance(current, Mapping) or part not in current:
            return _MISSING
        current = cast(Mapping[str, Any], current)[part]
    return current


def parse_condition(raw: object, field: str) -> Condition:
    """Validate one `when` block from a rule file and turn it into a condition tree."""
    if isinstance(raw, list):
        return AllOf(_parse_items(raw, field))
    if not isinstance(raw, dict):
        raise RuleError("a condition must be a mapping or a list of mappings", field=field)
    raw = cast("dict[str, Any]", raw)
    if "all" in raw or "any" in raw:
        _only_keys(raw, {"all"} if "all" in raw else {"any"}, field)
        key = "all" if "all" in raw else "any"
        items = _parse_items(raw[key], f"{field}.{key}")
        return AllOf(items) if key == "all" else AnyOf(items)
    return _parse_compare(raw, field)


def _parse_items(raw: Any, field: str) -> tuple[Condition, ...]:
    if not isinstance(raw, list) or not raw:
        raise RuleError("expected a non-empty list of conditions", field=field)
    return tuple(parse_condition(item, f"{field}[{i}]") for i, item in enumerate(cast("list[Any]", raw)))


def _parse_compare(raw: dict[str, Any], field: str) -> Compare:
    subject = "count" if "count" in raw else "value"
    _only_keys(raw, {subject, "op", "threshold"}, field)
    for key in (subject, "op", "threshold"):
        if key not in raw:
            raise RuleError(f"missing '{key}'", field=field)
    op = raw["op"]
    if op not in OPS:
        raise RuleError(f"unknown operator {op!r}; expected one of {', '.join(OPS)}", field=f"{field}.op")
    path = _parse_path(raw[subject], f"{field}.{subject}")
    threshold = _parse_threshold(raw["threshold"], op, subject == "count", f"{field}.threshold")
    return Compare(path=path, op=op, threshold=threshold, count=subject == "count")


def _parse_threshold(raw: Any, op: str, count: bool, field: str) -> Any:
    if isinstance(raw, dict):
        ref = cast("dict[str, Any]", raw)
        _only_keys(ref, {"value", "times"}, field)
        if op not in NUMERIC_OPS or count:
            raise RuleError("a {value, times} threshold needs a numeric operator on a value", field=field)
        times = ref.get("times", 1.0)
        if not _is_number(times):
            raise RuleError("'times' must be a number", field=f"{field}.times")
        return Ref(path=_parse_path(ref.get("value"), f"{field}.value"), times=float(times))
    if op in MEMBERSHIP_OPS:
        if not isinstance(raw, list) or not raw:
            raise RuleError(f"'{op}' needs a non-empty list threshold", field=field)
        return tuple(cast("list[Any]", raw))
    if (op in NUMERIC_OPS or count) and not _is_number(raw):
        raise RuleError(f"'{op}' needs a number threshold, got {raw!r}", field=field)
    if isinstance(raw, (list, dict)):
        raise RuleError(f"'{op}' needs a scalar threshold", field=field)
    return raw


def _parse_path(raw: Any, field: str) -> tuple[str, ...]:
    if not isinstance(raw, str) or not raw or any(not part for part in raw.split(".")):
        raise RuleError("expected a value key such as 'lost_ms_per_step' or 'variables.GLOG_v'", field=field)
    return tuple(raw.split("."))


def _only_keys(raw: Mapping[str, Any], allowed: set[str], field: str) -> None:
    extra = sorted(set(raw) - allowed)
    if extra:
        raise RuleError(f"unknown key(s) {extra}; allowed: {sorted(allowed)}", field=field)


def _apply(op: str, left: Any, right: Any) -> bool:
    if op in NUMERIC_OPS:
        if not (_is_number(left) and _is_number(right)):
            return False
        return {">": left > right, ">=": left >= right, "<": left < right, "<=": left <= right}[op]
    if isinstance(left, (list, dict, tuple)):
        return False  # only scalars are compared for equality or membership
    if op in EQUALITY_OPS:
        equal = _norm(left) == _norm(right)
        return equal if op == "==" else not equal
    member = _norm(left) in {_norm(v) for v in right}
    return member if op == "in" else not member


def _is_number(value: object) -> TypeGuard[float]:
    """Real numbers, and booleans as 0/1 (a graph flag such as bn_training may be a bool)."""
    return isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value))


def _norm(value: Any) -> Any:
    """Strings compare case- and whitespace-insensitively (environment values: 'ON', 'on ')."""
    return value.strip().lower() if isinstance(value, str) else value


def _nested(item: Condition) -> str:
    text = item.describe()
    return f"({text})" if isinstance(item, (AllOf, AnyOf)) and len(item.items) > 1 else text


def _fmt(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).lower() if isinstance(value, bool) else str(value)

"""The types of JSON data as Perf Doctor reads and writes it.

A parsed JSON value is of any JSON type until it is checked: `json.load` (and yaml.safe_load) return
`Any`, and the readers narrow each value where they read it (`isinstance`, `json_get`). `JsonObject`
is that parsed object; `JsonData` is JSON written out (a report, a summary), whose values the writer
knows and whose readers narrow again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias, Union

# Any: json json.load returns untyped values; each one is narrowed (isinstance) where it is read
JsonObject: TypeAlias = dict[str, Any]
# Any parsed JSON value: a local declared so narrows to JsonObject by isinstance at no run-time cost
JsonValue: TypeAlias = JsonObject | list[Any] | str | int | float | bool | None  # Any: json as JsonObject

# JSON data as written: nested mappings and sequences of scalars (covariant, so a dict[str, float] is one)
JsonData: TypeAlias = Union[Mapping[str, "JsonData"], Sequence["JsonData"], str, int, float, bool, None]  # noqa: UP007

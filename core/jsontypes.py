"""The types of JSON data as Perf Doctor reads it.

A parsed JSON value is of any JSON type until it is checked: `json.load` (and yaml.safe_load) return
`Any`, and the readers narrow each value where they read it (`isinstance`, `json_get`). `JsonObject`
is a parsed object (a profiler's JSON file, a stored report document), `JsonValue` any parsed value.
The `Any` here is json's: these two aliases are the one place it enters the public signatures.
"""

from __future__ import annotations

from typing import Any, TypeAlias

# Any: json json.load returns untyped values; each one is narrowed (isinstance) where it is read
JsonObject: TypeAlias = dict[str, Any]
# Any parsed JSON value: a local declared so narrows to JsonObject by isinstance at no run-time cost
JsonValue: TypeAlias = JsonObject | list[Any] | str | int | float | bool | None  # Any: json as JsonObject

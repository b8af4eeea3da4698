"""A small JSON Schema (draft 2020-12) validator for the subset docs/report.schema.json uses.

Supported: type, enum, const, properties, required, additionalProperties, items, minItems, minimum,
maximum, minLength, pattern, anyOf and local $ref ("#/$defs/<name>"). Any other keyword raises
SchemaError, so the schema cannot silently use a rule this validator would skip.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "docs" / "report.schema.json"
ANNOTATIONS = frozenset(
    {"$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples"}
)
CHECKS = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "minimum",
        "maximum",
        "minLength",
        "pattern",
        "anyOf",
        "$ref",
    }
)


class SchemaError(ValueError):
    """The schema uses something this validator does not implement."""


def load_schema(path: Path = SCHEMA_PATH) -> dict[str, Any]:
    """The report schema as a dict."""
    return json.loads(path.read_text(encoding="utf-8"))


def validate(instance: Any, schema: dict[str, Any]) -> list[str]:
    """Every violation as 'path: problem' (an empty list means valid)."""
    errors: list[str] = []
    _check(instance, schema, schema, "$", errors)
    return errors


def _check(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str, errors: list[str]) -> None:
    unknown = set(schema) - CHECKS - ANNOTATIONS
    if unknown:
        raise SchemaError(f"{path}: unsupported schema keyword(s) {sorted(unknown)}")
    if "$ref" in schema:
        _check(value, _resolve(schema["$ref"], root), root, path, errors)
    if "anyOf" in schema:
        failures = [_errors(value, option, root, path) for option in schema["anyOf"]]
        if all(failures):
            details = "; ".join(f[0] for f in failures)
            errors.append(f"{path}: matches none of the anyOf alternatives ({details})")
    if "type" in schema and not _type_ok(value, schema["type"]):
        errors.append(f"{path}: expected {schema['type']}, got {type(value).__name__}")
        return
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {schema['const']!r}, got {value!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        _check_object(value, schema, root, path, errors)
    elif isinstance(value, list):
        _check_array(value, schema, root, path, errors)
    elif isinstance(value, str):
        _check_string(value, schema, path, errors)
    elif _is_number(value):
        _check_number(value, schema, path, errors)


def _errors(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> list[str]:
    found: list[str] = []
    _check(value, schema, root, path, found)
    return found


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise SchemaError(f"only local references are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            raise SchemaError(f"reference {ref!r} does not resolve")
        node = node[part]
    return node


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: _is_number(v),
}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _type_ok(value: Any, expected: str | list[str]) -> bool:
    names = [expected] if isinstance(expected, str) else expected
    for name in names:
        if name not in _TYPES:
            raise SchemaError(f"unknown type {name!r}")
    return any(_TYPES[name](value) for name in names)


def _check_object(
    value: dict, schema: dict[str, Any], root: dict[str, Any], path: str, errors: list[str]
) -> None:
    props = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in value:
            errors.append(f"{path}: missing required key {key!r}")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        child = f"{path}.{key}"
        if key in props:
            _check(item, props[key], root, child, errors)
        elif extra is False:
            errors.append(f"{path}: unexpected key {key!r}")
        elif isinstance(extra, dict):
            _check(item, extra, root, child, errors)


def _check_array(
    value: list, schema: dict[str, Any], root: dict[str, Any], path: str, errors: list[str]
) -> None:
    if len(value) < schema.get("minItems", 0):
        errors.append(f"{path}: fewer than {schema['minItems']} items")
    if "items" in schema:
        for index, item in enumerate(value):
            _check(item, schema["items"], root, f"{path}[{index}]", errors)


def _check_string(value: str, schema: dict[str, Any], path: str, errors: list[str]) -> None:
    if len(value) < schema.get("minLength", 0):
        errors.append(f"{path}: shorter than {schema['minLength']} characters")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        errors.append(f"{path}: {value!r} does not match {schema['pattern']!r}")


def _check_number(value: float, schema: dict[str, Any], path: str, errors: list[str]) -> None:
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: {value} is below the minimum {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: {value} is above the maximum {schema['maximum']}")

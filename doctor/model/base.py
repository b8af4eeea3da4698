"""What every report model shares: a closed, frozen record, its JSON data and the JSON number types.

Models are frozen so a finished report cannot drift from what was rendered, and closed (extra keys are
refused) so the generated schema's `additionalProperties: false` holds for the Python side too.

The builders (doctor.build, doctor.verdict, the facade) make records with `model_construct` (`Record.of`,
or `Record.of_ordered` for the operator table's thousands of rows): the values are already checked by the
analysis, and validating every report would cost more than the compare's JSON output may (bench/regress.py).
The golden test validates every pinned case's document instead. The pydantic core schema is built only when
something validates (`defer_build`), and `json_default`/`to_data` write a record's fields in declaration order
without it, leaving out a field whose `exclude_if` says so, exactly as `model_dump` does: a command-line
JSON report builds no schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Self, cast

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, WithJsonSchema

from core import JsonObject

_OMITTED: dict[type, tuple[tuple[str, Callable[[object], bool]], ...]] = {}  # per record class, see `omitted`


class Record(BaseModel):
    """Base of every part of the report document: keys in declaration order, no extra keys."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    @classmethod
    def of(cls, **fields: object) -> Self:
        """A record of values the builders already checked, without validation (`model_construct`)."""
        return cls.model_construct(None, **fields)

    @classmethod
    def of_ordered(cls, fields: dict[str, object]) -> Self:
        """A record taking `fields` as its own: every field present, in declaration order (a table row
        built column by column). `model_construct` without its per-field lookups."""
        record = cls.__new__(cls)
        object.__setattr__(record, "__dict__", fields)
        object.__setattr__(record, "__pydantic_fields_set__", set(fields))
        object.__setattr__(record, "__pydantic_extra__", None)
        object.__setattr__(record, "__pydantic_private__", None)
        return record

    @classmethod
    def omitted(cls) -> tuple[tuple[str, Callable[[object], bool]], ...]:
        """The fields left out of the JSON data when their `exclude_if` holds (e.g. an absent `after`)."""
        found = _OMITTED.get(cls)
        if found is None:
            fields = cls.model_fields.items()
            found = _OMITTED[cls] = tuple(
                (name, f.exclude_if) for name, f in fields if f.exclude_if is not None
            )
        return found

    def fields(self) -> dict[str, object]:
        """The record's fields in declaration order as the JSON document holds them (nested records as they
        are): what `json_default` gives the JSON encoder."""
        omitted = type(self).omitted()
        if not omitted:
            return self.__dict__  # pyright: ignore[reportReturnType]  # an instance's __dict__ is a dict (typeshed: the class's mappingproxy)
        drop = {name for name, test in omitted if test(self.__dict__[name])}
        return {key: value for key, value in self.__dict__.items() if key not in drop}

    def to_data(self) -> JsonObject:
        """The record as plain JSON data (what `model_dump` gives, built without the core schema)."""
        return cast(JsonObject, plain(self))  # a record is a dict of its fields


def json_default(value: object) -> dict[str, object]:
    """`default` for json.dumps: a record is written as its fields (the C encoder does the rest)."""
    if isinstance(value, Record):
        return value.fields()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def plain(value: object) -> object:
    """`value` with every record in it turned into its JSON data (lists and dicts copied)."""
    if isinstance(value, Record):
        return {key: plain(item) for key, item in value.fields().items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def number(minimum: float | None = None, maximum: float | None = None) -> object:
    """A JSON number that keeps its Python type: an int stays an int and a float a float, so the JSON
    text is the one the analysis wrote ("3", not "3.0"); a bool or a string is refused."""
    bounds = {k: v for k, v in (("minimum", minimum), ("maximum", maximum)) if v is not None}
    return Annotated[
        StrictInt | StrictFloat,
        Field(ge=minimum, le=maximum),
        WithJsonSchema({"type": "number", **bounds}),
    ]


def count(minimum: int = 0) -> object:
    """A JSON integer of at least `minimum` (bools are refused, not read as 0 and 1)."""
    return Annotated[StrictInt, Field(ge=minimum)]


if TYPE_CHECKING:  # what pyright sees: the aliases below are built at run time, for pydantic
    Number = int | float
    Share = int | float
    NonNegative = int | float
    Count = int
    Positive = int
else:
    Number = number()
    Share = number(0, 1)  # a fraction in [0, 1]
    NonNegative = number(0)
    Count = count()
    Positive = count(1)  # an integer of at least 1 (ranks, step counts)
Integer = StrictInt
Values = dict[str, object]  # a symptom's numbers, keyed by the names core.symptoms registers
Row = dict[str, object]  # an evidence row: an operator, kernel or graph node as the analyzer wrote it

"""What every report model shares: a closed, frozen record and the JSON number types.

Models are frozen so a finished report cannot drift from what was rendered, and closed (extra keys are
refused) so the generated schema's `additionalProperties: false` holds for the Python side too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, WithJsonSchema


class Record(BaseModel):
    """Base of every part of the report document: keys in declaration order, no extra keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def number(minimum: float | None = None, maximum: float | None = None) -> Any:
    """A JSON number that keeps its Python type: an int stays an int and a float a float, so the JSON
    text is the one the analysis wrote ("3", not "3.0"); a bool or a string is refused."""
    bounds = {k: v for k, v in (("minimum", minimum), ("maximum", maximum)) if v is not None}
    return Annotated[
        StrictInt | StrictFloat,
        Field(ge=minimum, le=maximum),
        WithJsonSchema({"type": "number", **bounds}),
    ]


def count(minimum: int = 0) -> Any:
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
Values = dict[str, Any]  # a symptom's numbers, keyed by the names core.symptoms registers
Row = dict[str, Any]  # an evidence row: an operator, kernel or graph node as the analyzer wrote it

"""Typed names for the pyarrow values the readers pass around, and typed calls of the few
pyarrow.compute kernels whose published stubs leave a parameter unparametrised or name the wrong
result (a chunked column in, a chunked column out); each such call is marked here once, not at every
reader."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias, cast

import pyarrow as pa
import pyarrow.compute as pc

# A table's column as pyarrow types it (Table.column: its element type is known only at run time).
Column: TypeAlias = (
    "pa.ChunkedArray[Any]"  # Any: pyarrow Table.column's element type is known only at run time
)
StringColumn: TypeAlias = "pa.ChunkedArray[pa.StringScalar]"
Int32Column: TypeAlias = "pa.ChunkedArray[pa.Int32Scalar]"
# An array or chunked column of any element type, and the named columns a table is built from.
AnyArray: TypeAlias = (
    "pa.Array[Any] | Column"  # Any: pyarrow an array's element type is known only at run time
)
NamedColumns: TypeAlias = "dict[str, AnyArray]"


def sorted_by(
    table: pa.Table, sorting: str | list[tuple[str, Literal["ascending", "descending"]]]
) -> pa.Table:
    """table.sort_by(sorting), a stable sort (the stub leaves sort_by's keyword arguments untyped)."""
    return table.sort_by(sorting)  # pyright: ignore[reportUnknownMemberType]  # pyarrow-stubs: untyped **kwargs


def index_in(values: Column, value_set: Column) -> Int32Column:
    """pc.index_in of a chunked column (the stubs say Array; pyarrow keeps the chunks)."""
    found = pc.index_in(values, value_set=value_set)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]  # pyarrow-stubs: unparametrised Array in the signature
    return cast(Int32Column, found)

"""Value normalisation shared by the readers: dtype and format spellings, shape cells, and what an
operator's name says about its scope and type. String columns are normalised once per distinct value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast

import pyarrow as pa
import pyarrow.compute as pc

from diagnosis.readers.arrow import AnyArray, Column, StringColumn, index_in

# ------------------------------------------------------------------------------------ value normalisation

# Spellings seen across CANN versions, legacy MindSpore enums and torch; canonical names on the right.
_DTYPE_ALIASES = {
    "HALF": "FLOAT16",
    "FP16": "FLOAT16",
    "BFLOAT16": "BF16",
    "FLOAT32": "FLOAT",
    "FP32": "FLOAT",
    "FLOAT64": "DOUBLE",
    "FP64": "DOUBLE",
    "N/A": "UNDEFINED",
    "UNKNOWN": "UNDEFINED",
}
_FORMAT_ALIASES = {
    "FRAC_Z": "FRACTAL_Z",
    "FRAC_NZ": "FRACTAL_NZ",
    "FRACZ": "FRACTAL_Z",
    "FRACNZ": "FRACTAL_NZ",
}


def canonical_dtype(token: str) -> str:
    """`DT_BF16` -> `BF16`, `float32` -> `FLOAT`, `NUMBER_TYPE_FLOAT16` (MindSpore 1.x op_info) -> `FLOAT16`;
    unknown names upper-cased."""
    name = token.strip().upper()
    name = name.removeprefix("DT_").removeprefix("MINDSPORE.").removeprefix("NUMBER_TYPE_")
    return _DTYPE_ALIASES.get(name, name)


def canonical_format(token: str) -> str:
    """`FORMAT_ND` -> `ND`, `FRAC_Z` / `FracZ` (MindSpore 1.x) -> `FRACTAL_Z`."""
    name = token.strip().upper().removeprefix("FORMAT_")
    return _FORMAT_ALIASES.get(name, name)


def _each(fn: Callable[[str], str]) -> Callable[[str], str]:
    """Apply a token normaliser to every `;`-separated entry of a cell."""
    return lambda cell: ";".join(fn(part) if part.strip() else "" for part in cell.split(";"))


def clean_shapes(cell: str) -> str:
    """`"8192,512;8;"` (literal quotes, tabs, brackets) -> `8192,512;8;`."""
    text = cell.replace('"', "").replace("[", "").replace("]", "").replace(" ", "").strip()
    return text


NORMALISERS: dict[str, Callable[[str], str]] = {
    "input_dtypes": _each(canonical_dtype),
    "output_dtypes": _each(canonical_dtype),
    "input_formats": _each(canonical_format),
    "output_formats": _each(canonical_format),
    "input_shapes": clean_shapes,
    "output_shapes": clean_shapes,
    "op_state": lambda v: v.strip().lower(),
    "core": lambda v: v.strip().upper(),
    "op_type": lambda v: v.strip(),
    "name": lambda v: v.strip(),
}


def map_unique(values: AnyArray, fn: Callable[[str], str | None]) -> StringColumn:
    """Apply a Python function to each distinct string only, then scatter the results back.

    When `fn` changes no value the column is returned as is (no copy): most kernel columns are
    already canonical, and scattering a million strings costs more than finding their few values.
    """
    chunked: Column = pa.chunked_array([values]) if isinstance(values, pa.Array) else values
    # a string column as is, any other cast to strings (a run-time type the checker cannot follow)
    strings = cast(StringColumn, chunked if pa.types.is_string(chunked.type) else chunked.cast(pa.string()))
    uniq = pc.unique(strings)
    before = uniq.to_pylist()
    after = [None if v is None else fn(v) for v in before]
    if after == before:
        return strings
    index = index_in(strings, value_set=uniq)
    mapped = pa.array(after, type=pa.string())
    return pa.chunked_array([pc.take(mapped, chunk) for chunk in index.chunks], type=pa.string())


def normalise_columns(table: pa.Table) -> pa.Table:
    """Apply NORMALISERS to the string columns of a kernel table that has them, once per distinct value
    (the literal quotes of shape cells go with the rest of clean_shapes: a column-wise replace first
    cost two passes over every cell)."""
    for name, fn in NORMALISERS.items():
        if name in table.column_names:
            column = map_unique(table.column(name), fn)
            table = table.set_column(table.column_names.index(name), name, column)
    return table


_OP_SCOPE_RE = re.compile(r"^(.*?-op\d+)(?:/[^/]*)?$")


def scope_of(name: str) -> str | None:
    """Framework op (full_op_name) behind a kernel name.

    `<scope>/<Op>-opN/<kernel>` -> `<scope>/<Op>-opN`; a name ending in `-opN` is its own scope; any
    other `<launch op>/<kernel>` -> `<launch op>`; a bare kernel name has none.
    """
    hit = _OP_SCOPE_RE.match(name)
    if hit and "/" in hit.group(1):
        return hit.group(1)
    if "/" in name:
        return name.rsplit("/", 1)[0]
    return None


_ACLNN_RE = re.compile(r"^aclnn[A-Za-z0-9]+_[A-Za-z0-9]+_([A-Za-z][A-Za-z0-9]*)$")
_TRANS_RE = re.compile(r"^trans_([A-Za-z][A-Za-z0-9]*)_\d+$")


def op_type_of_kernel(name: str) -> str | None:
    """Operator type recoverable from a bare kernel name (no Type column): torch_npu `aclnnX_Impl_Kernel`
    -> `Kernel`, CANN `trans_Cast_3` -> `Cast`, MindSpore `<scope>/Conv2D-op1` -> `Conv2D`; else None."""
    kernel = name.rsplit("/", 1)[-1]
    for pattern in (_ACLNN_RE, _TRANS_RE):
        hit = pattern.match(kernel)
        if hit:
            return hit.group(1)
    hit = re.match(r"^([A-Za-z][A-Za-z0-9]*)-op\d+$", kernel)
    return hit.group(1) if hit else None

"""Turn MINDIR AttributeProto / TensorProto values into plain Python values.

Scalars sit in ``i``/``f``/``d``/``s`` at the top level but in ``ints[0]``/``floats[0]``/``strings[0]``
inside TUPLE/LIST ``values`` (format guide §3.3); both places are read. Small constant tensors are
decoded (scalars and up to SMALL_TENSOR elements); bigger ones are described, not copied.
"""

from __future__ import annotations

import struct
from typing import Any

from graph.dtypes import itemsize, tensor_dtype

# AttributeProto.type values (format guide §1.2)
FLOAT, STRING, BOOL, FLOAT16, DOUBLE, BFLOAT16 = 1, 8, 9, 10, 11, 16
INT_TYPES = frozenset({2, 3, 4, 5, 6, 7, 12, 13})
FLOAT_TYPES = frozenset({FLOAT, FLOAT16, BFLOAT16})
TENSOR, TENSORS, TUPLE, LIST, DICT = 17, 19, 20, 21, 22
UMONAD, IOMONAD, NONE = 23, 24, 25
SMALL_TENSOR = 64
MAX_DEPTH = 64

# struct format of fixed-size dtypes (little endian, as MINDIR files are written)
_STRUCT = {
    "float32": "f",
    "float16": "e",
    "float64": "d",
    "int8": "b",
    "uint8": "B",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "uint64": "Q",
    "bool": "?",
}


class _Monad:
    """The side-effect token (UMONAD/IOMONAD): ordering only, never data."""

    def __repr__(self) -> str:
        return "MONAD"


MONAD = _Monad()


def text(value: str | bytes) -> str:
    """A protobuf string field as text (upb hands back bytes when a proto2 string is not UTF-8)."""
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


# Any: protobuf the MINDIR messages are built at run time from a descriptor (graph.schema): untyped
def attribute_value(attr: Any, depth: int = 0) -> object:
    """The Python value of an AttributeProto (MONAD for side-effect tokens)."""
    kind = attr.type
    if kind in INT_TYPES:
        return attr.i
    if kind == BOOL:
        return bool(attr.i)
    if kind in FLOAT_TYPES:
        return attr.f
    if kind == DOUBLE:
        return attr.d
    if kind == STRING:
        return text(attr.s)
    if kind in (TUPLE, LIST):
        return _sequence(attr, depth)
    if kind == TENSOR:
        return tensor_value(attr.t)
    if kind == TENSORS:
        values = [tensor_value(t) for t in attr.tensors]
        return values[0] if len(values) == 1 else tuple(values)
    if kind in (UMONAD, IOMONAD):
        return MONAD
    if kind == DICT:
        return {text(v.name): _element(v, depth + 1) for v in attr.values}
    if kind == NONE:
        return None
    return _untyped(attr, depth)


def _sequence(attr: Any, depth: int) -> tuple[Any, ...]:
    if depth >= MAX_DEPTH:
        return ()
    return tuple(_element(v, depth + 1) for v in attr.values)


def _element(attr: Any, depth: int) -> Any:
    """A value inside a TUPLE/LIST: scalars live in the repeated fields."""
    kind = attr.type
    if kind in INT_TYPES:
        return attr.ints[0] if attr.ints else attr.i
    if kind == BOOL:
        return bool(attr.ints[0] if attr.ints else attr.i)
    if kind in FLOAT_TYPES:
        return attr.floats[0] if attr.floats else attr.f
    if kind == DOUBLE:
        return attr.doubles[0] if attr.doubles else attr.d
    if kind == STRING:
        return text(attr.strings[0] if attr.strings else attr.s)
    return attribute_value(attr, depth)


def _untyped(attr: Any, depth: int) -> Any:
    """Best effort for attribute types this table does not name: whichever field is set."""
    for name in ("ints", "floats", "doubles", "strings"):
        values = getattr(attr, name)
        if values:
            return tuple(text(v) if name == "strings" else v for v in values)
    if attr.values:
        return _sequence(attr, depth)
    if attr.s:
        return text(attr.s)
    return attr.i or attr.f or attr.d or None


# Any: protobuf the MINDIR messages are built at run time from a descriptor (graph.schema): untyped
def tensor_value(tensor: Any) -> object:
    """A constant tensor: a scalar or flat list when small and decodable, else a description."""
    dtype = tensor_dtype(tensor.data_type)
    shape = tuple(tensor.dims)
    count = 1
    for dim in shape:
        count *= dim
    fmt = _STRUCT.get(dtype)
    if fmt and 0 <= count <= SMALL_TENSOR and tensor.raw_data:
        raw = tensor.raw_data
        if len(raw) == count * itemsize(tensor.data_type):
            values = struct.unpack(f"<{count}{fmt}", raw)
            return values[0] if not shape else list(values)
    return {"tensor": dtype, "shape": list(shape)}


# Any: protobuf the MINDIR messages are built at run time from a descriptor (graph.schema): untyped
def output_types(node: Any) -> list[tuple[str | None, tuple[int, ...] | None]]:
    """(dtype, shape) of each output of a NodeProto from its `shape` attribute ([] when none)."""
    for attr in node.attribute:
        if attr.name != "shape":
            continue
        kind = attr.type
        if kind == TENSORS and attr.tensors:
            t = attr.tensors[0]
            return [(tensor_dtype(t.data_type), tuple(t.dims))]
        if kind == TENSOR:
            return [(tensor_dtype(attr.t.data_type), tuple(attr.t.dims))]
        if kind in (TUPLE, LIST):
            return [_element_type(v) for v in attr.values]
        return []
    return []


def _element_type(attr: Any) -> tuple[str | None, tuple[int, ...] | None]:
    if attr.tensors:
        t = attr.tensors[0]
        return tensor_dtype(t.data_type), tuple(t.dims)
    if attr.type == TENSOR:
        return tensor_dtype(attr.t.data_type), tuple(attr.t.dims)
    return None, None

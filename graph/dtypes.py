"""Data-type tables of the MINDIR format: TensorProto enum values and MindSpore TypeIds.

TensorProto.data_type values follow mind_ir.proto (§1.2 of the MINDIR field guide). Cast's
``dst_type`` argument is a MindSpore TypeId instead; the ids below were read with
``mindspore._c_expression.typing.type_to_type_id`` in MindSpore 2.10 (bool 30 ... complex128 52).
"""

from __future__ import annotations

# TensorProto.DataType -> (name, itemsize in bytes; 0 when not a fixed-size number)
TENSOR_DTYPES: dict[int, tuple[str, int]] = {
    0: ("undefined", 0),
    1: ("float32", 4),
    2: ("uint8", 1),
    3: ("int8", 1),
    4: ("uint16", 2),
    5: ("int16", 2),
    6: ("int32", 4),
    7: ("int64", 8),
    8: ("string", 0),
    9: ("bool", 1),
    10: ("float16", 2),
    11: ("float64", 8),
    12: ("uint32", 4),
    13: ("uint64", 8),
    14: ("complex64", 8),
    15: ("complex128", 16),
    16: ("bfloat16", 2),
    17: ("float64", 8),
}

# MindSpore TypeId (Cast dst_type) -> dtype name
TYPE_IDS: dict[int, str] = {
    30: "bool",
    32: "int8",
    33: "int16",
    34: "int32",
    35: "int64",
    37: "uint8",
    38: "uint16",
    39: "uint32",
    40: "uint64",
    42: "float16",
    43: "float32",
    44: "float64",
    45: "bfloat16",
    51: "complex64",
    52: "complex128",
}

LOW_PRECISION = frozenset({"float16", "bfloat16"})
FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})


def tensor_dtype(code: int) -> str:
    """Name of a TensorProto data_type value (``"dtype<N>"`` for values this table lacks)."""
    entry = TENSOR_DTYPES.get(code)
    return entry[0] if entry else f"dtype{code}"


def itemsize(code: int) -> int:
    """Bytes per element of a TensorProto data_type (0 when unknown or variable)."""
    entry = TENSOR_DTYPES.get(code)
    return entry[1] if entry else 0


def type_id_name(type_id: int) -> str:
    """Name of a MindSpore TypeId as used by Cast (``"typeid<N>"`` when unknown)."""
    return TYPE_IDS.get(type_id, f"typeid{type_id}")

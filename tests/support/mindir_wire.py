"""Protobuf wire bytes written by hand, for MINDIR inputs the protobuf API refuses to build."""

from __future__ import annotations


def varint(value: int) -> bytes:
    """A protobuf varint."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes | int) -> bytes:
    """One protobuf field in wire format (varint for ints, length-delimited for bytes)."""
    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def nested(depth: int) -> bytes:
    """Wire bytes of a MindSpore-looking model whose Constant's value nests TUPLE values `depth` deep
    (written by hand: the protobuf API itself refuses to build messages this deep)."""
    attr = field(1, b"value") + field(16, 7) + field(3, 1)
    for _ in range(depth):
        attr = field(1, b"value") + field(16, 20) + field(17, attr)
    node = field(3, b"n") + field(4, b"Constant") + field(5, attr)
    return field(2, b"MindSpore") + field(7, field(1, node))

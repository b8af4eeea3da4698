"""The MINDIR protobuf messages, described in code from the format's field numbers.

MindSpore's own ``mind_ir_pb2`` would pull in the whole framework (1.4-2 s and a switch to the
pure-Python protobuf backend), so the ~40 fields a graph walker needs are declared here as a
``FileDescriptorProto`` and turned into message classes with a private descriptor pool. Enum
fields are declared ``int32`` (same varint on the wire); unknown fields are skipped on parse and
kept on re-serialisation. Field numbers: /work/shared/reference/mindir-format.md §1.1.
"""

from __future__ import annotations

from functools import cache

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.internal import api_implementation
from google.protobuf.message import Message

PACKAGE = "perf_doctor.mind_ir"
OPTIONAL, REPEATED = "optional", "repeated"
SCALARS = {
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "bytes": descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
    "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
    "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    "float": descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT,
    "double": descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE,
}

# message -> (field name, number, type or message name, label). Only what the graph walker reads.
MESSAGES: dict[str, tuple[tuple[str, int, str, str], ...]] = {
    "ModelProto": (
        ("ir_version", 1, "string", OPTIONAL),
        ("producer_name", 2, "string", OPTIONAL),
        ("producer_version", 3, "string", OPTIONAL),
        ("model_version", 5, "string", OPTIONAL),
        ("graph", 7, "GraphProto", OPTIONAL),
        ("functions", 8, "GraphProto", REPEATED),
        ("little_endian", 10, "bool", OPTIONAL),
        ("primitives", 12, "PrimitiveProto", REPEATED),
        ("mind_ir_version", 13, "int64", OPTIONAL),
    ),
    "GraphProto": (
        ("node", 1, "NodeProto", REPEATED),
        ("name", 2, "string", OPTIONAL),
        ("parameter", 3, "TensorProto", REPEATED),
        ("input", 5, "ValueInfoProto", REPEATED),
        ("output", 6, "ValueInfoProto", REPEATED),
        ("attribute", 8, "AttributeProto", REPEATED),
    ),
    "NodeProto": (
        ("input", 1, "string", REPEATED),
        ("output", 2, "string", REPEATED),
        ("name", 3, "string", OPTIONAL),
        ("op_type", 4, "string", OPTIONAL),
        ("attribute", 5, "AttributeProto", REPEATED),
        ("domain", 7, "string", OPTIONAL),
        ("node_attr", 8, "AttributeProto", REPEATED),
        ("primal_attr", 9, "AttributeProto", REPEATED),
    ),
    "ValueInfoProto": (
        ("name", 1, "string", OPTIONAL),
        ("tensor", 2, "TensorProto", REPEATED),
        ("attr_info", 5, "AttributeProto", OPTIONAL),
    ),
    "ExternalDataProto": (
        ("location", 1, "string", OPTIONAL),
        ("offset", 2, "int64", OPTIONAL),
        ("length", 3, "int64", OPTIONAL),
    ),
    "TensorProto": (
        ("dims", 1, "int64", REPEATED),
        ("data_type", 2, "int32", OPTIONAL),
        ("name", 7, "string", OPTIONAL),
        ("raw_data", 9, "bytes", OPTIONAL),
        ("external_data", 12, "ExternalDataProto", OPTIONAL),
        ("ref_key", 13, "string", OPTIONAL),
    ),
    "AttributeProto": (
        ("name", 1, "string", OPTIONAL),
        ("f", 2, "float", OPTIONAL),
        ("i", 3, "int64", OPTIONAL),
        ("d", 4, "double", OPTIONAL),
        ("s", 5, "bytes", OPTIONAL),
        ("t", 6, "TensorProto", OPTIONAL),
        ("g", 7, "GraphProto", OPTIONAL),
        ("floats", 8, "float", REPEATED),
        ("doubles", 9, "double", REPEATED),
        ("ints", 10, "int64", REPEATED),
        ("strings", 11, "bytes", REPEATED),
        ("tensors", 12, "TensorProto", REPEATED),
        ("ref_attr_name", 15, "string", OPTIONAL),
        ("type", 16, "int32", OPTIONAL),
        ("values", 17, "AttributeProto", REPEATED),
    ),
    "PrimitiveProto": (
        ("name", 1, "string", OPTIONAL),
        ("op_type", 2, "string", OPTIONAL),
        ("attribute", 3, "AttributeProto", REPEATED),
        ("instance_name", 4, "string", OPTIONAL),
        ("prim_type", 5, "int32", OPTIONAL),
    ),
}


def file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto (proto2) declaring MESSAGES."""
    fdp = descriptor_pb2.FileDescriptorProto(
        name="perf_doctor_mind_ir.proto", package=PACKAGE, syntax="proto2"
    )
    for message_name, fields in MESSAGES.items():
        message = fdp.message_type.add(name=message_name)
        for field_name, number, kind, label in fields:
            field = message.field.add(name=field_name, number=number, json_name=field_name)
            field.label = (
                descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
                if label == REPEATED
                else descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
            )
            if kind in SCALARS:
                field.type = SCALARS[kind]
            else:
                field.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
                field.type_name = f".{PACKAGE}.{kind}"
    return fdp


@cache
def message_classes() -> dict[str, type[Message]]:
    """Message classes built once per process from a private descriptor pool."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_descriptor())
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))
        for name in MESSAGES
    }


def model_class() -> type[Message]:
    """The ModelProto class: ``model_class().FromString(data)`` decodes a MINDIR file."""
    return message_classes()["ModelProto"]


def backend() -> str:
    """Name of the protobuf backend in use ("upb" is the fast one this package expects)."""
    return api_implementation.Type()

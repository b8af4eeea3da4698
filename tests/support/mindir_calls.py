"""MINDIR call graphs described by a few bytes, for fuzzing graph.build (tests/bad_inputs/atheris_fuzz.py,
target ``mindir-calls``) and its derandomized property test (tests/test_graph_malformed.py)."""

from __future__ import annotations

from graph import schema

_LEVEL = [byte for index in range(12) for byte in (index + 1, 0)] + [0, 3]  # f<i> calls f<i+1>; f12 adds
# Starting inputs: a chain, 13 functions each calling the next twice (2**13 - 1 calls: the explosion),
# nested tuples, and a mix with partial applications.
SEEDS = (
    bytes([3, 1, 0, 2, 0]),
    bytes([11, *_LEVEL, *_LEVEL]),
    bytes([2]) + bytes([0, 1] * 40),
    bytes([4]) + bytes([1, 2, 1, 0, 2, 2, 3, 0] * 10),
)


def call_graph_model(data: bytes) -> bytes:
    """A MINDIR whose call graph the bytes describe: byte 0 picks 2-13 functions; then each function
    takes a pair of bytes per call (callee index, op: a call, a MakeTuple of the previous value, a
    Partial of a callee, a call through that Partial) until the bytes run out. Self-calls, cycles, deep
    nesting and call explosions all come out of it, with every protobuf field well-formed, so the fuzzer
    spends its time in graph.build rather than in the decoder."""
    count = 2 + (data[0] % 12 if data else 0)
    model = schema.model_class()(producer_name="MindSpore", model_version="2.10.0", mind_ir_version=3)
    model.graph.name = "main"
    tensor = model.graph.input.add(name="main:x").tensor.add()
    tensor.data_type, tensor.dims[:] = 1, [1]
    model.graph.node.add(name="main:call", op_type="REF::f0", input=["main:x"], output=["main:call"])
    model.graph.output.add(name="main:call")
    functions = [model.functions.add(name=f"f{index}") for index in range(count)]
    for index, fn in enumerate(functions):
        fn.input.add(name=f"f{index}:x")
    ops = data[1:]
    last = [f"f{index}:x" for index in range(count)]
    for step in range(0, len(ops) - 1, 2):
        index = (step // 2) % count
        fn, callee, kind, name = functions[index], ops[step] % count, ops[step + 1] % 4, f"f{index}:n{step}"
        if kind == 0:
            fn.node.add(name=name, op_type=f"REF::f{callee}", input=[last[index]], output=[name])
        elif kind == 1:
            fn.node.add(name=name, op_type="MakeTuple", input=[last[index]], output=[name])
        elif kind == 2:
            fn.node.add(name=name, op_type="Partial", input=[f"f{callee}", last[index]], output=[name])
        else:
            fn.node.add(name=name, op_type="Add", input=[last[index], last[index]], output=[name])
        last[index] = name
    for index, fn in enumerate(functions):
        fn.output.add(name=last[index])
    return model.SerializeToString()

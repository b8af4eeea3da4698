"""Bad input to the MINDIR loader ends in one InputError naming the file, never a raw traceback."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import graph
from core.errors import InputError
from graph import schema
from tests.bad_inputs import generate
from tests.support.mindir_calls import SEEDS, call_graph_model
from tests.support.mindir_wire import field, nested

FIXTURES = Path(__file__).parent / "fixtures" / "mindir"
REAL = (FIXTURES / "conv_bn_relu_eval.mindir").read_bytes()


def load_bytes(data: bytes) -> graph.MindirModel:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.mindir"
        path.write_bytes(data)
        return graph.load_mindir(path)


def test_random_bytes():
    data = random.Random(7).randbytes(4096)
    with pytest.raises(InputError) as err:
        load_bytes(data)
    assert "model.mindir" in str(err.value) and "expected a .mindir file" in str(err.value)


def test_truncated_file():
    with pytest.raises(InputError, match="protobuf decoding failed"):
        load_bytes(REAL[: len(REAL) // 2])


def test_empty_file_has_no_producer():
    with pytest.raises(InputError, match="has no producer name"):
        load_bytes(b"")


def test_wrong_producer():
    model = schema.model_class()(producer_name="pytorch", ir_version="8")
    model.graph.node.add(name="a", op_type="Relu")
    with pytest.raises(InputError, match="produced by 'pytorch', not MindSpore"):
        load_bytes(model.SerializeToString())


def test_no_graph():
    model = schema.model_class()(producer_name="MindSpore", model_version="2.10.0")
    with pytest.raises(InputError, match="no graph nodes"):
        load_bytes(model.SerializeToString())


def test_deeply_nested_message():
    with pytest.raises(InputError, match="protobuf decoding failed"):
        load_bytes(nested(300))


def test_moderately_nested_message_still_loads():
    model = load_bytes(nested(20))  # a Constant only: loads, nothing to draw
    assert model.graph.number_of_nodes() == 0


def test_file_over_2_gib_is_refused_without_reading(tmp_path):
    huge = tmp_path / "huge.mindir"
    with huge.open("wb") as f:  # sparse: no data blocks are written
        f.truncate(graph.MAX_FILE_BYTES + 1)
    with pytest.raises(InputError, match="over the 2,147,483,648-byte limit") as err:
        graph.load_mindir(huge)
    assert "huge.mindir" in str(err.value)


def test_size_limit_is_a_parameter(tmp_path):
    path = tmp_path / "small.mindir"
    path.write_bytes(REAL)
    with pytest.raises(InputError, match="over the 100-byte limit"):
        graph.load_mindir(path, max_bytes=100)
    assert graph.load_mindir(path, max_bytes=len(REAL)).graph.number_of_nodes() == 9


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        graph.load_mindir(tmp_path / "nope.mindir")
    with pytest.raises(InputError, match="is a folder"):
        graph.load_mindir(tmp_path)


def test_unreadable_file(tmp_path, monkeypatch):
    path = tmp_path / "locked.mindir"
    path.write_bytes(REAL)

    def denied(self):  # root reads mode-0 files, so simulate the OS refusing (CI runs as root)
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(type(path), "read_bytes", denied)
    with pytest.raises(InputError, match=r"cannot be read \(Permission denied\)"):
        graph.load_mindir(path)


def test_node_name_that_is_not_utf8():
    model = schema.model_class().FromString(REAL)
    conv = next(n for n in model.graph.node if "Conv2D" in n.op_type)
    raw = bytearray(model.SerializeToString())
    name_field = field(3, conv.name.encode())  # NodeProto.name = 3
    at = raw.index(name_field) + len(name_field) - len(conv.name)
    raw[at : at + 2] = b"\xff\xfe"  # same length, invalid UTF-8, in the node's name field
    with pytest.raises(InputError, match="not valid UTF-8"):
        load_bytes(bytes(raw))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2048))
@pytest.mark.slow
def test_arbitrary_bytes_raise_nothing_but_input_error(data):
    try:
        model = load_bytes(data)
    except InputError as err:
        assert err.path and err.path.endswith("model.mindir") and err.problem
    else:
        assert model.producer == "MindSpore"


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, len(REAL) - 1), st.integers(0, 255)), min_size=1, max_size=8),
    st.integers(1, len(REAL)),
)
def test_corrupted_real_file_loads_or_raises_input_error(edits, keep):
    """Byte flips and truncations of a real export: either a model (maybe with warnings) or InputError."""
    data = bytearray(REAL[:keep])
    for at, value in edits:
        if at < len(data):
            data[at] = value
    try:
        model = load_bytes(bytes(data))
    except InputError:
        return
    assert model.producer == "MindSpore"
    graph.hygiene_symptoms(model, graph.find_chains(model))


# ------------------------------------------------------------------------------------------ call graphs

SMALL_BUDGET = 5_000  # nodes plus expanded calls: explosions are refused within a fraction of a second


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.binary(min_size=1, max_size=400))
@pytest.mark.slow
def test_generated_call_graphs_build_or_are_refused_with_one_input_error(data, monkeypatch):
    """The fuzz target `mindir-calls` (tests/bad_inputs/atheris_fuzz.py) as a derandomized property."""
    monkeypatch.setenv("PERF_DOCTOR_MAX_GRAPH_NODES", str(SMALL_BUDGET))
    try:
        model = load_bytes(call_graph_model(data))
    except InputError as err:
        assert err.path.endswith("model.mindir")
        assert err.problem.startswith("cannot be analysed: ")
    else:
        assert model.graph.number_of_nodes() <= SMALL_BUDGET


@pytest.mark.parametrize("seed", [SEEDS[0], *SEEDS[2:]], ids=["chain", "tuples", "partials"])
def test_call_graph_seeds_build(seed, monkeypatch):
    monkeypatch.setenv("PERF_DOCTOR_MAX_GRAPH_NODES", str(SMALL_BUDGET))
    assert load_bytes(call_graph_model(seed)).producer == "MindSpore"


def test_the_explosion_seed_is_refused(monkeypatch):
    monkeypatch.setenv("PERF_DOCTOR_MAX_GRAPH_NODES", str(SMALL_BUDGET))  # 8,191 calls, 4,096 additions
    with pytest.raises(InputError, match=r"over 5,000 nodes and calls, the decoder's budget"):
        load_bytes(call_graph_model(SEEDS[1]))


def test_the_call_count_refuses_an_explosion_before_the_walk(monkeypatch):
    from graph import build

    proto = schema.model_class().FromString(call_graph_model(SEEDS[1]))
    assert build.expanded_calls_at_least(proto, {}) == 2**13 - 1  # every call of the 13 levels
    walked = []
    monkeypatch.setattr(build.GraphBuilder, "_walk", lambda *args: walked.append(args))
    monkeypatch.setenv("PERF_DOCTOR_MAX_GRAPH_NODES", str(SMALL_BUDGET))
    with pytest.raises(InputError, match="decoder's budget"):
        load_bytes(call_graph_model(SEEDS[1]))
    assert walked == []


@st.composite
def acyclic_call_graphs(draw: st.DrawFn) -> bytes:
    """call_graph_model bytes whose functions only call later ones (no cycle), with calls likely."""
    count = draw(st.integers(2, 13))
    ops: list[int] = []
    for step in range(draw(st.integers(1, 60))):
        index = step % count
        if index + 1 < count:
            ops += [draw(st.integers(index + 1, count - 1)), draw(st.sampled_from([0, 0, 1, 2, 3]))]
        else:
            ops += [0, 1]  # the last function makes a tuple: it has no later function to call
    return bytes([count - 2, *ops])


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=acyclic_call_graphs())
@pytest.mark.slow
def test_the_call_count_never_exceeds_what_the_walk_spends(data, monkeypatch):
    """The count before the walk is a lower bound: with it switched off, the walk itself refuses a budget
    one below the count (for the budget or another reason), so the count never refuses a model the walk
    would have accepted."""
    from graph import build

    proto = schema.model_class().FromString(call_graph_model(data))
    count = build.expanded_calls_at_least(proto, {})
    assume(1 < count <= SMALL_BUDGET)
    with monkeypatch.context() as patch:  # one example's patch, undone before the next example
        patch.setattr(build, "expanded_calls_at_least", lambda *_: 0)
        patch.setenv("PERF_DOCTOR_MAX_GRAPH_NODES", str(count - 1))
        with pytest.raises(InputError, match="cannot be analysed"):  # the budget, or deeper nesting
            load_bytes(call_graph_model(data))


def test_the_node_budget_counts_nodes_and_expanded_calls(tmp_path, monkeypatch):
    explosion = generate.write_call_explosion(tmp_path / "x.mindir", 12)  # 2**12 - 1 calls, 2**11 adds
    monkeypatch.setenv("PERF_DOCTOR_MAX_GRAPH_NODES", str(2**12 - 1 + 2**11))
    assert graph.load_mindir(explosion).graph.number_of_nodes() == 2**11 + 1  # the adds and the input
    monkeypatch.setenv("PERF_DOCTOR_MAX_GRAPH_NODES", str(2**12 - 1 + 2**11 - 1))
    with pytest.raises(InputError) as caught:
        graph.load_mindir(explosion)
    assert caught.value.problem.endswith("over 6,142 nodes and calls, the decoder's budget")
    assert "PERF_DOCTOR_MAX_GRAPH_NODES" in caught.value.expected

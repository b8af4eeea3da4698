"""MINDIR loader on real MindSpore 2.10 CPU exports (tests/fixtures/mindir, made by generate.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

import graph
from graph import schema
from graph.model import MindirModel

FIXTURES = Path(__file__).parent / "fixtures" / "mindir"
ROOT = Path(__file__).resolve().parents[1]
PLUMBING = {"Load", "Depend", "UpdateState", "MakeTuple", "TupleGetItem", "Partial", "Constant"}


@cache
def load(name: str) -> MindirModel:
    return graph.load_mindir(FIXTURES / f"{name}.mindir")


def ops(model: MindirModel, op: str) -> list[str]:
    return model.op_nodes(op)


def only(model: MindirModel, op: str) -> dict:
    nodes = ops(model, op)
    assert len(nodes) == 1, nodes
    return model.graph.nodes[nodes[0]]


# ---------------------------------------------------------------- protobuf backend, no MindSpore


@pytest.mark.slow
def test_fast_backend_is_used_and_mindspore_is_never_imported():
    code = (
        "import sys; import graph; "
        "from google.protobuf.internal import api_implementation as a; "
        f"m = graph.load_mindir({str(FIXTURES / 'conv_bn_relu_eval.mindir')!r}); "
        "print(a.Type(), 'mindspore' in sys.modules, 'pandas' in sys.modules, m.warnings)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env
    )
    assert out.stdout.split()[:3] == ["upb", "False", "False"]
    assert out.stdout.strip().endswith("[]")  # no "slow protobuf backend" warning


@pytest.mark.slow
def test_slow_backend_is_reported_as_a_warning():
    code = (
        "import graph; "
        f"m = graph.load_mindir({str(FIXTURES / 'conv_bn_relu_eval.mindir')!r}); "
        "print(graph.schema.backend()); print(m.warnings[0])"
    )
    env = {"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python", "PATH": ""}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env
    )
    backend, warning = out.stdout.strip().splitlines()
    assert backend == "python"
    assert "200x slower" in warning and "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=upb" in warning


def test_descriptor_is_built_in_code_from_field_numbers():
    fdp = schema.file_descriptor()
    fields = {m.name: {f.name: f.number for f in m.field} for m in fdp.message_type}
    assert fields["NodeProto"]["domain"] == 7 and fields["NodeProto"]["op_type"] == 4
    assert fields["ModelProto"]["primitives"] == 12 and fields["ModelProto"]["mind_ir_version"] == 13
    assert fields["TensorProto"]["external_data"] == 12 and fields["AttributeProto"]["values"] == 17
    assert schema.model_class().DESCRIPTOR.file.pool is not None


# ---------------------------------------------------------------- model metadata


def test_metadata_of_an_eval_export():
    model = load("conv_bn_relu_eval")
    assert (model.producer, model.model_version, model.ir_version, model.mind_ir_version) == (
        "MindSpore",
        "2.10.0",
        "1.1",
        3,
    )
    assert model.training is False
    assert model.functions == ()
    assert model.warnings == []
    assert [(i.name, i.dtype, i.shape) for i in model.inputs] == [("x", "float32", (1, 3, 16, 16))]
    assert [(o.dtype, o.shape) for o in model.outputs] == [("float32", (1, 8, 16, 16))]
    assert model.file_bytes == (FIXTURES / "conv_bn_relu_eval.mindir").stat().st_size


def test_training_flag_of_a_train_export():
    assert load("conv_bn_relu_train").training is True


def test_parameters_are_summarised_and_their_bytes_dropped():
    params = load("conv_bn_relu_eval").parameters
    # conv 8x3x3x3 float32 = 864 B, four BN vectors of 8 floats = 4 x 32 B
    assert params.count == 5
    assert params.total_bytes == params.inline_bytes == 864 + 4 * 32
    assert params.dtypes == {"float32": 5}
    assert {p.name: p.shape for p in params.items}["conv.weight"] == (8, 3, 3, 3)
    assert all(p.storage == "inline" for p in params.items)
    g = load("conv_bn_relu_eval").graph
    weight = next(
        n for n, d in g.nodes(data=True) if d.get("kind") == "parameter" and d["name"] == "conv.weight"
    )
    assert g.nodes[weight]["nbytes"] == 864 and "raw_data" not in g.nodes[weight]


# ---------------------------------------------------------------- the collapsed graph


def test_plumbing_is_collapsed():
    model = load("conv_bn_relu_eval")
    assert model.op_counts == {
        "Constant": 5,
        "Load": 5,
        "Conv2D": 1,
        "BatchNorm": 1,
        "TupleGetItem": 1,
        "ReLU": 1,
        "MakeTuple": 1,
        "UpdateState": 1,
        "Depend": 1,
    }
    g = model.graph
    assert sorted(d["op"] for _, d in g.nodes(data=True) if d["kind"] == "op") == [
        "BatchNorm",
        "Conv2D",
        "ReLU",
    ]
    conv, bn, relu = ops(model, "Conv2D")[0], ops(model, "BatchNorm")[0], ops(model, "ReLU")[0]
    # Load -> the parameter: the conv's input 1 is the weight parameter itself
    weight = next(p for p in g.pred[conv] if g.edges[p, conv]["index"] == 1)
    assert g.nodes[weight]["kind"] == "parameter" and g.nodes[weight]["name"] == "conv.weight"
    # TupleGetItem(BatchNorm, 0) -> an edge from BatchNorm's output 0; Depend -> its first input
    assert g.edges[bn, relu] == {"index": 0, "out_index": 0}
    assert g.edges[conv, bn]["index"] == 0
    assert g.graph["outputs"] == [relu]
    assert sorted(g.nodes[p]["name"] for p in g.pred[bn] if g.nodes[p]["kind"] == "parameter") == [
        "bn.beta",
        "bn.gamma",
        "bn.moving_mean",
        "bn.moving_variance",
    ]


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.mindir")))
def test_no_plumbing_node_survives_in_any_fixture(name):
    g = load(name).graph
    assert not [n for n, d in g.nodes(data=True) if d.get("op") in PLUMBING]
    assert all("kind" in d for _, d in g.nodes(data=True)), "edge to a node that was never defined"
    assert all(g.nodes[v]["kind"] in ("op", "call") for _, v in g.edges())


def test_node_attributes_scope_dtype_shape_primitive_attrs():
    model = load("conv_bn_relu_eval")
    conv = only(model, "Conv2D")
    assert conv["scope"] == "Default/conv-Conv2d/Conv2D-op0"
    assert (conv["dtype"], conv["shape"]) == ("float32", (1, 8, 16, 16))
    assert conv["attrs"]["kernel_size"] == (3, 3)
    assert conv["attrs"]["stride"] == (1, 1, 1, 1)
    assert conv["attrs"]["pad_mode"] == "same" and conv["attrs"]["format"] == "NCHW"
    assert conv["attrs"]["group"] == 1 and conv["attrs"]["out_channel"] == 8
    bn = only(model, "BatchNorm")
    assert bn["instance"] == "bn_infer"
    assert bn["out_types"][0] == ("float32", (1, 8, 16, 16)) and len(bn["out_types"]) == 5


def test_primitive_function_arguments_come_from_constant_inputs():
    bn_eval = only(load("conv_bn_relu_eval"), "BatchNorm")["args"]
    bn_train = only(load("conv_bn_relu_train"), "BatchNorm")["args"]
    assert bn_eval["is_training"] is False and bn_train["is_training"] is True
    assert bn_eval["epsilon"] == pytest.approx(1e-5) and bn_eval["momentum"] == pytest.approx(0.1)
    assert only(load("conv_bn_relu_train"), "BatchNorm")["instance"] == "bn_train"
    matmul = load("dropout_eval").graph.nodes[ops(load("dropout_eval"), "MatMul")[0]]["args"]
    assert (matmul["transpose_a"], matmul["transpose_b"]) == (False, True)
    dropout = only(load("dropout_train"), "Dropout")["args"]
    assert dropout["keep_prob"] == pytest.approx(0.5)


def test_primitives_are_shared_between_nodes():
    model = load("resnet50_noweights")
    convs = [model.graph.nodes[n] for n in ops(model, "Conv2D")]
    assert len(convs) == 53
    # 53 nodes reference 17 distinct Conv2D primitives (format guide §3.2): attribute dicts are shared
    assert len({id(c["attrs"]) for c in convs}) == 17


def test_cast_destination_types_under_amp():
    model = load("amp_o2")
    g = model.graph
    casts = [g.nodes[n] for n in ops(model, "Cast")]
    assert len(casts) == 7
    assert sorted(c["args"]["dst_dtype"] for c in casts) == ["float16"] * 5 + ["float32"] * 2
    assert all(c["dtype"] == c["args"]["dst_dtype"] for c in casts)
    assert only(model, "Conv2D")["dtype"] == "float16"
    assert only(model, "BatchNorm")["dtype"] == "float32"  # BN kept in fp32 under O2
    assert only(model, "Conv2D")["scope"] == "Default/_backbone-ConvHead/conv-Conv2d/Conv2D-op0"
    bf16 = load("amp_o2_bf16")
    assert only(bf16, "Conv2D")["dtype"] == "bfloat16"


def test_dynamic_and_float64_and_int_inputs():
    assert load("dynamic_batch").inputs[0].shape == (-1, 3, 16, 16)
    assert load("dynamic_batch").inputs[0].dynamic and not load("conv_bn_relu_eval").inputs[0].dynamic
    assert load("float64_input").inputs[0].dtype == "float64"
    inputs = load("while_net").inputs
    assert [(i.name, i.dtype, i.shape) for i in inputs] == [
        ("x", "float32", (1, 8, 16, 16)),
        ("n", "int32", ()),
    ]


def test_resnet50_layout_op_counts_match_the_reference():
    model = load("resnet50_noweights")
    assert model.op_counts == {
        "Constant": 7,
        "Load": 267,
        "Conv2D": 53,
        "BatchNorm": 53,
        "TupleGetItem": 53,
        "ReLU": 49,
        "MaxPool": 1,
        "Add": 16,
        "ReduceMean": 1,
        "MatMul": 1,
        "BiasAdd": 1,
        "MakeTuple": 1,
        "UpdateState": 1,
        "Depend": 1,
    }
    assert sum(model.op_counts.values()) == 505
    assert model.parameters.count == 267


def test_stripped_resnet50_keeps_shapes_but_no_weight_bytes():
    params = load("resnet50_noweights").parameters
    assert params.inline_bytes == 0 and params.absent == 267
    assert params.total_bytes == 102_440_608  # the full export's raw_data size, from dims x itemsize
    assert any("no weight data" in w for w in load("resnet50_noweights").warnings)


# ---------------------------------------------------------------- functions and control flow


def test_lazy_inline_block_is_inlined_once_per_call_site():
    model = load("lazy_inline")
    assert [(f.role, f.call_sites) for f in model.functions] == [("lazy_inline", 3)]
    convs = ops(model, "Conv2D")
    assert len(convs) == 3
    assert [c.endswith(("#1", "#2")) for c in convs] == [False, True, True]
    g = model.graph
    weights = [g.nodes[p]["name"] for c in convs for p in g.pred[c] if g.nodes[p]["kind"] == "parameter"]
    assert weights == ["blocks.0.conv.weight", "blocks.1.conv.weight", "blocks.2.conv.weight"]
    relus = ops(model, "ReLU")
    assert g.has_edge(relus[0], convs[1]) and g.has_edge(relus[1], convs[2])  # blocks are chained
    assert g.nodes[convs[1]]["role"] == "lazy_inline" and g.nodes[convs[1]]["call_site"]


def test_if_branches_are_both_inlined_and_merge_into_the_consumer():
    model = load("if_net")
    assert sorted((f.role, f.call_sites) for f in model.functions) == [("if-false", 1), ("if-true", 1)]
    g = model.graph
    roles = {g.nodes[n]["role"] for n in ops(model, "Conv2D")}
    assert roles == {"if-true", "if-false"}
    muls = ops(model, "Muls")[0]
    assert sorted(g.nodes[p]["op"] for p in g.pred[muls]) == ["ReLU", "Sigmoid"]
    # the BatchNorm in the true branch reads its is_training constant from the main graph
    assert only(model, "BatchNorm")["args"]["is_training"] is False
    switch = only(model, "Switch")
    assert switch["scope"] == "Default/Switch-op0"


def test_while_loop_body_is_inlined_and_the_back_edge_stays_an_opaque_call():
    model = load("while_net")
    roles = sorted((f.role, f.call_sites) for f in model.functions)
    assert roles == [("while-body", 1), ("while-exit", 1), ("while-header", 1)]
    g = model.graph
    conv = ops(model, "Conv2D")[0]
    assert g.nodes[conv]["role"] == "while-body"
    calls = [d for _, d in g.nodes(data=True) if d["kind"] == "call"]
    assert len(calls) == 1 and calls[0]["recursive"] is True and "↵" in calls[0]["target"]
    assert nx_is_dag(g)


def nx_is_dag(g) -> bool:
    import networkx as nx

    return nx.is_directed_acyclic_graph(g)


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.mindir")))
def test_every_fixture_graph_is_acyclic(name):
    assert nx_is_dag(load(name).graph)


# ---------------------------------------------------------------- external data and older files


def test_external_weights_next_to_the_file():
    model = load("external_graph")
    params = model.parameters
    assert params.external_files == ("external_variables/data_0",)
    assert params.missing_external == () and model.warnings == []
    assert all(p.storage == "external" for p in params.items)
    assert params.external_bytes == params.total_bytes == 864 + 4 * 32
    assert params.inline_bytes == 0


def test_external_weights_missing_are_a_warning_not_an_error(tmp_path):
    shutil.copyfile(FIXTURES / "external_graph.mindir", tmp_path / "external_graph.mindir")
    model = graph.load_mindir(tmp_path / "external_graph.mindir")
    assert model.parameters.missing_external == ("external_variables/data_0",)
    assert any("external data files not found" in w for w in model.warnings)
    assert graph.chain_counts(graph.find_chains(model)) == {"conv-bn-act": 1}


@pytest.mark.parametrize(
    "location",
    ["/etc/passwd", "/nonexistent/id_rsa", "../../etc/passwd", "external_variables/../../x", "link/data_0"],
)
def test_external_data_outside_the_models_folder_is_never_looked_up_or_named(tmp_path, location):
    """Issue 33 item 3: an absolute or climbing location (or a link leading out) would make the report an
    oracle for which server files exist; it is one unnamed 'not uploaded' warning, whether it exists."""
    folder = tmp_path / "upload"
    folder.mkdir()
    (folder / "link").symlink_to(FIXTURES / "external_variables")  # a real file, but outside the upload
    model = schema.model_class().FromString((FIXTURES / "external_graph.mindir").read_bytes())
    for owner in [model.graph, *model.functions]:
        for param in owner.parameter:
            if param.HasField("external_data"):
                param.external_data.location = location
    path = folder / "model.mindir"
    path.write_bytes(model.SerializeToString())
    loaded = graph.load_mindir(path)
    assert loaded.parameters.missing_external == (location,)
    assert [w for w in loaded.warnings if "external" in w] == [
        "external weights not uploaded: 1 external data files are named outside the model's folder and were "
        "not looked up; the graph is analysed without them"
    ]
    assert not any(part in " ".join(loaded.warnings) for part in ("etc", "passwd", "id_rsa", "link"))


def _as_version_1(src: Path, dst: Path, is_training: bool) -> None:
    """Rewrite a 2.10 export the way 2.0-2.2 files are expected to look: mind_ir_version 1 and
    BatchNorm arguments as primitive attributes instead of Constant inputs."""
    model = schema.model_class().FromString(src.read_bytes())
    model.mind_ir_version = 1
    bn_prim = next(p for p in model.primitives if p.op_type == "BatchNorm")
    bn_prim.prim_type = 1
    bn_prim.attribute.add(name="is_training", type=9, i=int(is_training))
    bn_prim.attribute.add(name="epsilon", type=1, f=1e-3)
    bn_node = next(n for n in model.graph.node if n.op_type == f"REF::{bn_prim.name}")
    del bn_node.input[5:]  # keep x, scale, bias, mean, variance
    dst.write_bytes(model.SerializeToString())


@pytest.mark.parametrize("is_training", [False, True])
def test_version_1_files_read_arguments_from_primitive_attributes(tmp_path, is_training):
    target = tmp_path / "old.mindir"
    _as_version_1(FIXTURES / "conv_bn_relu_eval.mindir", target, is_training)
    model = graph.load_mindir(target)
    assert model.mind_ir_version == 1
    assert any("2.0-2.2" in w for w in model.warnings)
    args = only(model, "BatchNorm")["args"]
    assert args["is_training"] is is_training
    assert args["epsilon"] == pytest.approx(1e-3)


def test_constant_inputs_win_over_primitive_attributes(tmp_path):
    model = schema.model_class().FromString((FIXTURES / "conv_bn_relu_eval.mindir").read_bytes())
    next(p for p in model.primitives if p.op_type == "BatchNorm").attribute.add(
        name="is_training", type=9, i=1
    )
    (tmp_path / "both.mindir").write_bytes(model.SerializeToString())
    assert only(graph.load_mindir(tmp_path / "both.mindir"), "BatchNorm")["args"]["is_training"] is False

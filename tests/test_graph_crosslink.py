"""Cross-link of fusion chains with a profiled run.

The runs here are small synthetic kernel tables built with conform_kernels, but every kernel name is
a real NodeProto.domain read from a real export (the GRAPH-mode join key, profiler-formats.md §8).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd
import pytest

import graph
from core.model import Run, RunMeta, conform_kernels, conform_steps
from graph.model import Chain, MindirModel
from graph.profile_join import COLUMNS, kernel_op_type, normalise_scope

FIXTURES = Path(__file__).parent / "fixtures" / "mindir"
STEPS = (1, 2, 3)
DURATION = {"BatchNorm": 10.0, "ReLU": 2.0, "Add": 3.0, "BiasAdd": 4.0, "Conv2D": 100.0, "MatMul": 50.0}


@cache
def load(name: str) -> MindirModel:
    return graph.load_mindir(FIXTURES / f"{name}.mindir")


@cache
def chains_of(name: str) -> tuple[Chain, ...]:
    return tuple(graph.find_chains(load(name)))


def op_nodes(model: MindirModel) -> list[tuple[str, str]]:
    """(scope, op) of every op node in graph order."""
    return [(d["scope"], d["op"]) for _, d in model.graph.nodes(data=True) if d["kind"] == "op"]


def make_run(rows: list[dict], device: str = "Ascend", mode: str = "graph", steps: int = len(STEPS)) -> Run:
    meta = RunMeta(layout="cpu-ms", source="synthetic", device=device, execution_mode=mode)
    return Run(
        meta, conform_kernels(pd.DataFrame(rows)), conform_steps(pd.DataFrame({"step": range(1, steps + 1)}))
    )


def graph_rows(model: MindirModel, keep=lambda op: True, name=lambda scope, op: scope) -> list[dict]:
    """One kernel per op node per step, named after the node's domain (GRAPH mode)."""
    rows = []
    for step in STEPS:
        for i, (scope, op) in enumerate(op_nodes(model)):
            if keep(op):
                rows.append(
                    {
                        "name": name(scope, op),
                        "op_type": op,
                        "step": step,
                        "start_us": step * 1e6 + i,
                        "duration_us": DURATION.get(op, 1.0),
                    }
                )
    return rows


def resnet_separate_us() -> float:
    """BN + ReLU + Add + BiasAdd time per step of the ResNet-50 layout (all of them are in chains)."""
    counts = load("resnet50_noweights").op_counts
    return sum(counts[op] * DURATION[op] for op in ("BatchNorm", "ReLU", "Add", "BiasAdd"))


# ---------------------------------------------------------------- scope normalisation


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        ("Default/conv-Conv2d/Conv2D-op0", "Default/conv-Conv2d/Conv2D-op0"),
        (
            "Default/network-WithLossCell/_backbone-Net/conv-Conv2d/Conv2D-op0",
            "Default/conv-Conv2d/Conv2D-op0",
        ),
        (
            "Default/_backbone-ConvHead/bn-_OutputTo16/_backbone-BatchNorm2d/BatchNorm-op0",
            "Default/bn-BatchNorm2d/BatchNorm-op0",
        ),
        (
            "Default/network-WithLossCell/_backbone-_OutputTo32/_backbone-Net/bn-_OutputTo16/_backbone-BatchNorm2d/Cast-op0",
            "Default/bn-BatchNorm2d/Cast-op0",
        ),
        (
            "Gradients/Default/network-WithLossCell/_backbone-Net/conv-Conv2d/Grad_Conv2D/Conv2DBackpropFilter-op0",
            None,
        ),
        ("Default/optimizer-Momentum/ApplyMomentum-op0", None),
        ("Default/network-WithLossCell/_loss_fn-SoftmaxCrossEntropyWithLogits/SparseSoftmax-op0", None),
        ("", None),
    ],
)
def test_normalise_scope(scope, expected):
    assert normalise_scope(scope) == expected


def test_kernel_op_type_from_names():
    assert kernel_op_type("Default/conv-Conv2d/Conv2D-op12") == "Conv2D"
    assert kernel_op_type("MatMul") == "MatMul"
    assert kernel_op_type("Default/x/trans_Cast_5") == "trans_Cast_5"


# ---------------------------------------------------------------- GRAPH-mode scope join


def test_every_chain_ran_split_and_the_time_is_recoverable():
    model = load("resnet50_noweights")
    table, symptoms = graph.crosslink(
        model, list(chains_of("resnet50_noweights")), make_run(graph_rows(model))
    )
    assert list(table.columns) == list(COLUMNS)
    assert {c: str(t) for c, t in table.dtypes.items()} == {
        c: str(pd.Series(dtype=t).dtype) for c, t in COLUMNS.items()
    }
    assert len(table) == 54 and set(table["status"]) == {"split"} and set(table["join"]) == {"scope"}
    stem = table.iloc[0]
    assert stem["separate_kernels"] == 2 and stem["separate_us_per_step"] == pytest.approx(12.0)  # BN + ReLU
    (symptom,) = symptoms
    assert symptom.kind == "chains-ran-split" and symptom.source == "mindir+profile"
    assert symptom.recoverable_ms_per_step == pytest.approx(resnet_separate_us() / 1000)
    assert symptom.values["chains_split"] == 54 and symptom.values["steps"] == 3
    assert symptom.values["approximate"] == 0 and symptom.values["cpu_run"] == 0
    assert symptom.strength == 1.0 and "Ascend/GPU" not in symptom.summary
    assert symptom.evidence[0]["separate_us_per_step"] == max(table["separate_us_per_step"])


def test_fused_chains_do_not_fire():
    model = load("resnet50_noweights")
    rows = graph_rows(model, keep=lambda op: op in ("Conv2D", "MatMul", "MaxPool", "ReduceMean"))
    table, symptoms = graph.crosslink(model, list(chains_of("resnet50_noweights")), make_run(rows))
    assert set(table["status"]) == {"fused"} and table["separate_us_per_step"].sum() == 0
    assert symptoms == []


def test_partly_fused_chains():
    """BN folded into the conv, activations still separate (what a Conv+BN folding pass leaves)."""
    model = load("resnet50_noweights")
    rows = graph_rows(model, keep=lambda op: op != "BatchNorm")
    table, (symptom,) = graph.crosslink(model, list(chains_of("resnet50_noweights")), make_run(rows))
    status = dict(zip(table["pattern"], table["status"], strict=False))
    assert status == {
        "conv-bn-act": "partly-fused",
        "conv-bn-add-act": "partly-fused",
        "conv-bn": "fused",
        "matmul-biasadd": "split",
    }
    counts = load("resnet50_noweights").op_counts
    expected = counts["ReLU"] * 2.0 + counts["Add"] * 3.0 + counts["BiasAdd"] * 4.0
    assert symptom.recoverable_ms_per_step == pytest.approx(expected / 1000)
    assert symptom.values["chains_partly_fused"] == 49 and symptom.values["chains_fused"] == 4


def test_training_run_names_are_normalised_and_backward_ops_ignored():
    model = load("resnet50_noweights")

    def wrapped(scope, op):
        return scope.replace("Default/", "Default/network-WithLossCell/_backbone-ResNet50/", 1)

    rows = graph_rows(model, name=wrapped)
    for step in STEPS:  # backward and optimizer kernels of the same op types must not count
        rows.append(
            {
                "name": "Gradients/Default/network-WithLossCell/_backbone-ResNet50/relu-ReLU/ReluGrad-op0",
                "op_type": "ReLU",
                "step": step,
                "duration_us": 1e6,
            }
        )
        rows.append(
            {
                "name": "Default/optimizer-Momentum/ApplyMomentum-op0",
                "op_type": "ApplyMomentum",
                "step": step,
                "duration_us": 1e6,
            }
        )
    _, (symptom,) = graph.crosslink(model, list(chains_of("resnet50_noweights")), make_run(rows))
    assert symptom.recoverable_ms_per_step == pytest.approx(resnet_separate_us() / 1000)


def test_amp_graph_scopes_join_an_fp32_named_profile():
    """The AMP export's `bn-_OutputTo16/_backbone-BatchNorm2d` scopes meet plain `bn-BatchNorm2d` names."""
    model = load("amp_o2")
    rows = graph_rows(model, name=lambda scope, op: normalise_scope(scope))
    table, (symptom,) = graph.crosslink(model, list(chains_of("amp_o2")), make_run(rows))
    assert list(table["status"]) == ["split", "split"]
    assert symptom.recoverable_ms_per_step == pytest.approx((10.0 + 2.0 + 4.0) / 1000)


def test_ascend_launch_op_slash_kernel_names():
    model = load("resnet50_noweights")
    rows = graph_rows(model, name=lambda scope, op: f"{scope}/{op}")
    table, (symptom,) = graph.crosslink(model, list(chains_of("resnet50_noweights")), make_run(rows))
    assert set(table["status"]) == {"split"}
    assert symptom.recoverable_ms_per_step == pytest.approx(resnet_separate_us() / 1000)


def test_blocked_chains_report_separate_time_but_nothing_recoverable():
    model = load("conv_bn_relu_train")
    table, (symptom,) = graph.crosslink(
        model, list(chains_of("conv_bn_relu_train")), make_run(graph_rows(model))
    )
    assert table.iloc[0]["status"] == "split" and not table.iloc[0]["fusible"]
    assert table.iloc[0]["separate_us_per_step"] == pytest.approx(12.0)
    assert symptom.recoverable_ms_per_step == 0 and symptom.values["separate_ms_per_step"] == pytest.approx(
        0.012
    )


def test_lazy_inline_copies_sharing_a_scope_split_its_time():
    model = load("lazy_inline")
    scopes = sorted({s for s, _ in op_nodes(model)})
    assert len(scopes) == 3  # conv, bn, relu: the three call sites carry the first block's scopes
    rows = [
        {"name": s, "op_type": s.rsplit("/", 1)[-1].split("-op")[0], "step": 1, "duration_us": 30.0}
        for s in scopes
    ]
    table, (symptom,) = graph.crosslink(model, list(chains_of("lazy_inline")), make_run(rows, steps=1))
    assert list(table["separate_us_per_step"]) == pytest.approx([20.0, 20.0, 20.0])  # (BN 30 + ReLU 30) / 3
    assert symptom.recoverable_ms_per_step == pytest.approx(0.06)


def test_cpu_runs_are_flagged_and_weaker():
    model = load("resnet50_noweights")
    _, (symptom,) = graph.crosslink(
        model, list(chains_of("resnet50_noweights")), make_run(graph_rows(model), device="CPU")
    )
    assert symptom.values["cpu_run"] == 1 and symptom.strength == 0.5
    assert "CPU backend never fuses" in symptom.summary


def test_profile_of_another_model_matches_nothing():
    model = load("resnet50_noweights")
    other = load("lazy_inline")  # shares no scope with ResNet-50 (mobilenet_block would: bn1-BatchNorm2d)
    table, symptoms = graph.crosslink(
        model, list(chains_of("resnet50_noweights")), make_run(graph_rows(other))
    )
    assert set(table["status"]) == {"not-found"} and set(table["join"]) == {"scope"}
    assert symptoms == []


def test_empty_profile_or_no_chains():
    model = load("resnet50_noweights")
    table, symptoms = graph.crosslink(model, list(chains_of("resnet50_noweights")), make_run([]))
    assert table.empty and list(table.columns) == list(COLUMNS) and symptoms == []
    table, symptoms = graph.crosslink(load("topk_int32"), [], make_run(graph_rows(load("topk_int32"))))
    assert table.empty and symptoms == []


# ---------------------------------------------------------------- PyNative: op type and order


def pynative_rows(model: MindirModel, with_steps: bool = True) -> list[dict]:
    """Scope-less names; BatchNorm launch i lasts i+1 µs so a wrong order changes the numbers."""
    rows = []
    for step in STEPS:
        seen: dict[str, int] = {}
        for i, (_, op) in enumerate(op_nodes(model)):
            k = seen[op] = seen.get(op, -1) + 1
            duration = k + 1.0 if op == "BatchNorm" else DURATION.get(op, 1.0)
            name = op if op == "ReLU" else f"Default/{op}-op{k}"
            rows.append(
                {
                    "name": name,
                    "op_type": op,
                    "step": step if with_steps else None,
                    "start_us": step * 1e6 + i,
                    "duration_us": duration,
                }
            )
    return rows


@pytest.mark.parametrize("with_steps", [True, False])
def test_pynative_profiles_join_by_op_type_and_order(with_steps):
    model = load("resnet50_noweights")
    chains = list(chains_of("resnet50_noweights"))
    table, (symptom,) = graph.crosslink(
        model, chains, make_run(pynative_rows(model, with_steps), mode="pynative")
    )
    assert set(table["join"]) == {"op-type-order"} and symptom.values["approximate"] == 1
    assert "approximate" in symptom.summary and symptom.strength == pytest.approx(0.7)
    bn_order = model.op_nodes("BatchNorm")
    for chain, row in zip(chains, table.itertuples(), strict=True):
        if chain.pattern == "matmul-biasadd":
            continue
        expected = bn_order.index(chain.nodes[1]) + 1.0  # the i-th BatchNorm got the i-th launch
        expected += {"conv-bn-act": 2.0, "conv-bn-add-act": 3.0 + 2.0, "conv-bn": 0.0}[chain.pattern]
        assert row.separate_us_per_step == pytest.approx(expected), chain.scopes[0]
    total = sum(range(1, 54)) + 49 * 2.0 + 16 * 3.0 + 4.0
    assert symptom.recoverable_ms_per_step == pytest.approx(total / 1000)

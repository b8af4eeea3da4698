"""The fixes do what they say, measured with real MindSpore 2.10 on CPU: the rule's own fix code runs on a
fresh net, then the net is exported with real ``ms.export(..., file_format="MINDIR")`` and its nodes are
counted with this repository's protobuf-only loader (graph.load_mindir), or it is profiled with the real
CPU profiler and its kernels are read with this repository's readers (diagnosis.ingest.read_folder).

Measured (MindSpore 2.10.0, CPU):

* cast-overhead, Cast nodes in the MINDIR -- the 1-Conv test net (SmallNet): 8 with the previous fix
  (custom_mixed_precision with the white list and FP16 input), 9 with O1, 7 with O2, **1** with the fix;
  the 5-Conv-BN-ReLU + LayerNorm + Dense net (ConvStack): 20, 21, 21 and **3**.
* train-mode-at-inference: Dropout nodes 1 -> 0, BatchNorm is_training True -> False.
* execution-mode-mismatch, host-bound, fusion-missing: kernels per call 6 (PyNative: Flatten is a launched
  kernel, names carry no cell scope) -> 5 (graph mode: Flatten launches nothing, every name is
  cell-scoped); with jit_level O1 on CPU BatchNorm still runs as its own kernel (nothing is fused).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

import graph
from diagnosis.ingest import read_folder
from knowledge import load_rules
from knowledge.verify import export_snippets, profile_snippet

pytestmark = [pytest.mark.mindspore, pytest.mark.slow]

FIX = {r.id: r.fix.code for r in load_rules()}

# The Cast-heavy set-ups the cast-overhead rule meets in practice; "custom-white-list" is the fix this
# rule recommended before (the O1 code path: a Cast pair around every white-listed op).
CAST_BEFORE = {
    "custom-white-list": (
        "net = ms.amp.custom_mixed_precision(net, white_list=ms.amp.get_white_list())\n"
        "net.set_train(False)\nx = x.astype(ms.float16)\n"
    ),
    "o1": "net.set_train(False)\nnet = ms.amp.auto_mixed_precision(net, 'O1')\n",
    "o2": "net.set_train(False)\nnet = ms.amp.auto_mixed_precision(net, 'O2')\n",
}
# Cast nodes per export, as measured (pinned: the fix's notes quote these numbers).
CASTS = {
    "SmallNet": {"fp32": 0, "custom-white-list": 8, "o1": 9, "o2": 7, "fixed": 1},
    "ConvStack": {"fp32": 0, "custom-white-list": 20, "o1": 21, "o2": 21, "fixed": 3},
}


def _load(path: str) -> graph.MindirModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return graph.load_mindir(path)


def _exports(snippets: dict[str, str], out: Path, net: str = "SmallNet") -> dict[str, graph.MindirModel]:
    results = export_snippets(snippets, out, net=net)
    failed = {name: r["error"] for name, r in results.items() if not r["ok"]}
    assert not failed, failed
    return {name: _load(r["path"]) for name, r in results.items()}


# --- cast-overhead ------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=sorted(CASTS))
def cast_models(request: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    snippets = {"fp32": "net.set_train(False)\n", **CAST_BEFORE, "fixed": FIX["cast-overhead"]}
    out = tmp_path_factory.mktemp(f"casts-{request.param}")
    return request.param, _exports(snippets, out, net=request.param)


def test_cast_fix_leaves_strictly_fewer_casts(cast_models: tuple[str, dict[str, Any]]) -> None:
    net, models = cast_models
    casts = {name: model.op_counts.get("Cast", 0) for name, model in models.items()}
    assert casts == CASTS[net]
    assert all(casts["fixed"] < casts[before] for before in CAST_BEFORE), casts


def test_cast_fix_computes_in_fp16_from_fp16_input(cast_models: tuple[str, dict[str, Any]]) -> None:
    _, models = cast_models
    fixed = models["fixed"]
    assert [i.dtype for i in fixed.inputs] == ["float16"]
    g = fixed.graph
    assert {g.nodes[n]["dtype"] for n in fixed.op_nodes("Conv2D", "MatMul")} == {"float16"}
    # no weight is cast on every call: the parameters themselves are stored in FP16 (LayerNorm's in FP32)
    assert not any(
        g.nodes[p].get("kind") == "parameter" for n in fixed.op_nodes("Cast") for p in g.predecessors(n)
    )


# --- train-mode-at-inference --------------------------------------------------------------------------


def test_eval_mode_fix_removes_dropout_and_training_batchnorm(tmp_path: Path) -> None:
    models = _exports({"as-trained": "", "fixed": FIX["train-mode-at-inference"]}, tmp_path)
    counts = {name: m.op_counts.get("Dropout", 0) for name, m in models.items()}
    assert counts == {"as-trained": 1, "fixed": 0}
    training = {
        name: [m.graph.nodes[n]["args"]["is_training"] for n in m.op_nodes("BatchNorm")]
        for name, m in models.items()
    }
    assert training == {"as-trained": [True], "fixed": [False]}


# --- execution-mode-mismatch, host-bound, fusion-missing: compiled graph vs PyNative ---------------------

GRAPH_FIXES = ("execution-mode-mismatch", "host-bound", "fusion-missing")


def _kernels_per_call(name: str, code: str, out: Path) -> tuple[float, list[str]]:
    result = profile_snippet(name, code, out)
    assert result["ok"], result["error"]
    kernels = read_folder(Path(result["path"])).kernels
    return len(kernels) / result["steps"], sorted(set(kernels["name"]))


@pytest.fixture(scope="module")
def pynative_kernels(tmp_path_factory: pytest.TempPathFactory) -> tuple[float, list[str]]:
    return _kernels_per_call("pynative", "net.set_train(False)\n", tmp_path_factory.mktemp("pynative"))


def test_pynative_launches_flatten_and_names_no_cell(pynative_kernels: tuple[float, list[str]]) -> None:
    per_call, names = pynative_kernels
    assert per_call == 6 and any("Flatten" in n for n in names)
    assert not all(n.count("/") >= 2 for n in names)  # ReLU, MatMul: bare names without a cell scope


@pytest.mark.parametrize("rule_id", GRAPH_FIXES)
def test_graph_mode_fix_launches_fewer_kernels_per_call(
    rule_id: str, pynative_kernels: tuple[float, list[str]], tmp_path: Path
) -> None:
    per_call, names = _kernels_per_call(rule_id, FIX[rule_id], tmp_path)
    assert (pynative_kernels[0], per_call) == (6, 5)  # Flatten is a kernel in PyNative, a no-op in the graph
    assert not any("Flatten" in n for n in names)
    assert all(n.count("/") >= 2 for n in names)  # Default/<cell scope>/<op>: one compiled graph
    # jit_level O1 fuses nothing on CPU: BatchNorm stays its own kernel (fusion-missing says so)
    assert sum("BatchNorm" in n for n in names) == 1


# --- outputs-nondeterministic: the atomic adds of a ScatterNdAdd readout --------------------------------

OUTPUT_FIXTURES = Path(__file__).parent / "fixtures" / "outputs"
# The rule's fix on the readout net of tests/fixtures/outputs/generate.py (its 2-thread runs differ in the
# last digits: ScatterNdAdd's atomic adds follow thread timing), in a fresh process of default CPU threads.
READOUT_FIX = """
import sys
import mindspore as ms
from mindspore import nn
sys.path.insert(0, sys.argv[1])  # MindSpore imports a Cell's module by name to compile it
import generate as gen
ms.set_context(mode=ms.GRAPH_MODE)
ms.set_device("CPU")
ms.set_seed(gen.SEED)
inner, graph_ids, x = gen.readout_net()


class Bound(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = inner
        self.ids = graph_ids

    def construct(self, nodes):
        return self.inner(self.ids, nodes)


net = Bound()
exec(sys.argv[2], {"ms": ms, "net": net, "x": x, "__name__": "fix"}, scope := {})
print(scope["out"].asnumpy().tobytes().hex())
"""


def _readout_with_fix(script: Path) -> bytes:
    """The readout net's output bytes after the rule's own fix code, in a fresh MindSpore process (from a
    file: MindSpore compiles a Cell from its source file, not from `python -c`)."""
    import subprocess
    import sys

    script.write_text(READOUT_FIX, encoding="utf-8")
    code = FIX["outputs-nondeterministic"]
    cmd = [sys.executable, str(script), str(OUTPUT_FIXTURES), code]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300, cwd=script.parent)
    return bytes.fromhex(done.stdout.split()[-1])


def test_nondeterministic_fix_gives_the_one_thread_output_every_run(tmp_path: Path) -> None:
    """On CPU the fix runs one kernel thread: three fresh runs give the 1-thread dump's output bit for bit
    (2-thread runs gave 3 different outputs in 10, none of them this one: the fixtures' README)."""
    import numpy as np

    dumped = next((OUTPUT_FIXTURES / "readout_1thread").rglob("BiasAdd.*.output.0.*.npy"))
    runs = {_readout_with_fix(tmp_path / "readout_fix.py") for _ in range(3)}
    assert runs == {np.load(dumped).tobytes()}

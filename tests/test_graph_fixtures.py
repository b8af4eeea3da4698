"""The MINDIR fixtures and their generator: re-export with real MindSpore, strip weights, backend."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

import graph
from tests.support.scripts import load_script

FIXTURES = Path(__file__).parent / "fixtures" / "mindir"
ROOT = Path(__file__).resolve().parents[1]


def _generator() -> ModuleType:
    """tests/fixtures/mindir/generate.py under a unique module name (other fixture folders have one too)."""
    return load_script(FIXTURES / "generate.py", "mindir_fixture_generate")


generate = _generator()


def clean_env() -> dict[str, str]:
    """This process's environment without the backend variable (importing graph here set it)."""
    return {k: v for k, v in os.environ.items() if k != "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"}


def summary(model: graph.MindirModel) -> tuple:
    """What must not change between two exports of the same net."""
    params = tuple((p.name, p.dtype, p.shape) for p in model.parameters.items)
    return model.op_counts, graph.chain_counts(graph.find_chains(model)), params, model.inputs


def test_every_fixture_named_by_the_generator_is_committed():
    for name in generate.FIXTURES:
        expected = {"resnet50": "resnet50_noweights", "external": "external_graph"}.get(name, name)
        assert (FIXTURES / f"{expected}.mindir").is_file(), name
    assert (FIXTURES / "external_variables" / "data_0").is_file()
    small = [p for p in FIXTURES.glob("*.mindir") if p.name != "resnet50_noweights.mindir"]
    assert all(p.stat().st_size < 30_000 for p in small)


def test_strip_weights_keeps_the_graph_and_drops_the_bytes(tmp_path):
    target = tmp_path / "stripped.mindir"
    removed = generate.strip_weights(FIXTURES / "conv_bn_relu_eval.mindir", target)
    assert removed == 864 + 4 * 32
    original, stripped = graph.load_mindir(FIXTURES / "conv_bn_relu_eval.mindir"), graph.load_mindir(target)
    assert summary(stripped) == summary(original)
    assert stripped.parameters.inline_bytes == 0 and stripped.parameters.absent == 5
    assert target.stat().st_size < (FIXTURES / "conv_bn_relu_eval.mindir").stat().st_size - removed


@pytest.mark.mindspore
@pytest.mark.slow
def test_reexport_matches_the_committed_fixtures(tmp_path):
    for name in ("conv_bn_relu_eval", "conv_bn_relu_train"):
        fresh = graph.load_mindir(generate.export_one(name, tmp_path / name))
        assert summary(fresh) == summary(graph.load_mindir(FIXTURES / f"{name}.mindir"))
    eval_bytes = (tmp_path / "conv_bn_relu_eval" / "conv_bn_relu_eval.mindir").read_bytes()
    train_bytes = (tmp_path / "conv_bn_relu_train" / "conv_bn_relu_train.mindir").read_bytes()
    assert eval_bytes != train_bytes  # separate processes: the train export is not a copy of the eval graph


@pytest.mark.mindspore
@pytest.mark.slow
def test_full_weight_resnet50_loads_fast_and_matches_the_stripped_fixture(tmp_path):
    path = generate.export_one("resnet50", tmp_path)
    start = time.perf_counter()
    model = graph.load_mindir(path)
    chains = graph.find_chains(model)
    elapsed = time.perf_counter() - start
    assert model.parameters.inline_bytes == model.parameters.total_bytes == 102_440_608
    assert graph.chain_counts(chains) == {
        "conv-bn-act": 33,
        "conv-bn-add-act": 16,
        "conv-bn": 4,
        "matmul-biasadd": 1,
    }
    assert summary(model) == summary(graph.load_mindir(FIXTURES / "resnet50_noweights.mindir"))
    assert elapsed < 2.0, (
        f"load + walk took {elapsed:.2f} s (bench: ~0.15 s; generous bound for a shared CPU)"
    )


@pytest.mark.mindspore
@pytest.mark.slow
def test_importing_graph_first_keeps_upb_even_after_mindspore_is_imported():
    fixture = str(FIXTURES / "conv_bn_relu_eval.mindir")
    code = (
        "import os, graph, mindspore; from google.protobuf.internal import api_implementation as a; "
        f"m = graph.load_mindir({fixture!r}); "
        "print(a.Type(), os.environ['PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION'], len(m.warnings))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=clean_env()
    )
    assert out.stdout.split()[-3:] == ["upb", "upb", "0"]
    code = (
        "import mindspore, graph; from google.protobuf.internal import api_implementation as a; "
        f"m = graph.load_mindir({fixture!r}); print(a.Type(), 'upb' in m.warnings[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=clean_env()
    )
    assert out.stdout.split()[-2:] == ["python", "True"]  # MindSpore first: slow backend, and we say so

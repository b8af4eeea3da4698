"""Shared fixtures: input paths, a hostile copy of a real profile, and the app launched in-process."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

from tests.support.inputs import CPU, free_port, poison_profile

# gradio_client would otherwise ask huggingface.co about the Space; tests talk to 127.0.0.1 only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

# The protobuf backend, as the app gets it (graph/__init__ sets upb before anything imports MindSpore). A
# test that imports MindSpore first (knowledge.verify's name resolution) would otherwise leave protobuf on
# its 'python' backend for the rest of the worker, and every later MINDIR report would carry the model
# note that says so: the golden reports then depended on which test files ran before them in the worker.
os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "upb")


def module_marks(path: Path) -> set[str]:
    """The marks a test module gives all its tests (`pytestmark = pytest.mark.x` or a list of them), read
    from its source without importing it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    marks = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets):
            for attr in ast.walk(node.value):
                if isinstance(attr, ast.Attribute) and ast.unparse(attr.value) == "pytest.mark":
                    marks.add(attr.attr)
    return marks


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Do not import a module whose module-wide marks `-m` deselects: the app modules import Gradio, which
    costs the fast lane seconds for tests that would not run."""
    markexpr = config.getoption("markexpr")
    if not markexpr or not (collection_path.name.startswith("test_") and collection_path.suffix == ".py"):
        return None
    marks = module_marks(collection_path)
    selected = Expression.compile(markexpr).evaluate(lambda name, /, **kwargs: not kwargs and name in marks)
    return True if marks and not selected else None


@pytest.fixture
def xss_profile(tmp_path: Path) -> Path:
    """infer_fp32_graph with its first Conv2D renamed to an HTML payload."""
    return poison_profile(CPU / "infer_fp32_graph", tmp_path / "xss_profile")


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """The app launched in-process on 127.0.0.1 and a free port, shared by the API and browser tests."""
    from app import build_demo, launch_kwargs
    from doctor.config import AppConfig

    config = AppConfig()
    demo = build_demo(config)
    _, url, _ = demo.launch(
        server_name="127.0.0.1",
        server_port=free_port(),
        prevent_thread_lock=True,
        quiet=True,
        **launch_kwargs(config, demo),
    )
    yield url
    demo.close()

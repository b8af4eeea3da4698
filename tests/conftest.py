"""Shared fixtures: input paths, a hostile copy of a real profile, and the app launched in-process."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.inputs import CPU, free_port, poison_profile

# gradio_client would otherwise ask huggingface.co about the Space; tests talk to 127.0.0.1 only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


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

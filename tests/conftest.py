"""Shared fixtures: input paths, a hostile copy of a real profile, and the app launched in-process."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

# gradio_client would otherwise ask huggingface.co about the Space; tests talk to 127.0.0.1 only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

ROOT = Path(__file__).resolve().parent.parent
CPU = ROOT / "tests" / "fixtures" / "cpu"
MINDIR = ROOT / "tests" / "fixtures" / "mindir"
RESNET = MINDIR / "resnet50_noweights.mindir"
EXAMPLE = ROOT / "assets" / "examples" / "amp_train_vs_fp32_infer"
XSS = "<img src=x onerror=window.__xss=1>"
RENAMED_OP = "Default/block1-Block/conv-Conv2d/Conv2D-op0"


def free_port() -> int:
    """A TCP port nobody listens on right now (127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def files_of(folder: Path) -> list[str]:
    """Every file below a folder, as a browser folder upload would send them."""
    return sorted(str(p) for p in folder.rglob("*") if p.is_file())


def poison_profile(source: Path, dest: Path, new_name: str = XSS, old_name: str = RENAMED_OP) -> Path:
    """Copy a real CPU profile and rename one operator consistently in every file that names it."""
    shutil.copytree(source, dest)
    renamed = 0
    for path in dest.rglob("*"):
        if path.is_file() and path.suffix in (".csv", ".txt", ".json"):
            text = path.read_text(encoding="utf-8")
            if old_name in text:
                path.write_text(text.replace(old_name, new_name), encoding="utf-8")
                renamed += 1
    assert renamed >= 3, "the operator to rename was not found: the fixture changed"
    return dest


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

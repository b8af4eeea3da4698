"""Privacy: uploads do not outlive their analysis, the case store keeps only what the operator configured,
and nothing leaves the machine (analytics off, no outbound connection during a diagnosis).

Uploads carry a private marker (a file inside a stored zip) that no report mentions, so any copy of the
upload (Gradio's upload cache, an extraction folder, the case store) is found by its bytes.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import sys
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from gradio_client import handle_file

from tests.bad_inputs.server import Server, app_server, local_client
from tests.support.inputs import CPU, ROOT, files_of, free_port

pytestmark = pytest.mark.slow

MARKER = f"private-{uuid.uuid4().hex}".encode()


def marked_archive(folder: Path) -> Path:
    """A real CPU profile in a stored (uncompressed) zip, plus a file holding MARKER."""
    path = folder / "marked.zip"
    source = CPU / "infer_fp32_graph"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for file in sorted(p for p in source.rglob("*") if p.is_file()):
            archive.write(file, f"run/{file.relative_to(source)}")
        archive.writestr("run/notes/private.txt", MARKER)
    return path


def holding_marker(folder: Path) -> list[Path]:
    """Every file below `folder` whose bytes contain MARKER."""
    return [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and MARKER in p.read_bytes()]


def diagnose_marked(server: Server, folder: Path) -> dict:
    """One compare through the app with the marked archive as the target; returns the JSON report."""
    client = local_client(server.url)
    baseline = [handle_file(p) for p in files_of(CPU / "train_amp_o2_graph")]
    result = client.predict(
        baseline, [handle_file(str(marked_archive(folder)))], None, None, "auto", api_name="/diagnose"
    )
    return result[0]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The app with default settings (no kept uploads) and a private temporary folder."""
    with app_server(tmp_path_factory.mktemp("privacy")) as running:
        yield running


@pytest.fixture(scope="module")
def diagnosed(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One diagnosis of the marked upload on the module's server (the tests look at what it left)."""
    report = diagnose_marked(server, tmp_path_factory.mktemp("upload"))
    assert report["inputs"][1]["name"] == "marked.zip"
    return report


# ------------------------------------------------------------------------------------------ uploads


def test_extraction_folders_are_gone_after_the_analysis(server: Server, diagnosed: dict) -> None:
    outside_upload_cache = [
        p for p in holding_marker(server.temp) if "gradio" not in p.relative_to(server.temp).parts
    ]
    assert outside_upload_cache == []
    assert [
        p.name for p in server.temp.glob("perf-doctor-*") if not p.name.startswith("perf-doctor-reports-")
    ] == []


def test_uploaded_files_are_deleted_after_the_analysis(server: Server, diagnosed: dict) -> None:
    assert holding_marker(server.temp / "gradio") == []


# ------------------------------------------------------------------------------------------ case store


def test_the_case_store_keeps_no_upload_unless_configured(server: Server, diagnosed: dict) -> None:
    store = server.temp.parent
    files = sorted(store.glob("cases.sqlite3*"))
    assert files, "the app keeps every diagnosis as a case"
    assert any(b"marked.zip" in path.read_bytes() for path in files), "the case is there"
    assert [path for path in files if MARKER in path.read_bytes()] == []


def test_the_case_store_keeps_uploads_when_the_operator_says_so(tmp_path: Path) -> None:
    with app_server(tmp_path / "keeping", {"PERF_DOCTOR_CASE_KEEP_UPLOADS": "on"}) as server:
        diagnose_marked(server, tmp_path)
        files = sorted((tmp_path / "keeping").glob("cases.sqlite3*"))
        assert any(MARKER in path.read_bytes() for path in files)


# ------------------------------------------------------------------------------------------ network


def test_analytics_are_off_unless_the_operator_turns_them_on() -> None:
    code = (
        "import os, app, gradio.analytics as analytics; "
        "print(os.environ['GRADIO_ANALYTICS_ENABLED'], analytics.analytics_enabled(), "
        "app.build_demo().analytics_enabled)"
    )
    env = {key: value for key, value in os.environ.items() if key != "GRADIO_ANALYTICS_ENABLED"}
    env["PERF_DOCTOR_CASE_DB"] = os.devnull + ".unused"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "False"]


def _loopback(host: object) -> bool:
    """Whether a connect or lookup target stays on this machine."""
    if isinstance(host, (bytes, str)) and str(host) in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def test_a_diagnosis_through_the_app_opens_no_outbound_connection(monkeypatch, tmp_path: Path) -> None:
    """Every socket connect and name lookup in this process, from launch to close, stays on loopback."""
    attempts: list[str] = []
    loopback_connects = []  # proves the recorder sees the client's own connections
    connect, lookup = socket.socket.connect, socket.getaddrinfo

    def recording_connect(sock: socket.socket, address: object) -> object:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0]  # type: ignore[index]
            (loopback_connects.append(host) if _loopback(host) else attempts.append(f"connect {address}"))
        return connect(sock, address)  # type: ignore[arg-type]

    def recording_lookup(host: object, *args: object, **kwargs: object) -> object:
        if not _loopback(host):
            attempts.append(f"lookup {host}")
        return lookup(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", recording_connect)
    monkeypatch.setattr(socket, "getaddrinfo", recording_lookup)
    import app
    from doctor.config import AppConfig

    config = AppConfig(case_db=str(tmp_path / "cases.sqlite3"))
    demo = app.build_demo(config)
    _, url, _ = demo.launch(
        server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True,
        **app.launch_kwargs(config, demo),
    )  # fmt: skip
    try:
        client = local_client(url)
        baseline = [handle_file(p) for p in files_of(CPU / "train_amp_o2_graph")]
        report = client.predict(
            baseline, [handle_file(str(marked_archive(tmp_path)))], None, None, "auto", api_name="/diagnose"
        )[0]
        assert report["kind"] == "pair"
    finally:
        demo.close()
    assert attempts == []
    assert loopback_connects

"""What the app leaves behind: nothing per upload, and nothing at all once SIGTERM or SIGINT stopped it.

The app runs in its own process (tests/bad_inputs/server.py, as `python app.py` serves it) with a private
temporary folder, so every file it writes can be counted.
"""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import pytest
from gradio_client import handle_file

from tests.bad_inputs import generate
from tests.bad_inputs.server import app_server, local_client
from tests.support.inputs import CPU, files_of

pytestmark = pytest.mark.slow

# The report downloads (webapp.files.download_names: perf-doctor-<case id or time stamp>.<format>).
DOWNLOAD = re.compile(r"perf-doctor-[A-Za-z0-9_-]+(?:-operators\.csv|\.html|\.md|\.json)")


def _files(folder: Path) -> set[Path]:
    """Every file below a folder."""
    return {path for path in folder.rglob("*") if path.is_file()}


def test_twenty_uploads_leave_no_file_in_the_upload_cache_but_the_served_downloads(tmp_path: Path) -> None:
    """Gradio 6's file components create an empty tmp* file per upload; the app's components do not, and
    each analysed upload is deleted when its analysis ends. What stays are the report copies Gradio
    serves for download (its delete_cache removes them after an hour)."""
    with app_server(tmp_path) as server:
        cache = server.temp / "gradio"
        client = local_client(server.url)
        before = _files(cache)
        for _ in range(20):
            report, _ = client.predict(handle_file(str(generate.MODEL)), api_name="/inspect_model")
            assert report["kind"] == "mindir"
        new = _files(cache) - before
        assert [path.name for path in new if not DOWNLOAD.fullmatch(path.name)] == []
        assert len(new) == 20 * 3  # HTML, Markdown and JSON of each inspected model


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_app_removes_its_reports_and_uploads(tmp_path: Path, stop: signal.Signals) -> None:
    with app_server(tmp_path) as server:
        client = local_client(server.url)
        baseline = [handle_file(p) for p in files_of(CPU / "train_fp32_graph")]
        target = [handle_file(p) for p in files_of(CPU / "infer_fp32_graph")]
        assert client.predict(baseline, target, None, None, "auto", api_name="/diagnose")[0]["kind"] == "pair"
        client.submit(handle_file(str(generate.MODEL)), api_name="/inspect_model")  # maybe not analysed
        assert any(DOWNLOAD.fullmatch(path.name) for path in _files(server.temp))
        server.process.send_signal(stop)
        try:
            code = server.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the app did not stop within 30 s of {stop.name}")
        assert code == 128 + stop
        left = sorted(str(path.relative_to(server.temp)) for path in _files(server.temp))
        assert left == [], left
        assert [path.name for path in server.temp.iterdir() if path.name.startswith("perf-doctor")] == []

"""The app stays responsive while a big pair is analysed (issue 8): the analysis runs off the event loop,
the page keeps answering, and a second user's small diagnosis is not held up behind the big one.

The big pair is a generated MindSpore 2.10 Ascend train/infer pair of 300,000 kernel rows per run
(bench/gen_ascend.py, the benchmark's generator), uploaded as two zip archives.
"""

from __future__ import annotations

import threading
import time
import urllib.request
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from gradio_client import handle_file
from gradio_client.utils import Status

from tests.bad_inputs.server import app_server, local_client
from tests.support.inputs import CPU, ROOT
from tests.support.scripts import load_script


def _bench_module(name: str) -> ModuleType:
    """A bench/ script loaded by path (tests.support.scripts says why)."""
    return load_script(ROOT / "bench" / f"{name}.py", f"bench_{name}")


write_run = _bench_module("gen_ascend").write_run

pytestmark = pytest.mark.slow

BIG_ROWS = 300_000
PAGE_LATENCY_S = 2.0  # the slowest page answer allowed while the big analysis runs
_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def zipped(folder: Path, target: Path, skip: tuple[str, ...] = ()) -> Path:
    """`folder` as a deflated zip archive (fast level: the CSVs compress well)."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for file in sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in skip):
            archive.write(file, f"{folder.name}/{file.relative_to(folder)}")
    return target


def big_pair(folder: Path) -> tuple[Path, Path]:
    """Generated Ascend train and infer runs of BIG_ROWS kernel rows, zipped (trace_view.json left
    out: the reader does not need it, and it would only lengthen the upload)."""
    archives = []
    for kind in ("train", "infer"):
        run = folder / f"{kind}_ascend_ms"
        write_run(run, kind, BIG_ROWS)
        archives.append(zipped(run, folder / f"{kind}.zip", skip=("trace_view.json",)))
    return archives[0], archives[1]


def page_latency(url: str) -> float:
    """Seconds the app takes to answer its config request (served by the event loop)."""
    began = time.perf_counter()
    with _LOOPBACK.open(url + "config", timeout=30) as answer:
        answer.read()
    return time.perf_counter() - began


def test_a_big_analysis_blocks_neither_the_page_nor_a_second_user(tmp_path: Path) -> None:
    baseline, target = big_pair(tmp_path)
    small = (zipped(CPU / "train_amp_o2_graph", tmp_path / "small_train.zip"),
             zipped(CPU / "infer_fp32_graph", tmp_path / "small_infer.zip"))  # fmt: skip
    with app_server(tmp_path / "app") as server:
        first, second = local_client(server.url), local_client(server.url)
        began = time.perf_counter()
        big = first.submit([handle_file(str(baseline))], [handle_file(str(target))], None, None, "auto",
                           api_name="/diagnose")  # fmt: skip
        deadline = time.monotonic() + 120
        while big.status().code not in (Status.PROCESSING, Status.PROGRESS) and not big.done():
            assert time.monotonic() < deadline, "the big analysis never started"
            time.sleep(0.05)
        assert not big.done(), "the big analysis ended before the test could look (too small a pair)"

        latencies: list[float] = []
        stop = threading.Event()

        def probe() -> None:
            while not stop.is_set():
                latencies.append(page_latency(server.url))
                time.sleep(0.1)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        small_began = time.perf_counter()
        small_report = second.predict([handle_file(str(small[0]))], [handle_file(str(small[1]))], None,
                                      None, "auto", api_name="/diagnose")[0]  # fmt: skip
        small_done = time.perf_counter()
        big_busy_when_small_done = not big.done()
        big_report = big.result(timeout=300)[0]
        big_done = time.perf_counter()
        stop.set()
        prober.join(timeout=35)

    print(
        f"\nbig pair ({BIG_ROWS:,} rows/run): {big_done - began:.1f} s; small pair submitted during it: "
        f"{small_done - small_began:.1f} s; page latency during the big analysis: max "
        f"{max(latencies):.3f} s over {len(latencies)} requests"
    )
    assert big_report["kind"] == "pair" and [i["name"] for i in big_report["inputs"]] == [
        "train.zip",
        "infer.zip",
    ]
    assert small_report["kind"] == "pair" and small_report["inputs"][1]["name"] == "small_infer.zip"
    assert big_busy_when_small_done, "the second user waited for the first user's analysis to end"
    assert latencies and max(latencies) < PAGE_LATENCY_S

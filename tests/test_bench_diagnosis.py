"""The diagnosis benchmark (bench/diagnosis.py) really injects what it claims: one injected Ascend case, one
injected CPU case and one healthy pair are built with the bench module's own functions and their files read
back."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.support.scripts import load_script

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bench():
    return load_script(REPO / "bench" / "diagnosis.py", "bench_diagnosis")  # not as `diagnosis`


@pytest.fixture(scope="module")
def cases(bench, tmp_path_factory):
    builder = bench.Builder(tmp_path_factory.mktemp("diag"), quick=True)
    return builder, {c.id: c for c in builder.cases()}


def _kernels(root: Path) -> list[dict[str, str]]:
    path = root / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_noise_is_measured_from_the_repeated_runs(cases):
    builder, _ = cases
    noise = builder.noise
    assert "infer_fp32_graph_repeat" in noise.source
    assert 0 < noise.launch < 0.5 and 0 < noise.op < 0.5 and noise.run > 0


def test_injected_fp32_and_transdata_rows_exist(cases, tmp_path):
    _, by_id = cases
    base, target = by_id["gen-resnet:fp32:strong"].build(tmp_path)
    b, t = _kernels(base), _kernels(target)
    compute = [r for r in t if r["Type"] == "Conv2D"]
    assert compute and all(r["Input Data Types"].split(";")[0] == "FLOAT" for r in compute)
    assert all(r["Input Data Types"].split(";")[0] == "FLOAT16" for r in b if r["Type"] == "Conv2D")
    base, target = by_id["gen-transformer:transdata:moderate"].build(tmp_path / "td")
    before = sum(r["Type"] == "TransData" for r in _kernels(base))
    after = sum(r["Type"] == "TransData" for r in _kernels(target))
    steps = len({r["Step ID"] for r in _kernels(target)})
    assert after - before >= 4 * steps  # at least two wrapped compute kernels per step


def test_injected_cpu_casts_are_in_every_cpu_file(cases, tmp_path):
    _, by_id = cases
    _, target = by_id["cpu-real:casts:strong"].build(tmp_path)
    fw = target / "FRAMEWORK"
    with open(fw / "cpu_op_detail_info_0.csv", newline="", encoding="utf-8") as fh:
        casts = [r for r in csv.DictReader(fh) if r["op_type"] == "Cast"]
    assert sum(int(r["op_occurrences"]) for r in casts) == 26 * 5
    stamps = (fw / "cpu_op_execute_timestamp_0.txt").read_text(encoding="utf-8")
    assert sum(len(line.split(";")[2].split()) for line in stamps.splitlines() if "/Cast-op" in line) == 130
    frames = (fw / "cpu_framework_0.txt").read_text(encoding="utf-8").splitlines()
    assert sum(line.startswith("Cast;") for line in frames) == 130


def test_healthy_pair_is_two_uninjected_copies(cases, tmp_path):
    _, by_id = cases
    case = by_id["gen-resnet:healthy:healthy"]
    assert case.expected is None
    base, target = case.build(tmp_path)
    b, t = _kernels(base), _kernels(target)
    assert [r["Name"] for r in b] == [r["Name"] for r in t]
    assert [r["Input Data Types"] for r in b] == [r["Input Data Types"] for r in t]
    assert [r["Duration(us)"] for r in b] != [r["Duration(us)"] for r in t]  # the measured noise differs

"""AI Core frequency is judged while kernels run (issue 28, point 4): a clock that drops only while the device
idles is power saving and stays quiet; a clock that drops during kernels fires with its depth, duration
and the kernels it slowed. The cases are derived from the real samples by tests/fixtures/ascend_clock/
generate.py (it records their origin); every expected figure is read back from the derived files."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path
from types import ModuleType

import pytest

from diagnosis import read_folder
from diagnosis.analyzers import analyze_run
from diagnosis.compare import prepare
from doctor.facade import diagnose
from tests.support.samples import SAMPLES

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared/samples is not beside the repository")
GENERATOR = Path(__file__).resolve().parent / "fixtures" / "ascend_clock" / "generate.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ascend_clock_generate", GENERATOR)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("clock")
    made = {case: GEN.derive(SAMPLES, out, case) for case in GEN.CASES}
    made |= {case: GEN.derive_timeline(SAMPLES, out, case) for case in GEN.TIMELINE_CASES}
    return made


def _drops(folder: Path) -> list:
    return [s for s in analyze_run(prepare(read_folder(folder)), "target") if s.kind == "frequency-drop"]


def _stored_clock(run: Path) -> list[int]:
    with sqlite3.connect(f"file:{run / GEN.DB}?mode=ro", uri=True) as connection:
        return [r[0] for r in connection.execute("SELECT freq FROM AICORE_FREQ ORDER BY timestampNs")]


def test_idle_downclocking_with_kernels_at_full_clock_is_quiet(cases: dict[str, Path]) -> None:
    run = read_folder(cases["idle_downclock"])
    stored = _stored_clock(cases["idle_downclock"])
    assert run.frequency["mhz"].astype(float).tolist() == [float(f) for f in stored]
    assert min(stored) == GEN.IDLE_MHZ and max(stored) == 1800  # the clock does fall to 800 MHz ...
    assert _drops(cases["idle_downclock"]) == []  # ... but only between kernels


def test_a_clock_drop_during_kernels_fires_with_depth_duration_and_kernels(cases: dict[str, Path]) -> None:
    run = cases["kernel_throttle"]
    (s,) = _drops(run)
    spans = GEN.compute_spans(run / GEN.DB)
    window = spans[GEN.THROTTLE_FIRST : GEN.THROTTLE_LAST + 1]
    busy_ns = _union_length(window)
    all_busy_ns = _union_length(spans)
    assert (s.values["max_mhz"], s.values["min_mhz"]) == (1800.0, float(GEN.THROTTLE_MHZ))
    assert s.values["kernels_affected"] == len(window)
    assert s.values["low_clock_ms"] == pytest.approx(busy_ns / 1e6, abs=0.01)
    assert s.values["low_clock_share"] == pytest.approx(busy_ns / all_busy_ns, abs=0.002)
    assert s.values["mean_drop"] == pytest.approx(
        busy_ns / all_busy_ns * (1 - GEN.THROTTLE_MHZ / 1800), abs=0.002
    )
    assert s.values["idle_downclock"] is True
    times = [row["kernel_us"] for row in s.evidence]  # the op types slowed most, up to ten
    assert 0 < sum(row["kernels"] for row in s.evidence) <= len(window) and times == sorted(
        times, reverse=True
    )
    assert "while kernels run" in s.summary


def _union_length(spans: list[tuple[int, int]]) -> int:
    total, reach = 0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def test_the_msprof_timeline_counter_is_read_and_judged_during_kernels(cases: dict[str, Path]) -> None:
    idle = read_folder(cases["timeline_idle"])
    counters = [
        e["args"]["MHz"]
        for path in sorted((cases["timeline_idle"] / "device_0" / "timeline").glob("msprof_*.json"))
        for e in json.loads(path.read_text())
        if e.get("ph") == "C"
    ]
    assert sorted(idle.frequency["mhz"].astype(float).tolist()) == sorted(float(m) for m in counters)
    assert _drops(cases["timeline_idle"]) == []
    (s,) = _drops(cases["timeline_throttle"])
    throttled = read_folder(cases["timeline_throttle"]).kernels
    in_iteration = throttled[(throttled["step"] == GEN.THROTTLE_ITERATION) & (throttled["core"] == "AI_CORE")]
    assert s.values["min_mhz"] == float(GEN.THROTTLE_MHZ)
    assert s.values["kernels_affected"] == len(in_iteration)


@pytest.mark.slow
def test_a_throttled_run_against_its_idle_twin_reports_the_drop_and_itself_nothing(
    cases: dict[str, Path],
) -> None:
    """Fires on the target side only; the same throttled run on both sides is a shared trait: quiet."""
    report = diagnose(cases["idle_downclock"], cases["kernel_throttle"], isolate=False)
    drops = [s for s in report.data["symptoms"] if s["kind"] == "frequency-drop"]
    assert [s["source"] for s in drops] == ["target"]
    same = diagnose(cases["kernel_throttle"], cases["kernel_throttle"], isolate=False)
    assert same.data["verdict"]["status"] == "nothing-found"
    assert not [c for c in same.causes if c.significant]

"""Streaming trace_view.json readers: the full event iterator and the byte-level marker scan agree with
`json.load` on the real torch_npu trace, across chunk and region boundaries, and fail cleanly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from diagnosis.readers import trace

SAMPLE = (
    Path(__file__).parents[1]
    / ".."
    / "shared"
    / "samples"
    / "ascend"
    / "torch_npu_cnn_train_step"
    / "trace_view.json"
)
FIX = Path(__file__).parent / "fixtures" / "ascend"
L1_INFER_TRACE = (
    FIX / "level1/infer/ubuntu_2301_20251130090000456_ascend_ms/ASCEND_PROFILER_OUTPUT/trace_view.json"
)


@pytest.fixture(scope="module")
def sample_events() -> list[dict]:
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def test_iter_events_matches_json_load(sample_events: list[dict]) -> None:
    assert list(trace.iter_events(SAMPLE)) == sample_events


@pytest.mark.parametrize("chunk", [13, 100, 4096])
@pytest.mark.slow
def test_iter_events_across_chunk_boundaries(monkeypatch, sample_events: list[dict], chunk: int) -> None:
    monkeypatch.setattr(trace, "TEXT_CHUNK", chunk)
    monkeypatch.setattr(trace, "SYNTAX_MARGIN", 1 << 20)
    assert list(trace.iter_events(SAMPLE)) == sample_events


def test_iter_events_on_pretty_printed_json(tmp_path: Path, sample_events: list[dict]) -> None:
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(sample_events[:300], indent=2), encoding="utf-8")
    assert list(trace.iter_events(path)) == sample_events[:300]


event = st.fixed_dictionaries(
    {
        "ph": st.sampled_from(["X", "M", "C", "s", "f"]),
        "name": st.text(min_size=0, max_size=12),
        "pid": st.integers(0, 10**10),
        "ts": st.one_of(st.floats(0, 1e16, allow_nan=False), st.text(alphabet="0123456789.", max_size=20)),
        "args": st.dictionaries(
            st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=8)), max_size=3
        ),
    }
)


@settings(max_examples=60, deadline=None)
@given(events=st.lists(event, max_size=25), chunk=st.integers(1, 64), indent=st.sampled_from([None, 1]))
@pytest.mark.slow
def test_iter_events_property(tmp_path_factory, events: list[dict], chunk: int, indent: int | None) -> None:
    path = tmp_path_factory.mktemp("trace") / "trace_view.json"
    path.write_text(json.dumps(events, indent=indent, ensure_ascii=False), encoding="utf-8")
    old = trace.TEXT_CHUNK
    trace.TEXT_CHUNK = chunk
    try:
        assert list(trace.iter_events(path)) == events
    finally:
        trace.TEXT_CHUNK = old


@pytest.mark.parametrize("cut", [1, 10, 5000, 300_000, -2])
def test_iter_events_rejects_truncated_files(tmp_path: Path, cut: int) -> None:
    data = SAMPLE.read_bytes()
    path = tmp_path / "trace_view.json"
    path.write_bytes(data[:cut])
    with pytest.raises(InputError) as err:
        list(trace.iter_events(path))
    assert "trace_view.json" in str(err.value)
    assert "truncated" in err.value.problem or "invalid" in err.value.problem


def test_iter_events_rejects_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "trace_view.json"
    path.write_bytes(SAMPLE.read_bytes().replace(b"aten::empty", b"aten::\xffempty", 1))
    with pytest.raises(InputError, match="not UTF-8"):
        list(trace.iter_events(path))


def test_iter_events_rejects_trailing_data(tmp_path: Path) -> None:
    path = tmp_path / "trace_view.json"
    path.write_bytes(b'[{"ph": "X"}] [{"ph": "X"}]')
    with pytest.raises(InputError, match="data after the end"):
        list(trace.iter_events(path))


# ------------------------------------------------------------------------------------------ scan_events


def test_scan_finds_exactly_the_marked_events(sample_events: list[dict]) -> None:
    found = list(trace.scan_events(SAMPLE, [b"ProfilerStep#", b'"process_name"']))
    expected = [
        e
        for e in sample_events
        if e.get("name", "").startswith("ProfilerStep#") or e.get("name") == "process_name"
    ]
    assert found == expected


@pytest.mark.parametrize("region", [4096, 65536, 300_001])
def test_scan_across_region_boundaries(monkeypatch, sample_events: list[dict], region: int) -> None:
    monkeypatch.setattr(trace, "SCAN_REGION", region)
    found = list(trace.scan_events(SAMPLE, [b"Overlap Analysis", b"AI_CPU"]))
    expected = [e for e in sample_events if "Overlap Analysis" in json.dumps(e) or "AI_CPU" in json.dumps(e)]
    assert found == expected


def test_scan_skips_nested_dicts_to_the_enclosing_event(tmp_path: Path) -> None:
    events = [
        {
            "name": "process_name",
            "pid": 7,
            "tid": 0,
            "args": {"name": "AI Core Freq", "inner": {"x": 1}},
            "ph": "M",
        },
        {"args": {"MHz": 1650}, "name": "AI Core Freq", "pid": 7, "ts": "12.5", "ph": "C"},
    ]
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(events), encoding="utf-8")
    assert list(trace.scan_events(path, [b"AI Core Freq"])) == events
    markers = trace.scan_markers(path)
    assert markers.freq["mhz"].tolist() == [1650.0] and markers.freq["ts_us"].tolist() == [12.5]


def test_scan_markers_on_a_fixture() -> None:
    events = json.loads(L1_INFER_TRACE.read_text(encoding="utf-8"))
    markers = trace.scan_markers(L1_INFER_TRACE)
    steps = [e for e in events if e["name"].startswith("ProfilerStep#")]
    assert markers.steps["step"].tolist() == [int(e["name"].split("#")[1]) for e in steps]
    assert markers.steps["duration_us"].tolist() == [float(e["dur"]) for e in steps]
    assert markers.freq["mhz"].tolist() == [1800, 1650, 1500]
    only_freq = trace.scan_markers(L1_INFER_TRACE, steps=False)
    assert only_freq.steps.empty and len(only_freq.freq) == 3


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "empty file"),
        (b'{"a": 1}', "not a JSON list"),
        (b'[{"ph": "X", "name": "ProfilerStep#1", "ts": "1"}, {"ph": "X"', "truncated file"),
    ],
)
def test_scan_rejects_broken_files(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "trace_view.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as err:
        list(trace.scan_events(path, [b"ProfilerStep#"]))
    assert err.value.problem.startswith(problem) and "trace_view.json" in str(err.value)


def test_scan_rejects_a_marker_outside_any_event(tmp_path: Path) -> None:
    path = tmp_path / "trace_view.json"
    path.write_bytes(b'["ProfilerStep#1 as a bare string"]')
    with pytest.raises(InputError, match="invalid JSON around byte"):
        list(trace.scan_events(path, [b"ProfilerStep#"]))


def test_device_timeline_of_the_sample(sample_events: list[dict]) -> None:
    timeline = trace.read_device_timeline(SAMPLE)
    assert timeline.processes[800] == "Ascend Hardware"
    assert len(timeline.kernels) == 276
    assert set(timeline.overlap["kind"]) == {"Computing", "Free"}
    assert timeline.steps["step"].tolist() == [1]
    assert timeline.freq.empty

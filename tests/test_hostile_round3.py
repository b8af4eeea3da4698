"""Hostile values of issue 33 (security round 3) that are not files of the bad-input corpus: a rank or a
triage limit that is NaN, infinite or enormous, bidirectional controls in names, finite extreme start
times. Each must be a clear one-line error or a correct result, never a traceback."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core import InputError
from core.model import Run
from desk.triage.output import rows_csv
from desk.triage.view import read_limit
from diagnosis import read_folder
from diagnosis.ingest import drop_bad_starts
from doctor import diagnose
from doctor.facade import MAX_RANK, check_rank
from doctor.text import csv_safe, h, md_text, one_line
from tests.support.inputs import ASCEND

PAIR = (ASCEND / "level1" / "train", ASCEND / "level1" / "infer")
HUGE = 10**308  # 309 digits


@pytest.mark.parametrize("rank", [math.nan, math.inf, -math.inf, float("1e400"), HUGE, -1, 1.5, True])
def test_a_rank_that_is_no_device_number_is_one_short_line(rank: object) -> None:
    with pytest.raises(InputError) as caught:
        diagnose(*PAIR, rank=rank)  # type: ignore[arg-type]
    message = caught.value.message
    assert message.startswith(f"rank: the rank must be a whole number from 0 to {MAX_RANK:,}, not ")
    assert len(message) < 120 and "0" * 30 not in message


def test_a_whole_float_rank_is_the_same_rank() -> None:
    assert check_rank(0.0) == 0 and check_rank(7) == 7 and check_rank(None) is None


@pytest.mark.parametrize("limit", [math.nan, math.inf, -math.inf, 0, 2.5])
def test_a_triage_limit_that_is_no_count_is_refused(limit: float) -> None:
    with pytest.raises(InputError, match="must be a positive whole number"):
        read_limit(limit)


BIDI = "Conv\u202egpj.exe\u202c\u2066x\u2069\u200f\u200e\u061c2D"


def test_bidi_controls_never_reach_rendered_text() -> None:
    for render in (one_line, md_text, h, csv_safe):
        assert render(BIDI) == "Convgpj.exex2D", render.__name__


def test_bidi_controls_never_reach_the_triage_csv() -> None:
    assert "\u202e" not in rows_csv([{"source": BIDI, "note": BIDI}])


def test_finite_extreme_starts_are_kept() -> None:
    """1e308, -0 and 1e-320 (a subnormal) are finite: only the infinite start is dropped."""
    run = read_folder(PAIR[1])
    kernels = run.kernels.head(4).copy()
    kernels["start_us"] = pd.array([1e308, -0.0, 1e-320, math.inf], dtype="float64")
    kept = drop_bad_starts(Run(meta=run.meta, kernels=kernels, steps=run.steps, limitations=[]))
    assert kept.kernels["start_us"].tolist() == [1e308, -0.0, 1e-320]
    assert [lim.topic for lim in kept.limitations] == ["start-times"]


def test_a_model_request_leaves_no_graph_behind(monkeypatch) -> None:
    """Issue 33 item 9: the decoded graph (networkx keeps reference cycles) is collected when the request
    ends, not whenever the garbage collector next runs: a 900k-node model left 1.2 GB resident."""
    import gc
    import weakref

    import graph
    from doctor import inspect_model
    from tests.support.inputs import MINDIR

    graphs: list[weakref.ref] = []
    real = graph.load_mindir

    def loading(path):  # type: ignore[no-untyped-def]
        model = real(path)
        graphs.append(weakref.ref(model.graph))
        return model

    monkeypatch.setattr(graph, "load_mindir", loading)
    gc.collect()
    gc.disable()  # only the request's own collection may free it
    try:
        inspect_model(MINDIR / "conv_bn_relu_eval.mindir", isolate=False, translate=False)
        assert graphs and graphs[0]() is None
    finally:
        gc.enable()


def _legacy_ms_timeline(dest, starts: list[str]):  # type: ignore[no-untyped-def]
    """A copy of the real-format MindSpore 1.x profile (timeline in ms) whose launch starts cycle through
    `starts`: a finite 1e308 ms is 1e311 us, beyond float64, once the reader converts it."""
    import shutil

    folder = shutil.copytree(ASCEND / "legacy_ascend_1x", dest / "legacy_1x")
    path = next(folder.rglob("output_timeline_data_0.txt"))
    lines = path.read_text().splitlines()
    rows = [line.split(",") for line in lines[1:]]
    for index, row in enumerate(rows):
        row[2] = starts[index % len(starts)]
    path.write_text("\n".join([lines[0], *(",".join(row) for row in rows)]) + "\n")
    return folder


def test_finite_ms_starts_too_large_for_microseconds_are_named_as_such(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 33 item 12: every start 1e308 (finite, in ms) overflowed to inf in µs and was reported as
    'every value is infinite'; the error now says the finite values are too large in microseconds."""
    with pytest.raises(InputError) as caught:
        read_folder(_legacy_ms_timeline(tmp_path, ["1e308"]))
    message = caught.value.message
    assert message.startswith("output_timeline_data_0.txt: ")
    assert "too large to express in microseconds" in message and "infinite" not in message


def test_finite_ms_starts_keep_zero_and_subnormal(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """1e308 ms rows are dropped with a warning; -0 and 1e-320 ms are kept (finite in µs)."""
    run = read_folder(_legacy_ms_timeline(tmp_path, ["1e308", "-0", "1e-320"]))
    starts = run.kernels["start_us"].astype("float64")
    assert len(starts) and bool(starts.map(math.isfinite).all())
    assert (starts.abs() < 1e-310).all() and len(starts) == 22  # 2 of every 3 of the 34 launches
    assert [lim.topic for lim in run.limitations].count("start-times") == 1

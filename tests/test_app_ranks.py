"""The app's rank field and Ranks plot without a browser (issue 27 point 5, issue 31's "Rank shows 0"): the
field is empty until a multi-rank report offers its ranks, typed text is read safely by the facade, and
a multi-rank report draws the rank x step heat map and the stacked bars; the browser half is
tests/test_browser_ranks.py."""

from __future__ import annotations

import pytest

from core import InputError
from doctor import facade
from doctor.facade import check_rank
from tests.fixtures.cluster.generate import samples_root
from tests.support.inputs import EXAMPLE, files_of
from tests.support.runs import FIXTURES
from webapp.views import rank_choices, report_view

REAL = samples_root() / "torch_npu_2rank" / "text" / "level1"


@pytest.mark.parametrize(("text", "rank"), [("", None), ("  ", None), ("0", 0), (" 3 ", 3), ("65535", 65535)])
def test_the_rank_field_text_is_read_as_a_rank(text: str, rank: int | None) -> None:
    assert check_rank(text) == rank


@pytest.mark.parametrize("text", ["-1", "1.5", "1e3", "two", "３", "65536", "9" * 40])
def test_rank_field_text_that_is_no_rank_is_one_short_line(text: str) -> None:
    with pytest.raises(InputError) as caught:
        check_rank(text)
    assert (
        caught.value.message.startswith("rank: the rank must be a whole number")
        and len(caught.value.message) < 120
    )


def test_a_multi_rank_report_offers_every_rank_and_a_narrowed_one_still_does() -> None:
    whole = facade.diagnose(None, str(REAL), isolate=False, translate=False)
    assert rank_choices(whole.to_dict(), "en") == [("every rank", ""), ("0", "0"), ("1", "1")]
    assert rank_choices(whole.to_dict(), "zh")[0] == ("所有卡", "")
    narrowed = facade.diagnose(None, str(REAL), isolate=False, translate=False, rank="1")
    assert narrowed.document.runs[0].rank == 1
    assert [value for _, value in rank_choices(narrowed.to_dict(), "en")] == ["", "0", "1"]


def test_a_one_rank_report_offers_no_ranks() -> None:
    single = facade.diagnose(None, files_of(EXAMPLE / "target"), isolate=False, translate=False)
    assert rank_choices(single.to_dict(), "en") == [] and rank_choices(None, "en") == []


def test_a_multi_rank_report_shows_the_ranks_plot_with_a_heat_map_and_stacked_bars() -> None:
    report = facade.diagnose(None, str(FIXTURES / "cluster" / "straggler"), isolate=False, translate=False)
    figure = report_view(report).figures["ranks"]
    kinds = [trace.type for trace in figure.data]
    assert kinds.count("heatmap") == 1 and kinds.count("bar") == 3
    heat = next(trace for trace in figure.data if trace.type == "heatmap")
    assert list(heat.y) == ["0", "1", "2", "3"]
    legend, colorbar = figure.layout.legend, heat.colorbar
    assert legend.orientation == "h" and colorbar.x < 0.5, "the legend no longer covers the colour bar"

"""Every rank in the app, in a real browser (issue 27 point 5): the derived 8-rank-style straggler job
(tests/fixtures/cluster/straggler, four ranks derived from a real NPU step) uploaded as one archive shows
the Ranks plot (rank x step heat map, stacked compute / communication / free bars), and the rank field,
empty at first (issue 31: it showed 0), offers the job's ranks: picking one diagnoses that rank alone."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

from tests.support.browser import (  # noqa: F401 - the launch-args fixture points pytest-playwright at Chromium
    TIMEOUT_MS,
    browser_type_launch_args,
    require_chromium,
)
from tests.support.runs import FIXTURES

pytestmark = [pytest.mark.browser, pytest.mark.slow]
require_chromium()

from playwright.sync_api import Browser, expect  # noqa: E402

expect.set_options(timeout=TIMEOUT_MS)
JOB = FIXTURES / "cluster" / "straggler"


@pytest.mark.parametrize("width", [390, 1366])
def test_a_multi_rank_job_shows_its_ranks_and_one_rank_can_be_picked(
    browser: Browser, app_url: str, tmp_path: Path, width: int
):
    archive = tmp_path / "straggler.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(JOB, arcname=JOB.name)
    context = browser.new_context(locale="en-US", viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(app_url)
        expect(page.locator("#run-compare")).to_be_visible()
        page.locator("#target-files input[type=file]").set_input_files(str(archive))
        expect(page.locator("#target-files")).to_contain_text("straggler")
        page.get_by_text("Options", exact=True).click()
        field = page.locator("#rank input")
        expect(field).to_have_value("")  # empty: every rank (not 0)
        page.locator("#run-compare").click()
        expect(page.locator("#verdict")).to_contain_text("rank 2 is the slow rank")
        plot = page.locator("#plot-ranks .js-plotly-plot")
        expect(plot).to_be_visible()
        expect(plot.locator(".heatmaplayer image, .hm image, .heatmaplayer").first).to_be_attached()
        assert plot.locator(".barlayer .trace.bars").count() == 3  # computing, communication, free
        box = plot.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5
        expect(page.locator("#runs")).to_contain_text("every rank (4)")

        field.click()
        options = page.locator("[role=option]")
        expect(options).to_contain_text(["every rank", "0", "1", "2", "3"])
        options.filter(has_text=re.compile(r"^\W*2$")).click()  # drill into the slow rank
        expect(page.locator("#runs")).to_contain_text("2 / 4")
        expect(page.locator("#verdict")).not_to_contain_text("slow rank")
        expect(field).to_have_value("2")
        expect(page.locator("#plot-ranks")).to_be_hidden()  # one rank read: no Ranks plot
    finally:
        context.close()

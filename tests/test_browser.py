"""The app in a real browser: Debian Chromium driven by Playwright against the app launched in-process.

Without /usr/bin/chromium these tests skip, unless PERF_DOCTOR_REQUIRE_BROWSER=1 (CI, `make test`): then
they fail, so a missing browser can never pass silently.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.support.browser import (  # noqa: F401 - the launch-args fixture points pytest-playwright at Chromium
    TIMEOUT_MS,
    browser_type_launch_args,
    require_chromium,
)
from tests.support.inputs import CPU, EXAMPLE, MINDIR, RESNET, ROOT, XSS, files_of, free_port
from tests.support.language import english_sentences

SCREENSHOT = ROOT / "docs" / "screenshot.png"

pytestmark = [pytest.mark.browser, pytest.mark.slow]

require_chromium()

from playwright.sync_api import Browser, Page, expect  # noqa: E402

# An analysis waits in the queue behind others on a shared machine: every expectation may take as long
# as a page action (a diagnosis takes 1-5 s alone, far more when the CPU is shared).
expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture
def page_en(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(
        locale="en-US", viewport={"width": 1400, "height": 1000}, accept_downloads=True
    )
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    yield page
    context.close()


def _open(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator("#run-compare")).to_be_visible()


def _upload_pair(page: Page, baseline: Path, target: Path) -> None:
    page.locator("#baseline-files input[type=file]").set_input_files(files_of(baseline))
    page.locator("#target-files input[type=file]").set_input_files(files_of(target))
    expect(page.locator("#baseline-files")).to_contain_text("cpu_op_detail_info_0")
    expect(page.locator("#target-files")).to_contain_text("cpu_op_detail_info_0")


def test_upload_pair_shows_top_cause_and_plot_and_downloads_an_offline_report(
    page_en: Page, app_url: str, tmp_path: Path
):
    page = page_en
    _open(page, app_url)
    _upload_pair(page, EXAMPLE / "baseline", EXAMPLE / "target")
    page.locator("#run-compare").click()
    causes = page.locator("#causes")
    expect(causes).to_contain_text("precision-mismatch")
    expect(causes.locator("h3").first).to_contain_text("1.")
    expect(page.locator("#verdict")).to_contain_text("Inference")
    expect(page.locator("#plot-ops .js-plotly-plot")).to_be_visible()
    expect(page.locator("#plot-steps .js-plotly-plot")).to_be_visible()
    page.evaluate("document.querySelector('#run-compare').scrollIntoView()")
    # The README's screenshot is refreshed on request only: a test run leaves the working tree clean.
    shot = SCREENSHOT if os.environ.get("PERF_DOCTOR_UPDATE_SCREENSHOT") == "1" else tmp_path / "shot.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000

    page.get_by_role("tab", name="Report").click()
    with page.expect_download() as download:
        page.locator("#dl-html").click()
    report = tmp_path / "report.html"
    download.value.save_as(report)
    html = report.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*\ssrc=[\"']?https?:", html)
    _check_offline(page.context.browser, report)


def _check_offline(browser: Browser, report: Path) -> None:
    """The downloaded report renders its plots with the network cut and requests nothing remote."""
    context = browser.new_context(offline=True)
    remote: list[str] = []
    context.route(re.compile(r"^https?://"), lambda route: (remote.append(route.request.url), route.abort()))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(report.as_uri())
    expect(page.locator("#verdict")).to_be_visible()
    expect(page.locator(".js-plotly-plot .main-svg").first).to_be_visible()
    assert page.locator(".js-plotly-plot").count() == 4
    assert remote == [] and errors == []
    context.close()


def _notice(page: Page):
    return page.locator("#notice")


def test_a_rerun_with_one_input_changed_works(page_en: Page, app_url: str):
    """Diagnose, add a MINDIR, diagnose again, replace only the target, diagnose again: every run works
    (the page keeps holding its uploads) and a changed input marks the shown result as stale."""
    page = page_en
    _open(page, app_url)
    _upload_pair(page, EXAMPLE / "baseline", EXAMPLE / "target")
    page.locator("#run-compare").click()
    expect(page.locator("#causes")).to_contain_text("precision-mismatch")
    expect(_notice(page)).to_be_hidden()

    model = EXAMPLE / "fixture_net_fp32_eval.mindir"
    page.locator("#mindir-file input[type=file]").set_input_files(str(model))
    expect(_notice(page)).to_contain_text("The inputs changed since this result was made")
    page.locator("#run-compare").click()
    expect(_notice(page)).to_be_hidden(timeout=TIMEOUT_MS)
    expect(page.locator("#causes")).to_contain_text("precision-mismatch")
    page.get_by_role("tab", name="Fusion chains").click()
    expect(page.locator("#compare-chains").get_by_role("gridcell", name="conv-bn-act").first).to_be_visible()

    before = page.locator("#verdict").inner_text()
    page.locator("#target-files button[aria-label='Clear']").first.click()
    expect(_notice(page)).to_contain_text("The inputs changed")
    page.locator("#target-files input[type=file]").set_input_files(files_of(CPU / "infer_fp32_pynative"))
    expect(page.locator("#target-files")).to_contain_text("cpu_op_detail_info_0")
    page.locator("#run-compare").click()
    expect(_notice(page)).to_be_hidden(timeout=TIMEOUT_MS)
    expect(page.locator("#verdict")).not_to_have_text(before)
    expect(page.locator("#verdict")).to_contain_text("Inference")


def test_a_bad_file_alone_in_baseline_is_reported_inline_as_the_baseline(
    page_en: Page, app_url: str, tmp_path: Path
):
    """One line in the result area, naming the side and the user's file, saying what to do with a link to
    the collection help; no server path, no toast, and it stays until the next run."""
    page = page_en
    bad = tmp_path / "train_run.zip"
    bad.write_bytes(b"this is not a zip archive")
    _open(page, app_url)
    page.locator("#baseline-files input[type=file]").set_input_files(str(bad))
    expect(page.locator("#baseline-files")).to_contain_text("train_run")
    page.locator("#run-compare").click()
    notice = _notice(page)
    expect(notice).to_contain_text("Baseline train_run.zip: is not a zip archive")
    expect(notice).to_contain_text("press Diagnose again")
    expect(notice.get_by_role("link", name="how to collect and what to upload")).to_have_attribute(
        "href", re.compile("#collect-help$")
    )
    text = notice.inner_text()
    assert "Target" not in text and "/tmp" not in text and "input-" not in text and "gradio" not in text
    assert page.locator(".toast-body").count() == 0, "errors are not toasts any more"
    page.wait_for_timeout(11_000)  # the old toast vanished after about 10 s
    expect(notice).to_contain_text("train_run.zip")
    assert page.locator("#collect-help").count() == 1


def test_the_chain_table_shows_a_blocked_chain_and_why(page_en: Page, app_url: str):
    """Every chain is a row: a user finds the blocked one and reads the reason without hovering."""
    page = page_en
    _open(page, app_url)
    page.get_by_role("tab", name="Inspect a model").click()
    page.locator("#inspect-file input[type=file]").set_input_files(str(MINDIR / "branch_block.mindir"))
    page.locator("#run-inspect").click()
    table = page.locator("#inspect-chains")
    expect(table.get_by_role("gridcell", name="blocked", exact=True)).to_be_visible()
    expect(
        table.get_by_role("gridcell", name="Conv2D output has 2 consumers (Add, BatchNorm)")
    ).to_be_visible()
    expect(table.get_by_role("columnheader", name="why not fused").first).to_be_visible()


def test_the_runs_are_summarised_and_one_click_swaps_them(page_en: Page, app_url: str):
    page = page_en
    _open(page, app_url)
    _upload_pair(page, EXAMPLE / "baseline", EXAMPLE / "target")
    page.locator("#run-compare").click()
    runs = page.locator("#runs")
    expect(runs.get_by_role("gridcell", name="training", exact=True)).to_be_visible()
    expect(runs.get_by_role("columnheader", name="profiler level").first).to_be_visible()
    expect(page.locator("#baseline-note")).to_contain_text("it is the training run")
    page.locator("#swap-roles").click()
    expect(page.locator("#baseline-note")).to_contain_text("you chose it in the options", timeout=TIMEOUT_MS)
    expect(page.locator("#verdict")).to_contain_text("slower", timeout=TIMEOUT_MS)
    first_row = runs.locator("[data-testid='cell-0-5']")
    expect(first_row).to_contain_text("inference")


def test_malicious_operator_name_renders_as_text(page_en: Page, app_url: str, xss_profile: Path):
    page = page_en
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    _open(page, app_url)
    _upload_pair(page, CPU / "train_amp_o2_graph", xss_profile)
    page.locator("#run-compare").click()
    expect(page.locator("#verdict")).to_contain_text("Inference")
    expect(page.locator("#plot-ops .js-plotly-plot")).to_be_visible()
    page.get_by_role("tab", name="Operators").click()
    expect(page.locator("#operators").get_by_text(XSS, exact=True).first).to_be_visible()
    page.get_by_role("tab", name="Top 10").click()
    expect(page.locator("#top-target").get_by_text(XSS, exact=True).first).to_be_visible()
    page.get_by_role("tab", name="Plots").click()
    tick = page.locator("#plot-ops .js-plotly-plot text").filter(has_text=XSS).first
    expect(tick).to_be_visible()  # plotly shows the escaped label as literal text
    assert page.evaluate("window.__xss") is None
    assert page.locator("img[src=x]").count() == 0 and dialogs == []


def test_chinese_browser_gets_chinese_ui_and_report(browser: Browser, app_url: str):
    context = browser.new_context(locale="zh-CN", viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(app_url)
        expect(page.get_by_role("tab", name="对比两次运行")).to_be_visible()
        expect(page.locator("#run-compare")).to_have_text("诊断")
        with page.expect_file_chooser() as chooser:  # the baseline as a whole folder
            page.locator("#baseline-folder").click()
        chooser.value.set_files(str(EXAMPLE / "baseline"))
        expect(page.locator("#baseline-files")).to_contain_text("cpu_op_detail_info_0")
        page.locator("#target-files input[type=file]").set_input_files(files_of(EXAMPLE / "target"))
        page.locator("#run-compare").click()
        expect(page.locator("#verdict")).to_contain_text("结论", timeout=TIMEOUT_MS)
        expect(page.locator("#causes")).to_contain_text("置信度")
    finally:
        context.close()


def test_example_preloaded_app_shows_a_diagnosis_on_open(browser: Browser):
    """`python app.py --example` opens with the first bundled pair diagnosed."""
    from app import build_demo, launch_kwargs
    from doctor.config import AppConfig
    from webapp.examples import available_pairs

    config = AppConfig()
    demo = build_demo(config, example=available_pairs()[0].name)
    _, url, _ = demo.launch(
        server_name="127.0.0.1",
        server_port=free_port(),
        prevent_thread_lock=True,
        quiet=True,
        **launch_kwargs(config, demo),
    )
    context = browser.new_context(locale="en-US")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(url)
        expect(page.locator("#causes")).to_contain_text("execution-mode-mismatch", timeout=TIMEOUT_MS)
        expect(page.locator("#verdict")).to_contain_text("than the training forward pass")
        expect(page.locator("#plot-ops .js-plotly-plot")).to_be_visible()
    finally:
        context.close()
        demo.close()


# These run after the `--example` app above was built and closed in this process: its shutdown used to
# delete the example files the other app's examples point to (Gradio's cache is shared and
# content-addressed), so a click filled the inputs with missing files and nothing ran (issue 16).
def test_clicking_a_bundled_example_runs_it(page_en: Page, app_url: str):
    page = page_en
    _open(page, app_url)
    examples = page.locator("#examples")
    assert not re.search(r"[\u4e00-\u9fff]", examples.inner_text()), "no Chinese in English labels"
    examples.get_by_text("Graph training vs inference left in PyNative").click()
    expect(page.locator("#causes")).to_contain_text("execution-mode-mismatch", timeout=TIMEOUT_MS)
    expect(page.locator("#verdict")).to_contain_text("Inference is 4.12x slower per step in operator time")
    examples.get_by_text("AMP O2 training vs FP32 inference").click()
    expect(page.locator("#causes")).to_contain_text("precision-mismatch", timeout=TIMEOUT_MS)
    examples.get_by_text("Ascend, derived from a real NPU step").click()
    expect(page.locator("#verdict")).to_contain_text(
        "The target is 2.04x slower per step in wall time", timeout=TIMEOUT_MS
    )
    expect(page.locator("#causes")).to_contain_text("fusion-missing")


def test_clicking_the_example_model_inspects_it(page_en: Page, app_url: str):
    page = page_en
    _open(page, app_url)
    page.get_by_role("tab", name="Inspect a model").click()
    page.get_by_text("ResNet-50 (weights stripped)").click()
    expect(page.locator("#inspect-verdict")).to_contain_text(
        "resnet50_noweights.mindir: 54 fusion chains", timeout=TIMEOUT_MS
    )


def test_rules_tab_search_filters_and_shows_the_query_as_text(page_en: Page, app_url: str):
    page = page_en
    _open(page, app_url)
    page.get_by_role("tab", name="Rules").click()
    expect(page.locator("#rules-catalog")).to_contain_text("Rule catalog")
    page.locator("#rules-search textarea").fill(XSS)
    expect(page.locator("#rules-catalog")).to_contain_text("rules match")
    expect(page.locator("#rules-catalog")).to_contain_text(XSS)
    assert page.evaluate("window.__xss") is None


def test_inspect_tab_shows_model_causes_chains_and_graph(page_en: Page, app_url: str):
    page = page_en
    _open(page, app_url)
    page.get_by_role("tab", name="Inspect a model").click()
    page.locator("#inspect-file input[type=file]").set_input_files(str(RESNET))
    page.locator("#run-inspect").click()
    expect(page.locator("#inspect-verdict")).to_contain_text(
        "resnet50_noweights.mindir: 54 fusion chains", timeout=TIMEOUT_MS
    )
    expect(page.locator("#inspect-chains").get_by_role("gridcell", name="conv-bn-act").first).to_be_visible()
    expect(page.locator("#inspect-plot-chains .js-plotly-plot")).to_be_visible()


def test_a_case_link_reopens_the_report_in_a_fresh_page(page_en: Page, app_url: str, browser: Browser):
    """Diagnose, read the case link shown with the result, open it in a new browser context."""
    page = page_en
    _open(page, app_url)
    _upload_pair(page, EXAMPLE / "baseline", EXAMPLE / "target")
    page.locator("#run-compare").click()
    expect(page.locator("#causes")).to_contain_text("precision-mismatch")
    link_box = page.locator("#case-link input, #case-link textarea").first
    expect(link_box).to_have_value(re.compile(r"^http://127\.0\.0\.1:\d+/\?case=[A-Za-z0-9_-]{22}$"))
    link = link_box.input_value()
    case_id = link.rsplit("=", 1)[1]
    expect(page.locator("#case-info")).to_contain_text(case_id)

    context = browser.new_context(locale="en-US", viewport={"width": 1400, "height": 1000})
    fresh = context.new_page()
    fresh.set_default_timeout(TIMEOUT_MS)
    dialogs: list[str] = []
    fresh.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    try:
        fresh.goto(link)
        expect(fresh.locator("#causes")).to_contain_text("precision-mismatch")
        expect(fresh.locator("#verdict")).to_contain_text("Inference")
        expect(fresh.locator("#case-info")).to_contain_text(f"{case_id} of ")
        expect(fresh.locator("#plot-ops .js-plotly-plot")).to_be_visible()
        fresh.goto(f"{app_url}?case={quote(XSS)}")
        expect(fresh.get_by_text("this is not a case id").first).to_be_visible()
        assert fresh.evaluate("window.__xss") is None and dialogs == []
    finally:
        context.close()


def test_the_language_switch_shows_the_result_in_chinese(page_en: Page, app_url: str):
    """An English page, a diagnosis, then 中文: labels and the same result come back in Chinese, with no
    English sentence in the verdict or the causes (cited documents' titles aside; the warnings' text is
    tests/test_zh_reports.py's)."""
    page = page_en
    _open(page, app_url)
    _upload_pair(page, EXAMPLE / "baseline", EXAMPLE / "target")
    page.locator("#run-compare").click()
    expect(page.locator("#verdict")).to_contain_text("Inference")
    expect(page.locator("#case-link input, #case-link textarea").first).to_have_value(re.compile("case="))
    page.locator("#lang-switch").get_by_text("中文").click()
    expect(page).to_have_url(re.compile(r"[?&]lang=zh"))
    expect(page.get_by_role("tab", name="对比两次运行")).to_be_visible()
    expect(page.locator("#verdict")).to_contain_text("结论")
    expect(page.locator("#causes")).to_contain_text("置信度")
    for area in ("#verdict", "#causes"):
        shown = re.sub(r"<a\b[^>]*>.*?</a>", " ", page.locator(area).first.inner_html(), flags=re.S)
        assert english_sentences(shown) == [], area


def _log_in(page: Page, url: str, user: str, password: str) -> None:
    """Gradio's login page, then the app."""
    page.goto(url)
    page.locator("input[type=text], input:not([type])").first.fill(user)
    page.locator("input[type=password]").fill(password)
    page.get_by_role("button", name=re.compile("login", re.IGNORECASE)).click()
    expect(page.locator("#run-compare")).to_be_visible()


def test_a_case_link_shows_staff_notes_to_staff_only(browser: Browser, tmp_path: Path):
    """Issue 33 item 4 in the browser: bob (not staff) opens a case link and sees no status and no note;
    ann (staff) sees both."""
    from gradio_client import Client, handle_file

    from app import build_demo, launch_kwargs
    from doctor.config import AppConfig

    env = {"PERF_DOCTOR_USERS": "ann:pw-ann,bob:pw-bob", "PERF_DOCTOR_STAFF": "ann"}
    config = AppConfig.from_env({**env, "PERF_DOCTOR_CASE_DB": str(tmp_path / "cases.sqlite3")})
    demo = build_demo(config)
    _, url, _ = demo.launch(
        server_name="127.0.0.1",
        server_port=free_port(),
        prevent_thread_lock=True,
        quiet=True,
        **launch_kwargs(config, demo),
    )
    model = tmp_path / "noted.mindir"
    model.write_bytes((MINDIR / "conv_bn_relu_eval.mindir").read_bytes())
    try:
        bob = Client(url, auth=("bob", "pw-bob"), verbose=False, analytics_enabled=False)
        report, _ = bob.predict(handle_file(str(model)), api_name="/inspect_model")
        case_id = report["case"]["id"]
        ann = Client(url, auth=("ann", "pw-ann"), verbose=False, analytics_enabled=False)
        ann.predict(case_id, "answered", "Customer: ACME", "", "", "", 200, api_name="/triage_update")
        for user, password, sees_note in (("bob", "pw-bob", False), ("ann", "pw-ann", True)):
            context = browser.new_context(locale="en-US", viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            try:
                _log_in(page, url, user, password)
                page.goto(f"{url.rstrip('/')}/?case={case_id}")
                banner = page.locator("#inspect-case-info")  # a model case opens in the Inspect tab
                expect(banner).to_contain_text(f"{case_id} of ")
                if sees_note:
                    expect(banner).to_contain_text("Customer: ACME")
                else:
                    expect(banner).not_to_contain_text("ACME")
                    expect(banner).not_to_contain_text("answered")
            finally:
                context.close()
    finally:
        demo.close()

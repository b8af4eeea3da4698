"""Perf Doctor web app (Gradio): wires upload components to doctor.diagnose / doctor.inspect_model.

Run `python app.py` (Hugging Face Spaces does) or `python app.py --example` to open with a bundled example
diagnosed. Settings come from environment variables read in doctor.config. Handlers only translate
between components and the facade: every analysis is asked of `doctor`, and a report is shown through one
presenter (`webapp.present`). The API is the named endpoints `/diagnose`, `/inspect_model`,
`/compare_outputs` and `/case` (docs/api.md), which return only the report document and its files; the
page's own events are private. This module imports each package through its `__init__` only.
"""

# gradio does not list `components` in its __all__, though its docs use gr.components.Component.
# pyright: reportPrivateImportUsage=false

from __future__ import annotations

import os

# Before gradio is imported: it reads these at import time.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import argparse
import contextlib
import html
import json
import logging
import signal
import sys
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal, TypedDict

import gradio as gr
from starlette.middleware import Middleware

from core import InputError, JsonObject
from desk import STATUSES, CaseBook, Given, TriageDenied
from desk import triage_view as triage
from doctor import (
    LANGS,
    LANGUAGE_NAMES,
    UI_TEXT,
    AppConfig,
    FolderFiles,
    Report,
    diagnose,
    display_name,
    failure_markdown,
    inspect_model,
    page_lang,
    problems_markdown,
    serve_uploads,
    t,
)
from knowledge import SEVERITIES
from sandbox import kill_all_children, run_cancellable
from webapp import (
    COMPARE_OUTPUTS,
    COMPARE_PLOTS,
    FILES,
    INSPECT_OUTPUTS,
    MODEL,
    MODEL_LABEL_KEY,
    NO_CASE,
    PageLocale,
    PairExample,
    Results,
    UploadLedger,
    UploadRecorder,
    api_result,
    available_pairs,
    base_url,
    baseline_slot,
    cached_copy,
    cleared_values,
    collect_help,
    dataframe,
    given_paths,
    outputs_api,
    outputs_tab,
    present,
    rank_choices,
    rules_markdown,
    script_button,
    swapped_choice,
    upload_folder,
    without_stray_file,
)

LOG = logging.getLogger("perf_doctor.app")
# Words Gradio 6 looks up but ships in no language (an upload button's label, an upload's progress).
GRADIO_GAPS = {
    "en": {"common.upload": "Upload", "common.complete": "complete"},
    "zh": {"common.upload": "上传", "common.complete": "完成"},
}
I18N = gr.I18n(**{lang: UI_TEXT[lang] | GRADIO_GAPS[lang] for lang in LANGS})
ROLE_CHOICES = {"auto": None, "first": "first", "second": "second"}
CSS = """
#verdict, #inspect-verdict {font-size: 1.1rem; padding: .6rem .9rem; border-radius: 8px;
  border: 1px solid #d4a72c;}
#notice, #inspect-notice {padding: .4rem .9rem; border-radius: 8px; border: 1px solid #cf222e;}
.pd-hidden {display: none !important;}
/* The language switch: one line, and a visible focus ring for keyboard users. */
#lang-switch .wrap {flex-wrap: nowrap;}
#lang-switch label:focus-within {outline: 2px solid var(--color-accent, #f97316); outline-offset: 2px;}
/* Fix code wraps instead of being cut off or scrolled sideways. */
#causes pre, #causes code, #inspect-causes pre, #inspect-causes code, #below-threshold pre,
#collect-help pre {white-space: pre-wrap; overflow-wrap: anywhere;}
/* Table headers and cells break between words only: a narrow column never spells "why not fused" or
   "resolved" letter by letter; every column keeps room for a short header word. */
th .header-text, th .header-content, td .cell-wrap, #after td, #after th {
  word-break: normal !important; overflow-wrap: normal !important; hyphens: none;}
th {min-width: 4.5rem;}
#after table {display: block; overflow-x: auto; max-width: 100%;}
/* Dark mode: plots (transparent, webapp.views.themed) get light text and faint grid lines; code comments
   and other muted code tokens keep a readable contrast on the dark code background. */
.dark .js-plotly-plot .main-svg text {fill: #e5e7eb !important;}
.dark .js-plotly-plot .gridlayer path, .dark .js-plotly-plot .zerolinelayer path {
  stroke: rgba(229, 231, 235, .18) !important;}
.dark .prose pre .token.comment, .dark .prose pre .hljs-comment, .dark pre .comment {
  color: #a8b3c4 !important;}
/* Narrow screens (a phone from 360 px): one column, verdict and causes first, then the plots and tables;
   no column keeps its desktop minimum width, so nothing is cut off or scrolled sideways. */
@media (max-width: 820px) {
  #results-row, #inspect-results-row {flex-direction: column;}
  #causes-column, #inspect-causes-column {order: 1;}
  #details-column, #inspect-details-column {order: 2;}
  #results-row > .column, #inspect-results-row > .column, #title-row > * {
    min-width: 0 !important; width: 100% !important; max-width: 100%;}
  #title-row {flex-wrap: wrap;}
  #title-row h1 {font-size: 1.5rem; word-break: keep-all; overflow-wrap: normal; hyphens: none;}
}
"""
# The triage table's column widths (triage.TABLE_COLUMNS order): what support reads first fits 1366 px.
TRIAGE_FIRST_WIDTHS = {"case": 190, "submission": 230, "verdict": 330, "top_cause": 170, "severity": 95}
TRIAGE_FIRST_WIDTHS |= {"status": 95, "ranks": 70}
TRIAGE_WIDTHS = [f"{TRIAGE_FIRST_WIDTHS.get(name, 150)}px" for name in triage.TABLE_COLUMNS]
# The inputs of each tab whose uploads a browser session holds, by slot name, in event-input order.
COMPARE_SLOTS = ("baseline", "target", "mindir", "after")
INSPECT_SLOTS = ("inspect",)
# The upload ledger of each app build_demo made, for launch_kwargs to add its recording middleware.
LEDGERS: weakref.WeakKeyDictionary[gr.Blocks, UploadLedger] = weakref.WeakKeyDictionary()


# ------------------------------------------------------------------------------------------ handlers


def _lang(request: gr.Request | None) -> str:
    """Report language: the page's `?lang=` (the language switch), else the browser's Accept-Language
    (API clients get English)."""
    headers = getattr(request, "headers", None)
    params = dict(getattr(request, "query_params", None) or {})
    if headers is None:
        return page_lang(params.get("lang"), None, None)
    return page_lang(params.get("lang"), headers.get("referer"), headers.get("accept-language"))


def _progress(progress: gr.Progress | None) -> Callable[[float, str], None] | None:
    """The facade's progress callback showing on Gradio's progress bar (None without one)."""
    if progress is None:
        return None
    return lambda fraction, desc: progress(fraction, desc=desc)  # pyright: ignore[reportReturnType]  # gradio: Progress returns its own value


def error_text(message: str) -> str:
    """An error message as gr.Error shows it: Gradio renders it as HTML, so & < > are escaped; quotes
    are left alone (harmless in element text), so API clients read "it's", not "it&#x27;s"."""
    return html.escape(message, quote=False)


# A folder upload's handler: (the files, the page's folder names, the request) -> the side's files
FolderHandler = Callable[[list[str] | None, str | None, gr.Request], list[str] | None]


class Failed(Exception):
    """An analysis that did not finish: for a browser page, the Markdown shown in the result area."""

    def __init__(self, markdown: str, toast: gr.Error, line: str = "") -> None:
        super().__init__(markdown)
        self.markdown = markdown
        self.toast = toast
        self.line = line  # the error on one line (English), as the triage list shows it


def _run(analysis: Callable[[], Any]) -> Any:
    """Run a doctor call; a failure becomes one escaped gr.Error line (triage and reopened cases)."""
    try:
        return _analyse(analysis)
    except Failed as failure:
        raise failure.toast from None


def _analyse(analysis: Callable[[], Any], lang: str = "en", button: str = "run") -> Any:
    """Run a doctor call; bad input becomes one line per problem, a bug a generic line (logged), each
    telling to press the tab's `button` (a UI_TEXT key) again. Raises Failed, carrying both the inline
    Markdown and the escaped gr.Error for API callers."""
    try:
        return analysis()
    except InputError as error:
        toast = gr.Error(error_text(error.message), title="Input problem", print_exception=False)
        raise Failed(problems_markdown(error, lang, button), toast, error.message) from None
    except Exception as error:
        LOG.exception("analysis failed")
        message = f"Internal error ({type(error).__name__}); the server log has the details."
        toast = gr.Error(error_text(message), print_exception=False)
        raise Failed(failure_markdown(lang, type(error).__name__, button), toast, message) from None


def _session(request: gr.Request | None) -> str | None:
    return getattr(request, "session_hash", None)


@contextmanager
def _using_uploads(
    uploads: UploadLedger | None, request: gr.Request | None, slots: Mapping[str, object], lang: str
) -> Iterator[None]:
    """Around one analysis of uploaded files: a browser session keeps holding what its inputs show (so a
    re-run works), the request holds its files while it runs; an upload already deleted is bad input."""
    if uploads is None:
        yield
        return
    session = _session(request)
    if session is not None and uploads.has_session(session):
        for slot, value in slots.items():
            uploads.hold(session, slot, given_paths([value]))
    paths = given_paths(slots.values())
    uploads.restore(paths)  # a bundled example's copy deleted by another app or a cache sweep
    uploads.claim(paths)
    try:
        _analyse(lambda: uploads.require_present(paths), lang, "inspect" if "inspect" in slots else "run")
        yield
    finally:
        uploads.release(paths)


def _attempt(
    names: Sequence[str],
    uploads: UploadLedger | None,
    request: gr.Request | None,
    produce: Callable[[], dict[str, object]],
) -> dict[str, object]:
    """The values of a tab's results, or on failure: for a browser page, the problems in the result area
    and everything else cleared; for an API call, the error raised."""
    try:
        return produce()
    except Failed as failure:
        if uploads is None or not uploads.has_session(_session(request)):
            raise failure.toast from None
        return {**cleared_values(names), "notice": gr.Markdown(value=failure.markdown, visible=True)}


def _below_threshold_box(elem_id: str) -> tuple[gr.Accordion, gr.Markdown]:
    """A collapsed accordion for the causes below the reporting threshold, hidden until it has some."""
    with gr.Accordion(I18N("below_threshold"), open=False, visible=False, elem_id=elem_id) as box:
        text = gr.Markdown(elem_id=f"{elem_id}-text")
    return box, text


def reprofile(report_json: JsonObject | None, fixes: list[str] | None) -> gr.DownloadButton:
    """A fresh reprofile.py for the shown report with the ticked fixes (webapp.files, doctor.reprofile)."""
    if not report_json:
        return script_button(None)
    return script_button(_run(lambda: FILES.write_script(Report.from_client(report_json), fixes or [])))


def _keep(
    cases: CaseBook | None,
    report: Report,
    given: Given,
    request: gr.Request | None,
    example: bool = False,
) -> tuple[str, str]:
    """Keep a report as a case when the app has a case book (a click on a bundled example marked as
    one); (banner, link)."""
    if cases is None:
        return NO_CASE
    return triage.record_case(cases, report, given, base_url(request), example=example)


def _diagnosed(cases: CaseBook | None, given: Given, example: bool, analysis: Callable[[], Any]) -> Any:
    """Run an analysis (`analysis` raises Failed); a failure is kept as a failed case with its error line
    when the app has a case book, so support sees it in the triage list."""
    try:
        return analysis()
    except Failed as failure:
        if cases is not None:
            triage.record_failure(cases, given, failure.line, example=example)
        raise


def diagnose_pair(
    baseline: list[str] | None,
    target: list[str] | None,
    mindir: str | None,
    rank: str | float | None,
    role: str,
    request: gr.Request | None,
    progress: gr.Progress | None = None,
    *,
    after: list[str] | None = None,
    cases: CaseBook | None = None,
    uploads: UploadLedger | None = None,
    example: bool = False,
    lang: str | None = None,
) -> tuple[Report, tuple[str, str]]:
    """Diagnose a baseline/target pair of profiles (archives or folder files), optionally with a MINDIR
    and the target profiled again after the fixes (`after`), and keep it as a case: (report, (banner,
    link)). `lang` overrides the request's language; `example`: a click on a bundled example (its case
    is marked as one). With `uploads`, the request holds its uploaded files while it runs and a browser
    session keeps them for a re-run. Raises Failed."""
    given = list(zip(COMPARE_SLOTS, (baseline, target, mindir, after), strict=True))
    lang = lang or _lang(request)
    with _using_uploads(uploads, request, dict(given), lang):
        report = _diagnosed(
            cases,
            given,
            example,
            lambda: _analyse(
                lambda: diagnose(
                    baseline or None,
                    target or None,
                    mindir or None,
                    rank=rank,  # checked by diagnose: a whole number in range (NaN, inf, 1e400 refused)
                    baseline_role=ROLE_CHOICES.get(role),
                    progress=_progress(progress),
                    lang=lang,
                    after=after or None,
                ),
                lang,
            ),
        )
        return report, _keep(cases, report, given, request, example)  # the case store first


def check_model(
    mindir: str | None,
    request: gr.Request | None,
    progress: gr.Progress | None = None,
    *,
    cases: CaseBook | None = None,
    uploads: UploadLedger | None = None,
    example: bool = False,
    lang: str | None = None,
) -> tuple[Report, tuple[str, str]]:
    """Check one MINDIR model (export hygiene and fusion chains) and keep it as a case: (report,
    (banner, link)); the rest as in `diagnose_pair`. Raises Failed."""
    lang = lang or _lang(request)
    with _using_uploads(uploads, request, {"inspect": mindir}, lang):
        given = [("mindir", mindir)]
        report = _diagnosed(
            cases,
            given,
            example,
            lambda: _analyse(
                lambda: inspect_model(mindir or "", progress=_progress(progress), lang=lang), lang, "inspect"
            ),
        )
        return report, _keep(cases, report, given, request, example)


def compare(
    baseline: list[str] | None,
    target: list[str] | None,
    mindir: str | None,
    rank: str | float | None,
    role: str,
    request: gr.Request,
    progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's documented way to receive progress
    *,
    after: list[str] | None = None,
    cases: CaseBook | None = None,
    uploads: UploadLedger | None = None,
    example: bool = False,
) -> dict[str, object]:
    """The Compare tab's values by name (webapp.present) of `diagnose_pair`; a browser page gets
    problems in its result area, any other caller an error."""

    def produce() -> dict[str, object]:
        given = (baseline, target, mindir, rank, role)
        report, case = diagnose_pair(
            *given, request, progress, after=after, cases=cases, uploads=uploads, example=example
        )
        return present(report, case, ROLE_CHOICES.get(role), display_name(baseline) if baseline else None)

    return _attempt(COMPARE_OUTPUTS, uploads, request, produce)


def inspect(
    mindir: str | None,
    request: gr.Request,
    progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's documented way to receive progress
    *,
    cases: CaseBook | None = None,
    uploads: UploadLedger | None = None,
    example: bool = False,
) -> dict[str, object]:
    """The Inspect tab's values by name of `check_model`; problems as in `compare`."""

    def produce() -> dict[str, object]:
        return present(*check_model(mindir, request, progress, cases=cases, uploads=uploads, example=example))

    return _attempt(INSPECT_OUTPUTS, uploads, request, produce)


def _api_call(analysis: Callable[[], tuple[Report, tuple[str, str]]]) -> tuple[JsonObject, list[str]]:
    """An API endpoint's answer: the report document and its download files; a failure is an error."""
    try:
        return api_result(*analysis())
    except Failed as failure:
        raise failure.toast from None


def search_rules(query: str, request: gr.Request) -> str:
    """The rule catalog narrowed to the rules matching the query."""
    return rules_markdown(query or "", _lang(request))


def _file_names(files: Iterable[str]) -> frozenset[str]:
    return frozenset(os.path.basename(str(path)) for path in files)


MAX_FOLDERS = 4096  # folder uploads whose names an app remembers (the oldest are forgotten)
# The browser sends a picked folder's files by their names only: this script writes the folder's name
# (from webkitRelativePath) by side into the hidden #folder-names box, which the upload event sends along.
FOLDER_HEAD = r"""<script>
document.addEventListener("change", (event) => {
  const input = event.target;
  if (!(input instanceof HTMLInputElement) || !input.webkitdirectory || !input.files?.length) return;
  const folder = (input.files[0].webkitRelativePath || "").split("/")[0];
  const side = input.parentElement?.querySelector("[id$='-files']")?.id.replace(/-files$/, "");
  const box = document.querySelector("#folder-names textarea, #folder-names input");
  if (!folder || !side || !box) return;
  let names = {};
  try { names = JSON.parse(box.value || "{}"); } catch (e) { names = {}; }
  names[side] = folder;
  box.value = JSON.stringify(names);
  box.dispatchEvent(new Event("input", {bubbles: true}));
}, true);
</script>"""


class Events:
    """The event functions that need this app's case book, upload ledger and settings (one instance per
    built app, so two apps in one process never share a store). Each delegates to desk.triage."""

    def __init__(self, config: AppConfig, cases: CaseBook) -> None:
        self.config = config
        self.cases = cases
        self.uploads = UploadLedger(upload_folder())  # filled by the UploadRecorder middleware
        # The components the events write to, set when the layout is built.
        self.tabs: gr.Tabs | None = None
        self.compare_results: Results | None = None
        self.inspect_results: Results | None = None
        self.triage: dict[str, gr.components.Component] = {}  # the Triage tab's components by name
        self.help: gr.Markdown | None = None  # the collection help, filled in the viewer's language
        self.language_boxes: list[tuple[str, gr.Column]] = []  # blocks only one language's viewers see
        self.language: gr.Radio | None = None  # the page's language switch
        # (session, side) -> (the names of a folder's uploaded files, the folder's name)
        self.folders: dict[tuple[str, str], tuple[frozenset[str], str]] = {}
        self.folder_names: gr.Textbox | None = None  # the hidden box the page writes folder names into

    def keep_folder(
        self, side: str
    ) -> Callable[[list[str] | None, str | None, gr.Request], list[str] | None]:
        """The handler of a side's folder upload: its files become the side's file list, and this page
        remembers the folder's name (from the #folder-names box) with the files' names, so that cases
        and reports name the folder (Gradio stores the files again under other paths)."""

        def keep(files: list[str] | None, names: str | None, request: gr.Request) -> list[str] | None:
            try:
                folder = json.loads(names or "{}").get(side)
            except (ValueError, AttributeError):
                folder = None
            session = _session(request)
            if files and session and isinstance(folder, str) and folder.strip():
                if len(self.folders) >= MAX_FOLDERS:
                    self.folders.pop(next(iter(self.folders)))
                self.folders[(session, side)] = (_file_names(files), folder.strip()[:200])
            return files

        return keep

    def named(self, side: str, files: list[str] | None, request: gr.Request | None) -> list[str] | None:
        """A side's files as FolderFiles when they are the folder this page uploaded for that side."""
        if not files or isinstance(files, str):
            return files
        names, folder = self.folders.get((_session(request) or "", side), (frozenset(), ""))
        return FolderFiles(files, folder) if folder and names == _file_names(files) else files

    def results(self, kind: str) -> Results:
        """The Compare tab's results, or the Inspect tab's for a model-only (`kind` "mindir") report."""
        results = self.inspect_results if kind == "mindir" else self.compare_results
        if results is None:
            raise RuntimeError("the layout has not been built")
        return results

    async def compare(
        self,
        baseline: list[str] | None,
        target: list[str] | None,
        mindir: str | None,
        rank: str | float | None,
        role: str,
        after: list[str] | None,
        request: gr.Request,
        progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's documented way to receive progress
    ) -> dict[gr.components.Component, object]:
        """Diagnose a baseline/target pair of profiles (archives or folder files), optionally with a
        MINDIR and an after-the-fix run; the result is kept as a case. Returns the Compare tab's values
        by component. Runs in a worker thread; a cancelled request kills its isolated decoders
        (run_cancellable)."""
        return await self._compare(baseline, target, mindir, rank, role, after, request, progress)

    async def compare_example(
        self,
        baseline: list[str] | None,
        target: list[str] | None,
        mindir: str | None,
        rank: str | float | None,
        role: str,
        after: list[str] | None,
        request: gr.Request,
        progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's documented way to receive progress
    ) -> dict[gr.components.Component, object]:
        """`compare` after a click on a bundled example: its case is marked as an example's."""
        return await self._compare(baseline, target, mindir, rank, role, after, request, progress, True)

    async def _compare(
        self,
        baseline: list[str] | None,
        target: list[str] | None,
        mindir: str | None,
        rank: str | float | None,
        role: str,
        after: list[str] | None,
        request: gr.Request,
        progress: gr.Progress,
        example: bool = False,
    ) -> dict[gr.components.Component, object]:
        baseline, target = self.named("baseline", baseline, request), self.named("target", target, request)
        after = self.named("after", after, request)
        values = await run_cancellable(
            lambda: compare(
                baseline,
                target,
                mindir,
                rank,
                role,
                request,
                progress,
                after=after,
                cases=self.cases,
                uploads=self.uploads,
                example=example,
            )
        )
        return self.results("pair").keyed(values)

    async def inspect(
        self,
        mindir: str | None,
        request: gr.Request,
        progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's documented way to receive progress
    ) -> dict[gr.components.Component, object]:
        """Check one MINDIR model: export hygiene and fusion chains; the result is kept as a case. A
        cancelled request kills its isolated decoder."""
        return await self._inspect(mindir, request, progress)

    async def inspect_example(
        self,
        mindir: str | None,
        request: gr.Request,
        progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's documented way to receive progress
    ) -> dict[gr.components.Component, object]:
        """`inspect` after a click on the bundled example model: its case is marked as an example's."""
        return await self._inspect(mindir, request, progress, True)

    async def _inspect(
        self, mindir: str | None, request: gr.Request, progress: gr.Progress, example: bool = False
    ) -> dict[gr.components.Component, object]:
        cases, uploads = self.cases, self.uploads
        values = await run_cancellable(
            lambda: inspect(mindir, request, progress, cases=cases, uploads=uploads, example=example)
        )
        return self.results("mindir").keyed(values)

    async def diagnose(
        self,
        baseline: list[str] | None,
        target: list[str] | None,
        mindir: str | None,
        rank: float | None,
        role: str,
        after: list[str] | None,
        lang: str,
        request: gr.Request,
        progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's documented way to receive progress
    ) -> tuple[JsonObject, list[str]]:
        """The `/diagnose` API: the Compare tab's inputs (and the report's language) in, the report
        document and its download files (HTML, Markdown, JSON, CSV) out; the result is kept as a case."""
        given = (baseline, target, mindir, rank, role)
        cases, uploads = self.cases, self.uploads
        return await run_cancellable(
            lambda: _api_call(
                lambda: diagnose_pair(
                    *given, request, progress, after=after, cases=cases, uploads=uploads, lang=lang or None
                )
            )
        )

    async def inspect_model(
        self,
        mindir: str | None,
        lang: str,
        request: gr.Request,
        progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's documented way to receive progress
    ) -> tuple[JsonObject, list[str]]:
        """The `/inspect_model` API: a MINDIR in, the report document and its HTML, Markdown and JSON
        files out; the result is kept as a case."""
        return await run_cancellable(
            lambda: _api_call(
                lambda: check_model(
                    mindir, request, progress, cases=self.cases, uploads=self.uploads, lang=lang or None
                )
            )
        )

    async def compare_outputs(
        self, baseline: str | None, target: str | None, mapping: str | None, lang: str
    ) -> tuple[JsonObject, list[str]]:
        """The `/compare_outputs` API: two dumps (and msprobe's layer mapping) in, the outputs section
        and its HTML, Markdown, JSON and CSV files out (webapp.outputs_tab); a cancelled request kills
        the isolated children parsing them (run_cancellable)."""
        uploads = self.uploads
        return await run_cancellable(
            lambda: outputs_api(baseline, target, mapping, lang or LANGS[0], uploads=uploads)
        )

    def case(self, case_id: str, lang: str, request: gr.Request) -> tuple[JsonObject, list[str]]:
        """The `/case` API: the report of a case (its link's id) in `lang` and its download files."""
        report, banner, link = _run(
            lambda: triage.reopen_case(self.cases, case_id, lang or _lang(request), base_url(request))
        )
        return api_result(report, (banner, link))

    def start_session(self, request: gr.Request) -> None:
        """On page load: this browser page's inputs hold their uploads from now on, until it closes."""
        session = _session(request)
        if session is not None:
            self.uploads.open_session(session)

    def end_session(self, request: gr.Request) -> None:
        """The page closed (Gradio's unload): let go of the uploads its inputs held."""
        session = _session(request)
        if session is not None:
            self.uploads.end_session(session)

    def input_changed(self, slot: str | None) -> Callable[[object, str | None, gr.Request], object]:
        """The handler of one input's change: the session holds what the input now shows (`slot` names an
        upload input; None for an option), and a result already shown is marked stale."""

        def changed(value: object, verdict: str | None, request: gr.Request) -> object:
            session = _session(request)
            if slot is not None and session is not None:
                self.uploads.hold(session, slot, given_paths([value]))
            if not verdict:
                return gr.skip()
            return gr.Markdown(value=t("stale", _lang(request)), visible=True)

        return changed

    def show_language(self, request: gr.Request) -> dict[gr.components.Component, object]:
        """On page load: show the blocks of the viewer's language, hide the others; the switch shows it."""
        lang = _lang(request)
        shown = {box: gr.Column(visible=box_lang == lang) for box_lang, box in self.language_boxes}
        return {**shown, self.language: gr.Radio(value=LANGUAGE_NAMES[lang])} if self.language else shown  # pyright: ignore[reportReturnType]  # dict is invariant

    async def swap_compare(
        self,
        baseline: list[str] | None,
        target: list[str] | None,
        mindir: str | None,
        rank: str | float | None,
        role: str,
        after: list[str] | None,
        report: JsonObject | None,
        request: gr.Request,
        progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's documented way to receive progress
    ) -> dict[gr.components.Component, object]:
        """The diagnosis after a swap; a report reopened from its case has no runs on the page, so it
        stays as it is and a notice says to upload them again (a run would only say "nothing to
        diagnose" and throw the report away)."""
        if report and not baseline and not target:
            notice = self.results("pair").parts["notice"]
            return {notice: gr.Markdown(value=t("swap_reopened", _lang(request)), visible=True)}
        return await self.compare(baseline, target, mindir, rank, role, after, request, progress)

    @staticmethod
    def swap(report: JsonObject | None, baseline: list[str] | None) -> object:
        """The baseline option that makes the other run of the shown report the baseline (unchanged for
        a reopened report, whose runs are not on the page: see swap_compare)."""
        if report and not baseline:
            return gr.skip()
        first = display_name(baseline) if baseline else None
        sources = [run.get("source") for run in (report or {}).get("runs") or []]
        return swapped_choice(baseline_slot(sources, first))

    def open_case(self, case_id: str, request: gr.Request) -> dict[gr.components.Component, object]:
        """Reopen a case in the Compare tab (the Inspect tab for a model-only case): the selected tab
        and that tab's result components (the other tab's are left as they are)."""
        staff = self.config.may_triage(getattr(request, "username", None))  # status and note: staff only
        report, banner, link = _run(
            lambda: triage.reopen_case(self.cases, case_id, _lang(request), base_url(request), staff=staff)
        )
        tab = "inspect" if report.kind == "mindir" else "compare"
        return {
            self.tabs: gr.Tabs(selected=tab),  # pyright: ignore[reportReturnType]  # gradio: updates keyed by component
            **self.results(report.kind).keyed(present(report, (banner, link))),
        }

    def open_linked_case(self, request: gr.Request) -> object:
        """On page load: reopen the case of a `?case=<id>` link; nothing without one."""
        params = dict(getattr(request, "query_params", None) or {})
        if "case" not in params:
            return gr.skip()  # one skip for all outputs
        return self.open_case(params["case"], request)

    def _staff(self, request: gr.Request) -> None:
        if not self.config.may_triage(getattr(request, "username", None)):
            raise gr.Error(error_text(TriageDenied().message), print_exception=False)

    def triage_list(
        self,
        cause: str | None,
        severity: str | None,
        status: str | None,
        limit: float | None,
        request: gr.Request,
    ) -> dict[gr.components.Component, object]:
        """Recent cases matching the filters (cause, severity, status; empty = any), newest first, and
        the number of cases per top cause."""
        self._staff(request)
        table, groups = _run(lambda: triage.list_cases(self.cases, cause, severity, status, limit))
        return self._triage_keyed(table=dataframe(table), groups=dataframe(groups))

    def _triage_keyed(self, **values: Any) -> dict[gr.components.Component, object]:
        """Triage values by component name as Gradio's {component: value} return."""
        return {self.triage[name]: value for name, value in values.items()}

    def _confirmed(
        self,
        message: str,
        cause: str | None,
        severity: str | None,
        status_filter: str | None,
        limit: float | None,
        request: gr.Request,
    ) -> dict[gr.components.Component, object]:
        """A triage action's confirmation beside the tables refreshed with the current filters."""
        listing = self.triage_list(cause, severity, status_filter, limit, request)
        return {**self._triage_keyed(message=message), **listing}

    def triage_update(
        self,
        case_id: str,
        status: str,
        note: str | None,
        cause: str | None,
        severity: str | None,
        status_filter: str | None,
        limit: float | None,
        request: gr.Request,
    ) -> dict[gr.components.Component, object]:
        """Set the status and note of a case; returns a confirmation and the refreshed tables."""
        self._staff(request)
        message = _run(lambda: triage.save_case(self.cases, case_id, status, note, _lang(request)))
        return self._confirmed(message, cause, severity, status_filter, limit, request)

    def triage_delete(
        self,
        case_id: str,
        cause: str | None,
        severity: str | None,
        status_filter: str | None,
        limit: float | None,
        request: gr.Request,
    ) -> dict[gr.components.Component, object]:
        """Delete a case for good; returns a confirmation and the refreshed tables."""
        self._staff(request)
        message = _run(lambda: triage.delete_case(self.cases, case_id, _lang(request)))
        return self._confirmed(message, cause, severity, status_filter, limit, request)

    def triage_attach(
        self,
        case_id: str,
        after: list[str] | None,
        cause: str | None,
        severity: str | None,
        status_filter: str | None,
        limit: float | None,
        request: gr.Request,
    ) -> dict[gr.components.Component, object]:
        """Give a case its after-the-fix run (desk.triage); returns a confirmation with the resolved and
        remaining causes, and the refreshed tables."""
        self._staff(request)
        lang = _lang(request)
        try:
            with _using_uploads(self.uploads, request, {"triage-after": after}, lang):
                message = _analyse(lambda: triage.attach_after(self.cases, case_id, after or [], lang), lang)
        except Failed as failure:  # the Triage tab has no problem box: the error is shown as a toast
            raise failure.toast from None
        return self._confirmed(message, cause, severity, status_filter, limit, request)

    def pick_case(self, event: gr.SelectData) -> dict[gr.components.Component, object]:
        """A clicked triage row fills the case id, status and note fields."""
        case_id, status, note = triage.selection(event.row_value)
        return self._triage_keyed(case_id=case_id, status=status, note=note)

    def show_triage(self, request: gr.Request) -> gr.Tab:
        """The Triage tab only for the staff users."""
        return gr.Tab(visible=self.config.may_triage(getattr(request, "username", None)))


# -------------------------------------------------------------------------------------------- layout


def _side(events: Events, key: str, value: list[str] | None) -> tuple[gr.File, gr.UploadButton]:
    files = without_stray_file(
        gr.File(value=value, label=I18N(key), file_count="multiple", elem_id=f"{key}-files", height=140)
    )
    folder = without_stray_file(
        gr.UploadButton(I18N(f"{key}_folder"), file_count="directory", size="sm", elem_id=f"{key}-folder")  # pyright: ignore[reportArgumentType]  # gradio types label as str; it takes I18nData
    )
    folder.upload(events.keep_folder(key), [folder, events.folder_names], files, api_visibility="private")  # pyright: ignore[reportArgumentType]  # built
    return files, folder


# The language switch reloads the page with ?lang=<lang> (and ?case=<id> of the shown result, whose case
# keeps it in every language): the server then answers in that language (_lang), and the page starts
# Gradio in it (webapp.locale.PageLocale), so its labels (gr.I18n) and its own words follow.
SWITCH_JS = """(name) => {
  const lang = name === "中文" ? "zh" : "en";
  const url = new URL(window.location.href);
  if (url.searchParams.get("lang") === lang) return;
  url.searchParams.set("lang", lang);
  for (const box of document.querySelectorAll("[id$='case-link'] textarea, [id$='case-link'] input")) {
    const shown = box.value && box.offsetParent !== null;
    const id = shown ? new URL(box.value, url).searchParams.get("case") : null;
    if (id) { url.searchParams.set("case", id); break; }
  }
  window.location.assign(url.toString());
}"""


# Progress and results in view: before a run the page scrolls so that the button and the progress shown on
# the result area below it are on screen; after it, to the verdict (or the problems), as after reopening
# a case. Each returns its arguments: Gradio passes them on to the event's function.
SCROLL_TO_PROGRESS = """(...args) => {
  const button = document.querySelector("#run-compare, #run-inspect");
  const shown = [...document.querySelectorAll("#run-compare, #run-inspect")].find((b) => b.offsetParent);
  (shown || button)?.scrollIntoView({block: "start", behavior: "instant"});
  return args;
}"""
# "Open report" switches the tab in the same update: its verdict is laid out a moment later, so the
# scroll waits for it (up to two seconds).
SCROLL_TO_RESULT = """(...args) => {
  const ids = ["notice", "verdict", "inspect-notice", "inspect-verdict"];
  let tries = 0;
  const scroll = () => {
    const shown = ids.map((id) => document.getElementById(id)).find((el) => el && el.offsetParent);
    if (shown) shown.scrollIntoView({block: "start", behavior: "instant"});
    else if (++tries < 40) setTimeout(scroll, 50);
  };
  scroll();
  return args;
}"""


def _scroll_to_result(event: Any) -> None:
    """After `event`, the verdict (or the problems) of the shown tab at the top of the screen."""
    event.then(None, None, None, js=SCROLL_TO_RESULT, queue=False, api_visibility="private")


def _language_switch() -> gr.Radio:
    """The page's language control (each language named in itself); the browser's locale is the default."""
    names = [LANGUAGE_NAMES[lang] for lang in LANGS]
    radio = gr.Radio(
        names,
        value=names[0],
        label="Language / 语言",  # what a screen reader says for the group (shown in no language's place)
        show_label=False,
        elem_id="lang-switch",
        container=False,
        scale=0,
    )
    radio.input(None, radio, None, js=SWITCH_JS, api_visibility="private")  # a user choice, not a load
    return radio


def _rank_field() -> gr.Dropdown:
    """The rank to drill into: empty (every rank) at first, offering a multi-rank report's ranks after
    it (show_ranks); a typed number works too (doctor.facade.check_rank reads the text)."""
    return gr.Dropdown(
        choices=[], value=None, allow_custom_value=True, label=I18N("rank"), elem_id="rank", filterable=True
    )


def show_ranks(report_json: JsonObject | None, request: gr.Request) -> gr.Dropdown:
    """The rank field's choices for the shown report: "every rank" and each rank of its runs."""
    return gr.Dropdown(choices=rank_choices(report_json, _lang(request)))


def _case_parts(prefix: str) -> dict[str, gr.components.Component]:
    """The case banner and its link (a read-only text box with a copy button), above the results."""
    banner = gr.Markdown(elem_id=f"{prefix}case-info")
    link = gr.Textbox(
        label=I18N("case_link"),
        interactive=False,
        buttons=["copy"],
        elem_id=f"{prefix}case-link",
        max_lines=1,
        visible=False,
    )
    return {"case_info": banner, "case_link": link}


def _wide_table(
    label: str,
    elem_id: str,
    *,
    max_chars: int,
    pinned_columns: int,
    max_height: int = 520,
    column_widths: list[str] | None = None,
) -> gr.Dataframe:
    """A read-only table of many rows: searchable, wrapped, its first columns pinned, copy and
    fullscreen buttons (the operator table and the triage case list)."""
    return gr.Dataframe(
        interactive=False,
        column_widths=column_widths,  # pyright: ignore[reportArgumentType]  # list is invariant
        show_search="search",
        max_height=max_height,
        wrap=True,
        max_chars=max_chars,
        pinned_columns=pinned_columns,
        elem_id=elem_id,
        label=I18N(label),
        buttons=["copy", "fullscreen"],
    )


def _downloads(csv: bool) -> dict[str, gr.DownloadButton]:
    """The report download buttons by name (dl_html, dl_md, dl_json and, with `csv`, dl_csv)."""
    keys = ["dl_html", "dl_md", "dl_json"] + (["dl_csv"] if csv else [])
    with gr.Row():
        return {k: gr.DownloadButton(I18N(k), elem_id=k.replace("_", "-"), size="sm") for k in keys}  # pyright: ignore[reportArgumentType]  # gradio types label as str; it takes I18nData


Wiring = tuple[list[gr.components.Component], list[gr.components.Component]]


def _compare_tab(config: AppConfig, preload: PairExample | None, events: Events) -> Wiring:
    """Upload row, options, results; returns the (inputs, outputs) of the compare event."""
    inputs = _compare_inputs(events, preload)
    examples = _pair_examples(events, inputs[:3])  # pyright: ignore[reportArgumentType]  # gradio: File inputs typed as Component
    run = gr.Button(I18N("run"), variant="primary", elem_id="run-compare")
    parts = {"notice": gr.Markdown(elem_id="notice", visible=False)}
    parts["verdict"] = gr.Markdown(elem_id="verdict", visible=False)
    parts |= _case_parts("")
    runs, swap = _runs_box()
    parts |= runs
    with gr.Row(equal_height=False, elem_id="results-row"):
        with gr.Column(scale=5, min_width=420, elem_id="causes-column"):
            parts["causes"] = gr.Markdown(elem_id="causes")
            parts["below_box"], parts["below"] = _below_threshold_box("below-threshold")  # pyright: ignore[reportArgumentType]  # gradio: layout block among parts
            parts["after"] = gr.Markdown(elem_id="after")
        with gr.Column(scale=6, min_width=360, elem_id="details-column"), gr.Tabs():
            parts |= _compare_details()
    events.compare_results = Results(COMPARE_OUTPUTS, parts)
    _wire_compare(config, events, inputs, run, swap, examples)
    return inputs, events.compare_results.outputs


def _compare_inputs(events: Events, preload: PairExample | None) -> list[gr.components.Component]:
    """The intro, the collection help and the upload row with the options: [baseline, target, mindir,
    rank, role, after], the compare event's inputs."""
    gr.Markdown(I18N("intro"))
    with gr.Accordion(I18N("collect_help"), open=False, elem_id="collect-help"):
        events.help = gr.Markdown(elem_id="collect-help-text")
    events.folder_names = gr.Textbox(elem_id="folder-names", elem_classes=["pd-hidden"], show_label=False)
    with gr.Row(equal_height=False):
        with gr.Column():
            baseline, _ = _side(events, "baseline", preload.files("baseline") if preload else None)
        with gr.Column():
            target, _ = _side(events, "target", preload.files("target") if preload else None)
        with gr.Column():
            after, _ = _side(events, "after", [])  # a default, so API clients may leave it out
        with gr.Column():
            mindir = without_stray_file(
                gr.File(label=I18N("mindir"), file_types=[".mindir"], elem_id="mindir-file", height=140)
            )
            with gr.Accordion(I18N("options"), open=False):
                rank = _rank_field()
                choices = [(I18N(f"role_{key}"), key) for key in ROLE_CHOICES]
                role = gr.Radio(choices, value="auto", label=I18N("roles"))
    return [baseline, target, mindir, rank, role, after]


def _runs_box() -> tuple[dict[str, gr.components.Component], gr.Button]:
    """The run summary table and the baseline note with the swap button."""
    with gr.Accordion(I18N("runs"), open=True, elem_id="runs-box"):
        runs = gr.Dataframe(interactive=False, elem_id="runs", show_label=False, max_height=160, wrap=True)
        with gr.Row(equal_height=True):
            note = gr.Markdown(elem_id="baseline-note")
            swap = gr.Button(I18N("swap"), size="sm", elem_id="swap-roles", scale=0)
    return {"runs": runs, "baseline_note": note}, swap


def _compare_details() -> dict[str, gr.components.Component]:
    """The detail tabs beside the causes: plots, operators, leaderboards, chains, warnings, downloads."""
    with gr.Tab(I18N("plots")):
        parts: dict[str, gr.components.Component] = {
            key: gr.Plot(label=I18N(key), show_label=False, elem_id=key.replace("_", "-"), visible=False)
            for key in COMPARE_PLOTS
        }
    with gr.Tab(I18N("operators")):
        parts["operators"] = _wide_table("operators", "operators", max_chars=80, pinned_columns=1)
    with gr.Tab(I18N("leaderboards")):
        for key in ("top_baseline", "top_target"):
            parts[key] = gr.Dataframe(
                interactive=False, label=I18N(key), max_chars=60, elem_id=key.replace("_", "-")
            )
    with gr.Tab(I18N("chains")):
        parts["chains"] = _wide_table("chains", "compare-chains", max_chars=80, pinned_columns=2)
    with gr.Tab(I18N("warnings")):
        parts["warnings"] = gr.Markdown(elem_id="warnings")
    with gr.Tab(I18N("downloads")):
        parts |= _downloads(csv=True)
        parts["fixes"] = gr.CheckboxGroup(label=I18N("fixes"), visible=False, elem_id="fixes")
        parts["dl_reprofile"] = gr.DownloadButton(
            I18N("dl_reprofile"),  # pyright: ignore[reportArgumentType]  # gradio: I18n labels
            visible=False,
            elem_id="dl-reprofile",
            size="sm",
        )
        parts["report_json"] = _report_json()
    return parts


def _report_json() -> gr.JSON:
    """The shown report's JSON in a closed accordion."""
    with gr.Accordion(I18N("report_json"), open=False):
        return gr.JSON(label=I18N("report_json"), show_label=False)


class Pool(TypedDict):
    """The event settings of an analysis: the shared pool of analysis workers, and the API visibility."""

    concurrency_limit: int
    concurrency_id: str
    api_visibility: Literal["public", "private", "undocumented"]


def _pool(config: AppConfig, api_visibility: Literal["public", "private"] = "private") -> Pool:
    """An analysis event's settings: it runs in the pool shared by every analysis (the setting's size)."""
    return {
        "concurrency_limit": config.concurrency,
        "concurrency_id": "analysis",
        "api_visibility": api_visibility,
    }


def _wire_compare(
    config: AppConfig,
    events: Events,
    inputs: list[gr.components.Component],
    run: gr.Button,
    swap: gr.Button,
    examples: list[gr.Examples],  # pyright: ignore[reportGeneralTypeIssues]  # gradio: Examples typed as a function
) -> None:
    """The Compare tab's events, all private (the API is /diagnose): the run button, a change of an
    input, a ticked fix, the swap button and a click on an example."""
    results = events.results("pair")
    parts, outputs = results.parts, results.outputs
    slots = ("baseline", "target", "mindir", None, None, "after")  # rank and role hold no upload
    _watch_inputs(events, zip(slots, inputs, strict=True), parts["verdict"], parts["notice"])  # pyright: ignore[reportArgumentType]  # gradio: parts typed as Component
    analysis = _pool(config)
    run.click(None, None, None, js=SCROLL_TO_PROGRESS, queue=False, api_visibility="private")
    _scroll_to_result(run.click(events.compare, inputs, outputs, api_name="compare", **analysis))
    report_json, fixes = parts["report_json"], parts["fixes"]
    fixes.input(reprofile, [report_json, fixes], parts["dl_reprofile"], api_visibility="private")  # pyright: ignore[reportAttributeAccessIssue]  # gradio: events on Component
    # A multi-rank report offers its ranks in the rank field; picking one diagnoses that rank alone.
    rank = inputs[3]
    report_json.change(  # pyright: ignore[reportAttributeAccessIssue]  # gradio: events on Component
        show_ranks, report_json, rank, queue=False, api_visibility="private", show_progress="hidden"
    )
    _scroll_to_result(rank.select(events.compare, inputs, outputs, **analysis))  # pyright: ignore[reportAttributeAccessIssue]  # gradio: events on Component
    # One click makes the other run the baseline and diagnoses again.
    swap.click(events.swap, [report_json, inputs[0]], inputs[4], queue=False, api_visibility="private").then(
        events.swap_compare, [*inputs, report_json], outputs, **analysis
    )
    for example in examples:
        # Clicking an example fills the inputs, then diagnoses them in the same pool as the button.
        example.load_input_event.then(events.compare_example, inputs, outputs, **analysis)


def _in_each_language(events: Events, make: Callable[[str], gr.Examples], elem_id: str) -> list[gr.Examples]:  # pyright: ignore[reportGeneralTypeIssues]  # gr.Examples is typed as a function
    """One gr.Examples per language (its labels cannot follow the browser's language), each in a column
    that only viewers of that language see (shown by Events.show_language on page load)."""
    made = []
    for lang in LANGS:
        with gr.Column(visible=lang == "en", elem_id=elem_id if lang == "en" else f"{elem_id}-{lang}") as box:
            made.append(make(lang))
        events.language_boxes.append((lang, box))
    return made


def _pair_examples(events: Events, inputs: list[gr.File]) -> list[gr.Examples]:  # pyright: ignore[reportGeneralTypeIssues]  # gr.Examples is typed as a function
    """The bundled pairs as clickable examples, labelled in one language each (none when absent)."""
    pairs = available_pairs()
    if not pairs:
        return []
    return _in_each_language(
        events,
        lambda lang: gr.Examples(
            examples=[[p.files("baseline"), p.files("target"), None] for p in pairs],
            inputs=inputs,
            label=UI_TEXT[lang]["examples"],
            example_labels=[UI_TEXT[lang][p.label_key] for p in pairs],
        ),
        "examples",
    )


def _inspect_tab(config: AppConfig, events: Events) -> Wiring:
    """A MINDIR on its own: hygiene causes beside the fusion chains and the graph; returns the
    (inputs, outputs) of the inspect event."""
    mindir = without_stray_file(
        gr.File(label=I18N("mindir_required"), file_types=[".mindir"], elem_id="inspect-file", height=140)
    )
    examples = _model_examples(events, mindir)
    run = gr.Button(I18N("inspect"), variant="primary", elem_id="run-inspect")
    parts = {"notice": gr.Markdown(elem_id="inspect-notice", visible=False)}
    parts["verdict"] = gr.Markdown(elem_id="inspect-verdict", visible=False)
    parts |= _case_parts("inspect-")
    with gr.Row(equal_height=False, elem_id="inspect-results-row"):
        with gr.Column(scale=5, min_width=420, elem_id="inspect-causes-column"):
            parts["causes"] = gr.Markdown(elem_id="inspect-causes")
            parts["below_box"], parts["below"] = _below_threshold_box("inspect-below-threshold")  # pyright: ignore[reportArgumentType]  # gradio: layout block among parts
        with gr.Column(scale=6, min_width=480, elem_id="inspect-details-column"):
            parts["graph"] = gr.Markdown(elem_id="inspect-graph")
            parts["chains"] = _wide_table(
                "chains", "inspect-chains", max_chars=80, pinned_columns=2, max_height=900
            )
            parts["plot_chains"] = gr.Plot(
                label=I18N("plot_chains"), show_label=False, visible=False, elem_id="inspect-plot-chains"
            )
    with gr.Accordion(I18N("warnings"), open=True):
        parts["warnings"] = gr.Markdown(elem_id="inspect-warnings")
    parts |= _downloads(csv=False)
    parts["report_json"] = _report_json()
    events.inspect_results = Results(INSPECT_OUTPUTS, parts)
    outputs = events.inspect_results.outputs
    _watch_inputs(events, [(INSPECT_SLOTS[0], mindir)], parts["verdict"], parts["notice"])  # pyright: ignore[reportArgumentType]  # gradio: parts typed as Component
    run.click(None, None, None, js=SCROLL_TO_PROGRESS, queue=False, api_visibility="private")
    _scroll_to_result(run.click(events.inspect, [mindir], outputs, api_name="inspect", **_pool(config)))
    for example in examples:  # clicking the example model inspects it
        example.load_input_event.then(events.inspect_example, [mindir], outputs, **_pool(config))
    return [mindir], outputs


def _model_examples(events: Events, mindir: gr.File) -> list[gr.Examples]:  # pyright: ignore[reportGeneralTypeIssues]  # gradio: Examples typed as a function
    """The bundled model as a clickable example, labelled in one language each (none when absent)."""
    if not MODEL.is_file():
        return []
    return _in_each_language(
        events,
        lambda lang: gr.Examples(
            [[str(MODEL)]],
            [mindir],
            label=UI_TEXT[lang]["model_examples"],
            example_labels=[UI_TEXT[lang][MODEL_LABEL_KEY]],
        ),
        "model-examples",
    )


def _api(config: AppConfig, events: Events, inputs: Mapping[str, list[gr.components.Component]]) -> None:
    """The named API endpoints (the UI's events are private), by name with the tab inputs they take:
    `/diagnose` (the Compare tab's), `/inspect_model` (the Inspect tab's model), `/compare_outputs` (the
    outputs tab's dumps) and `/case` (a case id), each with the report's language, each returning only
    the report document and its download files. Their extra inputs and outputs sit in a column no page
    shows."""
    with gr.Column(visible=False, elem_id="api-only"):
        lang = gr.Dropdown(list(LANGS), value=LANGS[0], label="lang")
        case_id = gr.Textbox(label="case_id")
        report = gr.JSON(label="report")
        files = gr.File(label="files", file_count="multiple")
    public = _pool(config, "public")
    for name in ("diagnose", "inspect_model", "compare_outputs"):
        gr.on([], getattr(events, name), [*inputs[name], lang], [report, files], api_name=name, **public)
    gr.on([], events.case, [case_id, lang], [report, files], api_name="case", api_visibility="public")


def _watch_inputs(
    events: Events,
    slots: Iterable[tuple[str | None, gr.components.Component]],
    verdict: gr.Markdown,
    notice: gr.Markdown,
) -> None:
    """Every input's change: its uploads are held by the session, a shown result is marked stale."""
    for slot, component in slots:
        component.change(  # pyright: ignore[reportAttributeAccessIssue]  # an event of this component's class
            events.input_changed(slot),
            [component, verdict],
            notice,
            queue=False,
            api_visibility="private",
            show_progress="hidden",
        )


def _rules_tab() -> tuple[gr.Textbox, gr.Markdown]:
    """The rule catalog with a search box; filled in the viewer's language when the page loads."""
    gr.Markdown(I18N("rules_intro"))
    query = gr.Textbox(label=I18N("rules_search"), elem_id="rules-search")
    catalog = gr.Markdown(elem_id="rules-catalog")
    query.change(search_rules, query, catalog, api_visibility="undocumented", trigger_mode="always_last")
    return query, catalog


def show_help(request: gr.Request) -> str:
    """The collection help in the viewer's language."""
    return collect_help(_lang(request))


def _choices(values: Sequence[str]) -> list[tuple[Any, str]]:
    """Filter choices: "any" (the empty value) and then the values themselves."""
    return [(I18N("triage_any"), ""), *((value, value) for value in values if value)]


def _triage_filters() -> tuple[list[gr.components.Component], gr.Button]:
    """Cause, severity, status and row-limit filters, and the refresh button."""
    with gr.Row(equal_height=True):
        controls = [
            gr.Dropdown(_choices(values), value="", label=I18N(key), elem_id=key.replace("_", "-"))
            for key, values in (
                ("triage_cause", triage.cause_choices()),
                ("triage_severity", SEVERITIES),
                ("triage_status", STATUSES),
            )
        ]
        limit = gr.Number(value=200, precision=None, minimum=1, maximum=5000, label=I18N("triage_limit"))
        refresh = gr.Button(I18N("triage_refresh"), elem_id="triage-refresh", scale=0)
    return [*controls, limit], refresh


def _triage_tables() -> tuple[gr.Dataframe, gr.Dataframe]:
    """The case table (sortable and searchable in the browser) and the counts per top cause."""
    with gr.Tabs():
        with gr.Tab(I18N("triage_cases")):
            table = _wide_table(
                "triage_cases", "triage-table", max_chars=90, pinned_columns=1, column_widths=TRIAGE_WIDTHS
            )
        with gr.Tab(I18N("triage_groups")):
            groups = gr.Dataframe(interactive=False, elem_id="triage-groups", label=I18N("triage_groups"))
    return table, groups


def _triage_form() -> dict[str, gr.components.Component]:
    """The picked case: its id with an Open button, status and note with Save, and Delete."""
    with gr.Row(equal_height=True):
        case_id = gr.Textbox(label=I18N("triage_case_id"), elem_id="triage-case", max_lines=1)
        open_button = gr.Button(I18N("triage_open"), elem_id="triage-open", scale=0)
    with gr.Row(equal_height=True):
        status = gr.Radio(
            list(STATUSES), value=STATUSES[0], label=I18N("triage_status"), elem_id="triage-set"
        )
        note = gr.Textbox(label=I18N("triage_note"), lines=2, max_length=2000, elem_id="triage-note")
        save = gr.Button(I18N("triage_save"), variant="primary", elem_id="triage-save", scale=0)
    with gr.Accordion(I18N("triage_delete_box"), open=False):
        gr.Markdown(I18N("triage_delete_hint"))
        delete = gr.Button(I18N("triage_delete"), variant="stop", elem_id="triage-delete", size="sm")
    with gr.Row(equal_height=True):
        after = gr.File(label=I18N("triage_after"), file_count="multiple", elem_id="triage-after", height=100)
        attach = gr.Button(I18N("triage_attach"), elem_id="triage-attach", scale=0)
    message = gr.Markdown(elem_id="triage-message")
    parts = (case_id, open_button, status, note, save, delete, after, attach, message)
    names = ("case_id", "open", "status", "note", "save", "delete", "after", "attach", "message")
    return dict(zip(names, parts, strict=True))


def _triage_tab(events: Events, opened: list[gr.components.Component]) -> gr.Tab:
    """Recent cases with filters, counts per top cause, and a form to open, annotate or delete one."""
    with gr.Tab(I18N("tab_triage"), id="triage", visible=not events.config.staff) as tab:
        gr.Markdown(I18N("triage_intro"))
        filters, refresh = _triage_filters()
        table, groups = _triage_tables()
        form = _triage_form()
    events.triage = {**form, "table": table, "groups": groups}
    # The output lists below are the API order of the triage endpoints (docs/api.md).
    listing = {"fn": events.triage_list, "inputs": filters, "outputs": [table, groups]}
    refresh.click(**listing, api_name="triage_list")
    tab.select(**listing, api_visibility="private")
    for control in filters[:3]:
        control.input(**listing, api_visibility="private")  # pyright: ignore[reportAttributeAccessIssue]  # an event of this component's class
    picked = [form["case_id"], form["status"], form["note"]]
    table.select(events.pick_case, None, picked, api_visibility="private")
    changed = [form["message"], table, groups]
    form["save"].click(events.triage_update, [*picked, *filters], changed, api_name="triage_update")  # pyright: ignore[reportAttributeAccessIssue]  # gradio: events on Component
    form["delete"].click(events.triage_delete, [form["case_id"], *filters], changed, api_name="triage_delete")  # pyright: ignore[reportAttributeAccessIssue]  # gradio: events on Component
    opening = form["open"].click(events.open_case, [form["case_id"]], opened, api_visibility="private")  # pyright: ignore[reportAttributeAccessIssue]  # gradio: events on Component
    _scroll_to_result(opening)  # the API's reopening is /case
    form["attach"].click(  # pyright: ignore[reportAttributeAccessIssue]  # gradio: events on Component
        events.triage_attach, [form["case_id"], form["after"], *filters], changed, api_name="triage_attach"
    )
    return tab


def build_demo(config: AppConfig | None = None, example: str | None = None) -> gr.Blocks:
    """The whole app. `example` names a bundled pair to preload and diagnose when the page opens."""
    config = config or AppConfig.from_env()
    events = Events(config, CaseBook.from_config(config))
    preload = next((p for p in available_pairs() if p.name == example), None)
    with gr.Blocks(title="MindSpore Perf Doctor", delete_cache=(1800, 3600), analytics_enabled=False) as demo:
        with gr.Row(elem_id="title-row"):
            gr.Markdown(f"# {I18N('app_title')}")
            events.language = _language_switch()
        with gr.Tabs(elem_id="main-tabs") as tabs:
            with gr.Tab(I18N("tab_compare"), id="compare"):
                inputs, outputs = _compare_tab(config, preload, events)
            with gr.Tab(I18N("tab_inspect"), id="inspect"):
                inspect_ins, inspect_outs = _inspect_tab(config, events)
            with gr.Tab(I18N("tab_outputs"), id="outputs"):
                outputs_ins = outputs_tab(I18N, events.language, events.uploads)
            with gr.Tab(I18N("tab_rules"), id="rules"):
                rules = _rules_tab()
            events.tabs = tabs
            opened = [tabs, *outputs, *inspect_outs]
            triage_tab = _triage_tab(events, opened) if config.triage_enabled else None
        _api(
            config, events, {"diagnose": inputs, "inspect_model": inspect_ins, "compare_outputs": outputs_ins}
        )
        _on_load(demo, events, rules, opened, triage_tab)
        if preload is not None:
            demo.load(events.compare, inputs, outputs, api_visibility="private")
    demo.queue(default_concurrency_limit=config.concurrency, max_size=config.queue_size)
    _keep_example_files(demo, events.uploads)
    LEDGERS[demo] = events.uploads
    return demo


def _on_load(
    demo: gr.Blocks,
    events: Events,
    rules: tuple[gr.Textbox, gr.Markdown],
    opened: list[gr.components.Component],
    triage_tab: gr.Tab | None,
) -> None:
    """What a page does when it opens (and closes): its session holds uploads, the help, the language,
    the rule catalog and the triage tab follow the viewer, and a `?case=` link reopens its case."""
    demo.load(events.start_session, None, None, queue=False, api_visibility="private")
    demo.unload(events.end_session)
    demo.load(show_help, None, events.help, queue=False, api_visibility="private")
    boxes = [box for _, box in events.language_boxes] + [events.language]
    demo.load(events.show_language, None, boxes, queue=False, api_visibility="private")  # pyright: ignore[reportArgumentType]  # gradio: layout blocks as outputs
    demo.load(search_rules, rules[0], rules[1], queue=False, api_visibility="private")
    _scroll_to_result(demo.load(events.open_linked_case, None, opened, api_visibility="private"))
    if triage_tab is not None and events.config.staff:
        demo.load(events.show_triage, None, triage_tab, api_visibility="private")


def _keep_example_files(demo: gr.Blocks, uploads: UploadLedger) -> None:
    """The example files Gradio copied into its cache at build time stay usable while the app runs.

    Its cache is content-addressed and shared by every app on the machine and by uploads of the same
    bytes and name. Gradio's delete_cache sweep removes copies an hour after they were made (these are
    never touched again) and the shutdown of any other app built with the same examples (another
    process, or a second build_demo in this one) deletes them: clicking an example then filled the
    inputs with missing files and no analysis ran. So the copies are kept out of this app's sweeps,
    pinned (no upload's last holder deletes them), and restored from the originals when an analysis
    finds one missing (`_using_uploads`). clean_up still removes them when this app stops."""
    for block in demo.blocks.values():
        files = getattr(block, "temp_files", ())
        if files:
            block.keep_in_cache.update(files)
            uploads.pin(files)
    originals = [f for pair in available_pairs() for side in ("baseline", "target") for f in pair.files(side)]
    originals += [str(MODEL)] if MODEL.is_file() else []
    # The same call Gradio made for the examples: the same content-addressed path, touched.
    uploads.pin_copies({cached_copy(f): f for f in originals})


# Any: gradio Blocks.launch takes keyword arguments of many types; these go to it as **kwargs
def launch_kwargs(config: AppConfig, demo: gr.Blocks) -> dict[str, Any]:
    """launch() settings of an app made by build_demo, shared by `main` and the tests (server name and
    port come from the caller); the middleware records uploads so they are deleted after analysis."""
    return {
        "app_kwargs": {
            "middleware": [Middleware(UploadRecorder, ledger=LEDGERS[demo]), Middleware(PageLocale)]
        },
        "max_file_size": config.max_file_size,
        "auth": config.auth,
        "run_history": False,
        "footer_links": ["api"],
        "i18n": I18N,
        "css": CSS,
        "head": FOLDER_HEAD,
        "show_error": False,
    }


def serve(demo: gr.Blocks, config: AppConfig, **launch_args: Any) -> int:  # Any: gradio as launch_kwargs
    """Run an app made by build_demo until it is stopped, then remove what it wrote; returns the exit
    code (128 + the signal's number when SIGTERM or SIGINT stopped it).

    Containers and Spaces stop the app with SIGTERM, whose default action ends Python without running
    any cleanup: both signals are turned into the interruption Gradio's server loop handles (it shuts
    the server down, which deletes the files Gradio created), then the recorded uploads, the report
    downloads folder and any isolated decoder still running are removed. Every profile file the server
    reads is held to the per-file budgets (serve_uploads)."""
    serve_uploads()
    received = _stop_on_signals()
    try:
        demo.launch(**launch_args, **launch_kwargs(config, demo))
    finally:
        clean_up(demo)
    return 128 + received[0] if received else 0


def _stop_on_signals() -> list[int]:
    """SIGTERM and SIGINT raise KeyboardInterrupt in the main thread; returns the list they are noted in."""
    received: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    return received


def clean_up(demo: gr.Blocks) -> None:
    """What the app leaves when it stops: recorded uploads, report downloads, running decoders."""
    killed = kill_all_children()
    ledger = LEDGERS.get(demo)
    uploads = ledger.delete_all() if ledger is not None else 0
    FILES.close()
    copies = _delete_cached_copies(demo)
    LOG.info(
        "stopped: removed %d uploads, the report downloads and %d cached copies, killed %d decoders",
        uploads,
        copies,
        killed,
    )


def _delete_cached_copies(demo: gr.Blocks) -> int:
    """Delete the copies Gradio keeps in its cache for this app: served downloads (its own shutdown
    deletes them too, but only if its server thread finishes before the process exits) and the example
    files it copied at start. Returns how many files were removed."""
    files = {path for paths in demo.temp_file_sets for path in paths}
    files |= {path for block in demo.blocks.values() for path in getattr(block, "temp_files", ())}
    removed = 0
    for path in files:
        with contextlib.suppress(OSError):
            if os.path.isfile(path) and not os.path.islink(path):
                os.remove(path)
                removed += 1
    return removed


def launch(port: int | None = None, example: bool = False) -> int:
    """Start the app (blocking) until it is stopped; host and port follow GRADIO_SERVER_NAME/PORT unless
    `port` is given. Returns the exit code (see serve)."""
    config = AppConfig.from_env()
    pairs = available_pairs()
    demo = build_demo(config, example=pairs[0].name if example and pairs else None)
    return serve(demo, config, server_port=port)


def main(argv: Sequence[str] | None = None) -> int:
    """`python app.py [--example] [--port N]`."""
    parser = argparse.ArgumentParser(description="MindSpore Perf Doctor web app")
    parser.add_argument("--example", action="store_true", help="open with a bundled example diagnosed")
    parser.add_argument("--port", type=int, help="port (default: GRADIO_SERVER_PORT or 7860)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    try:
        return launch(port=args.port, example=args.example)
    except InputError as error:  # a bad setting (e.g. PERF_DOCTOR_CASE_DB): one line, no traceback
        print(f"perf-doctor: error: {error.message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())

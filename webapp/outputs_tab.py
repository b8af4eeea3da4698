"""The app's "Compare outputs" tab: two dump archives in, the outputs report (Markdown) and the
divergence-along-depth plot out. Built by app.py inside its tabs; kept here so app.py stays small.

With the app's upload ledger (webapp.uploads), the tab's uploads are tracked like the profiles': the
browser page holds what each input shows (a re-run works, a cleared input lets go of its file), a run
holds its files while it runs, and the last holder deletes them from Gradio's upload folder."""

# gradio does not list `components` in its __all__, though its docs use gr.components.Component.
# pyright: reportPrivateImportUsage=false

from __future__ import annotations

import html
import json
from typing import Any

import gradio as gr

from core import InputError, JsonObject, error_line, in_lang, say
from doctor.i18n import LANGUAGE_NAMES
from doctor.outputs_report import compare_outputs, depth_figure, render_outputs
from sandbox import run_cancellable
from webapp.present import FILES
from webapp.uploads import UploadLedger, given_paths, holding

ARCHIVES = [".zip", ".tar", ".gz", ".tgz", ".json", ".csv"]
SLOTS = ("outputs-baseline", "outputs-target", "outputs-mapping")  # upload slots a browser page holds


def outputs_tab(
    label: gr.I18n, language: gr.components.Component | None = None, uploads: UploadLedger | None = None
) -> list[gr.components.Component]:
    """The tab's components (inside an open gr.Tab); `label` is the app's gr.I18n, `language` its switch,
    `uploads` the app's upload ledger (None: uploads are left to Gradio's cache sweep). Returns its
    inputs (baseline, target, mapping), which the app's `/compare_outputs` API takes too."""
    gr.Markdown(label("outputs_intro"))
    with gr.Row():
        baseline = gr.File(label=label("outputs_baseline"), file_types=ARCHIVES, elem_id="outputs-baseline")
        target = gr.File(label=label("outputs_target"), file_types=ARCHIVES, elem_id="outputs-target")
        mapping = gr.File(
            label=label("outputs_mapping"), file_types=[".yaml", ".yml"], elem_id="outputs-mapping"
        )
    run = gr.Button(label("outputs_run"), variant="primary", elem_id="run-outputs")
    report = gr.Markdown(elem_id="outputs-report")
    plot = gr.Plot(show_label=False, elem_id="outputs-plot", visible=False)
    inputs = [baseline, target, mapping] + ([language] if language is not None else [])

    async def compare(
        request: gr.Request, baseline: object, target: object, mapping: object, language: str | None = None
    ) -> tuple[gr.Markdown, gr.Plot]:
        """The Compare button: a cancelled request (a closed page) kills the children parsing the dumps."""
        session = getattr(request, "session_hash", None)
        return await run_cancellable(
            lambda: run_outputs(baseline, target, mapping, language, uploads=uploads, session=session)
        )

    run.click(compare, inputs, [report, plot], api_visibility="private")
    if uploads is not None:
        for slot, component in zip(SLOTS, (baseline, target, mapping), strict=True):
            component.change(
                _holder(uploads, slot), component, None, queue=False, api_visibility="private",
                show_progress="hidden",
            )  # fmt: skip
    return [baseline, target, mapping]


def _holder(uploads: UploadLedger, slot: str) -> Any:
    """The change handler of one upload input: the browser page holds what the input now shows."""

    def changed(value: Any, request: gr.Request) -> None:
        session = getattr(request, "session_hash", None)
        if uploads.has_session(session):
            uploads.hold(str(session), slot, given_paths([_path(value)]))

    return changed


def run_outputs(
    baseline: object,
    target: object,
    mapping: object,
    language: str | None = None,
    *,
    uploads: UploadLedger | None = None,
    session: str | None = None,
) -> tuple[gr.Markdown, gr.Plot]:
    """Compare two uploaded dumps; an InputError is said as one line (in the page's language), no plot.
    With `uploads`, the run holds its files while it runs (holding) and `session`'s inputs keep them."""
    lang = next((code for code, name in LANGUAGE_NAMES.items() if name == language), "en")
    first, second, third = _path(baseline), _path(target), _path(mapping)
    if not first or not second:  # not given, or given as no file
        return gr.Markdown("⚠ " + in_lang(say("outputs.need-two"), lang)), gr.Plot(visible=False)
    slots: dict[str, str | None] = dict(zip(SLOTS, (first, second, third), strict=True))
    try:
        with holding(uploads, session, slots):
            result = compare_outputs(first, second, mapping=third, lang=lang)
    except InputError as error:
        return gr.Markdown("⚠ " + in_lang(error_line(error), lang)), gr.Plot(visible=False)
    return gr.Markdown(render_outputs(result, "md")), gr.Plot(
        depth_figure(result.section, lang), visible=True
    )


def outputs_api(
    baseline: object, target: object, mapping: object, lang: str, *, uploads: UploadLedger | None = None
) -> tuple[JsonObject, list[str]]:
    """The `/compare_outputs` API: the outputs section (JSON) of two dumps and its HTML, Markdown, JSON
    and CSV files; bad input is one escaped gr.Error line."""
    first, second, third = _path(baseline), _path(target), _path(mapping)
    if not first or not second:  # not given, or given as no file
        raise gr.Error(
            html.escape(in_lang(say("outputs.need-two"), lang), quote=False), print_exception=False
        )
    slots: dict[str, object] = dict(zip(SLOTS, (first, second, third), strict=True))
    try:
        with holding(uploads, None, slots):
            result = compare_outputs(first, second, mapping=third, lang=lang)
    except InputError as error:
        raise gr.Error(
            html.escape(in_lang(error_line(error), lang), quote=False), print_exception=False
        ) from None
    texts = {
        f"perf-doctor-outputs.{fmt}": render_outputs(result, fmt) for fmt in ("html", "md", "json", "csv")
    }
    paths = FILES.write_texts(texts)
    return json.loads(texts["perf-doctor-outputs.json"]), [str(path) for path in paths]


def _path(value: Any) -> str | None:
    """The local path of a Gradio file value (a path string or an object with .name)."""
    if value is None:
        return None
    return value if isinstance(value, str) else getattr(value, "name", None)

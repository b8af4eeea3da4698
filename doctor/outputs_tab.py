"""The app's "Compare outputs" tab: two dump archives in, the outputs report (Markdown) and the
divergence-along-depth plot out. Built by app.py inside its tabs; kept here so app.py stays small."""

from __future__ import annotations

from typing import Any

import gradio as gr

from core import InputError, error_line, in_lang, say
from doctor.i18n import LANGUAGE_NAMES
from doctor.outputs_report import compare_outputs, depth_figure, render_outputs

ARCHIVES = [".zip", ".tar", ".gz", ".tgz", ".json", ".csv"]


def outputs_tab(label: Any, language: gr.components.Component | None = None) -> list[gr.components.Component]:
    """The tab's components (inside an open gr.Tab); `label` is the app's gr.I18n, `language` its switch."""
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
    run.click(run_outputs, inputs, [report, plot], api_visibility="private")
    return [report, plot]


def run_outputs(baseline: Any, target: Any, mapping: Any, language: str | None = None) -> tuple[Any, Any]:
    """Compare two uploaded dumps; an InputError is said as one line (in the page's language), no plot."""
    lang = next((code for code, name in LANGUAGE_NAMES.items() if name == language), "en")
    if not baseline or not target:
        return gr.Markdown("⚠ " + in_lang(say("outputs.need-two"), lang)), gr.Plot(visible=False)
    try:
        result = compare_outputs(_path(baseline), _path(target), mapping=_path(mapping), lang=lang)
    except InputError as error:
        return gr.Markdown("⚠ " + in_lang(error_line(error), lang)), gr.Plot(visible=False)
    return gr.Markdown(render_outputs(result, "md")), gr.Plot(
        depth_figure(result.section, lang), visible=True
    )


def _path(value: Any) -> str | None:
    """The local path of a Gradio file value (a path string or an object with .name)."""
    if value is None:
        return None
    return value if isinstance(value, str) else getattr(value, "name", None)

"""Perf Doctor web app (Gradio): wires upload components to doctor.diagnose / doctor.inspect_model.

Run `python app.py` (Hugging Face Spaces does) or `python app.py --example` to open with a bundled example
diagnosed. Settings come from environment variables read in doctor.config. Handlers only translate
between components and the facade: every analysis and display conversion lives in the doctor package.
"""

from __future__ import annotations

import os

# Before gradio is imported: it reads these at import time.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import argparse
import html
import logging
from collections.abc import Callable, Sequence
from typing import Any

import gradio as gr

from diagnosis.errors import InputError
from doctor import diagnose, inspect_model
from doctor.config import AppConfig
from doctor.examples import MODEL, MODEL_LABEL, PairExample, available_pairs
from doctor.files import ReportFiles
from doctor.i18n import UI_TEXT, lang_from_header
from doctor.report import Report
from doctor.rules_view import rules_markdown
from doctor.views import ReportView, Table, report_view

LOG = logging.getLogger("perf_doctor.app")
I18N = gr.I18n(**UI_TEXT)
FILES = ReportFiles()
ROLE_CHOICES = {"auto": None, "first": "first", "second": "second"}
CSS = """
#verdict, #inspect-verdict {font-size: 1.1rem; padding: .6rem .9rem; border-radius: 8px;
  border: 1px solid #d4a72c;}
#verdict:empty, #inspect-verdict:empty {display: none;}
"""


# ------------------------------------------------------------------------------------------ handlers


def _lang(request: gr.Request | None) -> str:
    """Report language from the browser's Accept-Language (API clients get English)."""
    headers = getattr(request, "headers", None)
    return lang_from_header(headers.get("accept-language") if headers is not None else None)


def _progress(progress: gr.Progress) -> Callable[[float, str], None]:
    return lambda fraction, desc: progress(fraction, desc=desc)


def _run(analysis: Callable[[], Report]) -> Report:
    """Run the facade; bad input becomes one escaped gr.Error line, a bug a generic one (logged)."""
    try:
        return analysis()
    except InputError as error:
        raise gr.Error(html.escape(error.message), title="Input problem", print_exception=False) from None
    except Exception as error:
        LOG.exception("analysis failed")
        message = f"Internal error ({type(error).__name__}); the server log has the details."
        raise gr.Error(html.escape(message), print_exception=False) from None


def _dataframe(table: Table) -> gr.Dataframe:
    return gr.Dataframe(value=table.frame, datatype=table.datatype)


def _plot(view: ReportView, key: str) -> gr.Plot:
    figure = view.figures.get(key)
    return gr.Plot(value=figure, visible=figure is not None)


def compare_outputs(report: Report) -> tuple[Any, ...]:
    """Component values of the Compare tab, in the order of the compare event's outputs."""
    view, paths = report_view(report), FILES.write(report)
    return (
        view.verdict,
        view.causes,
        view.warnings,
        _dataframe(view.operators),
        _dataframe(view.top_baseline),
        _dataframe(view.top_target),
        _plot(view, "ops"),
        _plot(view, "delta"),
        _plot(view, "steps"),
        _plot(view, "breakdown"),
        _plot(view, "chains"),
        _dataframe(view.chains),
        str(paths["html"]),
        str(paths["md"]),
        str(paths["json"]),
        str(paths["csv"]),
        report.to_dict(),
    )


def inspect_outputs(report: Report) -> tuple[Any, ...]:
    """Component values of the Inspect tab, in the order of the inspect event's outputs."""
    view, paths = report_view(report), FILES.write(report)
    return (
        view.verdict,
        view.causes,
        view.warnings,
        view.graph,
        _dataframe(view.chains),
        _plot(view, "chains"),
        str(paths["html"]),
        str(paths["md"]),
        str(paths["json"]),
        report.to_dict(),
    )


def compare(
    baseline: list[str] | None,
    target: list[str] | None,
    mindir: str | None,
    rank: float | None,
    role: str,
    request: gr.Request,
    progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's documented way to receive progress
) -> tuple[Any, ...]:
    """Diagnose a baseline/target pair of profiles (archives or folder files), optionally with a MINDIR.

    Returns the verdict, cause cards, warnings, tables, plots, report files and the JSON report.
    """
    report = _run(
        lambda: diagnose(
            baseline or None,
            target or None,
            mindir or None,
            rank=None if rank is None else int(rank),
            baseline_role=ROLE_CHOICES.get(role),
            progress=_progress(progress),
            lang=_lang(request),
        )
    )
    return compare_outputs(report)


def inspect(
    mindir: str | None,
    request: gr.Request,
    progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's documented way to receive progress
) -> tuple[Any, ...]:
    """Check one MINDIR model: export hygiene and fusion chains. Returns the same report parts."""
    report = _run(lambda: inspect_model(mindir or "", progress=_progress(progress), lang=_lang(request)))
    return inspect_outputs(report)


def search_rules(query: str, request: gr.Request) -> str:
    """The rule catalog narrowed to the rules matching the query."""
    return rules_markdown(query or "", _lang(request))


def keep_files(files: list[str] | None) -> list[str] | None:
    """A folder picked with the upload button becomes the value of the side's file list."""
    return files


# -------------------------------------------------------------------------------------------- layout


def _side(key: str, value: list[str] | None) -> tuple[gr.File, gr.UploadButton]:
    files = gr.File(value=value, label=I18N(key), file_count="multiple", elem_id=f"{key}-files", height=140)
    folder = gr.UploadButton(
        I18N(f"{key}_folder"), file_count="directory", size="sm", elem_id=f"{key}-folder"
    )
    folder.upload(keep_files, folder, files, api_visibility="private")
    return files, folder


def _downloads(csv: bool) -> list[gr.DownloadButton]:
    keys = ["dl_html", "dl_md", "dl_json"] + (["dl_csv"] if csv else [])
    with gr.Row():
        return [gr.DownloadButton(I18N(k), elem_id=k.replace("_", "-"), size="sm") for k in keys]


Wiring = tuple[list[gr.components.Component], list[gr.components.Component]]


def _compare_tab(config: AppConfig, preload: PairExample | None) -> Wiring:
    """Upload row, options, results; returns the (inputs, outputs) of the compare event."""
    gr.Markdown(I18N("intro"))
    with gr.Row(equal_height=False):
        with gr.Column():
            baseline, _ = _side("baseline", preload.files("baseline") if preload else None)
        with gr.Column():
            target, _ = _side("target", preload.files("target") if preload else None)
        with gr.Column():
            mindir = gr.File(label=I18N("mindir"), file_types=[".mindir"], elem_id="mindir-file", height=140)
            with gr.Accordion(I18N("options"), open=False):
                rank = gr.Number(label=I18N("rank"), precision=0, value=None, minimum=0)
                role = gr.Radio(
                    [
                        (I18N("role_auto"), "auto"),
                        (I18N("role_first"), "first"),
                        (I18N("role_second"), "second"),
                    ],
                    value="auto",
                    label=I18N("roles"),
                )
    examples = _pair_examples([baseline, target, mindir])
    run = gr.Button(I18N("run"), variant="primary", elem_id="run-compare")
    verdict = gr.Markdown(elem_id="verdict")
    with gr.Row(equal_height=False):
        with gr.Column(scale=5, min_width=420):
            causes = gr.Markdown(elem_id="causes")
        with gr.Column(scale=6, min_width=480), gr.Tabs():
            with gr.Tab(I18N("plots")):
                plots = [
                    gr.Plot(label=I18N(key), show_label=False, elem_id=key.replace("_", "-"), visible=False)
                    for key in ("plot_ops", "plot_delta", "plot_steps", "plot_breakdown", "plot_chains")
                ]
            with gr.Tab(I18N("operators")):
                operators = gr.Dataframe(
                    interactive=False,
                    show_search="search",
                    max_height=520,
                    wrap=True,
                    max_chars=80,
                    pinned_columns=1,
                    elem_id="operators",
                    label=I18N("operators"),
                    buttons=["copy", "fullscreen"],
                )
            with gr.Tab(I18N("leaderboards")):
                top_baseline = gr.Dataframe(
                    interactive=False, label=I18N("top_baseline"), max_chars=60, elem_id="top-baseline"
                )
                top_target = gr.Dataframe(
                    interactive=False, label=I18N("top_target"), max_chars=60, elem_id="top-target"
                )
            with gr.Tab(I18N("chains")):
                chains = gr.Dataframe(interactive=False, label=I18N("chains"))
            with gr.Tab(I18N("warnings")):
                warnings_md = gr.Markdown(elem_id="warnings")
            with gr.Tab(I18N("downloads")):
                downloads = _downloads(csv=True)
                with gr.Accordion(I18N("report_json"), open=False):
                    report_json = gr.JSON(label=I18N("report_json"), show_label=False)
    inputs = [baseline, target, mindir, rank, role]
    outputs = [
        verdict,
        causes,
        warnings_md,
        operators,
        top_baseline,
        top_target,
        *plots,
        chains,
        *downloads,
        report_json,
    ]
    run.click(
        compare,
        inputs,
        outputs,
        api_name="compare",
        concurrency_limit=config.concurrency,
        concurrency_id="analysis",
    )
    if examples is not None:
        # Clicking an example fills the inputs, then diagnoses them in the same pool as the button.
        examples.load_input_event.then(
            compare,
            inputs,
            outputs,
            api_visibility="private",
            concurrency_limit=config.concurrency,
            concurrency_id="analysis",
        )
    return inputs, outputs


def _pair_examples(inputs: list[gr.File]) -> gr.Examples | None:
    """The bundled pairs as clickable examples (None when they are not present)."""
    pairs = available_pairs()
    if not pairs:
        return None
    return gr.Examples(
        examples=[[p.files("baseline"), p.files("target"), None] for p in pairs],
        inputs=inputs,
        label=I18N("examples"),
        example_labels=[p.label for p in pairs],
        elem_id="examples",
    )


def _inspect_tab(config: AppConfig) -> None:
    """A MINDIR on its own: hygiene causes beside the fusion chains and the graph."""
    mindir = gr.File(
        label=I18N("mindir_required"), file_types=[".mindir"], elem_id="inspect-file", height=140
    )
    if MODEL.is_file():
        gr.Examples([[str(MODEL)]], [mindir], label=I18N("model_examples"), example_labels=[MODEL_LABEL])
    run = gr.Button(I18N("inspect"), variant="primary", elem_id="run-inspect")
    verdict = gr.Markdown(elem_id="inspect-verdict")
    with gr.Row(equal_height=False):
        with gr.Column(scale=5, min_width=420):
            causes = gr.Markdown(elem_id="inspect-causes")
        with gr.Column(scale=6, min_width=480):
            graph_md = gr.Markdown(elem_id="inspect-graph")
            chains = gr.Dataframe(interactive=False, label=I18N("chains"), elem_id="inspect-chains")
            plot = gr.Plot(
                label=I18N("plot_chains"), show_label=False, visible=False, elem_id="inspect-plot-chains"
            )
    with gr.Accordion(I18N("warnings"), open=True):
        warnings_md = gr.Markdown(elem_id="inspect-warnings")
    downloads = _downloads(csv=False)
    with gr.Accordion(I18N("report_json"), open=False):
        report_json = gr.JSON(label=I18N("report_json"), show_label=False)
    outputs = [verdict, causes, warnings_md, graph_md, chains, plot, *downloads, report_json]
    run.click(
        inspect,
        [mindir],
        outputs,
        api_name="inspect",
        concurrency_limit=config.concurrency,
        concurrency_id="analysis",
    )


def _rules_tab() -> None:
    gr.Markdown(I18N("rules_intro"))
    query = gr.Textbox(label=I18N("rules_search"), elem_id="rules-search")
    catalog = gr.Markdown(rules_markdown(""), elem_id="rules-catalog")
    query.change(search_rules, query, catalog, api_visibility="undocumented", trigger_mode="always_last")


def build_demo(config: AppConfig | None = None, example: str | None = None) -> gr.Blocks:
    """The whole app. `example` names a bundled pair to preload and diagnose when the page opens."""
    config = config or AppConfig.from_env()
    preload = next((p for p in available_pairs() if p.name == example), None)
    with gr.Blocks(title="MindSpore Perf Doctor", delete_cache=(1800, 3600), analytics_enabled=False) as demo:
        gr.Markdown(f"# {I18N('app_title')}")
        with gr.Tabs():
            with gr.Tab(I18N("tab_compare"), id="compare"):
                inputs, outputs = _compare_tab(config, preload)
            with gr.Tab(I18N("tab_inspect"), id="inspect"):
                _inspect_tab(config)
            with gr.Tab(I18N("tab_rules"), id="rules"):
                _rules_tab()
        if preload is not None:
            demo.load(compare, inputs, outputs, api_visibility="private")
    demo.queue(default_concurrency_limit=config.concurrency, max_size=config.queue_size)
    return demo


def launch_kwargs(config: AppConfig) -> dict[str, Any]:
    """launch() settings shared by `main` and the tests (server name and port come from the caller)."""
    return {
        "max_file_size": config.max_file_size,
        "auth": config.auth,
        "run_history": False,
        "footer_links": ["api"],
        "i18n": I18N,
        "css": CSS,
        "show_error": False,
    }


def launch(port: int | None = None, example: bool = False) -> None:
    """Start the app (blocking); host and port follow GRADIO_SERVER_NAME/PORT unless `port` is given."""
    config = AppConfig.from_env()
    pairs = available_pairs()
    demo = build_demo(config, example=pairs[0].name if example and pairs else None)
    demo.launch(server_port=port, **launch_kwargs(config))


def main(argv: Sequence[str] | None = None) -> int:
    """`python app.py [--example] [--port N]`."""
    parser = argparse.ArgumentParser(description="MindSpore Perf Doctor web app")
    parser.add_argument("--example", action="store_true", help="open with a bundled example diagnosed")
    parser.add_argument("--port", type=int, help="port (default: GRADIO_SERVER_PORT or 7860)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    launch(port=args.port, example=args.example)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`perf-doctor outputs` and its typed report on the real dumps: every format, both languages, errors."""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from doctor.model.outputs import LayerPoint, OutputsSection
from doctor.outputs_report import compare_outputs, depth_figure, render_outputs
from doctor.render import render
from tests.support.inputs import ROOT

DUMPS = ROOT / "tests" / "fixtures" / "outputs"
MSPROBE = ROOT.parent / "shared" / "samples" / "msprobe_dump"
CPU = ROOT / "tests" / "fixtures" / "cpu"


def test_the_section_is_typed_and_round_trips_through_json() -> None:
    report = compare_outputs(DUMPS / "reference", DUMPS / "dropout_on")
    data = json.loads(render_outputs(report, "json"))
    assert OutputsSection.model_validate(data) == report.section
    assert data["causes"][0]["id"] == "outputs-dropout-active"
    assert data["first_divergence"]["op_type"] == "ReduceMean"
    assert data["only_target"] == ["Default_drop-Dropout_Dropout-op0"]
    assert data["tolerances"]["float16"] == 1e-3


def test_markdown_says_the_first_layer_and_the_fix_in_both_languages() -> None:
    english = render_outputs(compare_outputs(DUMPS / "reference", DUMPS / "weights"), "md")
    chinese = render_outputs(compare_outputs(DUMPS / "reference", DUMPS / "weights", lang="zh"), "md")
    assert "First layer that parts ways" in english and "Default_conv-Conv2d_Conv2D-op0" in english
    assert "ms.load_param_into_net" in english
    assert "首个出现分歧的层" in chinese and "两次运行使用了不同的权重" in chinese


def test_the_quiet_pair_says_nothing_significant() -> None:
    report = compare_outputs(DUMPS / "reference", DUMPS / "reference_repeat")
    assert report.section.nothing_found and report.section.first_divergence is None
    assert "No layer parts ways" in render_outputs(report, "md")


def test_csv_is_the_depth_profile_and_html_holds_the_plot() -> None:
    report = compare_outputs(DUMPS / "reference", DUMPS / "bn_train")
    rows = list(csv.DictReader(io.StringIO(render_outputs(report, "csv"))))
    assert [r["diverged"] for r in rows] == ["False", "True", "True", "True", "True", "True"]
    page = render_outputs(report, "html")
    assert "plotly" in page.lower() and "BatchNorm" in page
    figure = depth_figure(report.section)
    assert figure.layout.yaxis.type == "log" and len(figure.data[0].x) == 6


def test_cli_outputs_reads_the_msprobe_pair_with_its_mapping(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "outputs",
            str(MSPROBE / "mindspore_data"),
            str(MSPROBE / "pytorch_data"),
            "--mapping",
            str(MSPROBE / "layer_mapping.yaml"),
            "--format",
            "json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["first_divergence"]["layer"] == "Tensor.__add__.0.forward"
    assert data["baseline"]["framework"] == "mindspore" and data["target"]["framework"] == "pytorch"


def test_cli_outputs_names_a_missing_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["outputs", str(tmp_path / "gone"), str(DUMPS / "reference")])
    assert code == 2
    assert "gone" in capsys.readouterr().err


def test_the_app_tab_compares_two_uploaded_archives(tmp_path: Path) -> None:
    """The handler behind the "Compare outputs" tab, on zipped real dumps, in the page's language."""
    import shutil

    from webapp.outputs_tab import run_outputs

    archives = [shutil.make_archive(str(tmp_path / n), "zip", DUMPS, n) for n in ("reference", "bn_train")]
    markdown, plot = run_outputs(*archives, None, "中文")
    assert "首个出现分歧的层" in markdown.value and "BatchNorm" in markdown.value
    assert plot.visible
    markdown, plot = run_outputs(archives[0], None, None, "English")
    assert markdown.value.startswith("⚠") and not plot.visible


def test_the_app_tab_says_a_bad_upload_in_one_line(tmp_path: Path) -> None:
    from webapp.outputs_tab import run_outputs

    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    markdown, plot = run_outputs(str(junk), str(junk), None, "English")
    assert markdown.value.startswith("⚠") and "junk.zip" in markdown.value and not plot.visible


def test_an_upload_that_is_no_file_is_asked_for_again_not_a_crash() -> None:
    """A value Gradio gives without a file path (no `.name`) counts as not given, in the tab and the API."""
    import gradio as gr

    from webapp.outputs_tab import outputs_api, run_outputs

    nameless = object()
    markdown, plot = run_outputs(nameless, str(DUMPS / "reference"), None, "English")
    assert markdown.value.startswith("⚠ ") and "both dumps" in markdown.value and not plot.visible
    with pytest.raises(gr.Error, match="both dumps"):
        outputs_api(str(DUMPS / "reference"), nameless, None, "en")


def test_one_report_covers_the_latency_and_the_results() -> None:
    """Profiles and dumps together: the profile diagnosis and the outputs section in one document, in every
    format that reads the model and in both languages; without dumps the document has no outputs key."""
    from doctor import diagnose
    from doctor.render import render

    profiles = (
        ROOT / "tests" / "fixtures" / "cpu" / "train_fp32_graph",
        ROOT / "tests" / "fixtures" / "cpu" / "infer_fp32_graph",
    )
    report = diagnose(*profiles, isolate=False, dumps=(DUMPS / "reference", DUMPS / "flipped"))
    assert report.document.outputs is not None and report.document.timing is not None
    assert report.document.outputs.causes[0].id == "outputs-random-preprocessing"
    data = json.loads(render(report, "json"))
    assert data["outputs"]["first_divergence"]["op_type"] == "Conv2D"
    assert "where two runs' outputs part ways" in render(report, "md")
    assert "id='outputs'" in render(report, "html")
    _assert_combined_csv(report, render(report, "csv"))
    chinese = report.in_lang("zh")
    assert chinese.document.outputs is not None and "随机预处理使两次运行的输入不同" in render(chinese, "md")
    plain = diagnose(*profiles, isolate=False)
    assert "outputs" not in plain.to_dict() and plain.document.outputs is None
    assert "\n\n" not in render(plain, "csv")  # without dumps: the operator table alone


def _assert_combined_csv(report: Any, text: str) -> None:
    """The combined CSV: the operator table, one empty line, then the depth table of the outputs section
    (LayerPoint's columns, one row per matched layer), both readable as CSV; a layer name that a
    spreadsheet would run as a formula is quoted, numbers stay numbers."""
    operators, depth = text.split("\n\n")
    assert len(list(csv.DictReader(io.StringIO(operators)))) == len(report.operators())
    rows = list(csv.DictReader(io.StringIO(depth)))
    section = report.document.outputs
    assert list(rows[0]) == list(LayerPoint.model_fields) and len(rows) == len(section.depth)
    first = next(r for r in rows if r["diverged"] == "True")
    assert first["op_type"] == "Conv2D" and int(first["depth"]) == section.first_divergence.depth
    assert float(first["rel_diff"]) == pytest.approx(section.first_divergence.rel_diff)
    points = [p.model_copy(update={"layer": "=HYPERLINK(1)"}) for p in section.depth]
    hostile = report.document.model_copy(update={"outputs": section.model_copy(update={"depth": points})})
    from doctor.render import render
    from doctor.report import Report

    depth = render(Report.of(hostile), "csv").split("\n\n")[1]
    assert all(r["layer"] == "'=HYPERLINK(1)" for r in csv.DictReader(io.StringIO(depth)))


def _without_weights(tmp_path: Path, *names: str) -> list[Path]:
    """Copies of fixture dumps holding no parameters but the network input x (a dump that left them out)."""
    copies = []
    for name in names:
        copy = tmp_path / name
        shutil.copytree(DUMPS / name, copy)
        for file in copy.rglob("Parameter.*"):
            if not file.name.startswith("Parameter.x."):
                file.unlink()
        copies.append(copy)
    return copies


def test_a_divergence_no_cause_fits_is_unexplained_and_asks_for_what_would_decide_it(tmp_path: Path) -> None:
    """Changed weights with the parameters left out of both dumps: the outputs part ways at the Conv2D and
    no rule fits. The report says so and asks for the parameters (the one thing that would decide it
    that the dumps lack) and a repeat of the baseline, never "nothing significant"."""
    from tests.support.language import english_sentences

    report = compare_outputs(*_without_weights(tmp_path, "reference", "weights"))
    gap = report.section.unexplained
    assert gap is not None and gap.layer == "Default_conv-Conv2d_Conv2D-op0"
    assert gap.asks == ["weights", "repeat"]  # the input x is in both dumps, and so are the layer's inputs
    english = render_outputs(report, "md")
    assert "unexplained divergence at `Default_conv-Conv2d_Conv2D-op0`" in english
    assert "checksum of the loaded checkpoint" in english and "Nothing significant" not in english
    assert "checksum of the loaded checkpoint" in render_outputs(report, "html")
    assert json.loads(render_outputs(report, "json"))["unexplained"]["asks"] == ["weights", "repeat"]
    chinese = compare_outputs(*_without_weights(tmp_path / "zh", "reference", "weights"), lang="zh")
    assert "所加载检查点的校验和" in render_outputs(chinese, "md")
    for fmt in ("md", "html"):
        assert english_sentences(render_outputs(chinese, fmt)) == [], fmt


def test_the_msprobe_sample_is_an_unexplained_shape_divergence() -> None:
    """The real msprobe pair parts ways in shape at its first API, with no known cause: it asks for the two
    call sites' code, the network inputs and the parameters (msprobe L1 dumps hold neither), and a repeat;
    the layer's inputs are in both dumps, so they are not asked for."""
    gap = compare_outputs(MSPROBE / "mindspore_data", MSPROBE / "pytorch_data").section.unexplained
    assert gap is not None and gap.layer == "Tensor.__add__.0.forward"
    assert gap.asks == ["shapes", "network-inputs", "weights", "repeat"]


@pytest.mark.parametrize("target", ["reference_repeat", "weights", "dropout_on"])
def test_no_unexplained_divergence_when_the_runs_agree_or_a_cause_fits(target: str, tmp_path: Path) -> None:
    """Quiet: the repeated run (nothing parts ways), and pairs a rule explains (weights, dropout)."""
    report = compare_outputs(DUMPS / "reference", DUMPS / target)
    assert report.section.unexplained is None
    assert "unexplained divergence" not in render_outputs(report, "md")


def test_two_dumps_lacking_the_same_data_that_agree_are_not_unexplained(tmp_path: Path) -> None:
    """Shared trait: both dumps leave the parameters out, and the runs agree: nothing is asked for."""
    report = compare_outputs(*_without_weights(tmp_path, "reference", "reference_repeat"))
    assert report.section.first_divergence is None and report.section.unexplained is None


@pytest.mark.parametrize("target", ["dropout_on", "weights", "fp16", "other_input"])
def test_a_chinese_outputs_report_has_no_english_sentence(target: str) -> None:
    from tests.support.language import english_sentences

    report = compare_outputs(DUMPS / "reference", DUMPS / target, lang="zh")
    for fmt in ("md", "html"):
        assert english_sentences(render_outputs(report, fmt)) == [], fmt


def test_with_a_cpu_profile_the_fix_cost_is_every_operator_on_one_thread() -> None:
    """On CPU the determinism fix is one kernel thread (threads_num(1)), which can slow every operator:
    the bound is the target's whole operator time per step; the reductions' share is still given."""
    from doctor import diagnose

    cpu = ROOT / "tests" / "fixtures" / "cpu"
    report = diagnose(
        cpu / "train_fp32_graph",
        cpu / "infer_fp32_graph",
        isolate=False,
        dumps=(DUMPS / "reference", DUMPS / "weights"),
    )
    cost = report.document.outputs.deterministic_cost
    records = report.data["operators"]["records"]
    matmul = sum(r["target_us_per_step"] for r in records if r["op_type"] == "MatMul") / 1000
    every = sum(r["target_us_per_step"] or 0 for r in records) / 1000
    assert cost is not None and cost.operators >= 1 and cost.setting == "threads_num"
    assert cost.reduction_ms_per_step == pytest.approx(matmul, abs=1e-3)
    assert cost.operator_ms_per_step == pytest.approx(every, abs=1e-3) and every > matmul
    assert cost.step_ms == pytest.approx(report.data["timing"]["target_ms_per_step"], rel=1e-3)
    assert cost.share == pytest.approx(every / cost.step_ms, abs=1e-3)
    for lang in ("en", "zh"):
        for fmt in ("md", "html"):
            shown = render(report.in_lang(lang), fmt)
            said = shown[shown.index("threads_num(1)") - 300 :][:600]  # the cost line
            assert str(round(every, 3))[:4] in said and "set_deterministic" not in said, (lang, fmt)
    assert compare_outputs(DUMPS / "reference", DUMPS / "weights").section.deterministic_cost is None


def test_with_an_ascend_profile_the_fix_cost_is_the_reductions() -> None:
    """On Ascend the fix is ms.set_deterministic(True): the bound is the reduction and atomic operators."""
    from doctor import diagnose
    from tests.bad_inputs import generate

    ascend = generate.ASCEND / "level1"
    report = diagnose(
        ascend / "train", ascend / "infer", isolate=False, dumps=(DUMPS / "reference", DUMPS / "weights")
    )
    cost = report.document.outputs.deterministic_cost
    assert cost is not None and cost.setting == "set_deterministic"
    assert cost.share == pytest.approx(cost.reduction_ms_per_step / cost.step_ms, abs=1e-3)
    assert cost.reduction_ms_per_step < cost.operator_ms_per_step


def test_the_app_tab_registers_its_uploads_with_the_upload_ledger(tmp_path: Path) -> None:
    """The tab's uploads are tracked like the profiles': a page holds what its inputs show across runs and
    lets go when it closes (the files are deleted); an API call's run deletes its files when it ends; an
    upload already deleted is said as such, naming it."""
    import shutil

    from webapp.outputs_tab import SLOTS, _holder, run_outputs
    from webapp.uploads import UploadLedger

    root = tmp_path / "gradio"
    ledger = UploadLedger(root)

    def upload(name: str) -> str:
        folder = root / f"sha-{name}"
        folder.mkdir(parents=True)
        return shutil.make_archive(str(folder / name), "zip", DUMPS, name)

    baseline, target = upload("reference"), upload("bn_train")
    ledger.record([baseline, target])
    ledger.open_session("page")
    for slot, path in zip(SLOTS, (baseline, target), strict=False):
        _holder(ledger, slot)(path, type("Request", (), {"session_hash": "page"})())
    assert ledger.count(baseline) == 1 and ledger.count(target) == 1
    for _ in range(2):  # a re-run finds its files: the page holds them
        markdown, plot = run_outputs(baseline, target, None, "English", uploads=ledger, session="page")
        assert "BatchNorm" in markdown.value and plot.visible
        assert Path(baseline).exists() and ledger.count(baseline) == 1
    ledger.end_session("page")
    assert not Path(baseline).exists() and not Path(target).exists()

    baseline, target = upload("weights"), upload("dropout_on")
    ledger.record([baseline, target])
    markdown, _plot = run_outputs(baseline, target, None, "English", uploads=ledger, session=None)
    assert not markdown.value.startswith("⚠")
    assert not Path(baseline).exists() and not Path(target).exists(), "an API call's files go when it ends"
    markdown, plot = run_outputs(baseline, target, None, "English", uploads=ledger, session=None)
    assert markdown.value.startswith("⚠") and "weights.zip" in markdown.value and not plot.visible


def test_the_app_passes_its_upload_ledger_to_the_outputs_tab() -> None:
    """app.py builds the tab with its ledger, so its three upload inputs hold their files (change events)."""
    import gradio as gr

    from webapp.outputs_tab import outputs_tab
    from webapp.uploads import UploadLedger

    source = (ROOT / "app.py").read_text(encoding="utf-8")
    assert "outputs_tab(I18N, events.language, events.uploads)" in source
    with gr.Blocks() as demo:
        outputs_tab(lambda key: key, None, UploadLedger(ROOT / "no-such-upload-folder"))
    changes = [d for d in demo.fns.values() if any(t[1] == "change" for t in d.targets)]
    assert len(changes) == 3


def test_the_msprobe_first_divergence_says_where_each_run_made_the_call(tmp_path: Path) -> None:
    """stack.json of the real sample: the first divergent API's call site in each run is the first frame
    of the user's code (not MindSpore, PyTorch or msprobe), said in JSON, Markdown and HTML, en and zh;
    here it shows the two aligned __add__ calls come from different lines. Without stack.json: no site."""
    import shutil

    report = compare_outputs(
        MSPROBE / "mindspore_data", MSPROBE / "pytorch_data", mapping=MSPROBE / "layer_mapping.yaml"
    )
    first = report.section.first_divergence
    assert first is not None and first.layer == "Tensor.__add__.0.forward"
    assert first.call_site == (
        "/path_to_net/PanGu_ms/pangu/training/utils.py:65 in get_ltor_reset_masks_and_position_ids: "
        "eod_index = position_ids[b, data[b] == eod_token]"
    )
    assert first.target_call_site == (
        "/path_to_net/PanGu/pangu/training/utils.py:176 in get_ltor_reset_masks_and_position_ids: "
        "attention_mask[b, 0, (i + 1):, :(i + 1)] = 0"
    )
    assert json.loads(render_outputs(report, "json"))["first_divergence"]["call_site"] == first.call_site
    markdown = render_outputs(report, "md")
    assert f"- Called in the baseline from: `{first.call_site}`" in markdown
    assert "utils.py:176" in markdown
    # a shape mismatch is said as one, not as a sentinel relative difference (1e+30)
    assert first.stat == "shape" and "the two runs' outputs have different shapes" in markdown
    assert "1e+30" not in markdown
    chinese = compare_outputs(
        MSPROBE / "mindspore_data",
        MSPROBE / "pytorch_data",
        mapping=MSPROBE / "layer_mapping.yaml",
        lang="zh",
    )
    assert "- 基线中的调用位置: `" in render_outputs(chinese, "md")
    from doctor import diagnose
    from doctor.render import render
    from doctor.report import Report

    profiles = (CPU / "train_fp32_graph", CPU / "infer_fp32_graph")
    document = diagnose(*profiles, isolate=False).document.model_copy(update={"outputs": report.section})
    page = render(Report.of(document), "html")
    assert "Called in the target from: <code>/path_to_net/PanGu/pangu/training/utils.py:176" in page
    assert "(i + 1):, :(i + 1)] = 0</code>" in page
    assert "have different shapes" in page
    bare = tmp_path / "ms"
    shutil.copytree(MSPROBE / "mindspore_data", bare)
    (bare / "stack.json").unlink()
    alone = compare_outputs(bare, MSPROBE / "pytorch_data", mapping=MSPROBE / "layer_mapping.yaml")
    assert alone.section.first_divergence is not None
    assert alone.section.first_divergence.call_site is None
    assert alone.section.first_divergence.target_call_site == first.target_call_site
    assert "Called in the baseline from" not in render_outputs(alone, "md")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_depth_plot_draws_a_shape_mismatch_at_the_top_not_at_1e30(lang: str) -> None:
    """The real msprobe pair's first divergence has different shapes (the model's 1e30 stand-in): the plot
    (the app's and the HTML report's) leaves it off the line and marks it at the top of the log axis, above
    every finite difference and tolerance, with a hover saying why; nothing is drawn at 1e30."""
    mapping = MSPROBE / "layer_mapping.yaml"
    report = compare_outputs(MSPROBE / "mindspore_data", MSPROBE / "pytorch_data", mapping=mapping, lang=lang)
    figure = depth_figure(report.section, lang)
    drawn = [y for trace in figure.data for y in trace.y if y is not None]
    assert max(drawn) < 1e3
    line, tolerance, marked = figure.data
    shapes = [p for p in report.section.depth if p.stat == "shape"]
    assert shapes and all(p.rel_diff is not None and p.rel_diff >= 1e30 for p in shapes)
    assert list(marked.x) == [p.depth + 1 for p in shapes]
    assert all(line.y[p.depth] is None for p in shapes)
    top = marked.y[0]
    finite = [y for y in [*line.y, *tolerance.y] if y is not None]
    assert top > max(finite) and marked.marker.symbol == "triangle-up"
    low, high = figure.layout.yaxis.range
    assert low < math.log10(min(finite)) and math.log10(top) < high
    reason = "different shapes" if lang == "en" else "形状不同"
    assert marked.hovertext[0] == f"{shapes[0].layer}: {reason}"
    bn = depth_figure(compare_outputs(DUMPS / "reference", DUMPS / "bn_train").section)
    assert len(bn.data) == 2  # only finite differences: no marker trace

"""Close the loop: a third profile "after the fix" judges each cause again and sets the measured gain
beside the predicted one. Every pair is a real MindSpore 2.10 CPU run (tests/fixtures/cpu)."""

from __future__ import annotations

import json
from functools import cache

import pytest
from jsonschema import Draft202012Validator

import cli.main as cli
from core import InputError
from doctor import Report, diagnose
from doctor.followup import cause_status, operator_times, waterfall
from doctor.render import render
from doctor.schema import load_schema
from tests.support.inputs import CPU

TRAIN = CPU / "train_fp32_graph"
SCHEMA = Draft202012Validator(load_schema())


@cache
def looped(target: str, after: str) -> Report:
    """The training run as baseline, `target` diagnosed, `after` as the run after the fix."""
    return diagnose(TRAIN, CPU / target, after=CPU / after, isolate=False)


@cache
def plain(target: str) -> Report:
    """The same diagnosis without an after run."""
    return diagnose(TRAIN, CPU / target, isolate=False)


def _mean_wall(report: Report, role: str = "target") -> float:
    """Mean recorded wall time per step of one role in a report."""
    walls = [s["wall_ms"] for s in report.data["steps"] if s["role"] == role and s["wall_ms"] is not None]
    return sum(walls) / len(walls)


def statuses(report: Report) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report.data["after"]["causes"]}


# ---------------------------------------------------------------------------------- real fixes


@pytest.mark.parametrize(
    ("target", "after", "cause"),
    [
        ("infer_fp32_pynative", "infer_fp32_graph", "execution-mode-mismatch"),  # graph mode
        ("infer_trainmode_graph", "infer_fp32_graph", "train-mode-at-inference"),  # set_train(False)
        ("infer_fp32_graph_nowarmup", "infer_fp32_graph", "missing-warmup"),  # warm-up steps first
    ],
)
@pytest.mark.slow
def test_a_real_fix_resolves_its_cause(target, after, cause):
    report = looped(target, after)
    section = report.data["after"]
    assert statuses(report) == {cause: "resolved"}
    first = plain(target).document
    assert [c.id for c in first.causes] == [cause]  # the after run changes nothing of the diagnosis
    predicted = first.causes[0].recoverable_ms_per_step
    assert section["step_basis"] == "wall"  # CPU runs record step wall times
    assert section["target_ms_per_step"] == pytest.approx(_mean_wall(plain(target)), abs=1e-3)
    assert section["predicted_gain_ms_per_step"] == pytest.approx(
        min(predicted, section["target_ms_per_step"])
    )
    measured = section["target_ms_per_step"] - section["after_ms_per_step"]
    assert section["gain_ms_per_step"] == pytest.approx(measured, abs=1e-3)
    operator_gain = first.timing.target_ms_per_step - section["run"]["ms_per_step"]
    assert section["operator_gain_ms_per_step"] == pytest.approx(operator_gain, abs=1e-3)
    assert section["gain_ms_per_step"] > 0 and section["operator_gain_ms_per_step"] > 0  # each fix helped
    assert section["causes"][0]["before_ms_per_step"] == predicted
    assert section["causes"][0]["after_ms_per_step"] == 0.0
    assert section["new_causes"] == []
    assert not list(SCHEMA.iter_errors(report.data))


@pytest.mark.slow
def test_a_fix_that_did_not_help_leaves_the_cause_remaining():
    # set_train(False) on the head cell only: Dropout (net.dropout) stays in training mode. Both runs were
    # generated together (the same machine state), so the measured gain is the fix's, not the machine's.
    report = looped("infer_trainmode_graph_again", "infer_trainmode_graph_head_eval")
    section = report.data["after"]
    assert statuses(report) == {"train-mode-at-inference": "remaining"}
    cause = section["causes"][0]
    assert cause["after_ms_per_step"] is not None and cause["after_ms_per_step"] > 0
    assert abs(section["gain_ms_per_step"]) < 0.1 * section["target_ms_per_step"]  # within run-to-run spread
    assert section["new_causes"] == []
    assert not list(SCHEMA.iter_errors(report.data))


def test_pynative_prediction_and_measurement_are_both_recorded():
    section = looped("infer_fp32_pynative", "infer_fp32_graph").data["after"]
    ratio = section["gain_ms_per_step"] / section["predicted_gain_ms_per_step"]
    assert section["measured_to_predicted"] == pytest.approx(ratio, rel=1e-3)
    assert section["waterfall"][0]["pool"] == "operators"  # op-slowdown names the Conv2D operators
    assert section["predicted_ms_per_step"] == pytest.approx(
        section["target_ms_per_step"] - section["predicted_gain_ms_per_step"], abs=1e-3
    )


@pytest.mark.slow
def test_a_cause_of_the_after_run_alone_is_listed_as_new():
    report = looped("infer_fp32_graph", "infer_fp32_pynative")  # a "fix" that switched to PyNative
    section = report.data["after"]
    assert section["causes"] == [] and section["waterfall"] == []
    assert [c["id"] for c in section["new_causes"]] == ["execution-mode-mismatch"]
    assert section["gain_ms_per_step"] < 0  # slower after the change
    assert section["measured_to_predicted"] is None and section["predicted_gain_ms_per_step"] == 0


@pytest.mark.slow
def test_batches_that_differ_are_compared_per_sample():
    report = looped("infer_fp32_graph_nowarmup", "infer_fp32_graph_batch32")
    section = report.data["after"]
    assert (section["target_batch"], section["after_batch"], section["per_sample"]) == (8, 32, True)
    per_sample = section["target_ms_per_step"] / 8 - section["after_ms_per_step"] / 32
    assert section["gain_ms_per_sample"] == pytest.approx(per_sample, abs=1e-5)
    assert section["gain_ms_per_step"] == pytest.approx(per_sample * 8, abs=1e-3)
    assert section["gain_ms_per_step"] != pytest.approx(
        section["target_ms_per_step"] - section["after_ms_per_step"], abs=0.1
    )


# --------------------------------------------------------------------------- absent without it


def test_without_an_after_run_the_report_has_no_after_key():
    report = plain("infer_fp32_pynative")
    assert "after" not in report.data and report.document.after is None
    assert "after" not in json.loads(render(report, "json"))
    with_after = dict(looped("infer_fp32_pynative", "infer_fp32_graph").data)
    del with_after["after"]
    with_after["inputs"] = with_after["inputs"][:2]
    without = dict(report.data)
    for volatile in ("created_utc",):
        with_after.pop(volatile), without.pop(volatile)
    # The first diagnosis is the same with or without the after run; only the verdict adds how it fared.
    said, alone = with_after.pop("verdict"), without.pop("verdict")
    assert said["text"].startswith(alone["text"] + ". After the fix: resolved")
    assert {**said, "text": ""} == {**alone, "text": ""}
    assert with_after == without


def test_an_after_run_needs_a_pair():
    with pytest.raises(InputError, match="after") as caught:
        diagnose(None, CPU / "infer_fp32_pynative", after=CPU / "infer_fp32_graph", isolate=False)
    assert "\n" not in caught.value.message


def test_a_broken_after_run_names_the_after_input(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError) as caught:
        diagnose(TRAIN, CPU / "infer_fp32_pynative", after=tmp_path / "empty", isolate=False)
    assert caught.value.message.startswith("after")


# ------------------------------------------------------------------------------------ renderers


@pytest.mark.slow
def test_markdown_and_html_show_the_after_section():
    report = looped("infer_fp32_pynative", "infer_fp32_graph")
    md = render(report, "md")
    assert "## After the fix" in md and "| resolved |" in md
    page = render(report, "html")
    assert "id='after'" in page and "id='after-causes'" in page
    assert "After the fix" not in render(plain("infer_fp32_pynative"), "md")
    assert "id='after'" not in render(plain("infer_fp32_pynative"), "html")


@pytest.mark.slow
def test_chinese_report_translates_the_statuses():
    report = diagnose(
        TRAIN, CPU / "infer_fp32_pynative", after=CPU / "infer_fp32_graph", isolate=False, lang="zh"
    )
    assert "## 修复之后" in render(report, "md") and "已解决" in render(report, "md")


# ------------------------------------------------------------------------------------ waterfall


def test_gains_that_claim_the_same_operators_are_counted_once():
    cause = plain("infer_fp32_pynative").document.causes[0]
    twin = cause.model_copy(update={"id": "op-slowdown-twin", "rank": 2})
    operators = operator_times(cause)
    assert len(operators) == 2
    steps = waterfall([cause, twin], target_ms=25.0)
    counted = [s.counted_ms for s in steps]
    assert counted[0] == cause.recoverable_ms_per_step
    assert sum(counted) == pytest.approx(
        min(2 * cause.recoverable_ms_per_step, sum(operators.values())), abs=1e-3
    )
    assert sum(counted) < 2 * cause.recoverable_ms_per_step  # the twin got only what was left


def test_gains_never_exceed_the_target_step():
    report = plain("infer_fp32_graph_dynamic_shapes")
    cause = report.document.causes[0]
    step_ms = report.document.timing.target_ms_per_step
    assert cause.recoverable_ms_per_step > step_ms  # compile gaps are wall time, beyond the op time
    steps = waterfall(report.document.causes, step_ms)
    assert steps[0].counted_ms == pytest.approx(step_ms) and steps[0].end_ms == 0.0
    assert steps[0].pool == "step"


def test_below_threshold_causes_are_not_predicted():
    report = plain("infer_amp_o2_graph")
    assert [c.section for c in report.document.causes] == ["below-threshold"]
    assert waterfall(report.document.causes, report.document.timing.target_ms_per_step) == []


def test_status_worse_needs_clearly_more_time():
    cause = plain("infer_fp32_graph_nowarmup").document.causes[0]
    ms = cause.recoverable_ms_per_step
    assert cause_status(cause, None) == "resolved"
    assert cause_status(cause, cause) == "remaining"
    assert cause_status(cause, cause.model_copy(update={"recoverable_ms_per_step": ms * 1.3})) == "worse"
    assert cause_status(cause, cause.model_copy(update={"recoverable_ms_per_step": ms * 1.1})) == "remaining"
    below = cause.model_copy(update={"section": "below-threshold", "significant": False})
    assert cause_status(cause, below) == "resolved"  # a ranked cause that fell below the threshold
    assert cause_status(below, below) == "remaining"


@pytest.mark.slow
def test_waterfall_figure_starts_at_the_target_and_stands_the_after_step_beside_it():
    from doctor.plots import report_figures, waterfall_data

    report = looped("infer_fp32_pynative", "infer_fp32_graph")
    data = waterfall_data(report)
    section = report.data["after"]
    assert data["kind"].tolist() == ["measured", "gain", "predicted", "after"]
    assert data["ms"].tolist() == [
        section["target_ms_per_step"],
        -section["waterfall"][0]["counted_ms"],
        section["predicted_ms_per_step"],
        section["after_ms_per_step"],
    ]
    figure = report_figures(report)["waterfall"]
    assert [trace.type for trace in figure.data] == ["waterfall", "bar"]
    assert "waterfall" not in report_figures(plain("infer_fp32_pynative"))


# ------------------------------------------------------------------------------------------ CLI


@pytest.mark.slow
def test_cli_compare_with_after_prints_the_section(capsys):
    code = cli.main(
        [
            "compare",
            str(TRAIN),
            str(CPU / "infer_fp32_pynative"),
            "--after",
            str(CPU / "infer_fp32_graph"),
            "--format",
            "json",
        ]
    )
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    section = json.loads(out)["after"]
    assert [(c["id"], c["status"]) for c in section["causes"]] == [("execution-mode-mismatch", "resolved")]
    assert section["gain_ms_per_step"] > section["predicted_gain_ms_per_step"] > 0


@pytest.mark.slow
def test_cli_bad_after_is_one_line_exit_2(capsys, tmp_path):
    code = cli.main(
        ["compare", str(TRAIN), str(CPU / "infer_fp32_pynative"), "--after", str(tmp_path / "nope")]
    )
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "after" in err


# ------------------------------------------------------------------------------- app's views


@pytest.mark.slow
def test_views_show_the_after_section_and_the_fixes_reprofile_py_can_apply(tmp_path):
    from webapp.files import ReportFiles
    from webapp.views import report_view

    view = report_view(looped("infer_fp32_pynative", "infer_fp32_graph"))
    assert view.after.startswith("## After the fix") and "waterfall" in view.figures
    assert [cause for _, cause in view.fixes] == ["execution-mode-mismatch"] == view.ticked
    assert report_view(plain("infer_fp32_pynative")).after == ""
    single = diagnose(None, CPU / "infer_fp32_pynative", isolate=False)
    assert (report_view(single).fixes, report_view(single).ticked) == ([], [])
    files = ReportFiles()
    try:
        assert files.write_script(single) is None
        path = files.write_script(plain("infer_fp32_pynative"), ["execution-mode-mismatch"])
        assert path.name == "reprofile.py" and path.is_relative_to(files.root)
        assert "# ---- fix 1: execution-mode-mismatch" in path.read_text(encoding="utf-8")
    finally:
        files.close()


@pytest.mark.slow
def test_wall_time_sees_what_operator_time_misses():
    # new shapes on a static net fixed by set_inputs: the recompiles were idle wall time, not op time
    report = looped("infer_fp32_graph_dynamic_shapes", "infer_fp32_graph_dynamic_set_inputs")
    section = report.data["after"]
    wall = _mean_wall(plain("infer_fp32_graph_dynamic_shapes")) - _mean_wall(
        plain("infer_fp32_graph_dynamic_set_inputs")
    )
    assert section["gain_ms_per_step"] == pytest.approx(wall, abs=1e-3)
    assert section["gain_ms_per_step"] > 10 * section["operator_gain_ms_per_step"] > 0
    assert statuses(report) == {"dynamic-shape-recompile": "resolved"}
    claimed = report.document.causes[0].recoverable_ms_per_step
    assert section["predicted_gain_ms_per_step"] == pytest.approx(min(claimed, section["target_ms_per_step"]))
    assert "recorded wall times" in render(report, "md")


def test_wall_time_gain_is_per_sample_when_batches_differ():
    section = looped("infer_fp32_graph_nowarmup", "infer_fp32_graph_batch32").data["after"]
    target, after = (
        _mean_wall(plain("infer_fp32_graph_nowarmup")),
        _mean_wall(plain("infer_fp32_graph_batch32")),
    )
    assert section["gain_ms_per_step"] == pytest.approx((target / 8 - after / 32) * 8, abs=1e-3)


# ------------------------------------------------------------------- the verdict and the Runs table


@pytest.mark.slow
def test_the_verdict_says_how_the_fix_fared_in_every_format():
    """Issue 31 point 6: the headline verdict names the outcome and the measured step time change, in
    Markdown, HTML, the app and Chinese; without an after run it says nothing of one."""
    from webapp.views import report_view

    report = looped("infer_fp32_pynative", "infer_fp32_graph")
    section = report.document.after
    said = "After the fix: resolved (1 of 1 causes resolved); measured step time 32.85 → 7.19 ms"
    assert (section.target_ms_per_step, section.after_ms_per_step) == (32.8474, 7.1937)
    assert said in report.document.verdict.text and report.document.verdict.text.endswith("−78%)")
    assert said in render(report, "md").split("\n\n")[1]  # the verdict paragraph, not the section
    assert said in render(report, "html").split("id='verdict'")[1].split("</p>")[0]
    assert said in report_view(report).verdict
    zh = diagnose(
        TRAIN, CPU / "infer_fp32_pynative", after=CPU / "infer_fp32_graph", isolate=False, lang="zh"
    ).document.verdict.text
    assert "修复之后：已解决（1 个原因中 1 个已解决）；实测每步时间 32.85 → 7.19 ms" in zh
    assert "After the fix" not in plain("infer_fp32_pynative").document.verdict.text


@pytest.mark.slow
def test_the_verdict_tells_resolved_from_partly_and_not_resolved():
    from doctor.followup import outcome
    from doctor.verdict import verdict

    report = looped("infer_fp32_pynative", "infer_fp32_graph")
    doc, section = report.document, report.document.after
    cause = section.causes[0]
    kept = cause.model_copy(update={"id": "kept", "status": "remaining"})
    partly = section.model_copy(update={"causes": [cause, kept]})
    none = section.model_copy(update={"causes": [kept, kept.model_copy(update={"status": "worse"})]})
    assert [outcome(s) for s in (section, partly, none)] == ["resolved", "partly", "not"]
    unranked = section.model_copy(update={"causes": [cause.model_copy(update={"ranked": False})]})
    assert outcome(unranked) is None
    texts = {
        name: verdict("pair", doc.timing, doc.causes, "problem", 0, "en", after=s).text
        for name, s in (("partly", partly), ("none", none), ("unranked", unranked))
    }
    assert "After the fix: partly resolved (1 of 2 causes resolved)" in texts["partly"]
    assert "After the fix: not resolved (0 of 2 causes resolved)" in texts["none"]
    assert "After the fix: measured step time 32.85 → 7.19 ms" in texts["unranked"]


@pytest.mark.slow
def test_the_runs_tables_have_an_after_row():
    from webapp.views import runs_table

    report = looped("infer_fp32_pynative", "infer_fp32_graph")
    after = report.document.after.run
    assert [r.role for r in report.document.shown_runs()] == ["baseline", "target", "after"]
    md = render(report, "md")
    assert f"| after the fix | CPU | {after.execution_mode} |" in md
    page = render(report, "html")
    assert page.count("<tr><td>after the fix</td><td>CPU</td><td>graph</td>") == 1
    table = runs_table(report).frame
    assert table.iloc[:, 0].tolist() == ["baseline", "target", "after the fix"]
    assert table.iloc[2, 1] == after.source
    assert runs_table(plain("infer_fp32_pynative")).frame.iloc[:, 0].tolist() == ["baseline", "target"]


@pytest.mark.slow
def test_the_step_plot_leaves_out_a_partial_last_step_and_says_so():
    """The pynative target's last step holds 3.9 ms of operators against a median of 26 ms: the profiler
    stopped during it. It is not plotted (it read as a step of about 0 ms); the baseline's full last step
    is, and a run without such a step has no note."""
    from doctor.plots import report_figures, step_time_data

    report = plain("infer_fp32_pynative")
    data = step_time_data(report)
    assert data.loc[data["partial"], ["role", "step"]].values.tolist() == [["target", 5]]
    figure = report_figures(report)["steps"]
    steps = {trace.name: list(trace.x) for trace in figure.data}
    assert steps["target (wall)"] == [1, 2, 3, 4] and steps["target (compared operators)"] == [1, 2, 3, 4]
    assert steps["baseline (wall)"] == [1, 2, 3, 4, 5]
    assert min(min(trace.y) for trace in figure.data if trace.name.startswith("target")) > 20
    assert "Left out: target step 5, a partial capture" in figure.layout.title.text
    zh = report_figures(diagnose(TRAIN, CPU / "infer_fp32_pynative", isolate=False, lang="zh"))["steps"]
    assert "未画出：目标第 5 步" in zh.layout.title.text
    full = plain("infer_fp32_graph")
    assert not step_time_data(full)["partial"].any()
    assert "<sup>" not in report_figures(full)["steps"].layout.title.text

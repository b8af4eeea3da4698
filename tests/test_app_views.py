"""What the app shows, without a browser: problems per input (side, the user's file, what to do), the run
summary and baseline note, every fusion chain, download names and rounded CSV numbers."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from core import InputError
from doctor import diagnose, inspect_model
from doctor.chain_rows import chain_records
from doctor.problems import HELP_ANCHOR, InputProblems, problems_markdown
from doctor.render import render
from tests.support.inputs import CPU, EXAMPLE, MINDIR
from webapp.files import case_id_of, download_names
from webapp.views import baseline_note, baseline_slot, report_view, swapped_choice

CJK = re.compile(r"[\u4e00-\u9fff]")


def _bad_zip(tmp_path: Path, name: str = "train_run.zip") -> str:
    path = tmp_path / name
    path.write_bytes(b"this is not a zip archive")
    return str(path)


def test_a_bad_file_alone_in_the_baseline_is_the_baselines_problem(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        diagnose([_bad_zip(tmp_path)], None, isolate=False)
    assert (caught.value.side, caught.value.file) == ("baseline", "train_run.zip")
    text = problems_markdown(caught.value, "en")
    assert "**Baseline** `train_run.zip`: is not a zip archive" in text
    assert f"]({HELP_ANCHOR})" in text and str(tmp_path) not in text


def test_two_bad_inputs_give_one_line_each_in_either_language(tmp_path: Path) -> None:
    notes = tmp_path / "notes.csv"
    notes.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(InputProblems) as caught:
        diagnose([_bad_zip(tmp_path)], [str(notes)], isolate=False)
    english = problems_markdown(caught.value, "en").splitlines()
    lines = [line for line in english if line.startswith("- ")]
    assert [line.split("**")[1] for line in lines] == ["Baseline", "Target"]
    assert "`notes.csv`" in lines[1] and "input-" not in english[-1] and "upload/" not in english[-1]
    chinese = problems_markdown(caught.value, "zh")
    assert "**基线**" in chinese and "**目标**" in chinese and "请修正此输入" in chinese
    assert " | " in caught.value.message, "the CLI and the API get both problems on one line"


@pytest.mark.slow
def test_the_run_summary_and_why_this_run_is_the_baseline() -> None:
    report = diagnose(EXAMPLE / "target", EXAMPLE / "baseline", isolate=False)  # training given second
    view = report_view(report)
    assert list(view.runs.frame.columns) == [
        "run",
        "input",
        "layout",
        "device",
        "mode",
        "phase",
        "steps",
        "batch",
        "ms/step",
        "profiler level",
    ]
    assert view.runs.frame["phase"].tolist() == ["training", "inference"]
    assert view.runs.frame["steps"].tolist() == [5, 5]
    sources = [run.source for run in report.document.runs]
    slot = baseline_slot(sources, "target")  # the Baseline box held the folder named target
    assert slot == "second" and swapped_choice(slot) == "first"
    assert "uploaded as the target" in baseline_note(report, None, slot)
    assert "you chose it" in baseline_note(report, "second", slot)


def test_every_chain_is_a_row_and_a_blocked_one_says_why() -> None:
    report = inspect_model(MINDIR / "branch_block.mindir", isolate=False)
    (row,) = chain_records(report.document)
    assert row["status"] == "blocked" and row["reason"] == "Conv2D output has 2 consumers (Add, BatchNorm)"
    resnet = chain_records(inspect_model(MINDIR / "resnet50_noweights.mindir", isolate=False).document)
    assert len(resnet) == 54 and {r["status"] for r in resnet} == {"fusible"}
    assert "Every fusion chain" in render(report, "md") and "id='chain-list'" in render(report, "html")


def test_chain_rows_take_the_status_from_the_profile_cross_link() -> None:
    report = diagnose(
        CPU / "train_fp32_graph",
        CPU / "infer_fp32_graph",
        CPU / "fixture_net_fp32_eval.mindir",
        isolate=False,
    )
    rows = chain_records(report.document)
    links = {row.status for row in report.document.graph.crosslink}
    assert {row["status"] for row in rows} == links
    assert all(row["separate_us"] is not None for row in rows)


@pytest.mark.slow
def test_downloads_carry_the_case_id_and_csv_numbers_are_rounded() -> None:
    report = diagnose(EXAMPLE / "baseline", EXAMPLE / "target", isolate=False)
    case = case_id_of("http://127.0.0.1:7860/?case=AbC_123-xyz")
    assert case == "AbC_123-xyz" and case_id_of("") is None
    names = download_names(report, case)
    assert names["html"] == "perf-doctor-AbC_123-xyz.html"
    assert names["csv"] == "perf-doctor-AbC_123-xyz-operators.csv"
    assert re.fullmatch(r"perf-doctor-\d{8}T\d{6}Z\.json", download_names(report, None)["json"])
    table = render(report, "csv")
    assert not re.search(r"\d\.\d{4,}", table), "numbers rounded to 3 decimals"
    assert re.search(r",\d+\.\d{1,3},", table)


@pytest.mark.slow
def test_csv_ranks_are_whole_numbers_and_report_step_ticks_integers() -> None:
    """CSV integer columns read "3", not "3.0"; the step plot's ticks are whole steps in the app's
    figure and in the HTML report (one figure for both)."""
    report = diagnose(EXAMPLE / "baseline", EXAMPLE / "target", isolate=False)
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    ranks = [row[c] for row in rows for c in ("baseline_rank", "target_rank")]
    assert ranks and all(re.fullmatch(r"\d*", r) for r in ranks) and any(ranks), ranks
    assert sorted(int(row["target_rank"]) for row in rows if row["target_rank"])[0] == 1
    steps = report_view(report).figures["steps"]
    axis = steps.layout.xaxis
    assert (axis.tickmode, axis.tickformat) == ("linear", "d") and float(axis.dtick).is_integer()
    html = render(report, "html")
    assert '"tickformat":"d"' in html and '"tickmode":"linear"' in html


def test_english_labels_hold_no_chinese_and_chinese_ones_no_english_sentence() -> None:
    from doctor.i18n import UI_TEXT
    from webapp.examples import PAIRS

    for pair in PAIRS:
        assert not CJK.search(UI_TEXT["en"][pair.label_key])
        assert CJK.search(UI_TEXT["zh"][pair.label_key])
    assert PAIRS[0].name == "graph_train_vs_pynative_infer"

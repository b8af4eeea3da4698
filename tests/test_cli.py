"""The perf-doctor command line: every command, every exit code, stdout and stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

import cli.main as cli
from doctor.schema import load_schema
from tests.support.inputs import CPU, RESNET, ROOT

TRAIN, INFER = str(CPU / "train_amp_o2_graph"), str(CPU / "infer_fp32_graph")
SCHEMA = Draft202012Validator(load_schema())


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_compare_json_prints_exactly_the_report_schema(capsys):
    code, out, err = run(capsys, "compare", TRAIN, INFER, "--mindir", str(RESNET), "--format", "json")
    assert code == 0 and err == ""
    report = json.loads(out)
    assert not list(SCHEMA.iter_errors(report))
    assert report["causes"][0]["id"] == "precision-mismatch"
    counts = {row["pattern"]: row["count"] for row in report["graph"]["chains"]["by_pattern"]}
    assert (counts["conv-bn-act"], counts["conv-bn-add-act"], counts["conv-bn"]) == (33, 16, 4)


def test_compare_markdown_to_a_file_in_chinese(capsys, tmp_path):
    target = tmp_path / "report.md"
    code, out, err = run(capsys, "compare", TRAIN, INFER, "--lang", "zh", "-o", str(target))
    assert (code, out, err) == (0, "", "")
    assert target.read_text(encoding="utf-8").startswith("# Perf Doctor 诊断报告")


def test_compare_options_rank_and_baseline_reach_the_facade(capsys):
    code, out, _ = run(
        capsys, "compare", INFER, TRAIN, "--baseline", "first", "--rank", "0", "--format", "json"
    )
    assert code == 0
    runs = json.loads(out)["runs"]
    assert [(r["role"], r["phase"], r["rank"]) for r in runs] == [
        ("baseline", "inference", 0),
        ("target", "train", 0),
    ]


@pytest.mark.slow
def test_compare_html_is_written_standalone(capsys, tmp_path):
    target = tmp_path / "r.html"
    code, _, _ = run(capsys, "compare", TRAIN, INFER, "--format", "html", "-o", str(target))
    assert code == 0
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<script src=" not in page


@pytest.mark.slow
def test_inspect_prints_markdown_and_json(capsys):
    code, out, _ = run(capsys, "inspect", str(RESNET))
    assert code == 0 and out.startswith("# Perf Doctor report") and "| `conv-bn-act` | 33 |" in out
    code, out, _ = run(capsys, "inspect", str(RESNET), "--format", "json")
    assert code == 0 and json.loads(out)["kind"] == "mindir"


def test_usage_error_exits_2_with_one_line(capsys):
    code, out, err = run(capsys, "compare", TRAIN)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("perf-doctor: error: ")


def test_non_profile_folder_exits_2_with_one_line(capsys, tmp_path):
    (tmp_path / "readme.txt").write_text("nothing here", encoding="utf-8")
    code, out, err = run(capsys, "compare", str(tmp_path), INFER)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "not profiler output" in err and "baseline" in err


@pytest.mark.slow
def test_garbage_mindir_exits_2_with_one_line(capsys, tmp_path):
    bad = tmp_path / "broken.mindir"
    bad.write_bytes(os.urandom(4096))
    code, out, err = run(capsys, "inspect", str(bad))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "broken.mindir" in err


@pytest.mark.slow
def test_missing_output_folder_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "inspect", str(RESNET), "-o", str(tmp_path / "no" / "such" / "r.md"))
    assert code == 2 and "does not exist" in err


@pytest.mark.slow
def test_output_naming_a_folder_exits_2_and_writes_nothing(capsys, tmp_path):
    code, out, err = run(capsys, "inspect", str(RESNET), "-o", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == f"perf-doctor: error: {tmp_path}: is a folder; give a file name to write the report to\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux /dev/full")
@pytest.mark.slow
def test_output_to_a_full_device_exits_2_with_one_line(capsys):
    code, out, err = run(capsys, "inspect", str(RESNET), "-o", "/dev/full")
    assert (code, out) == (2, "")
    assert err == "perf-doctor: error: /dev/full: cannot write the report (No space left on device)\n"


def test_triage_out_naming_a_folder_exits_2(capsys, tmp_path):
    (tmp_path / "inbox").mkdir()
    (tmp_path / "rows.csv").mkdir()
    code, _, err = run(
        capsys, "triage", str(tmp_path / "inbox"), "--out", str(tmp_path / "rows.csv"), "--quiet"
    )
    assert code == 2 and "is a folder; give a file name to write the rows to" in err


def test_internal_error_exits_1_with_a_hint_and_traceback_on_debug(capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(cli, "diagnose", broken)
    code, out, err = run(capsys, "compare", TRAIN, INFER)
    assert code == 1 and out == ""
    assert err == "perf-doctor: internal error: RuntimeError: boom (rerun with --debug for the traceback)\n"
    code, _, err = run(capsys, "--debug", "compare", TRAIN, INFER)
    assert code == 1 and "Traceback (most recent call last)" in err and 'raise RuntimeError("boom' in err
    code, _, err = run(capsys, "compare", TRAIN, INFER, "--debug")
    assert code == 1 and "Traceback" in err


def test_serve_hands_over_to_the_app_program(capsys, monkeypatch):
    """`serve` replaces the process with `python -m app` (the CLI never imports the app layer)."""
    calls = []
    monkeypatch.setattr(cli.os, "execv", lambda path, argv: calls.append((path, argv)))
    run(capsys, "serve", "--port", "7999")
    assert calls == [(sys.executable, [sys.executable, "-m", "app", "--port", "7999"])]
    run(capsys, "serve", "--example")
    assert calls[-1][1] == [sys.executable, "-m", "app", "--example"]


@pytest.mark.slow
def test_python_dash_m_app_answers_its_own_help():
    """The program `serve` hands over to exists and parses the flags it is given."""
    done = subprocess.run(
        [sys.executable, "-m", "app", "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0 and "--port" in done.stdout and "--example" in done.stdout


@pytest.mark.slow
def test_installed_console_script_uses_the_same_exit_codes(tmp_path):
    script = Path(sys.executable).with_name("perf-doctor")
    assert script.exists(), "pip install -e . installs the perf-doctor console script"
    done = subprocess.run(
        [str(script), "inspect", str(RESNET), "--format", "json"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0
    counts = {
        row["pattern"]: row["count"] for row in json.loads(done.stdout)["graph"]["chains"]["by_pattern"]
    }
    assert counts["conv-bn-act"] == 33
    bad = subprocess.run([str(script), "compare", str(tmp_path), INFER], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_output_naming_an_input_exits_2_and_leaves_it_alone(capsys, tmp_path):
    """Issue 33 item 5: `-o` over the model, over a profile file, or through a link to the model."""
    model = tmp_path / "model.mindir"
    model.write_bytes(RESNET.read_bytes())
    run_folder = tmp_path / "infer"
    shutil.copytree(INFER, run_folder)
    table = next(run_folder.rglob("cpu_op_detail_info_0.csv"))
    link = tmp_path / "link.md"
    link.symlink_to(model)
    before = (model.read_bytes(), table.read_bytes())
    for argv in (
        ("inspect", str(model), "-o", str(model)),
        ("inspect", str(model), "-o", str(link)),
        ("compare", TRAIN, str(run_folder), "-o", str(table)),
        ("compare", TRAIN, str(run_folder), "--format", "csv", "-o", str(run_folder / "report.csv")),
    ):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (2, ""), argv
        assert err.startswith(f"perf-doctor: error: {argv[-1]}: is an input of this command (")
        assert err.endswith("; expected -o elsewhere\n") and err.count("\n") == 1
    assert (model.read_bytes(), table.read_bytes()) == before
    assert not (run_folder / "report.csv").exists()


def test_the_api_writer_refuses_an_input_too(tmp_path):
    from doctor import inspect_model
    from doctor.render import write

    model = tmp_path / "model.mindir"
    model.write_bytes(RESNET.read_bytes())
    report = inspect_model(model, isolate=False)
    with pytest.raises(cli.InputError, match="is an input of this command"):
        write(report, "md", model, inputs=[model])
    assert model.read_bytes() == RESNET.read_bytes()
    assert write(report, "md", tmp_path / "r.md", inputs=[model]).exists()


def test_a_name_over_the_file_system_limit_exits_2_naming_only_the_file(capsys, tmp_path, monkeypatch):
    """Issue 33 item 8: ENAMETOOLONG is the user's input, not an internal error; no absolute path."""
    monkeypatch.chdir(tmp_path)
    long = "b" * 300
    for argv in (("compare", TRAIN, long), ("compare", TRAIN, long + ".zip"), ("inspect", long + ".mindir")):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (2, ""), err
        assert err.startswith(f"perf-doctor: error: target {long}") or err.startswith(
            f"perf-doctor: error: mindir {long}"
        ), err
        assert "File name too long" in err and str(tmp_path) not in err and err.count("\n") == 1

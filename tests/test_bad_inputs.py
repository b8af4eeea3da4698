"""Every case of the bad-input corpus (tests/bad_inputs) through the Python API, the CLI and the web app.

For each case and entry point the result must be what the manifest says: a clear one-line error matching
its regex, or a report (with the expected warnings for a partial one). Whatever the result, nothing may
be left behind and every call ends within its timeout. The API and the CLI run with an empty private
temporary folder (tempfile / TMPDIR) and an empty working folder, both of which must stay empty; the app
runs in its own process (tests/bad_inputs/server.py) whose temporary folder may gain nothing but Gradio's
upload cache and the report downloads folder. The file every escaping archive member tries to write
(generate.ESCAPE) must exist nowhere: not in those folders, their parents, /, /tmp or the repository.
Hostile names must reach Markdown and HTML escaped and CSV cells formula-safe.

A case with a ``known_bug`` note documents a gap in code this suite does not own: its outcome check is
an expected failure, and it fails loudly once the gap is fixed so that the note gets removed. The
hygiene checks apply to every case regardless.
"""

from __future__ import annotations

import concurrent.futures
import csv
import html
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

from core.errors import InputError
from doctor import Report, diagnose, inspect_model
from doctor.render import render
from doctor.text import FORMULA_PREFIXES
from tests.bad_inputs import generate
from tests.bad_inputs.server import Server, app_server, local_client
from tests.support.inputs import ROOT, files_of
from webapp import present

CORPUS = generate.CORPUS
CASES = json.loads(generate.MANIFEST.read_text(encoding="utf-8"))["cases"]
BY_NAME = {case["name"]: case for case in CASES}
CLI = Path(sys.executable).with_name("perf-doctor")
TIMEOUT_S = {"api": 60, "cli": 120, "app": 120}
INTERNAL = "Internal error"


@dataclass
class Outcome:
    """What one entry point made of one case."""

    kind: str  # error | report | crash | refused_upload (anything else never meets an expectation)
    message: str = ""
    report: dict[str, Any] | None = None
    markdown: list[str] = field(default_factory=list)  # every Markdown text shown or written
    html: list[str] = field(default_factory=list)
    csv: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------ the manifest


def test_manifest_covers_the_required_kinds_and_matches_the_generator():
    assert len(CASES) >= 30 and len(BY_NAME) == len(CASES)
    assert [case["name"] for case in CASES] == [entry["name"] for entry in generate.manifest_entries()]
    required = [
        "folder_empty", "folder_wrong_layout", "csv_truncated", "json_truncated_trace_view", "csv_utf16",
        "csv_missing_column", "csv_renamed_column", "durations_nan_some", "durations_negative",
        "durations_huge", "duplicated_ranks", "mixed_versions", "zip_slip", "zip_absolute_path",
        "tar_symlink", "tar_hardlink", "zip_bomb", "tar_bomb", "zip_100k_members", "mindir_random_bytes",
        "mindir_truncated", "mindir_deeply_nested", "mindir_over_2gib_sparse", "ops_html", "ops_markdown",
        "ops_formula",
        # round 2 (issue 20)
        "ascend_info_deeply_nested", "ascend_metadata_deeply_nested", "ascend_trace_deeply_nested",
        "ascend_info_huge_number", "ascend_info_duplicate_keys", "durations_zero_all",
        "durations_minus_zero_all", "ascend_start_infinite", "ascend_step_negative", "folder_symlink_loop",
        "folder_fifo_as_profile_file", "mindir_call_explosion", "mindir_nested_make_tuple",
        "mindir_nested_partial", "mindir_fifo", "ops_control_characters", "mindir_control_characters",
        "csv_row_over_block", "ascend_header_over_block", "zip_member_over_file_budget",
    ]  # fmt: skip
    assert not set(required) - set(BY_NAME)
    for case in CASES:
        assert case["outcome"] in ("error", "partial", "report")
        assert (case["outcome"] == "error") == bool(case["match"]), case["name"]
        assert case["runtime"] or (CORPUS / case["input"]).exists(), case["name"]


def test_committed_corpus_is_small():
    size = sum(path.stat().st_size for path in CORPUS.rglob("*") if path.is_file())
    assert size < 5 * 1024 * 1024


# ------------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def runtime_inputs() -> dict[str, Path]:
    """Runtime-only cases by name, built once per module on first use (see case_input)."""
    return {}


def case_input(case: dict[str, Any], built: dict[str, Path], factory: pytest.TempPathFactory) -> Path:
    """The input path of a case: from the committed corpus, or built now for a runtime case."""
    if not case["runtime"]:
        return CORPUS / case["input"]
    if case["name"] not in built:
        built[case["name"]] = generate.build(case["name"], factory.mktemp("runtime"))
    return built[case["name"]]


@dataclass
class Sandbox:
    """A private temporary folder and an empty working folder for one run."""

    temp: Path
    work: Path
    tmp_path: Path


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    """An empty private temporary folder and working folder (the API and CLI tests redirect to them)."""
    temp, work = tmp_path / "systmp", tmp_path / "work"
    temp.mkdir()
    work.mkdir()
    return Sandbox(temp, work, tmp_path)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The app in its own process, whose temporary folder is private to this module."""
    with app_server(tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: Server) -> Client:
    return local_client(server.url)


# ------------------------------------------------------------------------------------------ entry points


def run_api(case: dict[str, Any], path: Path, box: Sandbox) -> Outcome:
    """doctor.diagnose / doctor.inspect_model (the caller runs it from the empty working folder)."""
    try:
        report = inspect_model(path) if case["call"] == "inspect" else diagnose(ROOT / case["baseline"], path)
    except InputError as error:
        return Outcome("error", error.message)
    except Exception as error:
        return Outcome("crash", f"{type(error).__name__}: {error}")
    texts = {fmt: render(report, fmt) for fmt in ("md", "html", "csv")}
    return Outcome("report", report=report.to_dict(), markdown=[texts["md"]], html=[texts["html"]],
                   csv=[texts["csv"]])  # fmt: skip


def run_cli(case: dict[str, Any], path: Path, box: Sandbox) -> Outcome:
    """The installed perf-doctor script in a subprocess: exit 0 with JSON, or 2 with one line."""
    if case["call"] == "inspect":
        argv = [str(CLI), "inspect", str(path), "--format", "json"]
    else:
        argv = [str(CLI), "compare", str(ROOT / case["baseline"]), str(path), "--format", "json"]
    done = _cli(argv, box)
    if done.returncode == 0:  # Python warnings printed beside a report count as a wrong outcome
        kind = "report" if done.stderr == "" else "report with stderr noise"
        outcome = Outcome(kind, done.stderr, report=json.loads(done.stdout))
        if case["payload"] or case["formula"] or case["renders"]:
            _cli_renderings(argv, box, outcome)
        return outcome
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    if done.returncode == 2:
        assert done.stderr.startswith("perf-doctor: error: ")
        return Outcome("error", done.stderr.removeprefix("perf-doctor: error: ").strip())
    assert done.returncode == 1 and "internal error" in done.stderr, done
    return Outcome("crash", done.stderr.strip())


def _cli(argv: list[str], box: Sandbox) -> subprocess.CompletedProcess[str]:
    """One CLI run from the empty working folder with the private temporary folder; never a traceback."""
    env = {**os.environ, "TMPDIR": str(box.temp)}
    done = subprocess.run(
        argv, capture_output=True, text=True, cwd=box.work, env=env, timeout=TIMEOUT_S["cli"]
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _cli_renderings(argv: list[str], box: Sandbox, outcome: Outcome) -> None:
    """The same command writing Markdown, HTML and (for a pair) CSV files, collected for the checks."""
    formats = {"md": outcome.markdown, "html": outcome.html}
    if argv[1] == "compare":
        formats["csv"] = outcome.csv
    for fmt, texts in formats.items():
        target = box.tmp_path / f"report.{fmt}"
        done = _cli([*argv[:-1], fmt, "-o", str(target)], box)
        assert done.returncode == 0, done.stderr
        texts.append(target.read_text(encoding="utf-8"))


def run_app(case: dict[str, Any], path: Path, client: Client) -> Outcome:
    """The web app's API through gradio_client, uploading a folder's files as the browser does."""
    try:
        if case["call"] == "inspect":
            job = client.submit(handle_file(str(path)), api_name="/inspect_model")
        else:
            baseline = [handle_file(p) for p in files_of(ROOT / case["baseline"])]
            target = [handle_file(p) for p in files_of(path)] if path.is_dir() else [handle_file(str(path))]
            job = client.submit(baseline, target, None, None, "auto", api_name="/diagnose")
        result = job.result(timeout=TIMEOUT_S["app"])
    except AppError as error:
        message = str(error)  # as Gradio sends it: & < > escaped (it renders HTML), quotes as they are
        assert "&#x27;" not in message and "&quot;" not in message, message
        return Outcome("crash" if INTERNAL in message else "error", html.unescape(message))
    except ValueError as error:  # gradio_client refuses a file over max_file_size before uploading
        if "size" in str(error).lower():
            return Outcome("refused_upload", str(error))
        raise
    return app_outcome(result)


def app_outcome(result: tuple[Any, ...]) -> Outcome:
    """A report from the app's API (the document and its downloaded HTML/Markdown/CSV files), with the
    Markdown the page shows of that report (the presenter, run here on the returned document)."""
    report, files = result
    outcome = Outcome("report", report=report)
    for value in files:
        suffix = Path(value).suffix
        if suffix in (".html", ".md", ".csv"):
            text = Path(value).read_text(encoding="utf-8")
            {".html": outcome.html, ".md": outcome.markdown, ".csv": outcome.csv}[suffix].append(text)
    shown = present(Report.from_dict(report))
    outcome.markdown += [v for k, v in shown.items() if isinstance(v, str) and v and not k.startswith("dl_")]
    return outcome


# ------------------------------------------------------------------------------------------ judging


def expectation(case: dict[str, Any], channel: str) -> dict[str, Any]:
    """The manifest's expectation for one entry point (the app may override it)."""
    keys = ("outcome", "match", "warnings", "known_bug")
    expected = {key: case[key] for key in keys}
    if channel == "app":
        expected.update({key: value for key, value in case["app"].items() if key in keys})
    return expected


def meets(expected: dict[str, Any], outcome: Outcome) -> bool:
    """Whether an outcome is the expected one."""
    if expected["outcome"] in ("error", "refused_upload"):
        pattern = expected["match"] if expected["outcome"] == "error" else "size"
        return outcome.kind == expected["outcome"] and bool(re.search(pattern, outcome.message))
    if outcome.kind != "report":
        return False
    texts = [warning["text"] for warning in outcome.report["warnings"]]
    if expected["outcome"] == "partial" and not texts:
        return False
    return all(any(re.search(pattern, text) for text in texts) for pattern in expected["warnings"])


def assert_safe_output(case: dict[str, Any], outcome: Outcome) -> None:
    """Hostile names: no markup outside code spans in Markdown, escaped in HTML, formula-safe CSV."""
    if outcome.kind != "report":
        return
    if case["payload"]:
        payload = case["payload"]
        assert outcome.markdown and outcome.html, "the checks below must have something to check"
        pieces = [payload, *(piece for piece in payload.split("`") if len(piece) > 3)]  # a backtick pair
        for text in outcome.markdown:  # inside the payload would look like a code span to the stripper
            outside = _outside_code_spans(text)
            assert "<img" not in outside and not [piece for piece in pieces if piece in outside]
            assert not any(line.lstrip().startswith("<") for line in text.splitlines() if line.strip())
        for page in outcome.html:
            assert "<img src=x" not in page
            if any(char in payload for char in "<>&\"'"):
                assert payload not in page
    if case["formula"]:
        assert outcome.csv, "a compare report offers the operator CSV"
        for text in outcome.csv:
            _assert_formula_safe(text)


def _outside_code_spans(text: str) -> str:
    """Markdown text with inline code spans (a backtick run up to the same run) and fences removed."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", "", text)


def _assert_formula_safe(text: str) -> None:
    """Every cell that starts like a formula must be a number; the renamed operators are prefixed."""
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) > 1
    cells = [cell for row in rows[1:] for cell in row]
    formulas = [cell for cell in cells if cell.startswith(FORMULA_PREFIXES) and not _is_number(cell)]
    assert formulas == [], "text cells a spreadsheet would run"
    assert {f"'{formula}" for formula in generate.FORMULAS} <= set(cells)


def _is_number(cell: str) -> bool:
    """Whether a CSV cell is a number (a negative number legitimately starts with "-")."""
    try:
        float(cell)
    except ValueError:
        return False
    return True


def assert_nothing_left(box: Sandbox, server_temp: tuple[Path, set[str]] | None = None) -> None:
    """No temporary folder, nothing in the working folder, no escaped member anywhere near. For the app:
    nothing new in its temporary folder but Gradio's upload cache and the report downloads folder."""
    assert sorted(p.name for p in box.temp.iterdir()) == []
    assert list(box.work.iterdir()) == []
    places = {ROOT, ROOT.parent, Path("/"), Path("/tmp"), CORPUS, *box.tmp_path.parents, *box.temp.parents}
    if server_temp is not None:
        folder, before = server_temp
        new = {p.name for p in folder.iterdir()} - before - {"gradio"}
        assert [name for name in new if not name.startswith("perf-doctor-reports-")] == []
        places |= {folder, *folder.parents}
        escaped = list(folder.rglob(generate.ESCAPE))
    else:
        escaped = []
    escaped += [p / generate.ESCAPE for p in places if (p / generate.ESCAPE).exists()]
    escaped += list(box.tmp_path.rglob(generate.ESCAPE))
    assert escaped == []


# Tab, CR and LF are fine; bidirectional controls (U+202E ...) are not.
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
SCRIPTS = re.compile(r"<script\b.*?</script>", re.S)  # plotly.js itself holds two control characters


def assert_no_control_characters(outcome: Outcome) -> None:
    """No message, Markdown, CSV or HTML text (outside the page's scripts) carries a control character."""
    texts = [
        outcome.message,
        *outcome.markdown,
        *outcome.csv,
        *(SCRIPTS.sub("", page) for page in outcome.html),
    ]
    found = sorted({repr(char) for text in texts for char in CONTROL.findall(text)})
    assert found == [], f"control characters in the output: {found}"


def judge(case: dict[str, Any], channel: str, outcome: Outcome) -> None:
    """Compare with the manifest; a known bug is an expected failure until it is fixed."""
    expected = expectation(case, channel)
    assert_safe_output(case, outcome)
    assert_no_control_characters(outcome)
    met = meets(expected, outcome)
    if expected["known_bug"]:
        assert not met, f"{case['name']}: known bug fixed ({expected['known_bug']}): remove the note"
        pytest.xfail(f"known bug: {expected['known_bug']} (got {outcome.kind}: {outcome.message[:200]})")
    assert met, f"{case['name']} via {channel}: expected {expected}, got {outcome.kind}: {outcome.message}"


# ------------------------------------------------------------------------------------------ the tests


# The fast lane runs one hostile input through the API (hostile operator names in every format); CI all.
FAST_API_CASES = ("ops_html",)


@pytest.mark.parametrize(
    "name", [n if n in FAST_API_CASES else pytest.param(n, marks=pytest.mark.slow) for n in BY_NAME]
)
def test_api(name: str, sandbox: Sandbox, runtime_inputs, tmp_path_factory, monkeypatch) -> None:
    case = BY_NAME[name]
    path = case_input(case, runtime_inputs, tmp_path_factory)
    monkeypatch.chdir(sandbox.work)
    monkeypatch.setattr(tempfile, "tempdir", str(sandbox.temp))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        outcome = pool.submit(run_api, case, path, sandbox).result(timeout=TIMEOUT_S["api"])
    assert_nothing_left(sandbox)
    judge(case, "api", outcome)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BY_NAME))
def test_cli(name: str, sandbox: Sandbox, runtime_inputs, tmp_path_factory) -> None:
    case = BY_NAME[name]
    outcome = run_cli(case, case_input(case, runtime_inputs, tmp_path_factory), sandbox)
    assert_nothing_left(sandbox)
    judge(case, "cli", outcome)


# Cases no browser can send (a named pipe cannot be uploaded) are not app cases: left out, not skipped.
APP_CASES = [name for name, case in BY_NAME.items() if case["app"].get("outcome") != "not_applicable"]


@pytest.mark.slow
@pytest.mark.parametrize("name", APP_CASES)
def test_app(
    name: str, sandbox: Sandbox, server: Server, client: Client, runtime_inputs, tmp_path_factory
) -> None:
    case = BY_NAME[name]
    path = case_input(case, runtime_inputs, tmp_path_factory)
    before = {p.name for p in server.temp.iterdir()}
    outcome = run_app(case, path, client)
    assert_nothing_left(sandbox, (server.temp, before))
    assert server.alive()
    judge(case, "app", outcome)

"""The facade and the report model on real CPU profiles and MINDIR files: content, schema, errors, cleanup."""

from __future__ import annotations

import json
import re
import tempfile
import zipfile
from functools import cache
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from core.errors import InputError
from doctor import SCHEMA_VERSION, Report, diagnose, inspect_model, schema
from doctor.model import OPERATOR_COLUMN_NAMES, OPERATOR_COLUMNS
from doctor.render import render, render_json
from doctor.schema import DOC_PATH, SCHEMA_PATH, load_schema, schema_text
from tests.support.inputs import CPU, MINDIR, RESNET
from tests.support.reports import amp_pair

SCHEMA = load_schema()
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)


@cache
def amp_pair_with_model() -> Report:
    # the net's own MINDIR: a model of another net is refused as evidence (test_real_verdicts.py)
    return diagnose(
        CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", CPU / "fixture_net_fp32_eval.mindir"
    )


@cache
def single_run() -> Report:
    return diagnose(None, CPU / "infer_fp32_pynative")


@cache
def model_only() -> Report:
    return inspect_model(RESNET)


def all_reports() -> list[Report]:
    return [amp_pair(), amp_pair("zh"), amp_pair_with_model(), single_run(), model_only()]


# ------------------------------------------------------------------------------------------ contents


def test_amp_training_vs_fp32_inference_ranks_precision_mismatch_first():
    report = amp_pair()
    assert report.kind == "pair"
    assert report.causes[0].id == "precision-mismatch" and report.causes[0].rank == 1
    assert report.document.input_kinds == ["pair"]
    roles = [(r.role, r.phase) for r in report.document.runs]
    assert roles == [("baseline", "train"), ("target", "inference")]


@pytest.mark.slow
def test_the_fp32_mindir_makes_precision_mismatch_the_significant_top_cause():
    report = amp_pair_with_model()
    assert report.top_cause == "precision-mismatch"
    top = report.causes[0]
    assert top.id == "precision-mismatch" and top.significant
    assert {e.source for e in top.evidence} >= {"pair", "mindir"}


@pytest.mark.slow
def test_verdict_states_the_measured_gap_and_the_top_cause():
    report = amp_pair_with_model()
    timing = report.data["timing"]
    ratio = timing["target_ms_per_step"] / timing["baseline_ms_per_step"]
    assert ratio == pytest.approx(timing["ratio"], rel=1e-3)
    assert ratio == pytest.approx(0.924, abs=0.005)  # the recorded fixtures: inference is faster
    headline = timing["headline"]
    assert headline["measure"] == "operator"  # a training baseline: its wall step holds the backward pass
    text = report.verdict
    assert text.startswith(
        f"Inference is {1 / headline['ratio']:.2f}x faster per step in operator time (median of 5 and 5 "
        "steps) than the training forward pass"
    )
    # Not slower: the top cause is stated as a finding, never as the cause of a slowdown.
    assert "it is not slower here, but the top finding is: " + report.causes[0].title in text
    assert "most likely cause" not in text
    assert report.data["verdict"]["status"] == "problem"
    assert report.data["verdict"]["recoverable_ms_per_step"] == report.causes[0].recoverable_ms_per_step


@pytest.mark.parametrize(
    ("baseline", "target", "basis"),
    [
        ("train_fp32_graph", "infer_fp32_graph_contention", "operator"),
        ("infer_fp32_graph", "infer_fp32_pynative", "wall"),
    ],
)
@pytest.mark.slow
def test_one_ratio_everywhere_named_for_what_it_measures(baseline: str, target: str, basis: str):
    """The verdict states the headline ratio (median wall time for two inference runs, median compared
    operator time against a training baseline) and names its measure; the step-time-gap evidence states
    the same ratio with the same label."""
    report = diagnose(CPU / baseline, CPU / target, isolate=False)
    text = report.document.verdict.text
    headline = report.document.timing.headline
    assert headline is not None and headline.measure == basis
    stated = re.search(r"(\d+\.\d\d)x slower per step in (operator|wall) time", text)
    assert stated is not None, text
    assert stated[2] == basis
    assert float(stated[1]) == pytest.approx(headline.ratio, abs=0.005)
    [gap] = [s for s in report.data["symptoms"] if s["kind"] == "step-time-gap"]
    assert gap["values"]["basis"] == basis
    label, ratio = re.search(r"\((operator|wall) time (\d+\.\d\d)x\)", gap["summary"]).groups()
    assert label == basis and ratio == stated[1]
    markdown = render(report, "md")  # the evidence bullet keeps its label where the reader sees it
    assert f"({label} time {ratio}x)" in markdown
    assert f"{stated[1]}x slower per step in {basis} time" in markdown


def test_verdict_says_plainly_when_nothing_is_significant():
    """Two repeats of the same inference: no cause, and the verdict says so in plain words."""
    report = diagnose(CPU / "infer_fp32_graph_repeat", CPU / "infer_fp32_graph_repeat2")
    assert not any(c.significant for c in report.causes)
    verdict = report.document.verdict
    assert verdict.status == "nothing-found" and verdict.top_cause is None
    assert verdict.slowdown == pytest.approx(0.918, abs=0.005)  # the recorded repeats: not slower
    assert verdict.text.startswith(
        "Nothing significant found: The target is 1.09x faster per step in wall time"
    )


def test_operator_records_match_the_comparison_table_totals():
    report = amp_pair()
    ops = report.operators()
    assert list(ops.columns) == list(OPERATOR_COLUMN_NAMES)
    assert report.document.operators.total == len(ops) > 0
    timing = report.document.timing
    assert ops["baseline_us_per_step"].sum() / 1000 == pytest.approx(timing.baseline_ms_per_step, rel=1e-3)
    assert ops["target_us_per_step"].sum() / 1000 == pytest.approx(timing.target_ms_per_step, rel=1e-3)
    assert set(ops["match"]) <= {"scope", "sequence", "baseline-only", "target-only"}
    assert (ops["delta_us_per_step"].abs().diff().dropna() <= 1e-9).all(), "largest change first"


def test_leaderboards_are_the_ten_slowest_operators_of_each_side():
    report = amp_pair()
    ops = report.operators()
    for side in ("baseline", "target"):
        board = getattr(report.document.leaderboards, side)
        expected = ops.nlargest(10, f"{side}_us_per_step")["operator"].tolist()
        assert [row.operator for row in board] == expected
        assert [row.rank for row in board] == list(range(1, len(board) + 1))


def test_steps_cover_both_runs_with_wall_and_operator_time():
    report = amp_pair()
    steps = report.document.steps
    for role in ("baseline", "target"):
        mine = [s for s in steps if s.role == role]
        assert len(mine) == next(r.steps for r in report.document.runs if r.role == role) == 5
        assert all(s.op_ms > 0 for s in mine)
        walls = [s.wall_ms for s in mine if s.wall_ms is not None]
        assert len(walls) >= 3 and all(w > 0 for w in walls)
    # the training step holds backward work: its wall time exceeds the compared forward operators
    assert all(s.wall_ms > s.op_ms for s in steps if s.role == "baseline" and s.wall_ms)


def test_warnings_hold_cannot_decide_reasons_limitations_and_notes():
    warnings = amp_pair().document.warnings
    kinds = {w.kind for w in warnings}
    assert {"undecided", "limitation", "note"} <= kinds
    undecided = [w for w in warnings if w.kind == "undecided"]
    assert all(w.text.startswith("Cannot decide, because") and w.rule for w in undecided)
    limits = {w.topic: w.roles for w in warnings if w.kind == "limitation"}
    assert limits["profiler-config"] == ["baseline", "target"]  # merged across both CPU runs


@pytest.mark.slow
def test_mindir_with_profile_adds_chains_crosslink_and_hygiene():
    report = amp_pair_with_model()
    assert report.data["input_kinds"] == ["mindir", "mindir+profile", "pair"]
    counts = report.chain_counts()
    assert counts == {"conv-bn-act": 3, "matmul-biasadd": 1}  # the fixture net: 3 conv blocks, 1 dense
    graph = report.data["graph"]
    assert graph["chains"]["total"] == sum(counts.values()) == len(graph["chains"]["items"])
    assert isinstance(graph["crosslink"], list) and len(graph["crosslink"]) == graph["chains"]["total"]
    patterns = [row["pattern"] for row in graph["crosslink"]]
    assert sorted(patterns) == sorted(item["pattern"] for item in graph["chains"]["items"])
    sources = {s["source"] for s in report.data["symptoms"]}
    assert {"pair", "mindir"} <= sources
    assert [i["role"] for i in report.data["inputs"]] == ["baseline", "target", "mindir"]
    assert report.chain_figure is not None


def test_single_profile_is_diagnosed_as_the_target_alone():
    report = single_run()
    assert report.kind == "single" and report.document.input_kinds == ["single"]
    ops = report.operators()
    assert ops["baseline_us_per_step"].isna().all() and (ops["match"] == "single").all()
    assert ops["target_share"].sum() == pytest.approx(1.0)
    boards, timing = report.document.leaderboards, report.document.timing
    assert boards.baseline == [] and len(boards.target) == 10
    assert timing is not None and timing.ratio is None
    assert report.document.runs[0].execution_mode == "pynative"
    assert any("Only one profile was given" in w.text for w in report.document.warnings)
    assert "operator time per step" in report.verdict


@pytest.mark.slow
def test_inspect_model_reports_chains_by_pattern_without_profiles():
    report = model_only()
    assert report.kind == "mindir" and report.data["input_kinds"] == ["mindir"]
    by_pattern = {row["pattern"]: row for row in report.data["graph"]["chains"]["by_pattern"]}
    assert by_pattern["conv-bn-act"]["count"] == 33 and by_pattern["conv-bn-act"]["blocked"] == 0
    assert report.data["operators"]["records"] == [] and report.data["runs"] == []
    assert report.verdict.startswith("Model resnet50_noweights.mindir: ")


@pytest.mark.slow
def test_train_mode_mindir_names_train_mode_cause():
    report = inspect_model(MINDIR / "conv_bn_relu_train.mindir")
    assert report.top_cause is not None
    assert any("train" in c.id for c in report.causes if c.significant)


@pytest.mark.slow
def test_chinese_report_translates_verdict_and_titles():
    zh, en = amp_pair("zh"), amp_pair("en")
    assert zh.lang == "zh"
    assert "推理" in zh.verdict and zh.verdict != en.verdict
    assert zh.causes[0].id == en.causes[0].id and zh.causes[0].title != en.causes[0].title


@pytest.mark.slow
def test_progress_is_reported_in_order_up_to_done():
    seen: list[tuple[float, str]] = []
    diagnose(
        CPU / "train_amp_o2_graph",
        CPU / "infer_fp32_graph",
        RESNET,
        progress=lambda f, d: seen.append((f, d)),
    )
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(seen) >= 6
    assert seen[-1][1] == "done"


# ------------------------------------------------------------------------------------------- schema


@pytest.mark.parametrize("index", range(5))
@pytest.mark.slow
def test_every_report_validates_against_the_published_schema(index):
    report = all_reports()[index]
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert data["schema_version"] == SCHEMA_VERSION
    assert list(VALIDATOR.iter_errors(data)) == []


@pytest.mark.parametrize("index", range(5))
def test_a_report_reads_back_from_its_json_unchanged(index):
    """What a case store keeps (the JSON) becomes the same typed report again: nothing is coerced."""
    report = all_reports()[index]
    data = json.loads(render_json(report))
    assert Report.from_dict(data).to_dict() == data == report.to_dict()


def test_the_committed_schema_and_field_reference_are_the_ones_the_model_generates():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), "run: python -m doctor.schema"
    assert schema.main(["--check"]) == 0


@pytest.mark.slow
def test_the_staleness_check_fails_on_a_changed_schema_or_page(tmp_path):
    files = {"--schema": tmp_path / "report.schema.json", "--doc": tmp_path / "report-schema.md"}
    args = [part for flag, path in files.items() for part in (flag, str(path))]
    for path, text in schema.generated().items():
        (tmp_path / path.name).write_text(text, encoding="utf-8")
    assert schema.main(["--check", *args]) == 0
    for path in files.values():
        fresh = path.read_text(encoding="utf-8")
        path.write_text(fresh.replace("Position in the ranking, from 1.", "Old words."), encoding="utf-8")
        assert schema.main(["--check", *args]) == 1, path.name
        assert schema.main(args) == 0 and path.read_text(encoding="utf-8") == fresh


def test_the_field_reference_describes_every_field_of_every_object():
    doc = DOC_PATH.read_text(encoding="utf-8")
    for name, part in [("ReportDocument", SCHEMA), *SCHEMA["$defs"].items()]:
        assert f"### {name}\n" in doc, name
        for key, prop in part["properties"].items():
            assert prop.get("description"), f"{name}.{key} has no description in doctor/model"
            assert f"| `{key}` |" in doc, f"{name}.{key}"


def test_schema_operator_record_lists_exactly_the_report_columns():
    props = SCHEMA["$defs"]["OperatorRow"]["properties"]
    assert list(props) == list(OPERATOR_COLUMN_NAMES) == list(amp_pair().operators().columns)
    assert dict(OPERATOR_COLUMNS)["baseline_rank"] == "integer" and dict(OPERATOR_COLUMNS)["z"] == "number"
    assert dict(OPERATOR_COLUMNS)["match"] == "string" and dict(OPERATOR_COLUMNS)["significant"] == "boolean"


def test_the_operator_columns_are_the_models():
    """OPERATOR_COLUMNS, which the builder, the CSV and the app's table read, is OperatorRow's fields with
    the JSON types its schema gives them."""
    from doctor.model.tables import model_columns

    assert model_columns() == OPERATOR_COLUMNS


@pytest.mark.parametrize("index", range(5))
def test_the_document_data_is_what_its_model_gives_back(index):
    """The builders make the typed document without validation and the JSON renderer writes it through the
    records' own serialisation: validating it gives it back, and pydantic's dump is the same JSON."""
    from doctor.model import ReportDocument

    report = all_reports()[index]
    typed = report.document.model_dump()
    assert json.dumps(typed, ensure_ascii=False) == json.dumps(report.data, ensure_ascii=False)
    assert render_json(report) == json.dumps(report.data, ensure_ascii=False) + "\n"
    assert ReportDocument.model_validate(report.data) == report.document


def test_a_report_from_stored_data_is_validated():
    report = Report.from_dict(json.loads(render_json(amp_pair())))
    assert report.verdict == amp_pair().verdict and report.top_cause == amp_pair().top_cause
    assert report.document.verdict.text == report.verdict
    data = report.to_dict()
    with pytest.raises(ValidationError):
        Report.from_dict({**data, "verdict": {**data["verdict"], "status": "unknown"}})


def test_a_json_report_from_the_command_line_builds_no_schema(tmp_path):
    """The point of building the document with model_construct and writing it through the records' own
    serialisation: `compare --format json` never builds a pydantic core schema (the model classes' schemas
    cost about 8 % of a 100k-row comparison)."""
    import subprocess
    import sys

    out = tmp_path / "r.json"
    code = (
        "import sys; from cli.main import main; "
        f"rc = main(['compare', {str(CPU / 'train_amp_o2_graph')!r}, {str(CPU / 'infer_fp32_graph')!r}, "
        f"'--format', 'json', '-o', {str(out)!r}]); "
        "from doctor.model import ReportDocument, OperatorRow; "
        "print(rc, ReportDocument.__pydantic_complete__ or OperatorRow.__pydantic_complete__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "False"], done.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["causes"][0]["id"] == "precision-mismatch"


def _without(key: str):
    return lambda d: d.pop(key)


def _set(*path: str | int, value: object):
    def mutate(d: dict) -> None:
        *parents, last = path
        for part in parents:
            d = d[part]
        d[last] = value

    return mutate


MUST_FAIL = {
    "missing verdict": (_without("verdict"), "'verdict' is a required property"),
    "extra key": (_set("extra", value=1), "Additional properties are not allowed"),
    "ratio as text": (_set("timing", "ratio", value="1.5"), "is not valid under any of the given schemas"),
    "unknown kind": (_set("kind", value="triple"), "is not one of"),
    "cause id not kebab-case": (_set("causes", 0, "id", value="Not An Id"), "does not match"),
    "confidence above 1": (_set("causes", 0, "confidence", value=1.5), "is greater than the maximum"),
    "graph as a list": (_set("graph", value=[]), "is not valid under any of the given schemas"),
    "total as a bool": (_set("operators", "total", value=True), "is not of type 'integer'"),
    "operator rank as a float": (
        _set("operators", "records", 0, "baseline_rank", value=1.5),
        "is not valid under any of the given schemas",
    ),
    "missing operator column": (
        lambda d: d["operators"]["records"][0].pop("z"),
        "'z' is a required property",
    ),
    "empty verdict": (_set("verdict", "text", value=""), "should be non-empty"),
}


@pytest.mark.parametrize("case", list(MUST_FAIL), ids=list(MUST_FAIL))
@pytest.mark.slow
def test_a_broken_document_is_rejected_by_the_schema_and_the_model(case):
    mutate, message = MUST_FAIL[case]
    data = amp_pair().to_dict()
    mutate(data)
    errors = [e.message for e in VALIDATOR.iter_errors(data)]
    assert any(message in e for e in errors), errors
    with pytest.raises(ValidationError):
        Report.from_dict(data)


def test_the_model_refuses_a_bool_for_a_number_and_keeps_ints_as_ints():
    data = amp_pair().to_dict()
    board = data["leaderboards"]["target"][0]
    board["us_per_step"] = 3
    assert Report.from_dict(data).to_dict()["leaderboards"]["target"][0]["us_per_step"] == 3
    assert render_json(Report.from_dict(data)).count('"us_per_step": 3,') == 1
    board["us_per_step"] = True
    with pytest.raises(ValidationError, match="us_per_step"):
        Report.from_dict(data)


# ------------------------------------------------------------------------------------ bad input


def test_folder_that_is_not_a_profile_is_an_input_error_naming_the_role(tmp_path):
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        diagnose(tmp_path, CPU / "infer_fp32_graph")
    assert caught.value.message.startswith("baseline")
    assert "not profiler output" in caught.value.message


@pytest.mark.slow
def test_the_two_runs_are_read_at_once_but_errors_come_in_input_order(tmp_path):
    """Both inputs bad: the baseline's error, as a sequential read would give; only the second bad: its
    error; progress still announces the baseline before the target."""
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(InputError) as both:
        diagnose(bad, bad)
    assert both.value.message.startswith("baseline")
    with pytest.raises(InputError) as second:
        diagnose(CPU / "train_fp32_graph", bad)
    assert second.value.message.startswith("target")
    steps: list[str] = []
    diagnose(CPU / "train_fp32_graph", CPU / "infer_fp32_graph", progress=lambda _f, text: steps.append(text))
    assert steps.index("reading the baseline profile") < steps.index("reading the target profile")


@pytest.mark.slow
def test_garbage_mindir_is_an_input_error(tmp_path):
    bad = tmp_path / "model.mindir"
    bad.write_bytes(b"\x00\x01garbage" * 100)
    with pytest.raises(InputError, match=r"model\.mindir"):
        inspect_model(bad)
    with pytest.raises(InputError, match=r"model\.mindir"):
        diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", bad)


def test_nothing_given_and_bad_options_are_refused():
    with pytest.raises(InputError, match="nothing to diagnose"):
        diagnose()
    with pytest.raises(InputError, match="baseline choice"):
        diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", baseline_role="third")
    with pytest.raises(ValueError, match="unknown language"):
        diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", lang="fr")


@pytest.mark.slow
def test_baseline_role_overrides_the_automatic_choice():
    report = diagnose(CPU / "infer_fp32_graph", CPU / "train_amp_o2_graph", baseline_role="first")
    assert [r["phase"] for r in report.data["runs"]] == ["inference", "train"]
    auto = diagnose(CPU / "infer_fp32_graph", CPU / "train_amp_o2_graph")
    assert [r["phase"] for r in auto.data["runs"]] == ["train", "inference"]


# ------------------------------------------------------------------------------------------- cleanup


def _zip_folder(folder: Path, archive: Path) -> Path:
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(folder))
    return archive


@pytest.mark.slow
def test_archives_are_extracted_privately_and_removed_after_the_analysis(tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    baseline = _zip_folder(CPU / "train_amp_o2_graph", tmp_path / "train.zip")
    target = _zip_folder(CPU / "infer_fp32_graph", tmp_path / "infer.zip")
    during: list[list[Path]] = []

    def spy(fraction: float, desc: str) -> None:
        during.append([p for p in scratch.iterdir()])

    report = diagnose(baseline, target, progress=spy)
    assert report.causes[0].id == "precision-mismatch"
    workspaces = {p for listing in during for p in listing}
    assert len(workspaces) == 1 and next(iter(workspaces)).name.startswith("perf-doctor-")
    assert list(scratch.iterdir()) == [], "the workspace must be deleted after the analysis"


@pytest.mark.slow
def test_workspace_is_removed_when_the_input_is_bad(tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    bogus = tmp_path / "bogus.zip"
    with zipfile.ZipFile(bogus, "w") as zf:
        zf.writestr("readme.txt", "not a profile")
    with pytest.raises(InputError):
        diagnose(bogus, CPU / "infer_fp32_graph")
    assert list(scratch.iterdir()) == []


@pytest.mark.slow
def test_ascend_operator_rows_carry_counters_block_dim_and_bound():
    level1 = CPU.parent / "ascend" / "level1"
    report = diagnose(level1 / "train", level1 / "infer")
    assert list(VALIDATOR.iter_errors(report.to_dict())) == []
    conv = next(r for r in report.data["operators"]["records"] if r["op_type"] == "Conv2D")
    assert conv["target_aic_mte2_ratio"] >= 0.8 and conv["target_bound"] == "memory"
    assert conv["baseline_block_dim"] is not None and conv["target_block_dim"] is not None
    assert conv["baseline_input_dtypes"] != conv["target_input_dtypes"]  # FP16 training, FP32 inference


@pytest.mark.slow
def test_crosslink_rows_say_how_each_chain_of_the_profiled_net_ran():
    """The fixture net's own MINDIR beside its CPU profile: the CPU backend fuses nothing, so each of
    its three Conv-BN-ReLU chains and its MatMul-BiasAdd ran split, every node after the anchor a kernel
    of its own, joined by scope."""
    model = CPU / "fixture_net_fp32_eval.mindir"
    report = diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", model)
    rows = report.data["graph"]["crosslink"]
    assert rows and {row["status"] for row in rows} == {"split"}
    assert {row["join"] for row in rows} == {"scope"}
    ops = [row["ops"] for row in rows]
    assert ops == ["Conv2D>BatchNorm>ReLU"] * 3 + ["MatMul>BiasAdd"]
    assert [row["separate_kernels"] for row in rows] == [len(op.split(">")) - 1 for op in ops]
    assert all(row["separate_us_per_step"] > 0 for row in rows)

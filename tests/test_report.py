"""The facade and the report model on real CPU profiles and MINDIR files: content, schema, errors, cleanup."""

from __future__ import annotations

import json
import tempfile
import zipfile
from functools import cache
from pathlib import Path

import pytest

from core.errors import InputError
from doctor import SCHEMA_VERSION, Report, diagnose, inspect_model
from doctor.report import OPERATOR_COLUMN_NAMES, OPERATOR_COLUMNS
from doctor.schema_check import SchemaError, load_schema, validate
from tests.support.inputs import CPU, MINDIR, RESNET
from tests.support.reports import amp_pair

SCHEMA = load_schema()


@cache
def amp_pair_with_model() -> Report:
    return diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", RESNET)


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
    assert report.causes[0]["id"] == "precision-mismatch" and report.causes[0]["rank"] == 1
    assert report.data["input_kinds"] == ["pair"]
    roles = [(r["role"], r["phase"]) for r in report.data["runs"]]
    assert roles == [("baseline", "train"), ("target", "inference")]


@pytest.mark.slow
def test_the_fp32_mindir_makes_precision_mismatch_the_significant_top_cause():
    report = amp_pair_with_model()
    assert report.top_cause == "precision-mismatch"
    top = report.causes[0]
    assert top["id"] == "precision-mismatch" and top["significant"]
    assert {e["source"] for e in top["evidence"]} >= {"pair", "mindir"}


@pytest.mark.slow
def test_verdict_states_the_measured_gap_and_the_top_cause():
    report = amp_pair_with_model()
    timing = report.data["timing"]
    ratio = timing["target_ms_per_step"] / timing["baseline_ms_per_step"]
    assert ratio == pytest.approx(timing["ratio"], rel=1e-3)
    assert ratio == pytest.approx(0.924, abs=0.005)  # the recorded fixtures: inference is faster
    text = report.verdict
    assert text.startswith("Inference is 1.08x faster per step than the training forward pass")
    # Not slower: the top cause is stated as a finding, never as the cause of a slowdown.
    assert "it is not slower here, but the top finding is: " + report.causes[0]["title"] in text
    assert "most likely cause" not in text
    assert report.data["verdict"]["status"] == "problem"
    assert report.data["verdict"]["recoverable_ms_per_step"] == report.causes[0]["recoverable_ms_per_step"]


def test_verdict_says_plainly_when_nothing_is_significant():
    """Two repeats of the same inference: no cause, and the verdict says so in plain words."""
    report = diagnose(CPU / "infer_fp32_graph_repeat", CPU / "infer_fp32_graph_repeat2")
    assert not any(c["significant"] for c in report.causes)
    verdict = report.data["verdict"]
    assert verdict["status"] == "nothing-found" and verdict["top_cause"] is None
    assert verdict["slowdown"] == pytest.approx(0.922, abs=0.005)  # the recorded repeats: not slower
    assert verdict["text"].startswith("Nothing significant found: The target is 1.08x faster per step")


def test_operator_records_match_the_comparison_table_totals():
    report = amp_pair()
    ops = report.operators()
    assert list(ops.columns) == list(OPERATOR_COLUMN_NAMES)
    assert report.data["operators"]["total"] == len(ops) > 0
    timing = report.data["timing"]
    assert ops["baseline_us_per_step"].sum() / 1000 == pytest.approx(timing["baseline_ms_per_step"], rel=1e-3)
    assert ops["target_us_per_step"].sum() / 1000 == pytest.approx(timing["target_ms_per_step"], rel=1e-3)
    assert set(ops["match"]) <= {"scope", "sequence", "baseline-only", "target-only"}
    assert (ops["delta_us_per_step"].abs().diff().dropna() <= 1e-9).all(), "largest change first"


def test_leaderboards_are_the_ten_slowest_operators_of_each_side():
    report = amp_pair()
    ops = report.operators()
    for side in ("baseline", "target"):
        board = report.data["leaderboards"][side]
        expected = ops.nlargest(10, f"{side}_us_per_step")["operator"].tolist()
        assert [row["operator"] for row in board] == expected
        assert [row["rank"] for row in board] == list(range(1, len(board) + 1))


def test_steps_cover_both_runs_with_wall_and_operator_time():
    report = amp_pair()
    steps = report.data["steps"]
    for role in ("baseline", "target"):
        mine = [s for s in steps if s["role"] == role]
        assert len(mine) == next(r["steps"] for r in report.data["runs"] if r["role"] == role) == 5
        assert all(s["op_ms"] > 0 for s in mine)
        walls = [s["wall_ms"] for s in mine if s["wall_ms"] is not None]
        assert len(walls) >= 3 and all(w > 0 for w in walls)
    # the training step holds backward work: its wall time exceeds the compared forward operators
    assert all(s["wall_ms"] > s["op_ms"] for s in steps if s["role"] == "baseline" and s["wall_ms"])


def test_warnings_hold_cannot_decide_reasons_limitations_and_notes():
    warnings = amp_pair().data["warnings"]
    kinds = {w["kind"] for w in warnings}
    assert {"undecided", "limitation", "note"} <= kinds
    undecided = [w for w in warnings if w["kind"] == "undecided"]
    assert all(w["text"].startswith("Cannot decide, because") and w["rule"] for w in undecided)
    limits = {w["topic"]: w["roles"] for w in warnings if w["kind"] == "limitation"}
    assert limits["profiler-config"] == ["baseline", "target"]  # merged across both CPU runs


@pytest.mark.slow
def test_mindir_with_profile_adds_chains_crosslink_and_hygiene():
    report = amp_pair_with_model()
    assert report.data["input_kinds"] == ["mindir", "mindir+profile", "pair"]
    counts = report.chain_counts()
    assert (counts["conv-bn-act"], counts["conv-bn-add-act"], counts["conv-bn"]) == (33, 16, 4)
    graph = report.data["graph"]
    assert graph["chains"]["total"] == sum(counts.values()) == len(graph["chains"]["items"])
    assert isinstance(graph["crosslink"], list) and len(graph["crosslink"]) == graph["chains"]["total"]
    sources = {s["source"] for s in report.data["symptoms"]}
    assert {"pair", "mindir"} <= sources
    assert [i["role"] for i in report.data["inputs"]] == ["baseline", "target", "mindir"]
    assert report.chain_figure is not None


def test_single_profile_is_diagnosed_as_the_target_alone():
    report = single_run()
    assert report.kind == "single" and report.data["input_kinds"] == ["single"]
    ops = report.operators()
    assert ops["baseline_us_per_step"].isna().all() and (ops["match"] == "single").all()
    assert ops["target_share"].sum() == pytest.approx(1.0)
    assert report.data["leaderboards"]["baseline"] == [] and len(report.data["leaderboards"]["target"]) == 10
    assert report.data["timing"]["ratio"] is None
    assert report.data["runs"][0]["execution_mode"] == "pynative"
    assert any("Only one profile was given" in w["text"] for w in report.data["warnings"])
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
    assert any("train" in c["id"] for c in report.causes if c["significant"])


@pytest.mark.slow
def test_chinese_report_translates_verdict_and_titles():
    zh, en = amp_pair("zh"), amp_pair("en")
    assert zh.lang == "zh"
    assert "推理" in zh.verdict and zh.verdict != en.verdict
    assert zh.causes[0]["id"] == en.causes[0]["id"] and zh.causes[0]["title"] != en.causes[0]["title"]


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
def test_every_report_validates_against_the_published_schema(index):
    report = all_reports()[index]
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert data["schema_version"] == SCHEMA_VERSION
    assert validate(data, SCHEMA) == []


def test_schema_operator_record_lists_exactly_the_report_columns():
    props = SCHEMA["$defs"]["operator"]["properties"]
    assert list(props) == list(OPERATOR_COLUMN_NAMES)
    for name, kind in OPERATOR_COLUMNS:
        declared = props[name].get("type", "string")
        declared = declared if isinstance(declared, list) else [declared]
        if "enum" not in props[name]:
            assert kind in declared, name


def test_schema_documentation_names_every_top_level_key():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "report-schema.md").read_text(encoding="utf-8")
    for key in SCHEMA["properties"]:
        assert f"`{key}`" in doc, key


def test_validator_reports_each_kind_of_violation():
    good = amp_pair().to_dict()
    cases = {
        "missing required key 'verdict'": lambda d: d.pop("verdict"),
        "unexpected key 'extra'": lambda d: d.__setitem__("extra", 1),
        "expected ['number', 'null'], got str": lambda d: d["timing"].__setitem__("ratio", "1.5"),
        "is not one of": lambda d: d.__setitem__("kind", "triple"),
        "does not match": lambda d: d["causes"][0].__setitem__("id", "Not An Id"),
        "above the maximum 1": lambda d: d["causes"][0].__setitem__("confidence", 1.5),
        "matches none of the anyOf": lambda d: d.__setitem__("graph", []),
        "expected integer, got bool": lambda d: d["operators"].__setitem__("total", True),
    }
    for expected, mutate in cases.items():
        data = json.loads(json.dumps(good))
        mutate(data)
        errors = validate(data, SCHEMA)
        assert any(expected in e for e in errors), (expected, errors)


def test_validator_refuses_keywords_it_does_not_implement():
    with pytest.raises(SchemaError, match="unsupported schema keyword"):
        validate({}, {"type": "object", "oneOf": []})
    with pytest.raises(SchemaError, match="only local references"):
        validate({}, {"$ref": "https://example.org/x.json"})


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
    assert report.causes[0]["id"] == "precision-mismatch"
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
    validate(report.to_dict(), load_schema())
    conv = next(r for r in report.data["operators"]["records"] if r["op_type"] == "Conv2D")
    assert conv["target_aic_mte2_ratio"] >= 0.8 and conv["target_bound"] == "memory"
    assert conv["baseline_block_dim"] is not None and conv["target_block_dim"] is not None
    assert conv["baseline_input_dtypes"] != conv["target_input_dtypes"]  # FP16 training, FP32 inference

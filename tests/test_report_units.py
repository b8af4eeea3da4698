"""Small pieces of the doctor package: escaping, verdict wording, translations, settings, report files,
the rules search."""

from __future__ import annotations

import os
import re
import stat
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import InputError
from doctor.config import AppConfig, parse_users
from doctor.i18n import REPORT_TEXT, UI_TEXT, lang_from_header, t
from doctor.model import Cause, Chains, Explanation, Fix, Graph, Parameters, Timing
from doctor.text import csv_safe, fenced, fmt_number, md_code, md_text
from doctor.verdict import verdict
from knowledge import load_rules
from tests.support.reports import amp_pair
from webapp.files import ReportFiles
from webapp.rules_view import matching_rules, rules_markdown

# ------------------------------------------------------------------------------------------ escaping


@given(st.text(max_size=80))
def test_md_text_never_lets_a_tag_or_a_line_break_through(value):
    out = md_text(value)
    assert "<" not in out and ">" not in out and "\n" not in out and "\r" not in out


def test_md_text_escapes_markdown_markers_and_html():
    assert md_text("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    assert md_text("a*b_c [l](u) `x` |y| ~z $$") == r"a\*b\_c \[l\](u) \`x\` \|y\| \~z \$\$"
    assert md_text("# title") == r"\# title"
    assert md_text("12. item") == r"12\. item"
    assert md_text("- item") == r"\- item"
    assert md_text("3.5x faster") == "3.5x faster"  # no needless escapes mid-line


def test_md_code_fence_outgrows_backticks_inside():
    assert md_code("Conv2D-op0") == "`Conv2D-op0`"
    assert md_code("a`b") == "``a`b``"
    assert md_code("`edge`") == "`` `edge` ``"
    assert md_code("line\nbreak") == "`line break`"


def test_fenced_block_cannot_be_closed_by_its_content():
    block = fenced("x = 1\n```\nprint('out')", "python")
    fence = block.splitlines()[0].removesuffix("python")
    assert len(fence) == 4 and block.endswith("\n" + fence)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=SUM(A1)", "'=SUM(A1)"),
        ("+1", "'+1"),
        ("-cmd", "'-cmd"),
        ("@x", "'@x"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("Conv2D", "Conv2D"),
        (-3.5, -3.5),
        (True, True),
        (None, None),
    ],
)
def test_csv_safe_prefixes_formula_text_only(value, expected):
    assert csv_safe(value) == expected


def test_fmt_number_is_compact_and_handles_missing():
    assert fmt_number(1234.5678) == "1,234.6"
    assert fmt_number(3.0) == "3"
    assert fmt_number(0.01234) == "0.012"
    assert fmt_number(None) == "—" and fmt_number(float("nan")) == "—"
    assert fmt_number(float("inf")) == "∞"


# ------------------------------------------------------------------------------------------- verdict

CAUSE = Cause(
    rank=1,
    id="precision-mismatch",
    title="Inference computes in FP32",
    severity="high",
    confidence=0.9,
    significant=True,
    material=True,
    section="ranked",
    severity_label="high",
    basis="differential",
    absorbed=[],
    recoverable_ms_per_step=5.4,
    expected_benefit_ms=4.86,
    step_share=0.3,
    evidence=[],
    fix=Fix(code="", language="python", notes=""),
    explanation=Explanation(what_it_detects="", why_it_matters="", how_to_confirm=""),
    references=[],
    caveats=[],
)
WEAK = CAUSE.model_copy(update={"significant": False, "material": False, "section": "below-threshold"})
CAUSE_DATA, WEAK_DATA = CAUSE, WEAK  # the verdict reads the typed document parts
NO_PAIR = {name: None for name, info in Timing.model_fields.items() if info.is_required()}


def timing(ratio: float, per_sample: float | None = None, phases=("train", "inference")) -> Timing:
    """A pair's timing as the verdict reads it, validated by the model."""
    fields = {"ratio": ratio, "per_sample_ratio": per_sample, "target_ms_per_step": 10.0}
    return Timing(**{**NO_PAIR, **fields, "baseline_phase": phases[0], "target_phase": phases[1]})


def model_graph(file: str, total: int, fusible: int) -> Graph:
    chains = Chains(total=total, fusible=fusible, blocked=total - fusible, by_pattern=[], items=[])
    parameters = Parameters(count=0, total_bytes=0, absent=0)
    return Graph(
        file=file,
        producer="MindSpore",
        model_version="2.10.0",
        mind_ir_version=1,
        training=False,
        inputs=[],
        outputs=[],
        op_nodes=0,
        op_counts={},
        parameters=parameters,
        chains=chains,
        crosslink=None,
    )


def test_verdict_names_gap_cause_and_recoverable_time():
    v = verdict("pair", timing(3.1), [CAUSE_DATA], "problem", 0, "en")
    assert v.text == (
        "Inference is 3.10x slower per step in operator time than the training forward pass; "
        "most likely cause: Inference computes in FP32, about 5.40 ms/step recoverable"
    )
    assert v.status == "problem" and v.top_cause == "precision-mismatch" and v.slowdown == 3.1


def test_verdict_wording_for_faster_equal_per_sample_and_unknown_roles():
    faster = verdict("pair", timing(0.8), [CAUSE_DATA], "problem", 0, "en")
    assert "1.25x faster per step in operator time" in faster.text
    assert "about as long per step in operator time as the training forward pass (1.02x)" in (
        verdict("pair", timing(1.02), [CAUSE_DATA], "problem", 0, "en").text
    )
    per_sample = verdict("pair", timing(0.5, per_sample=2.0), [CAUSE_DATA], "problem", 0, "en")
    assert "2.00x slower per sample in operator time" in per_sample.text and per_sample.slowdown == 2.0
    other = verdict("pair", timing(2.0, phases=("inference", "inference")), [CAUSE_DATA], "problem", 0, "en")
    assert other.text.startswith("The target is 2.00x slower per step in operator time than the baseline")


def test_verdict_says_plainly_when_nothing_was_found():
    same = verdict("pair", timing(1.01), [WEAK_DATA], "nothing-found", 0, "en")
    assert same.text.startswith("Nothing significant found: Inference takes about as long")
    assert same.status == "nothing-found" and same.top_cause is None
    a_little = verdict("pair", timing(1.1), [WEAK_DATA], "nothing-found", 2, "en")
    assert a_little.text == (
        "Inference is 1.10x slower per step in operator time than the training forward pass, but no cause "
        "reaches the reporting threshold (2 question(s) cannot be decided with this data: see the warnings)"
    )
    assert a_little.status == "nothing-found"
    slower = verdict("pair", timing(1.5), [WEAK_DATA], "nothing-found", 2, "en")  # >= 1.2x: never "nothing"
    assert slower.status == "unexplained-slowdown"
    assert slower.text.startswith(
        "Inference is 1.50x slower per step in operator time than the training forward pass, and no cause "
        "reaches the reporting threshold: an unexplained slowdown. Where the time went: "
    )


def test_verdict_for_single_run_and_model_and_in_chinese():
    single = verdict(
        "single", Timing(**{**NO_PAIR, "target_ms_per_step": 25.3}), [], "nothing-found", 0, "en"
    )
    assert single.text == "One run analysed: 25.30 ms of operator time per step; nothing significant found"
    model = verdict("mindir", None, [CAUSE_DATA], "problem", 0, "en", model_graph("m.mindir", 54, 50))
    assert model.text.startswith("Model m.mindir: 54 fusion chains, 50 fusible; most likely cause")
    zh = verdict("pair", timing(3.1), [CAUSE_DATA], "problem", 0, "zh")
    assert (
        zh.text == "推理每步算子耗时比训练前向慢 3.10 倍；"
        "最可能的原因：Inference computes in FP32，每步约可节省 5.40 ms"
    )


# -------------------------------------------------------------------------------------- translation


def test_both_languages_have_the_same_keys_and_placeholders():
    for table in (REPORT_TEXT, UI_TEXT):
        assert set(table["en"]) == set(table["zh"])
        for key, text in table["en"].items():
            fields = set(re.findall(r"{(\w+)}", text))
            assert fields == set(re.findall(r"{(\w+)}", table["zh"][key])), key
    untranslated = [k for k, v in UI_TEXT["zh"].items() if not re.search(r"[\u4e00-\u9fff]", v)]
    assert untranslated == []
    assert t("leaderboard_of", "zh", n=10, role="目标") == "目标耗时前 10 的算子"


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh"),
        ("en-US,en;q=0.9,zh-CN;q=0.8", "en"),
        ("fr-FR,zh-TW;q=0.5", "zh"),
        ("de-DE", "en"),
        (None, "en"),
        ("", "en"),
    ],
)
def test_language_is_taken_from_accept_language(header, lang):
    assert lang_from_header(header) == lang


# ------------------------------------------------------------------------------------------ settings


def test_app_config_reads_users_and_limits_from_the_environment():
    config = AppConfig.from_env(
        {
            "PERF_DOCTOR_USERS": "alice:s3cret, bob:pa:ss",
            "PERF_DOCTOR_MAX_FILE_SIZE": "2GB",
            "PERF_DOCTOR_CONCURRENCY": "3",
            "PERF_DOCTOR_QUEUE_SIZE": "8",
        }
    )
    assert config.auth == [("alice", "s3cret"), ("bob", "pa:ss")]
    assert (config.max_file_size, config.concurrency, config.queue_size) == ("2gb", 3, 8)
    default = AppConfig.from_env({})
    assert default.auth is None and default.concurrency >= 2 and default.queue_size == 16


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"PERF_DOCTOR_USERS": "alice"}, "PERF_DOCTOR_USERS"),
        ({"PERF_DOCTOR_USERS": ":pw"}, "PERF_DOCTOR_USERS"),
        ({"PERF_DOCTOR_MAX_FILE_SIZE": "huge"}, "PERF_DOCTOR_MAX_FILE_SIZE"),
        ({"PERF_DOCTOR_CONCURRENCY": "0"}, "PERF_DOCTOR_CONCURRENCY"),
        ({"PERF_DOCTOR_QUEUE_SIZE": "-1"}, "PERF_DOCTOR_QUEUE_SIZE"),
    ],
)
def test_malformed_settings_name_the_variable(env, variable):
    with pytest.raises(InputError, match=variable):
        AppConfig.from_env(env)


def test_parse_users_skips_empty_entries():
    assert parse_users(" , a:b ,") == (("a", "b"),)


# ------------------------------------------------------------------------------------- report files


@pytest.mark.slow
def test_report_files_are_private_pruned_and_removed():
    files = ReportFiles(max_age_s=60)
    try:
        paths = files.write(amp_pair())
        assert set(paths) == {"html", "md", "json", "csv"}
        root = files.root
        assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
        assert all(p.is_file() and p.parent.parent == root for p in paths.values())
        assert paths["html"].read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
        folder = paths["html"].parent
        assert files.prune(now=time.time()) == 0 and folder.exists()
        assert files.prune(now=time.time() + 120) == 1 and not folder.exists()
    finally:
        files.close()
    assert not root.exists()


# -------------------------------------------------------------------------------------------- rules


def test_rules_search_narrows_the_catalog_and_escapes_the_query():
    every = load_rules()
    assert rules_markdown("").count("\n## `") == len(every)
    one = every[0]
    found = matching_rules(one.id)
    assert one in found and len(found) < len(every)
    text = rules_markdown(one.id)
    assert text.startswith(f"**{len(found)}** of {len(every)} rules match") and f"## `{one.id}`" in text
    hostile = rules_markdown("<img src=x onerror=window.__xss=1>")
    assert hostile.startswith("**0** of") and "<img" not in hostile

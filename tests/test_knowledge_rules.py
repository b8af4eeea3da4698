"""The rule files: all load and validate, the stable ids exist, bad files fail with clear messages,
and the committed catalog docs/rules.md is exactly what the files generate."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from knowledge import catalog_markdown, load_rules
from knowledge.catalog import CATALOG_PATH, main
from knowledge.errors import RuleError
from knowledge.loader import RULES_DIR, load_rule_file

REPO = Path(__file__).resolve().parent.parent
STABLE_IDS = {
    "precision-mismatch",
    "fusion-missing",
    "train-mode-at-inference",
    "execution-mode-mismatch",
    "profiler-config-mismatch",
    "profiler-level-insufficient",
    "shape-mismatch",
    "missing-warmup",
    "dynamic-shape-recompile",
    "latency-drift",
    "latency-jitter",
    "resource-contention",
    "ai-cpu-fallback",
    "format-conversion-overhead",
    "cast-overhead",
    "host-bound",
    "data-pipeline-bound",
    "graph-kernel-fusion-off",
    "small-batch-underutilization",
    "float64-input",
    "synchronous-execution",
    "debug-logging",
    "deterministic-mode",
    "memory-growth",
    "communication-overhead",
    "random-augmentation-at-eval",
    "workload-not-comparable",
}


def test_all_rules_load_and_every_stable_id_exists() -> None:
    rules = load_rules()
    ids = [r.id for r in rules]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    assert set(ids) >= STABLE_IDS, f"missing stable ids: {STABLE_IDS - set(ids)}"
    assert len(list(RULES_DIR.glob("*.yaml"))) == len(rules)


def test_load_rules_is_cached_but_returns_a_fresh_list() -> None:
    first, second = load_rules(), load_rules()
    assert first == second and first is not second
    assert all(a is b for a, b in zip(first, second, strict=True))


def test_every_user_facing_text_is_bilingual() -> None:
    """Independent of the loader: each {en, zh} pair really has an English and a Chinese side."""
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for rule in load_rules():
        e = rule.explanation
        pairs = [rule.title, rule.fix.notes, e.what_it_detects, e.why_it_matters, e.how_to_confirm]
        pairs += [text for need in rule.needs for text in (need.reason, need.remedy)]
        for text in pairs:
            assert text.en.strip() and not cjk.search(text.en), (rule.id, text.en)
            assert cjk.search(text.zh), (rule.id, text.zh)
        assert len({e.what_it_detects.en, e.why_it_matters.en, e.how_to_confirm.en}) == 3, rule.id


def test_fusion_missing_covers_a_mindir_alone() -> None:
    rule = next(r for r in load_rules() if r.id == "fusion-missing")
    assert "mindir" in rule.applies_to
    assert "mindir-fusible-chains" in {s.symptom for s in rule.supports}


def test_catalog_is_current() -> None:
    assert CATALOG_PATH == REPO / "docs" / "rules.md"
    assert CATALOG_PATH.read_text(encoding="utf-8") == catalog_markdown(), "run: python -m knowledge.catalog"


def test_catalog_lists_every_rule_with_its_fix() -> None:
    text = catalog_markdown()
    for rule in load_rules():
        assert f'<a id="{rule.id}"></a>' in text
        assert rule.title.zh in text and rule.fix.code.strip().splitlines()[0] in text


def test_catalog_entry_point_writes_and_checks(tmp_path: Path) -> None:
    out = tmp_path / "rules.md"
    assert main(["--check", "--output", str(out)]) == 1  # missing counts as stale
    assert main(["--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == catalog_markdown()
    assert main(["--check", "--output", str(out)]) == 0


@pytest.mark.slow
def test_python_dash_m_entry_point_runs_cleanly() -> None:
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-m", "knowledge.catalog", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


# --- validation ------------------------------------------------------------------------------------


def valid_rule() -> dict[str, Any]:
    return yaml.safe_load((RULES_DIR / "float64-input.yaml").read_text(encoding="utf-8"))


def write(tmp_path: Path, raw: dict[str, Any], name: str = "float64-input") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return path


def mutate(raw: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    """Set (or with value=KeyError delete) the field at a dotted path; list indices are numbers."""
    *parents, last = dotted.split(".")
    node: Any = raw
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    key: Any = int(last) if isinstance(node, list) else last
    if value is KeyError:
        del node[key]
    else:
        node[key] = value
    return raw


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("severity", "urgent", "severity: expected one of"),
        ("applies_to", ["pair", "video"], "applies_to[1]: expected one of"),
        ("applies_to", [], "applies_to: expected a non-empty list"),
        ("title.zh", "Float64 inputs", "title.zh: the zh text has no Chinese characters"),
        ("title.en", "", "title.en: expected a non-empty string"),
        ("title", {"en": "x"}, "title.zh: missing required key"),
        ("supports.0.symptom", "made-up-kind", "supports[0].symptom: unknown symptom kind"),
        ("supports.0.weight", 1.5, "supports[0].weight: weight must be a number in (0, 1]"),
        ("supports.0.recoverable", "seconds", "supports[0].recoverable: 'seconds' is neither a value"),
        (
            "supports.0.when",
            [{"value": "nope", "op": ">", "threshold": 1}],
            "float64-input has no value(s) ['nope']",
        ),
        ("supports.0.sources", ["device"], "supports[0].sources[0]: expected one of"),
        (
            "supports",
            [{"symptom": "float64-input", "weight": 0.5, "corroborating": True}],
            "supports: at least one support must not be corroborating",
        ),
        ("supports.0.corroborating", "yes", "supports[0].corroborating: must be true or false"),
        ("supports", [], "supports: expected at least one entry"),
        ("needs.0.topic", "weather", "needs[0].topic: expected one of"),
        ("needs.0.inputs", ["mindir+profile", "video"], "needs[0].inputs[1]"),
        ("fix.code", "net.set_train(False", "fix.code: not valid Python"),
        ("fix.language", "bash", "fix.language: only python fixes"),
        ("fix.verify", "trust-me", "fix.verify: expected one of"),
        ("fix.comments", KeyError, "fix.comments: expected a mapping"),
        (
            "fix.comments.zh",
            ["只有一条"],
            "fix.comments.zh: expected 2 comment(s), one per comment of the code",
        ),
        ("fix.comments.zh.1", "convert once", "fix.comments.zh[1]: expected one line of Chinese text"),
        ("references.0.url", "http://example.org", "references[0].url: expected an https:// address"),
        ("explanation.why_it_matters", KeyError, "explanation.why_it_matters: missing required key"),
        ("recoverable_combine", "mean", "recoverable_combine: expected one of"),
        ("colour", "blue", "<file>: unknown key(s) ['colour']"),
        ("id", "Float64_Input", "id: 'Float64_Input' is not a kebab-case id"),
    ],
)
def test_invalid_rule_files_fail_with_file_and_field(
    tmp_path: Path, field: str, value: Any, message: str
) -> None:
    path = write(tmp_path, mutate(valid_rule(), field, value))
    with pytest.raises(RuleError) as err:
        load_rule_file(path)
    assert str(err.value).startswith(str(path)), str(err.value)
    assert message in str(err.value)


def test_id_must_match_file_name(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="differs from the file name"):
        load_rule_file(write(tmp_path, valid_rule(), name="other-name"))


def test_broken_yaml_and_duplicate_ids(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: bad\ntitle: {en: a: b}\n", encoding="utf-8")
    with pytest.raises(RuleError, match="not valid YAML"):
        load_rule_file(bad)
    dup = tmp_path / "dups"
    dup.mkdir()
    write(dup, valid_rule())
    (dup / "copy.yaml").write_text((dup / "float64-input.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(RuleError):
        load_rules(dup)
    with pytest.raises(RuleError, match="no rule files"):
        load_rules(tmp_path / "empty")


def test_a_valid_copy_loads_from_another_directory(tmp_path: Path) -> None:
    write(tmp_path, valid_rule())
    assert [r.id for r in load_rules(tmp_path)] == ["float64-input"]

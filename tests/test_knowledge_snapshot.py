"""The parsed-rules snapshot: committed fresh, equal to the YAML it stands for, and never used for a file
whose bytes changed (a stale entry only costs the YAML parse)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge import snapshot
from knowledge.loader import RULES_DIR, load_rule_file, load_rules, parse_rule

REPO = Path(__file__).resolve().parent.parent


def test_the_committed_snapshot_is_what_the_rule_files_give() -> None:
    committed = (RULES_DIR / snapshot.SNAPSHOT_NAME).read_text(encoding="utf-8")
    assert committed == snapshot.render(snapshot.build(RULES_DIR)), "run: python -m knowledge.snapshot"


def test_check_mode_tells_stale_from_fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert snapshot.main(["--check"]) == 0
    copy = tmp_path / "rules"
    shutil.copytree(RULES_DIR, copy)
    (copy / "host-bound.yaml").write_text(
        (copy / "host-bound.yaml").read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8"
    )
    monkeypatch.setattr("knowledge.loader.RULES_DIR", copy)
    assert snapshot.main(["--check"]) == 1


@pytest.mark.parametrize("path", sorted(RULES_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_snapshot_entry_gives_the_rule_its_yaml_gives(path: Path) -> None:
    data = path.read_bytes()
    cached = snapshot.cached_raw(RULES_DIR, path.name, data)
    assert cached is not None, f"{path.name} is not in the snapshot"
    from_yaml = snapshot.parse_yaml(data.decode("utf-8"))
    assert parse_rule(cached, source="x") == parse_rule(from_yaml, source="x")


def test_packaged_rules_are_read_without_a_yaml_parser() -> None:
    """The point of the snapshot: no YAML parsing (nor the yaml import) for the packaged rules."""
    code = "import sys; from knowledge import load_rules; load_rules(); print('yaml' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _copy_with_snapshot(tmp_path: Path) -> Path:
    copy = tmp_path / "rules"
    shutil.copytree(RULES_DIR, copy)
    return copy


def test_an_edited_rule_file_is_read_from_its_yaml_not_the_stale_entry(tmp_path: Path) -> None:
    copy = _copy_with_snapshot(tmp_path)
    path = copy / "host-bound.yaml"
    text = path.read_text(encoding="utf-8")
    old_title = next(r for r in load_rules() if r.id == "host-bound").title.en
    path.write_text(text.replace(old_title, "Edited title of the host-bound rule", 1), encoding="utf-8")
    assert snapshot.cached_raw(copy, path.name, path.read_bytes()) is None
    assert load_rule_file(path).title.en == "Edited title of the host-bound rule"
    untouched = copy / "fusion-missing.yaml"
    assert snapshot.cached_raw(copy, untouched.name, untouched.read_bytes()) is not None


def test_a_snapshot_entry_is_used_only_for_the_exact_bytes(tmp_path: Path) -> None:
    """Other bytes than the entry's (one byte more), a file the snapshot lacks and a broken snapshot file
    all fall back to the YAML."""
    copy = _copy_with_snapshot(tmp_path)
    data = (copy / "host-bound.yaml").read_bytes()
    assert snapshot.cached_raw(copy, "host-bound.yaml", data + b" ") is None
    assert snapshot.cached_raw(copy, "no-such-rule.yaml", data) is None
    (copy / snapshot.SNAPSHOT_NAME).write_text("{not json", encoding="utf-8")
    snapshot._entries.cache_clear()
    assert snapshot.cached_raw(copy, "host-bound.yaml", data) is None
    assert load_rule_file(copy / "host-bound.yaml").id == "host-bound"


def test_a_directory_without_a_snapshot_is_read_from_yaml(tmp_path: Path) -> None:
    folder = tmp_path / "custom"
    folder.mkdir()
    shutil.copy(RULES_DIR / "host-bound.yaml", folder)
    assert [r.id for r in load_rules(folder)] == ["host-bound"]


def test_values_json_cannot_keep_stop_the_build(tmp_path: Path) -> None:
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "dated.yaml").write_text("id: dated\nsince: 2024-01-01\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"dated\.yaml"):
        snapshot.build(folder)
    (folder / "dated.yaml").write_text("id: dated\nweights: {1: 0.5}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"dated\.yaml"):
        snapshot.build(folder)


def test_the_snapshot_is_packaged() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"rules/snapshot.json"' in pyproject


def test_a_rule_file_that_is_not_utf8_is_a_rule_error(tmp_path: Path) -> None:
    """Bytes the snapshot does not hold are decoded first: a clear RuleError naming the file, not a
    UnicodeDecodeError traceback."""
    from knowledge.errors import RuleError

    path = tmp_path / "latin.yaml"
    path.write_bytes("id: latin\ntitle: {en: caf\u00e9}\n".encode("latin-1"))
    with pytest.raises(RuleError, match="not UTF-8 text") as caught:
        load_rule_file(path)
    assert "latin.yaml" in str(caught.value)

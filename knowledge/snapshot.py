"""The packaged rule files as parsed data in one JSON file, each entry keyed by its YAML's SHA-256.

Parsing the 33 YAML files (with zh texts, 176 KB) took 0.1 s of every process's CPU time, a tenth of a
100k-row comparison; `json.loads` of the same data takes a few milliseconds. The YAML stays the source:
a file whose bytes no longer match its entry is parsed from YAML instead, so a stale snapshot is only
slower, never wrong. `tests/test_knowledge_snapshot.py` fails when the committed snapshot is stale.

    python -m knowledge.snapshot          # rewrite knowledge/rules/snapshot.json
    python -m knowledge.snapshot --check  # exit 1 when it is stale
"""

from __future__ import annotations

import argparse
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any, TypedDict, cast

SNAPSHOT_NAME = "snapshot.json"
FORMAT = 1


class SnapshotEntry(TypedDict):
    """One rule file in the snapshot: the SHA-256 of its bytes and its YAML parsed (JSON-exact)."""

    sha256: str
    raw: object


class Snapshot(TypedDict):
    """The snapshot document: its format and every rule file's entry, by file name."""

    format: int
    rules: dict[str, SnapshotEntry]


def digest(data: bytes) -> str:
    """The key of one rule file's entry: the SHA-256 of its bytes."""
    return hashlib.sha256(data).hexdigest()


def parse_yaml(text: str) -> object:
    """One rule file's YAML, read with libyaml's C parser when PyYAML has it (same safe semantics)."""
    import yaml  # only when a file is not in the snapshot: the packaged rules need no YAML parser

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@cache
def _entries(directory: Path) -> dict[str, dict[str, Any]]:
    """The snapshot's entries by file name; none when the directory has no readable snapshot."""
    try:
        document = json.loads((directory / SNAPSHOT_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict) or cast("dict[str, Any]", document).get("format") != FORMAT:
        return {}
    entries = cast("dict[str, Any]", document).get("rules")
    return cast("dict[str, dict[str, Any]]", entries) if isinstance(entries, dict) else {}


def cached_raw(directory: Path, name: str, data: bytes) -> object:
    """The parsed content of rule file `name` when the snapshot holds these exact bytes, else None."""
    entry = _entries(directory).get(name)
    if isinstance(entry, dict) and entry.get("sha256") == digest(data):
        return entry.get("raw")
    return None


def build(directory: Path) -> Snapshot:
    """The snapshot document of every *.yaml file in `directory`, parsed from YAML."""
    rules: dict[str, SnapshotEntry] = {}
    for path in sorted(directory.glob("*.yaml")):
        data = path.read_bytes()
        raw = parse_yaml(data.decode("utf-8"))
        _check_json_exact(raw, path.name)
        rules[path.name] = {"sha256": digest(data), "raw": raw}
    return {"format": FORMAT, "rules": rules}


def _check_json_exact(raw: Any, name: str) -> None:
    """JSON must give back the same values with the same types (YAML dates or integer keys would not)."""
    try:
        kept = json.loads(json.dumps(raw, ensure_ascii=False))
    except (TypeError, ValueError):
        kept = None
    if not _same(kept, raw):
        raise ValueError(f"{name}: its YAML holds values JSON cannot keep exactly")


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in cast("dict[Any, Any]", a))
    if isinstance(a, list):
        left = cast("list[Any]", a)
        return len(left) == len(b) and all(_same(x, y) for x, y in zip(left, b, strict=True))
    return a == b


def render(document: Snapshot) -> str:
    """The snapshot file's text: stable key order, readable diffs."""
    return json.dumps(document, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Rewrite the packaged snapshot, or with --check report whether it is stale."""
    from knowledge.loader import RULES_DIR

    parser = argparse.ArgumentParser(
        prog="python -m knowledge.snapshot", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when the snapshot is stale")
    args = parser.parse_args(argv)
    target = RULES_DIR / SNAPSHOT_NAME
    text = render(build(RULES_DIR))
    if args.check:
        fresh = target.is_file() and target.read_text(encoding="utf-8") == text
        print(f"{target.name} is {'up to date' if fresh else 'stale: run python -m knowledge.snapshot'}")
        return 0 if fresh else 1
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target} ({len(text.encode()) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

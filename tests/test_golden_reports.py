"""Reports stay byte-identical (after VOLATILE normalization) on every pinned fixture pair.

A refactor must not change what a report says. The digests are written by tests/golden/generate.py;
rerun it only for an intended change of content, and say so in the commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.scripts import load_script

GENERATOR = Path(__file__).resolve().parent / "golden" / "generate.py"


golden = load_script(GENERATOR, "golden_generate")
PINNED: dict[str, dict[str, str]] = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))
CASES = list(golden.cases())


def test_every_case_is_pinned_and_nothing_else() -> None:
    assert sorted(PINNED) == sorted(case.name for case in CASES)
    assert len(CASES) >= 60


def test_normalization_removes_only_what_varies() -> None:
    text = '{"created_utc": "2026-12-01T12:52:04Z", "id": "71a68ded-cc8c-4a2a-a431-3b1f95262afc", "x": 1}'
    assert golden.normalized(text, "json") == '{"created_utc": "<created>", "id": "<uuid>", "x": 1}'
    assert golden.normalized("<p>\n  a  b\n</p>", "html") == "<p> a b </p>"
    assert golden.normalized("<p>\n</p>\n<br>", "html") == "<p></p><br>"
    assert golden.normalized("a  b\n", "md") == "a  b\n"


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_report_is_unchanged(case) -> None:
    """The digests, and the document data is exactly what its model gives back: the JSON renderer writes
    the data (no pydantic on the command line), the other renderers read the validated model."""
    from doctor.model import ReportDocument

    report = golden.report(case)
    changed = [fmt for fmt, value in golden.digests(case, report).items() if PINNED[case.name][fmt] != value]
    assert not changed, f"{case.name}: {', '.join(changed)} changed (rerun tests/golden/generate.py if meant)"
    for lang, data in [(report.lang, report.data), *report.translations.items()]:
        typed = ReportDocument.model_validate(data).model_dump()
        assert json.dumps(typed, ensure_ascii=False) == json.dumps(data, ensure_ascii=False), (
            f"{case.name} ({lang}): the document data differs from its validated model's"
        )

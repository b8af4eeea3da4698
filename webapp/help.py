"""The "How to collect" help the app shows: docs/collect.md (English) and docs/collect.zh.md (Chinese), the
same text as the repository documentation, with the links between the two files dropped for the page."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from doctor.i18n import check_lang

DOCS = Path(__file__).resolve().parent.parent / "docs"
HELP_FILES = {"en": DOCS / "collect.md", "zh": DOCS / "collect.zh.md"}
# The sentence pointing at the other language's file: the page has its own language switch.
_OTHER_LANGUAGE = re.compile(r"\s*(?:中文版：|English: )\[collect(?:\.zh)?\.md\]\(collect(?:\.zh)?\.md\)\.")
_COMMENT = re.compile(r"<!--.*?-->\n?")


@cache
def collect_help(lang: str = "en") -> str:
    """The collection help in `lang` as Markdown, its title dropped (the box around it has one)."""
    text = HELP_FILES[check_lang(lang)].read_text(encoding="utf-8")
    text = _COMMENT.sub("", _OTHER_LANGUAGE.sub("", text))
    return text.split("\n", 1)[1].lstrip() if text.startswith("# ") else text

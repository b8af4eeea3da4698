"""What counts as an English sentence in a Chinese text, and as Chinese in an English one.

An English sentence is a run of ENGLISH_RUN or more words separated by single spaces, where a word is
two or more ASCII letters with at most its first letter capital ("the", "Step") and no unit. Identifiers
never count: a token with a digit, an underscore, a dot, a slash, a dash or an inner capital (Conv2D,
MatMul, profiler_level, trace_view.json, AI_CORE, ReLU) is not a word and ends a run, and so does any
punctuation. Code (Markdown fences and spans, HTML <pre>/<code>), URLs, HTML tags, scripts and styles
are removed before looking. So "ms per step" is no run (ms is a unit), "CPU runs have" is none (CPU is
no word), while "per step against" is one.
"""

from __future__ import annotations

import html
import re

ENGLISH_RUN = 3
UNITS = frozenset({"ms", "us", "µs", "MB", "GB", "KB", "MHz", "GHz", "W", "s", "x"})
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")

_FENCE = re.compile(r"```.*?```", re.S)
_SPAN = re.compile(r"`[^`\n]*`")
_URL = re.compile(r"https?://\S+|\]\([^)]*\)")
_BLOCKS = re.compile(r"<(script|style|pre|code)\b.*?</\1>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")
_WORD = re.compile(r"[A-Za-z][a-z]+")
_TOKEN = re.compile(r"\S+")


def plain_text(text: str) -> str:
    """`text` (Markdown or HTML) without code, URLs, tags, scripts and styles; entities decoded."""
    for pattern in (_FENCE, _BLOCKS):
        text = pattern.sub(" \n ", text)
    text = _TAG.sub(" \n ", text)
    text = html.unescape(text)
    return _SPAN.sub(" , ", _URL.sub(" , ", text))


def english_sentences(text: str) -> list[str]:
    """Every English sentence (see module docstring) in `text`."""
    found = []
    for line in plain_text(text).splitlines():
        run: list[str] = []
        for token in [*_TOKEN.findall(line), ","]:
            if _WORD.fullmatch(token) and token not in UNITS:
                run.append(token)
                continue
            if len(run) >= ENGLISH_RUN:
                found.append(" ".join(run))
            run = []
    return found


def chinese(text: str) -> list[str]:
    """The CJK characters in `text` (none may be in an English label)."""
    return CJK.findall(text)

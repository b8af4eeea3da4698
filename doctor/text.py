"""Escaping and number formatting shared by every renderer.

Every string that came from the user (operator names, scopes, file names, query values) passes through
one of these before it reaches Markdown, HTML or a CSV cell: Markdown viewers render raw HTML, and a
line starting with ``<`` opens an HTML block that swallows what follows (gradio-notes §9).
"""

from __future__ import annotations

import html
import math
import re

# Characters that start inline Markdown constructs anywhere in a line (emphasis, code, links, tables,
# strike-through, LaTeX in gr.Markdown); & < > are handled by html.escape.
_MD_INLINE = re.compile(r"([\\`*_\[\]|~$])")
# Characters that start a block (heading, list, setext/thematic break) at the start of a line; a quote
# marker ">" cannot occur because html.escape has turned it into "&gt;".
_MD_BLOCK_START = re.compile(r"^(\s*)([#+\-=])")
_MD_ORDERED_LIST = re.compile(r"^(\s*\d{1,9})([.)])(?=\s|$)")
# Bidirectional controls (ALM, LRM, RLM, LRE..RLO with U+202E, LRI..PDI): a name holding one could
# show its text reversed or reordered ("Trojan Source"); names never need them.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f{_BIDI}]")
# Control characters no rendered text may carry (NUL, ESC, DEL, C1, bidi ...); tab and line breaks stay.
_DOCUMENT_CONTROL = re.compile(f"[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f{_BIDI}]")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def one_line(value: object) -> str:
    """The value as a single line of text without control characters."""
    text = _LINE_BREAKS.sub(" ", str(value))
    return _CONTROL.sub("", text)


def md_text(value: object) -> str:
    """User text safe inside Markdown: one line, HTML-escaped (so no tag can form), inline Markdown
    markers and a leading block marker backslash-escaped."""
    text = _MD_INLINE.sub(r"\\\1", one_line(value))
    for pattern in (_MD_BLOCK_START, _MD_ORDERED_LIST):
        text = pattern.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
    return html.escape(text, quote=False)


def md_code(value: object) -> str:
    """User text as an inline code span; the fence is longer than any backtick run inside."""
    text = one_line(value)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_cell(value: object) -> str:
    """A Markdown table cell: escaped text, or an em dash for missing values."""
    if is_missing(value):
        return "—"
    if isinstance(value, float):
        return fmt_number(value)
    return md_text(value)


def fenced(code: str, language: str = "") -> str:
    """A fenced code block whose fence cannot be closed by the code itself."""
    longest = max((len(run) for run in re.findall(r"`{3,}", code)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{code.rstrip()}\n{fence}"


def strip_control(text: str) -> str:
    """`text` without control characters (NUL, ESC, DEL, C1 ...); tab, CR and LF are kept. A profile or
    model can carry any byte in a name, and a raw NUL or escape sequence must not reach a page, a
    spreadsheet or a terminal."""
    return _DOCUMENT_CONTROL.sub("", text)


def h(value: object) -> str:
    """HTML-escaped text (quotes included, control characters removed) for element content and
    attribute values."""
    return html.escape(strip_control(str(value)), quote=True)


def is_missing(value: object) -> bool:
    """None, NaN and pandas' NA all count as missing."""
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN and pd.NA (whose comparison raises or is NA)
    except (TypeError, ValueError):
        return True


def fmt_number(value: float | int | None, digits: int = 3) -> str:
    """A compact number: thousands separated, up to `digits` significant decimals, '—' when missing."""
    if value is None or is_missing(value):  # `is None` too: the checker narrows on it
        return "—"
    number = float(value)
    if math.isinf(number):
        return "∞" if number > 0 else "-∞"
    if number == int(number) and abs(number) < 1e15:
        return f"{int(number):,}"
    magnitude = abs(number)
    decimals = 1 if magnitude >= 100 else 2 if magnitude >= 1 else digits
    return f"{number:,.{decimals}f}"


def fmt_ms(value: float | None) -> str:
    """Milliseconds with a unit, e.g. '3.24 ms'."""
    return "—" if is_missing(value) else f"{fmt_number(value)} ms"


def fmt_ratio(value: float | None) -> str:
    """A ratio such as '1.79x'."""
    return "—" if value is None or is_missing(value) else f"{float(value):.2f}x"


def fmt_percent(value: float | None) -> str:
    """A share in [0, 1] as a percentage."""
    return "—" if value is None or is_missing(value) else f"{100 * float(value):.0f}%"


def csv_safe(value: object) -> object:
    """A CSV cell that spreadsheets will not run as a formula: text starting with = + - @ TAB CR gets
    a leading apostrophe, control characters are removed; numbers and booleans are returned unchanged so
    they stay numeric."""
    if isinstance(value, str):
        value = strip_control(value)
        return "'" + value if value.startswith(FORMULA_PREFIXES) else value
    return value

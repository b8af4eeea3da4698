"""Report fields as the words every renderer shows: verdict status, severity label, evidence line.

Kept apart from the renderers so Markdown, HTML and the app say the same thing; callers escape the
result for their own output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from doctor.i18n import t

if TYPE_CHECKING:
    from doctor.model import Cause, Evidence
    from doctor.model.outputs import UnexplainedDivergence

STATUS_KEYS = {
    "problem": "status_problem",
    "findings": "status_findings",
    "unexplained-slowdown": "status_unexplained",
    "nothing-found": "status_ok",
}
EVIDENCE_MARKS = {"supports": "", "contradicts": "✗ ", "explains": "↳ "}


def status_text(status: str, lang: str) -> str:
    """The verdict status as shown ("problem found", "findings of one input", "nothing significant")."""
    return t(STATUS_KEYS[status], lang)


def severity_text(cause: Cause, lang: str) -> str:
    """The displayed severity word of a cause in `lang` (see severity_word)."""
    return severity_word(cause.severity_label, lang)


def severity_word(label: str, lang: str) -> str:
    """A cause's severity label as shown in `lang` ("unquantified" when the step share is unknown)."""
    return t(f"sev_{label}", lang)


def evidence_text(piece: Evidence, lang: str) -> str:
    """One piece of evidence as plain text (see evidence_line)."""
    return evidence_line(piece.role, piece.summary, piece.baseline_summary, lang)


def evidence_line(role: str, summary: str, baseline_summary: str | None, lang: str) -> str:
    """One evidence item as plain text: its mark, the symptom's numbers, and what the baseline showed
    when its share was subtracted."""
    if role == "explains":
        text = f"{EVIDENCE_MARKS['explains']}{t('explained', lang)}: {summary}"
    else:
        text = f"{EVIDENCE_MARKS[role]}{summary}"
    if baseline_summary:
        text += f" ({t('baseline_showed', lang)}: {baseline_summary})"
    return text


def unexplained_text(item: UnexplainedDivergence, lang: str, layer: str | None = None) -> str:
    """An unexplained divergence as one sentence: where (`layer`: the name as the format shows it), and
    what data would decide it."""
    asks = [t(f"outputs_ask_{ask.replace('-', '_')}", lang) for ask in item.asks]
    joined = t("outputs_asks_sep", lang).join(asks)
    return t("outputs_unexplained", lang, layer=layer or item.layer, asks=joined)

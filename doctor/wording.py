"""Report fields as the words every renderer shows: verdict status, severity label, evidence line.

Kept apart from the renderers so Markdown, HTML and the app say the same thing; callers escape the
result for their own output.
"""

from __future__ import annotations

from typing import Any

from doctor.i18n import t

STATUS_KEYS = {"problem": "status_problem", "findings": "status_findings", "nothing-found": "status_ok"}
EVIDENCE_MARKS = {"supports": "", "contradicts": "✗ ", "explains": "↳ "}


def status_text(status: str, lang: str) -> str:
    """The verdict status as shown ("problem found", "findings of one input", "nothing significant")."""
    return t(STATUS_KEYS[status], lang)


def severity_text(cause: dict[str, Any], lang: str) -> str:
    """The displayed severity word in `lang` ("unquantified" when the step share is unknown)."""
    return t(f"sev_{cause['severity_label']}", lang)


def evidence_text(piece: dict[str, Any], lang: str) -> str:
    """One evidence item as plain text: its mark, the symptom's numbers, and what the baseline showed
    when its share was subtracted."""
    if piece["role"] == "explains":
        text = f"{EVIDENCE_MARKS['explains']}{t('explained', lang)}: {piece['summary']}"
    else:
        text = f"{EVIDENCE_MARKS[piece['role']]}{piece['summary']}"
    if piece.get("baseline_summary"):
        text += f" ({t('baseline_showed', lang)}: {piece['baseline_summary']})"
    return text

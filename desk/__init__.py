"""The support-staff desk: the case store (`desk.cases`: SQLite, retention, links, staff notes) and batch
triage (`desk.triage`: an inbox of submissions diagnosed in one go, listed and exported for staff).

It stands over the facade (`doctor`) and is used by the app and the CLI; nothing below it imports it.
Public API for the app: `CaseBook`, `STATUSES`, `Given`, `TriageDenied` and `triage_view` (the triage
tab's calls: record, reopen, list, update, delete cases and attach an after run), loaded on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded on first use: the CLI's case commands never need triage's pandas tables
    from desk.cases import STATUSES, CaseBook
    from desk.cases.book import Given
    from desk.triage import TriageDenied
    from desk.triage import view as triage_view

# Public name -> (module, attribute; None for the module itself).
_EXPORTS = {
    "STATUSES": ("desk.cases", "STATUSES"),
    "CaseBook": ("desk.cases", "CaseBook"),
    "Given": ("desk.cases.book", "Given"),
    "TriageDenied": ("desk.triage", "TriageDenied"),
    "triage_view": ("desk.triage.view", None),  # the app's triage tab: record, reopen, list, update cases
}
__all__ = ["STATUSES", "CaseBook", "Given", "TriageDenied", "triage_view"]


def __getattr__(name: str) -> object:
    """The public names on first use (module-level lazy attributes, PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'desk' has no attribute {name!r}")
    module, attribute = _EXPORTS[name]
    found = import_module(module)
    return found if attribute is None else getattr(found, attribute)

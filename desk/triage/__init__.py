"""Triage: the staff view of recent cases (table, filters, counts per cause) and the batch triage of an
inbox of user submissions, both with the same columns."""

from desk.triage.view import COLUMN_NAMES, TRIAGE_COLUMNS, TriageDenied

__all__ = ["COLUMN_NAMES", "TRIAGE_COLUMNS", "TriageDenied"]

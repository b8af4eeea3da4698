"""Cases: every diagnosis kept with an unguessable id so that a link reopens the full report.

The storage sits behind :class:`CaseStore` (a Protocol); :class:`SqliteCaseStore` is the embedded default
and :class:`CaseBook` adds the operator's policies (retention, kept uploads, links).
"""

from desk.cases.book import CaseBook, private_database
from desk.cases.model import (
    CASE_KINDS,
    NO_CAUSE,
    STATUSES,
    Case,
    CaseFilter,
    CaseMeta,
    CaseNotFound,
    CaseStore,
    CaseSummary,
    Upload,
    new_case_id,
    parse_case_id,
    summarize,
)
from desk.cases.sqlite import SqliteCaseStore

__all__ = [
    "CASE_KINDS",
    "NO_CAUSE",
    "STATUSES",
    "Case",
    "CaseBook",
    "CaseFilter",
    "CaseMeta",
    "CaseNotFound",
    "CaseStore",
    "CaseSummary",
    "SqliteCaseStore",
    "Upload",
    "new_case_id",
    "parse_case_id",
    "private_database",
    "summarize",
]

"""What the Triage tab and the batch CLI show: one row per case with the same columns everywhere, the
counts per top cause, filters, and a stored case turned back into a Report.

Display tables use text and number columns only (gr.Dataframe escapes text); the Markdown built here (case
banners and confirmations) escapes every value.
"""

from __future__ import annotations

import logging
import math
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

import pandas as pd
import plotly.io
from pydantic import ValidationError

from core import InputError, say
from desk.cases import NO_CAUSE, STATUSES, Case, CaseBook, CaseFilter, CaseSummary
from desk.cases.book import Given
from desk.cases.model import VerdictFacts
from diagnosis import Source
from doctor.facade import diagnose, display_name
from doctor.i18n import t
from doctor.report import SCHEMA_VERSION, Report
from doctor.table import Table
from doctor.text import md_code, md_text
from knowledge import SEVERITIES, load_rules

# (column, gr.Dataframe datatype): the triage table, the CSV and the JSON rows all use these.
TRIAGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("when", "str"),
    ("case", "str"),
    ("submission", "str"),
    ("kind", "str"),
    ("layouts", "str"),
    ("verdict", "str"),
    ("top_cause", "str"),
    ("severity", "str"),
    ("confidence", "number"),
    ("recoverable_ms", "number"),
    ("resolved", "str"),
    ("remaining", "str"),
    ("gain_ms", "number"),
    ("predicted_gain_ms", "number"),
    ("status", "str"),
    ("note", "str"),
    ("message", "str"),
    ("ranks", "number"),
)
COLUMN_NAMES = tuple(name for name, _ in TRIAGE_COLUMNS)
# The Triage tab's column order: what support reads first (inputs, verdict, top cause, severity, status,
# rank count) fits a 1366 px screen; the rest follows to the right.
SHOWN_FIRST = ("case", "submission", "verdict", "top_cause", "severity", "status", "ranks")
TABLE_COLUMNS = (*SHOWN_FIRST, *(name for name in COLUMN_NAMES if name not in SHOWN_FIRST))
FAILED = "FAILED"  # the verdict of a submission that could not be diagnosed, before its error line
GROUP_COLUMNS: tuple[tuple[str, str], ...] = (
    ("top_cause", "str"),
    ("cases", "number"),
    *((status, "number") for status in STATUSES),
    ("worst_severity", "str"),
    ("latest", "str"),
)
ANY = ""  # filter value meaning "any"
LOG = logging.getLogger("perf_doctor.triage")


class TriageDenied(InputError):
    """The user may not see or change the case list."""

    def __init__(self) -> None:
        super().__init__("the case list is for support staff only", expected="a staff login")


def when_text(moment: datetime) -> str:
    """A UTC time as sortable text, e.g. '2026-01-31 14:05:09Z'."""
    return moment.strftime("%Y-%m-%d %H:%M:%SZ")


class TriageRow(VerdictFacts):
    """One row of the triage list (TRIAGE_COLUMNS): a stored case or a submission just diagnosed."""

    when: str
    case: str
    submission: str
    status: str
    note: str
    message: str


def summary_row(summary: CaseSummary) -> TriageRow:
    """One triage row (TRIAGE_COLUMNS keys) from a stored case."""
    return {
        "when": when_text(summary.created),
        "case": summary.case_id,
        "submission": summary.source,
        "kind": summary.kind,
        "layouts": summary.layouts,
        "verdict": summary.verdict or (f"{FAILED}: {summary.message}" if summary.kind == "error" else ""),
        "top_cause": summary.top_cause,
        "severity": summary.severity,
        "confidence": summary.confidence,
        "recoverable_ms": summary.recoverable_ms,
        "resolved": summary.resolved,
        "remaining": summary.remaining,
        "gain_ms": summary.gain_ms,
        "predicted_gain_ms": summary.predicted_gain_ms,
        "status": summary.status,
        "note": summary.note,
        "message": summary.message,
        "ranks": summary.ranks,
    }


def rows_frame(rows: Iterable[Mapping[str, object]]) -> pd.DataFrame:
    """Triage rows as a DataFrame with exactly TRIAGE_COLUMNS: numbers as floats (rounded), text as str."""
    frame = pd.DataFrame(list(rows), columns=list(COLUMN_NAMES))
    for name, kind in TRIAGE_COLUMNS:
        if kind == "number":
            frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64").round(3)
        else:
            frame[name] = frame[name].map(lambda v: "" if v is None or v != v else str(v)).astype(object)  # pyright: ignore[reportOperatorIssue]  # v != v: the NaN test
    return frame


def triage_table(summaries: Sequence[CaseSummary]) -> Table:
    """The triage table for gr.Dataframe in TABLE_COLUMNS order (missing numbers shown empty)."""
    frame = rows_frame(summary_row(s) for s in summaries)
    kinds = dict(TRIAGE_COLUMNS)
    for name, kind in TRIAGE_COLUMNS:
        if kind == "number":
            frame[name] = frame[name].astype(object).where(frame[name].notna(), None)
    return Table(frame[list(TABLE_COLUMNS)], [kinds[name] for name in TABLE_COLUMNS])


def cause_groups(summaries: Sequence[CaseSummary]) -> Table:
    """Cases per top cause, with counts per status, the worst severity and the latest case: a problem
    that many users hit stands out at the top."""
    groups: dict[str, list[CaseSummary]] = {}
    for summary in summaries:
        groups.setdefault(summary.top_cause or NO_CAUSE, []).append(summary)
    rows = []
    for cause, items in groups.items():
        rank = max((SEVERITIES.index(s.severity) for s in items if s.severity in SEVERITIES), default=None)
        rows.append(
            [
                cause,
                len(items),
                *(sum(1 for s in items if s.status == status) for status in STATUSES),
                "" if rank is None else SEVERITIES[rank],
                when_text(max(s.created for s in items)),
            ]
        )
    rows.sort(key=lambda row: (-row[1], row[0] == NO_CAUSE, row[0]))
    frame = pd.DataFrame(rows, columns=[name for name, _ in GROUP_COLUMNS])
    return Table(frame, [kind for _, kind in GROUP_COLUMNS])


# ------------------------------------------------------------------------------------------- filters


def cause_choices() -> list[str]:
    """Cause filter values: any, every rule id of the knowledge base, and "no cause"."""
    return [ANY, *(rule.id for rule in load_rules()), NO_CAUSE]


def read_filters(cause: str | None, severity: str | None, status: str | None) -> CaseFilter:
    """A CaseFilter from the tab's (or an API client's) values; unknown values are an InputError."""
    cause, severity, status = (value or ANY for value in (cause, severity, status))
    if cause not in cause_choices():
        raise InputError(say("triage.unknown-cause"), expected=say("triage.rule-id"))
    if severity and severity not in SEVERITIES:
        raise InputError(say("triage.unknown-severity"), expected=", ".join(SEVERITIES))
    if status and status not in STATUSES:
        raise InputError(say("triage.unknown-status"), expected=" / ".join(STATUSES))
    return CaseFilter(top_cause=cause or None, severity=severity or None, status=status or None)


def read_limit(limit: float | None, default: int = 200) -> int:
    """How many cases to list: a positive whole number (default when empty)."""
    if limit is None:
        return default
    if not math.isfinite(limit) or limit < 1 or int(limit) != limit:  # NaN and inf first: int() raises
        raise InputError(say("triage.limit-positive"))
    return int(limit)


def selection(row: Sequence[object] | None) -> tuple[str, str, str]:
    """(case id, status, note) of a clicked triage row, so staff can open or annotate that case."""
    if not row or len(row) != len(TABLE_COLUMNS):
        return "", STATUSES[0], ""
    values = dict(zip(TABLE_COLUMNS, row, strict=True))
    status = str(values["status"]) if values["status"] in STATUSES else STATUSES[0]
    return str(values["case"] or ""), status, str(values["note"] or "")


# ------------------------------------------------------------------------------------------ reopening


def case_report(case: Case) -> Report:
    """The stored report with its chain figure, ready for the app's result views. A submission that was
    not diagnosed, or a report of another schema version, is an InputError saying so."""
    if case.report is None:
        reason = case.summary.message or say("triage.no-reason")
        raise InputError(say("triage.not-diagnosed", kind=case.summary.kind, reason=reason))
    version = case.report.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InputError(say("triage.other-schema", version=version, ours=SCHEMA_VERSION))
    figure = None if case.figure is None else plotly.io.from_json(case.figure)
    figures = {lang: plotly.io.from_json(kept) for lang, kept in case.figures.items()}
    try:
        return Report.from_dict(case.report, figure, case.translations, figures)
    except ValidationError as error:
        raise InputError(
            say("triage.bad-stored", ours=SCHEMA_VERSION, n=error.error_count(), at=_location(error))
        ) from None


def _location(error: ValidationError) -> str:
    """Where the first problem of a stored report is, as a dotted path (causes.0.id)."""
    return ".".join(str(part) for part in error.errors()[0]["loc"]) or "the top level"


def saved_banner(case_id: str, lang: str, retention_days: int) -> str:
    """The Markdown line above a new result: its case id and how long the link works."""
    key = "case_saved" if retention_days > 0 else "case_saved_forever"
    return t(key, lang, case=md_code(case_id), days=retention_days)


def reopened_banner(summary: CaseSummary, lang: str, staff: bool = False) -> str:
    """The Markdown line above a reopened result: case id and when it was created; for staff also the
    triage status and note (staff's own words about the customer: never shown to anyone else)."""
    if not staff:
        return t(
            "case_reopened_public",
            lang,
            case=md_code(summary.case_id),
            when=md_text(when_text(summary.created)),
        )
    return t(
        "case_reopened",
        lang,
        case=md_code(summary.case_id),
        when=md_text(when_text(summary.created)),
        status=md_text(summary.status),
        note=md_text(summary.note) if summary.note else "—",
    )


# ------------------------------------------------------------------------------- what the app calls


def given_source(given: Given, names: Mapping[str, str] | None = None) -> str:
    """'baseline: train_run · target: infer_run': each input by the box the user put it in, named as the
    user knows it (`names`: a folder's name by box, else the archive or file name, or how many files)."""
    named = names or {}
    parts = []
    for role, value in given:
        if not value:
            continue
        name = named.get(role) or display_name(value)
        parts.append(f"{role}: {name}")
    return " · ".join(parts)


def record_case(
    book: CaseBook,
    report: Report,
    given: Given,
    base_url: str | None,
    *,
    names: Mapping[str, str] | None = None,
    example: bool = False,
) -> tuple[str, str]:
    """Keep a fresh diagnosis as a case: (banner Markdown, link). A storage failure does not hide the
    diagnosis: the banner says the case was not saved and the link is empty. The case lists its inputs
    by the boxes they were given in (a lone run in the Baseline box is the baseline), as given_source."""
    try:
        case_id = book.record(report, given=given, source=given_source(given, names), example=example)
    except InputError as error:
        LOG.warning("case not saved: %s", error.message)
        return t("case_not_saved", report.lang, error=md_text(error.message)), ""
    return saved_banner(case_id, report.lang, book.retention_days), book.link(case_id, base_url)


def record_failure(
    book: CaseBook,
    given: Given,
    error_line: str,
    *,
    names: Mapping[str, str] | None = None,
    example: bool = False,
) -> None:
    """Keep a diagnosis that failed as a case of kind "error" with its error line, so support sees it in
    the triage list; a storage failure is only logged (the user already reads the error)."""
    try:
        book.record(None, given=given, source=given_source(given, names), kind="error", message=error_line,
                    example=example)  # fmt: skip
    except InputError as error:
        LOG.warning("failed diagnosis not saved: %s", error.message)


def reopen_case(
    book: CaseBook, raw_id: object, lang: str, base_url: str | None, *, staff: bool = False
) -> tuple[Report, str, str]:
    """The report of a case link: (report, banner Markdown, link); the banner carries the triage status
    and note only for `staff`. InputError for a malformed, unknown or undiagnosed case."""
    case = book.open(raw_id)
    report = case_report(case).in_lang(lang)  # the viewer's language when the case kept it
    link = book.link(case.summary.case_id, base_url)
    return report, reopened_banner(case.summary, lang, staff), link


def list_cases(
    book: CaseBook, cause: str | None, severity: str | None, status: str | None, limit: float | None
) -> tuple[Table, Table]:
    """The triage table and the counts per top cause for the tab's filters."""
    summaries = book.list(read_filters(cause, severity, status), read_limit(limit))
    return triage_table(summaries), cause_groups(summaries)


def save_case(book: CaseBook, raw_id: object, status: str, note: str | None, lang: str) -> str:
    """Set a case's status and note; returns the confirmation line (Markdown, escaped)."""
    summary = book.update(raw_id, note=note or "", status=status)
    return t("case_updated", lang, case=md_code(summary.case_id), status=md_text(summary.status))


def delete_case(book: CaseBook, raw_id: object, lang: str) -> str:
    """Delete a case; returns the confirmation line."""
    book.delete(raw_id)
    return t("case_deleted", lang, case=md_code(str(raw_id).strip()))


def attach_after(book: CaseBook, raw_id: object, after: Source, lang: str) -> str:
    """Give a case its after-the-fix run: diagnose the case's kept baseline and target archives (and
    model) again with `after`, store that report on the case; returns the confirmation line. A case whose
    uploads were not kept (PERF_DOCTOR_CASE_KEEP_UPLOADS off) is an InputError saying so."""
    case = book.open(raw_id)
    kept = {role: name for role, name, _ in case.uploads}
    if not {"baseline", "target"} <= set(kept):
        raise InputError(say("triage.no-kept"), expected=say("triage.kept-expected"))
    case_id = case.summary.case_id
    with tempfile.TemporaryDirectory(prefix="perf-doctor-after-") as tmp:
        paths = {}
        for role, name in kept.items():
            data = book.store.read_upload(case_id, role, name)
            if data is None:
                raise InputError(say("triage.kept-gone", role=say(f"role.{role}")))
            (Path(tmp) / role).mkdir(mode=0o700)
            paths[role] = Path(tmp) / role / Path(name).name
            paths[role].write_bytes(data)
        first = _first_role(case, kept)
        report = diagnose(
            paths["baseline"],
            paths["target"],
            paths.get("mindir"),
            baseline_role=first,
            lang=lang,
            after=after,
        )
    summary = book.attach_after(case_id, report)
    return t(
        "case_after",
        lang,
        case=md_code(case_id),
        resolved=md_text(summary.resolved or "—"),
        remaining=md_text(summary.remaining or "—"),
    )


def _first_role(case: Case, kept: Mapping[str, str]) -> str:
    """Which kept upload the stored diagnosis took as its baseline ("first" or "second")."""
    inputs = (case.report or {}).get("inputs", [])
    baseline = next((i.get("name") for i in inputs if i.get("role") == "baseline"), None)
    return "second" if baseline == Path(kept["target"]).name != Path(kept["baseline"]).name else "first"

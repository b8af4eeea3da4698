"""What a case is: an id, the JSON report (or why there is none), a one-row summary and staff fields.

The store interface (:class:`CaseStore`) is a Protocol so that a server database can replace the embedded
SQLite one; everything here is plain data shared by every implementation.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypedDict

from core import InputError, JsonObject, say
from doctor.text import one_line

if TYPE_CHECKING:
    from doctor.model import After, Input, Ranks, ReportDocument, RunInfo

Documents = Mapping[str, Mapping[str, object]]  # report documents (JSON data) by language

STATUSES = ("new", "in progress", "answered")
# What a submission turned out to be; the last two have no report.
CASE_KINDS = ("pair", "single", "model", "pair+model", "single+model", "ambiguous", "error")
NO_CAUSE = "(none)"  # filter value: cases whose verdict names no cause
ID_BYTES = 16  # 128 random bits -> 22 URL-safe characters
CASE_ID = re.compile(r"[A-Za-z0-9_-]{22}")
MAX_NOTE_CHARS = 2000
MAX_MESSAGE_CHARS = 2000
_NOTE_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class CaseNotFound(InputError):
    """No case has this id (it was never created, has expired or was deleted)."""

    def __init__(self) -> None:
        super().__init__(
            "no case has this id (it may have expired or been deleted)",
            expected="the link of a recent diagnosis",
        )


def new_case_id() -> str:
    """A fresh unguessable case id (22 URL-safe characters)."""
    return secrets.token_urlsafe(ID_BYTES)


def parse_case_id(raw: object) -> str:
    """The case id in `raw` (from a query string, a form or the CLI), or InputError. The value itself is
    never echoed back, since it may be anything a visitor typed."""
    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        raise InputError(say("case.no-id"), expected=say("case.id-expected"))
    if not CASE_ID.fullmatch(text):
        raise InputError(say("case.not-id"), expected=say("case.id-expected"))
    return text


def clean_note(note: object) -> str:
    """A staff note as stored: text without control characters (line breaks kept), at most MAX_NOTE_CHARS."""
    if not isinstance(note, str):
        raise InputError(say("case.note-text"))
    text = _NOTE_CONTROL.sub("", note.replace("\r\n", "\n")).strip()
    if len(text) > MAX_NOTE_CHARS:
        raise InputError(say("case.note-long", n=len(text)), expected=say("case.at-most", n=MAX_NOTE_CHARS))
    return text


def check_status(status: object) -> str:
    """`status` if it is one of STATUSES, else InputError listing them."""
    if status not in STATUSES:
        raise InputError(say("case.unknown-status"), expected=" / ".join(STATUSES))
    return str(status)


@dataclass(frozen=True)
class Upload:
    """A copy of one uploaded archive or model kept with a case (only when the operator turns it on)."""

    role: str  # baseline / target / mindir / submission
    name: str
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class CaseMeta:
    """What the caller knows about a case besides the report."""

    source: str = ""  # the inputs as the user named them; derived from the report when empty
    kind: str | None = None  # None: from the report; "ambiguous" / "error" when there is no report
    message: str = ""  # why there is no report, or how the inputs were understood
    figure: str | None = None  # the fusion-chain figure as plotly JSON (it is not part of the report)
    uploads: tuple[Upload, ...] = ()
    created: datetime | None = None  # default: now
    translations: Documents = field(default_factory=dict)  # the report by other language
    example: bool = False  # a run of a bundled example (kept apart from the users' submissions)
    figures: Mapping[str, str] = field(default_factory=dict)  # the chain figure by other language (JSON)


@dataclass(frozen=True)
class CaseSummary:
    """One row of the triage table."""

    case_id: str
    created: datetime  # UTC
    updated: datetime  # UTC
    source: str
    kind: str
    layouts: str
    verdict: str
    top_cause: str | None
    severity: str | None
    confidence: float | None
    recoverable_ms: float | None
    status: str
    note: str
    message: str
    resolved: str = ""  # after the fix: the causes resolved, comma-separated ("" without an after run)
    remaining: str = ""  # the causes still found ("id (worse)" when their time grew)
    gain_ms: float | None = None  # measured gain per step (target minus after)
    predicted_gain_ms: float | None = None  # the gain the diagnosis predicted
    ranks: int | None = None  # how many ranks (devices) the profiles hold (None: no profile)
    example: bool = False  # a run of a bundled example


@dataclass(frozen=True)
class Case:
    """A stored case: its summary, the JSON report (None when the submission was not diagnosed), the
    chain figure and the names of the kept uploads."""

    summary: CaseSummary
    report: JsonObject | None  # as stored: JSON data
    figure: str | None = None
    uploads: tuple[tuple[str, str, int], ...] = ()  # (role, name, size in bytes)
    translations: Documents = field(default_factory=dict)  # the report by other language
    figures: Mapping[str, str] = field(default_factory=dict)  # the chain figure by other language (JSON)


@dataclass(frozen=True)
class CaseFilter:
    """Which cases to list; None (or "") means any. `top_cause` NO_CAUSE selects cases without a cause."""

    top_cause: str | None = None
    severity: str | None = None
    status: str | None = None
    examples: bool = False  # True: the runs of bundled examples instead of the users' submissions


class CaseStore(Protocol):
    """Where cases are kept. Implementations must be safe to use from several threads and processes."""

    def put(self, report: Mapping[str, object] | None, meta: CaseMeta) -> str:
        """Store a new case; returns its id."""
        ...

    def get(self, case_id: str) -> Case | None:
        """The case, or None when there is none with this id."""
        ...

    def list(self, filters: CaseFilter | None = None, limit: int = 200) -> list[CaseSummary]:
        """Summaries of matching cases, newest first."""
        ...

    def update(self, case_id: str, *, note: str | None = None, status: str | None = None) -> CaseSummary:
        """Change the staff fields given; CaseNotFound for an unknown id."""
        ...

    def replace_report(
        self,
        case_id: str,
        report: Mapping[str, object],
        translations: Documents | None = None,
    ) -> CaseSummary:
        """Store a new report for a case (its diagnosis with the after run) and the summary it gives;
        CaseNotFound for an unknown id."""
        ...

    def delete(self, case_id: str) -> bool:
        """Remove a case and its uploads; False when there was none."""
        ...

    def purge_older_than(self, cutoff: datetime) -> int:
        """Remove every case created before `cutoff`; returns how many."""
        ...

    def read_upload(self, case_id: str, role: str, name: str) -> bytes | None:
        """The bytes of one kept upload, or None."""
        ...


class AfterFacts(TypedDict):
    """The triage columns of a report's after section (after_facts)."""

    resolved: str  # the resolved causes' ids, joined by ", "
    remaining: str
    gain_ms: float | None
    predicted_gain_ms: float | None


class VerdictFacts(AfterFacts):
    """The triage columns a report's verdict and top cause determine, with its after section's."""

    kind: str
    layouts: str
    verdict: str
    top_cause: str | None
    severity: str | None
    confidence: float | None  # in [0, 1]
    recoverable_ms: float | None
    ranks: int | None


class ReportFacts(VerdictFacts):
    """The triage columns a report determines (summarize)."""

    source: str


def summarize(report: ReportDocument | None) -> ReportFacts:
    """The triage columns a report determines: kind, layouts, verdict, top cause with its severity and
    confidence, recoverable time and the input names. Empty values without a report."""
    if report is None:
        return {
            "source": "",
            "kind": "error",
            "layouts": "",
            "verdict": "",
            "top_cause": None,
            "severity": None,
            "confidence": None,
            "recoverable_ms": None,
            "ranks": None,
            **after_facts(None),
        }
    verdict = report.verdict
    top = verdict.top_cause
    cause = next((c for c in report.causes if c.id == top), None)
    return {
        "source": _source(report.inputs),
        "kind": report_kind(report),
        "layouts": ", ".join([*_layouts(report.inputs), *_rank_facts(report.ranks)]),
        "verdict": one_line(verdict.text),
        "top_cause": top,
        "severity": None if cause is None else cause.severity,
        "confidence": None if cause is None else cause.confidence,
        "recoverable_ms": verdict.recoverable_ms_per_step,
        "ranks": rank_count(report.runs),
        **after_facts(report.after),
    }


def _rank_facts(ranks: Ranks | None) -> list[str]:
    """Triage facts of a multi-rank report: each job's rank count and slow rank, e.g. `target: 8 ranks,
    slow rank 5` (nothing for one-rank inputs)."""
    facts = []
    for job in [] if ranks is None else ranks.jobs:
        slow = job.slow_rank
        text = f"{job.role}: {job.ranks} ranks"
        facts.append(text + (f", slow rank {slow.rank}" if slow else ""))
    return facts


def rank_count(runs: Sequence[RunInfo]) -> int | None:
    """How many ranks the runs' profiles hold (the most of any run); None without a profile run."""
    counts = [len(run.ranks_available or [run.rank]) for run in runs]
    return max(counts) if counts else None


def after_facts(after: After | None) -> AfterFacts:
    """The triage columns of a report's after section: resolved and remaining causes, measured and
    predicted gain (empty without an after run)."""
    if after is None:
        return {"resolved": "", "remaining": "", "gain_ms": None, "predicted_gain_ms": None}
    causes = after.causes
    left = [c for c in causes if c.status != "resolved"]
    remaining = [f"{c.id} (worse)" if c.status == "worse" else str(c.id) for c in left]
    return {
        "resolved": ", ".join(str(c.id) for c in causes if c.status == "resolved"),
        "remaining": ", ".join(remaining),
        "gain_ms": after.gain_ms_per_step,
        "predicted_gain_ms": after.predicted_gain_ms_per_step,
    }


def report_kind(report: ReportDocument) -> str:
    """pair / single / model, with "+model" when a MINDIR came with the profiles."""
    kind = {"pair": "pair", "single": "single", "mindir": "model"}.get(report.kind, "error")
    with_model = any(item.kind == "mindir" for item in report.inputs)
    return f"{kind}+model" if with_model and kind in ("pair", "single") else kind


def _layouts(inputs: Sequence[Input]) -> list[str]:
    """Distinct profile layouts in input order, then "mindir" when a model was given."""
    found: list[str] = []
    for item in inputs:
        layout = "mindir" if item.kind == "mindir" else item.layout
        if layout and layout not in found:
            found.append(str(layout))
    return sorted(found, key=lambda name: name == "mindir")


def _source(inputs: Sequence[Input]) -> str:
    """'baseline: a.zip · target: 12 files · mindir: net.mindir'."""
    return " · ".join(f"{item.role}: {one_line(item.name)}" for item in inputs)

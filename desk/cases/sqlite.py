"""The embedded case store: one SQLite file in WAL mode, shared safely by threads and processes.

Every operation opens its own connection (with a busy timeout), so no connection crosses a thread, and
writes take the write lock up front (BEGIN IMMEDIATE) so two writers queue instead of deadlocking. SQL is
parameterised throughout. In WAL mode with synchronous=NORMAL a power cut may lose the last commits but
never corrupts the file. Reports and figures are stored as zlib-compressed JSON; deleted rows are
overwritten (secure_delete) so that a deleted case does not linger in free pages.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import InputError, say
from desk.cases.model import (
    MAX_MESSAGE_CHARS,
    NO_CAUSE,
    Case,
    CaseFilter,
    CaseMeta,
    CaseNotFound,
    CaseSummary,
    Documents,
    check_status,
    clean_note,
    new_case_id,
    summarize,
)
from doctor.text import one_line

if TYPE_CHECKING:
    from doctor.model import ReportDocument

# 2: the after-the-fix columns (resolved, remaining, gain_ms, predicted_gain_ms); 3: ranks, example;
# 4: figures (the chain figure in the other languages)
SCHEMA_VERSION = 4
SCHEMA = """
CREATE TABLE IF NOT EXISTS cases (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    layouts TEXT NOT NULL,
    verdict TEXT NOT NULL,
    top_cause TEXT,
    severity TEXT,
    confidence REAL,
    recoverable_ms REAL,
    status TEXT NOT NULL DEFAULT 'new',
    note TEXT NOT NULL DEFAULT '',
    message TEXT NOT NULL DEFAULT '',
    report BLOB,
    figure BLOB,
    resolved TEXT NOT NULL DEFAULT '',
    remaining TEXT NOT NULL DEFAULT '',
    gain_ms REAL,
    predicted_gain_ms REAL
);
CREATE INDEX IF NOT EXISTS cases_created ON cases (created);
CREATE INDEX IF NOT EXISTS cases_top_cause ON cases (top_cause);
CREATE TABLE IF NOT EXISTS uploads (
    case_id TEXT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    name TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (case_id, role, name)
);
"""
# Columns added after schema 1, with their declarations: a version-1 file gains them when opened.
ADDED_COLUMNS = (
    ("resolved", "TEXT NOT NULL DEFAULT ''"),
    ("remaining", "TEXT NOT NULL DEFAULT ''"),
    ("gain_ms", "REAL"),
    ("predicted_gain_ms", "REAL"),
    ("translations", "BLOB"),  # the report in the other languages: {lang: report}, compressed JSON
    ("ranks", "INTEGER"),  # how many ranks (devices) the profiles hold
    ("example", "INTEGER NOT NULL DEFAULT 0"),  # 1: a run of a bundled example, not a user's submission
    ("figures", "BLOB"),  # the chain figure in the other languages: {lang: plotly JSON}, compressed JSON
)
AFTER_FIELDS = ("resolved", "remaining", "gain_ms", "predicted_gain_ms")
REPORT_FIELDS = (*AFTER_FIELDS, "ranks")  # the added columns a report determines
# (SQL column, CaseSummary field) in the order every summary query selects them
_SUMMARY = (
    ("id", "case_id"),
    *((name, name) for name in ("created", "updated", "source", "kind", "layouts", "verdict", "top_cause")),
    *((name, name) for name in ("severity", "confidence", "recoverable_ms", "status", "note", "message")),
    *((name, name) for name in REPORT_FIELDS),
    ("example", "example"),
)
SUMMARY_COLUMNS = ", ".join(column for column, _ in _SUMMARY)
SUMMARY_FIELDS = tuple(name for _, name in _SUMMARY)
MAX_LIST = 5000
DB_HINT = "PERF_DOCTOR_CASE_DB"


class SqliteCaseStore:
    """CaseStore on one SQLite file (created with its folder, owner-only, on first use)."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        _create_file(self.path)
        self._initialise()

    # ---------------------------------------------------------------------------------- connections

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A fresh connection for one operation; SQLite errors become one clear InputError."""
        try:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
        except sqlite3.Error as error:
            raise InputError(say("case.db-open", reason=error), path=DB_HINT) from None
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA secure_delete = ON")
            conn.execute("PRAGMA synchronous = NORMAL")  # with WAL: durable at checkpoints, never corrupt
            yield conn
        except sqlite3.DatabaseError as error:
            raise InputError(say("case.db-failed", reason=error), path=DB_HINT) from None
        finally:
            conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A connection inside a write transaction, committed on success and rolled back on error."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _initialise(self) -> None:
        """WAL mode (persistent in the file), the tables, and a check that the schema is one we know."""
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode = WAL")
        with self._write() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise InputError(say("case.db-newer", version=version, ours=SCHEMA_VERSION), path=DB_HINT)
            for statement in filter(str.strip, SCHEMA.split(";")):
                conn.execute(statement)
            present = {row[1] for row in conn.execute("PRAGMA table_info(cases)")}
            for name, declaration in ADDED_COLUMNS:  # fixed names and declarations, no user text
                if name not in present:
                    conn.execute(f"ALTER TABLE cases ADD COLUMN {name} {declaration}")
            if version < SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")

    # ------------------------------------------------------------------------------------ operations

    def put(self, report: Mapping[str, object] | None, meta: CaseMeta) -> str:
        """Store a new case (the report as compressed JSON); returns its new id. The summary columns are
        said in English whatever language the report was made in (the triage list is one list)."""
        facts = summarize(english(report, meta.translations))
        created = (meta.created or datetime.now(timezone.utc)).timestamp()
        row = (
            created,
            created,
            one_line(meta.source or facts["source"]),
            meta.kind or facts["kind"],
            facts["layouts"],
            facts["verdict"],
            facts["top_cause"],
            facts["severity"],
            facts["confidence"],
            facts["recoverable_ms"],
            one_line(meta.message)[:MAX_MESSAGE_CHARS],
            None if report is None else _pack(report),
            None if meta.figure is None else zlib.compress(meta.figure.encode("utf-8")),
            *(facts[name] for name in AFTER_FIELDS),
            _pack(dict(meta.translations)) if meta.translations else None,
            facts["ranks"],
            int(meta.example),
            _pack(dict(meta.figures)) if meta.figures else None,
        )
        with self._write() as conn:
            case_id = self._insert(conn, row)
            conn.executemany(
                "INSERT INTO uploads (case_id, role, name, data) VALUES (?, ?, ?, ?)",
                [(case_id, up.role, up.name, up.data) for up in meta.uploads],
            )
        return case_id

    @staticmethod
    def _insert(conn: sqlite3.Connection, row: tuple[Any, ...]) -> str:
        """Insert under a fresh id; a (practically impossible) id collision draws another one."""
        for _ in range(3):
            case_id = new_case_id()
            try:
                conn.execute(
                    "INSERT INTO cases (id, created, updated, source, kind, layouts, verdict, top_cause, "
                    "severity, confidence, recoverable_ms, message, report, figure, "
                    "resolved, remaining, gain_ms, predicted_gain_ms, translations, ranks, example, figures) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (case_id, *row),
                )
                return case_id
            except sqlite3.IntegrityError:
                continue
        raise RuntimeError("could not draw an unused case id")

    def get(self, case_id: str) -> Case | None:
        """The case with its report and figure, or None."""
        with self._connect() as conn:
            found = conn.execute(
                f"SELECT {SUMMARY_COLUMNS}, report, figure, translations, figures FROM cases WHERE id = ?",
                (case_id,),
            ).fetchone()
            if found is None:
                return None
            uploads = conn.execute(
                "SELECT role, name, length(data) FROM uploads WHERE case_id = ? ORDER BY role, name",
                (case_id,),
            ).fetchall()
        report, figure, translations, figures = found[-4:]
        return Case(
            summary=_summary(found[:-4]),
            report=None if report is None else json.loads(zlib.decompress(report)),
            figure=None if figure is None else zlib.decompress(figure).decode("utf-8"),
            uploads=tuple((role, name, int(size)) for role, name, size in uploads),
            translations={} if translations is None else json.loads(zlib.decompress(translations)),
            figures={} if figures is None else json.loads(zlib.decompress(figures)),
        )

    def list(self, filters: CaseFilter | None = None, limit: int = 200) -> list[CaseSummary]:
        """Summaries of the matching cases, newest first, at most `limit` (capped at MAX_LIST)."""
        where, params = _where(filters or CaseFilter())
        limit = max(1, min(int(limit), MAX_LIST))
        with self._connect() as conn:
            rows = conn.execute(
                f"SELECT {SUMMARY_COLUMNS} FROM cases{where} ORDER BY created DESC, id LIMIT ?",
                (*params, limit),
            ).fetchall()
        return [_summary(row) for row in rows]

    def update(self, case_id: str, *, note: str | None = None, status: str | None = None) -> CaseSummary:
        """Set the note and/or status of a case; CaseNotFound when it does not exist."""
        note = None if note is None else clean_note(note)
        status = None if status is None else check_status(status)
        with self._write() as conn:
            changed = conn.execute(
                "UPDATE cases SET note = COALESCE(?, note), status = COALESCE(?, status), updated = ? "
                "WHERE id = ?",
                (note, status, time.time(), case_id),
            ).rowcount
            if not changed:
                raise CaseNotFound()
            row = conn.execute(f"SELECT {SUMMARY_COLUMNS} FROM cases WHERE id = ?", (case_id,)).fetchone()
        return _summary(row)

    def replace_report(
        self,
        case_id: str,
        report: Mapping[str, object],
        translations: Documents | None = None,
    ) -> CaseSummary:
        """Store a case's new report (its diagnosis with the after run), its translations (the old ones
        are dropped) and every summary column it determines; the staff fields stay. CaseNotFound for an
        unknown id."""
        facts = summarize(english(report, translations))
        columns = ("verdict", "top_cause", "severity", "confidence", "recoverable_ms", *REPORT_FIELDS)
        assignments = ", ".join(f"{name} = ?" for name in columns)  # fixed names only
        with self._write() as conn:
            changed = conn.execute(
                f"UPDATE cases SET {assignments}, report = ?, translations = ?, updated = ? WHERE id = ?",
                (
                    *(dict(facts)[name] for name in columns),
                    _pack(report),
                    _pack(dict(translations)) if translations else None,
                    time.time(),
                    case_id,
                ),
            ).rowcount
            if not changed:
                raise CaseNotFound()
            row = conn.execute(f"SELECT {SUMMARY_COLUMNS} FROM cases WHERE id = ?", (case_id,)).fetchone()
        return _summary(row)

    def delete(self, case_id: str) -> bool:
        """Remove a case and its uploads; False when there was none."""
        with self._write() as conn:
            return conn.execute("DELETE FROM cases WHERE id = ?", (case_id,)).rowcount > 0

    def purge_older_than(self, cutoff: datetime) -> int:
        """Remove the cases created before `cutoff` (aware datetime); returns how many."""
        with self._write() as conn:
            return conn.execute("DELETE FROM cases WHERE created < ?", (cutoff.timestamp(),)).rowcount

    def read_upload(self, case_id: str, role: str, name: str) -> bytes | None:
        """The bytes of one kept upload, or None."""
        with self._connect() as conn:
            found = conn.execute(
                "SELECT data FROM uploads WHERE case_id = ? AND role = ? AND name = ?", (case_id, role, name)
            ).fetchone()
        return None if found is None else bytes(found[0])


def _create_file(path: Path) -> None:
    """Create the database file (mode 0600) and its folder (0700) if missing; a folder is refused."""
    if path.is_dir():
        raise InputError(
            say("case.db-is-folder"), path=f"{DB_HINT} ({path.name})", expected=say("case.db-path")
        )
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    except OSError as error:
        raise InputError(say("case.db-create", reason=error.strerror), path=DB_HINT) from None


def _pack(report: Mapping[str, object]) -> bytes:
    """The report as compressed JSON (NaN refused: the report is valid JSON by construction)."""
    return zlib.compress(json.dumps(report, ensure_ascii=False, allow_nan=False).encode("utf-8"))


def _where(filters: CaseFilter) -> tuple[str, tuple[Any, ...]]:
    """A WHERE clause of fixed fragments and its parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if filters.top_cause == NO_CAUSE:
        clauses.append("top_cause IS NULL")
    elif filters.top_cause:
        clauses.append("top_cause = ?")
        params.append(filters.top_cause)
    if filters.severity:
        clauses.append("severity = ?")
        params.append(filters.severity)
    if filters.status:
        clauses.append("status = ?")
        params.append(filters.status)
    clauses.append("example = ?")  # the runs of bundled examples are listed apart from submissions
    params.append(int(filters.examples))
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


def english(report: Mapping[str, object] | None, translations: Documents | None) -> ReportDocument | None:
    """The English document of a stored report (the report itself when it is English or has no
    translation), read as the typed model: the summary columns come from it."""
    if report is None:
        return None
    from doctor.model import ReportDocument

    data = report if report.get("lang", "en") == "en" else (translations or {}).get("en", report)
    return ReportDocument.model_validate(data)


def _summary(row: tuple[Any, ...]) -> CaseSummary:
    """A CaseSummary from a row in SUMMARY_COLUMNS order."""
    values = dict(zip(SUMMARY_FIELDS, row, strict=True))
    values["example"] = bool(values["example"])
    for moment in ("created", "updated"):
        values[moment] = datetime.fromtimestamp(values[moment], timezone.utc)
    return CaseSummary(**values)

"""The case book the app and the CLI use: a CaseStore plus the operator's policies.

It validates ids coming from outside, applies the retention period (on opening and at most hourly after),
keeps size-capped copies of uploaded archives only when the operator turned that on (never an extracted
tree, never loose folder files), and builds the link that reopens a case.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from core import InputError, say
from desk.cases.model import (
    Case,
    CaseFilter,
    CaseMeta,
    CaseNotFound,
    CaseStore,
    CaseSummary,
    Upload,
    parse_case_id,
)
from desk.cases.sqlite import SqliteCaseStore
from diagnosis import Source, archive_kind
from doctor.config import AppConfig
from doctor.report import Report

PURGE_EVERY_S = 3600.0
Given = Sequence[tuple[str, Source | None]]  # (role, what the user gave: a path, a list of paths or None)


class CaseBook:
    """Cases with retention, optional kept uploads and links."""

    def __init__(
        self,
        store: CaseStore,
        *,
        retention_days: int = 30,
        keep_uploads: bool = False,
        upload_max_bytes: int = 50 * 1024**2,
        public_url: str | None = None,
    ) -> None:
        self.store = store
        self.retention_days = retention_days
        self.keep_uploads = keep_uploads
        self.upload_max_bytes = upload_max_bytes
        self.public_url = public_url
        self._last_purge = float("-inf")
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: AppConfig, path: str | os.PathLike[str] | None = None) -> CaseBook:
        """The book of `config` (or of the database at `path`), expired cases already purged."""
        where = path or config.case_db or private_database()
        book = cls(
            SqliteCaseStore(where),
            retention_days=config.case_retention_days,
            keep_uploads=config.keep_uploads,
            upload_max_bytes=config.upload_max_bytes,
            public_url=config.public_url,
        )
        book.purge_expired()
        return book

    # ---------------------------------------------------------------------------------------- writes

    def record(
        self,
        report: Report | None,
        *,
        given: Given = (),
        source: str = "",
        kind: str | None = None,
        message: str = "",
        figure: str | None = None,
        example: bool = False,
    ) -> str:
        """Keep a diagnosis (or, with `report` None, a submission that could not be diagnosed, with
        `kind` and `message` saying why); returns the new case id. `figure` is the chain figure as
        plotly JSON when the report object no longer carries it; `example` marks a run of a bundled
        example (listed apart from the users' submissions)."""
        self.purge_due()
        if figure is None and report is not None and report.chain_figure is not None:
            figure = report.chain_figure.to_json()
        meta = CaseMeta(
            source=source,
            kind=kind,
            message=message,
            figure=figure,
            uploads=self.kept_uploads(given),
            translations={} if report is None else report.translation_data(),
            figures={} if report is None else report.figure_data(),
            example=example,
        )
        return self.store.put(None if report is None else report.to_dict(), meta)

    def update(self, raw_id: object, *, note: str | None = None, status: str | None = None) -> CaseSummary:
        """Set the note and/or status of the case `raw_id` names."""
        return self.store.update(parse_case_id(raw_id), note=note, status=status)

    def attach_after(self, raw_id: object, report: Report) -> CaseSummary:
        """Give the case `raw_id` names its after-the-fix run: `report` is the diagnosis of the same
        baseline and target with the after run (it replaces the stored one). InputError when it has no
        after section or is a diagnosis of other inputs."""
        case = self.open(raw_id)
        if report.document.after is None:
            raise InputError(say("case.no-after"), expected=say("case.with-after"))
        if case.report is None or _profiles(case.report) != _profiles(report.to_dict()):
            raise InputError(say("case.other-profiles"), expected=say("case.same-profiles"))
        return self.store.replace_report(case.summary.case_id, report.to_dict(), report.translation_data())

    def delete(self, raw_id: object) -> None:
        """Remove a case; CaseNotFound when there is none."""
        if not self.store.delete(parse_case_id(raw_id)):
            raise CaseNotFound()

    # ----------------------------------------------------------------------------------------- reads

    def open(self, raw_id: object) -> Case:
        """The case `raw_id` names; InputError for a malformed id, CaseNotFound for an unknown or expired
        one."""
        case_id = parse_case_id(raw_id)
        self.purge_due()
        case = self.store.get(case_id)
        if case is None:
            raise CaseNotFound()
        return case

    def list(self, filters: CaseFilter | None = None, limit: int = 200) -> list[CaseSummary]:
        """Recent cases matching `filters`, newest first."""
        self.purge_due()
        return self.store.list(filters, limit)

    def link(self, case_id: str, base_url: str | None) -> str:
        """The link that reopens a case: the configured public URL, else the URL the request came to,
        else a relative one."""
        base = (self.public_url or base_url or "").rstrip("/")
        return f"{base}/?case={quote(case_id, safe='')}" if base else f"?case={quote(case_id, safe='')}"

    # ------------------------------------------------------------------------------------- retention

    def purge_expired(self, now: datetime | None = None) -> int:
        """Remove the cases older than the retention period (none when it is 0); returns how many."""
        with self._lock:
            self._last_purge = time.monotonic()
        if self.retention_days <= 0:
            return 0
        moment = now or datetime.now(timezone.utc)
        return self.store.purge_older_than(moment - timedelta(days=self.retention_days))

    def purge_due(self) -> int:
        """Purge when the last purge is more than an hour old (a running app purges periodically)."""
        with self._lock:
            due = time.monotonic() - self._last_purge >= PURGE_EVERY_S
        return self.purge_expired() if due else 0

    # --------------------------------------------------------------------------------------- uploads

    def kept_uploads(self, given: Given) -> tuple[Upload, ...]:
        """Copies of the uploaded archives and models to keep, within the size cap; nothing unless the
        operator turned keeping on. Loose folder files are not kept (they are not an archive)."""
        if not self.keep_uploads:
            return ()
        kept: list[Upload] = []
        budget = self.upload_max_bytes
        for role, value in given:
            path = _single_file(value)
            if path is None or not _is_archive_or_model(path):
                continue
            size = path.stat().st_size
            if size > budget:
                continue
            kept.append(Upload(role=role, name=path.name, data=path.read_bytes()))
            budget -= size
        return tuple(kept)


def _profiles(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(role, name) of a report's baseline and target inputs."""
    return [
        (i.get("role"), i.get("name"))
        for i in report.get("inputs", [])
        if i.get("role") in ("baseline", "target")
    ]


def _single_file(value: object) -> Path | None:
    """The one file a user gave for a role (a path, or a list of exactly one path), else None."""
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            return None
        value = value[0]
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        return None
    path = Path(value)
    return path if path.is_file() else None


def _is_archive_or_model(path: Path) -> bool:
    """A .mindir, or a file whose first bytes are a zip/tar/gzip signature."""
    if path.suffix.lower() == ".mindir":
        return True
    try:
        return archive_kind(path) is not None
    except InputError:
        return False


def private_database() -> Path:
    """A database file in a fresh private temporary folder (0700), removed when the process exits: the
    store used when no path is configured, so cases live as long as the app."""
    folder = Path(tempfile.mkdtemp(prefix="perf-doctor-cases-"))
    os.chmod(folder, 0o700)
    atexit.register(shutil.rmtree, folder, True)
    return folder / "cases.sqlite3"

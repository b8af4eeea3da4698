"""App settings from environment variables, read in this one place (Space variables and secrets arrive
as environment variables).

- PERF_DOCTOR_USERS        optional login: "user:password,user2:password2" (set it as a Space secret)
- PERF_DOCTOR_MAX_FILE_SIZE  largest upload, e.g. "500mb" (Gradio's size syntax; default 500mb)
- PERF_DOCTOR_CONCURRENCY  analyses that run at the same time (default 2)
- PERF_DOCTOR_QUEUE_SIZE   requests that may wait in the queue (default 16)

Cases (every diagnosis is kept as a case that a link reopens; see desk.cases):

- PERF_DOCTOR_CASE_DB      SQLite file of the cases (default: $XDG_DATA_HOME/perf-doctor/cases.sqlite3, else
                           ~/.local/share/perf-doctor/cases.sqlite3; with no home directory known, a private
                           temporary file removed at exit). On Hugging Face Spaces point it at /data/...
- PERF_DOCTOR_CASE_RETENTION_DAYS  days a case is kept (default 30; 0 keeps cases until deleted)
- PERF_DOCTOR_CASE_KEEP_UPLOADS    "on" also keeps a copy of uploaded archives and models (default off)
- PERF_DOCTOR_CASE_UPLOAD_MAX      largest upload copy kept per case (default 50mb)
- PERF_DOCTOR_TRIAGE       the staff Triage tab: "auto" (default; on only behind a login), "on" or "off"
- PERF_DOCTOR_STAFF        optional: the logged-in users allowed to triage, "alice,bob" (default: every user)
- PERF_DOCTOR_PUBLIC_URL   optional base URL of case links (default: the URL the browser used)

The archive budgets (members, bytes, ratio) are diagnosis.limits' PERF_DOCTOR_MAX_* variables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core import InputError, say

SIZE_PATTERN = re.compile(r"^(\d+)\s*(b|kb|mb|gb|tb)?$", re.IGNORECASE)
SIZE_UNITS = {"b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4}
TRIAGE_MODES = ("auto", "on", "off")
TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
CASE_DB_NAME = ("perf-doctor", "cases.sqlite3")


@dataclass(frozen=True)
class AppConfig:
    """Launch settings sized for a small machine (2 cores)."""

    users: tuple[tuple[str, str], ...] = ()
    max_file_size: str = "500mb"
    concurrency: int = 2
    queue_size: int = 16
    case_db: str | None = None  # None: a private temporary database, removed when the process exits
    case_retention_days: int = 30  # 0: keep until deleted
    keep_uploads: bool = False
    upload_max_bytes: int = 50 * 1024**2
    triage: str = "auto"
    staff: tuple[str, ...] = ()
    public_url: str | None = None

    @property
    def auth(self) -> list[tuple[str, str]] | None:
        """Gradio's `auth=` value: the user list, or None when no login is configured."""
        return list(self.users) or None

    @property
    def triage_enabled(self) -> bool:
        """Whether the app has a Triage tab: listing every case is for staff, so by default only behind a
        login."""
        return self.triage == "on" or (self.triage == "auto" and bool(self.users))

    def may_triage(self, username: str | None) -> bool:
        """Whether this (logged-in) user may list, annotate and delete cases."""
        if not self.triage_enabled:
            return False
        if self.staff:
            return username in self.staff
        return username is not None or not self.users

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AppConfig:
        """Settings from the environment; a malformed value raises InputError naming the variable."""
        env = os.environ if environ is None else environ
        return cls(
            users=parse_users(env.get("PERF_DOCTOR_USERS", "")),
            max_file_size=_size(env.get("PERF_DOCTOR_MAX_FILE_SIZE", "").strip() or cls.max_file_size),
            concurrency=_positive(env, "PERF_DOCTOR_CONCURRENCY", cls.concurrency),
            queue_size=_positive(env, "PERF_DOCTOR_QUEUE_SIZE", cls.queue_size),
            **_case_settings(env),
        )


def parse_users(raw: str) -> tuple[tuple[str, str], ...]:
    """'alice:pw1,bob:pw2' -> (('alice', 'pw1'), ('bob', 'pw2')); passwords may contain ':'."""
    users = []
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        name, sep, password = item.partition(":")
        if not sep or not name.strip() or not password:
            raise InputError(
                say("config.not-user-password"),
                path="PERF_DOCTOR_USERS",
                expected="user:password,user2:password2",
            )
        users.append((name.strip(), password))
    return tuple(users)


def _size(raw: str, name: str = "PERF_DOCTOR_MAX_FILE_SIZE") -> str:
    if not SIZE_PATTERN.match(raw):
        raise InputError(
            say("config.not-size", raw=repr(raw)), path=name, expected=say("config.size-example")
        )
    return raw.replace(" ", "").lower()


def size_bytes(raw: str, name: str) -> int:
    """A size in Gradio's syntax ("50mb", "1gb", "4096") as bytes; InputError naming `name` otherwise."""
    match = SIZE_PATTERN.match(_size(raw.strip(), name))
    assert match is not None  # _size has checked the pattern
    return int(match.group(1)) * SIZE_UNITS[(match.group(2) or "b").lower()]


def default_case_db(env: Mapping[str, str]) -> str | None:
    """Where cases live when PERF_DOCTOR_CASE_DB is not set: the per-user data folder of the environment
    given (XDG_DATA_HOME, else HOME/.local/share), so that case links survive a restart; None when the
    environment names no home folder (then a private temporary database is used)."""
    data_home = env.get("XDG_DATA_HOME", "").strip()
    if data_home and os.path.isabs(data_home):
        return os.path.join(data_home, *CASE_DB_NAME)
    home = env.get("HOME", "").strip()
    if home and os.path.isabs(home):
        return os.path.join(home, ".local", "share", *CASE_DB_NAME)
    return None


def _case_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The case and triage fields of AppConfig from the environment."""
    staff = tuple(name.strip() for name in env.get("PERF_DOCTOR_STAFF", "").split(",") if name.strip())
    triage = env.get("PERF_DOCTOR_TRIAGE", "").strip().lower() or "auto"
    if triage not in TRIAGE_MODES:
        raise InputError(
            say("config.not-triage-mode", raw=repr(triage)),
            path="PERF_DOCTOR_TRIAGE",
            expected=say("config.auto-on-off"),
        )
    if staff and not env.get("PERF_DOCTOR_USERS", "").strip():
        raise InputError(
            say("config.staff-login"), path="PERF_DOCTOR_STAFF", expected=say("config.users-too")
        )
    upload_max = env.get("PERF_DOCTOR_CASE_UPLOAD_MAX", "").strip()
    public_url = env.get("PERF_DOCTOR_PUBLIC_URL", "").strip() or None
    if public_url is not None and not re.match(r"^https?://[^\s/?#]+[^\s?#]*$", public_url):
        raise InputError(say("config.not-url"), path="PERF_DOCTOR_PUBLIC_URL", expected="https://host/path")
    return {
        "case_db": env.get("PERF_DOCTOR_CASE_DB", "").strip() or default_case_db(env),
        "case_retention_days": _whole(env, "PERF_DOCTOR_CASE_RETENTION_DAYS", AppConfig.case_retention_days),
        "keep_uploads": _switch(env, "PERF_DOCTOR_CASE_KEEP_UPLOADS", AppConfig.keep_uploads),
        "upload_max_bytes": size_bytes(upload_max, "PERF_DOCTOR_CASE_UPLOAD_MAX")
        if upload_max
        else AppConfig.upload_max_bytes,
        "triage": triage,
        "staff": staff,
        "public_url": public_url,
    }


def _whole(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise InputError(
            say("config.not-days", raw=repr(raw)), path=name, expected=say("config.days-example")
        )
    return int(raw)


def _switch(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw not in TRUE_WORDS + FALSE_WORDS:
        raise InputError(say("config.not-on-off", raw=repr(raw)), path=name, expected=say("config.on-off"))
    return raw in TRUE_WORDS


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise InputError(
            say("config.not-positive-whole", raw=repr(raw)), path=name, expected=say("config.two-example")
        )
    return int(raw)


def public_folders() -> dict[str, str]:
    """Folders whose files any user of the app can fetch, by name: Gradio's GRADIO_TEMP_DIR when set.
    No diagnosis workspace may be created inside them (diagnosis.Workspace `forbidden`)."""
    folder = os.environ.get("GRADIO_TEMP_DIR")
    return {"GRADIO_TEMP_DIR": folder} if folder else {}

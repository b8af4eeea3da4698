"""App settings from environment variables, read in this one place (Space variables and secrets arrive
as environment variables).

- PERF_DOCTOR_USERS        optional login: "user:password,user2:password2" (set it as a Space secret)
- PERF_DOCTOR_MAX_FILE_SIZE  largest upload, e.g. "500mb" (Gradio's size syntax; default 500mb)
- PERF_DOCTOR_CONCURRENCY  analyses that run at the same time (default 2)
- PERF_DOCTOR_QUEUE_SIZE   requests that may wait in the queue (default 16)

The archive budgets (members, bytes, ratio) are diagnosis.limits' PERF_DOCTOR_MAX_* variables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from diagnosis.errors import InputError

SIZE_PATTERN = re.compile(r"^\d+\s*(b|kb|mb|gb|tb)?$", re.IGNORECASE)


@dataclass(frozen=True)
class AppConfig:
    """Launch settings sized for a small machine (2 cores)."""

    users: tuple[tuple[str, str], ...] = ()
    max_file_size: str = "500mb"
    concurrency: int = 2
    queue_size: int = 16

    @property
    def auth(self) -> list[tuple[str, str]] | None:
        """Gradio's `auth=` value: the user list, or None when no login is configured."""
        return list(self.users) or None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AppConfig:
        """Settings from the environment; a malformed value raises InputError naming the variable."""
        env = os.environ if environ is None else environ
        return cls(
            users=parse_users(env.get("PERF_DOCTOR_USERS", "")),
            max_file_size=_size(env.get("PERF_DOCTOR_MAX_FILE_SIZE", "").strip() or cls.max_file_size),
            concurrency=_positive(env, "PERF_DOCTOR_CONCURRENCY", cls.concurrency),
            queue_size=_positive(env, "PERF_DOCTOR_QUEUE_SIZE", cls.queue_size),
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
                "an entry is not 'user:password'",
                path="PERF_DOCTOR_USERS",
                expected="user:password,user2:password2",
            )
        users.append((name.strip(), password))
    return tuple(users)


def _size(raw: str) -> str:
    if not SIZE_PATTERN.match(raw):
        raise InputError(
            f"{raw!r} is not a size", path="PERF_DOCTOR_MAX_FILE_SIZE", expected="e.g. 500mb or 2gb"
        )
    return raw.replace(" ", "").lower()


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise InputError(f"{raw!r} is not a positive whole number", path=name, expected="e.g. 2")
    return int(raw)

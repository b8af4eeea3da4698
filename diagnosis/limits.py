"""Resource budgets for untrusted input, in one place, with defaults and environment overrides.

Every field can be overridden by an environment variable named ``PERF_DOCTOR_<FIELD NAME IN CAPITALS>``,
e.g. ``PERF_DOCTOR_MAX_TOTAL_BYTES=536870912``. Values are plain numbers (bytes for sizes).
"""

from __future__ import annotations

import dataclasses
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from core.errors import InputError
from core.text import say

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

ENV_PREFIX = "PERF_DOCTOR_"
MIB = 1024 * 1024
GIB = 1024 * MIB
S = TypeVar("S")


@dataclass(frozen=True)
class Limits:
    """Budgets that bound what one upload may cost in files, bytes, memory and nesting."""

    max_members: int = 20_000  # files and folders in one upload (archive members or listed files)
    max_total_bytes: int = 2 * GIB  # bytes written to the workspace for one upload
    max_ratio: float = 200.0  # decompressed / compressed bytes of one archive member
    ratio_grace_bytes: int = MIB  # the ratio is only judged once a member has produced this much
    max_depth: int = 32  # folder levels of one member path
    max_header_bytes: int = 64 * 1024  # one tar extended (pax / GNU long-name) header, held in memory
    # One profile file, unpacked or read: parsing costs a multiple of its size in server memory (see
    # docs/security.md for the measurement behind these two defaults).
    max_profile_file_bytes: int = 160 * MIB
    # Rows (lines after the header) of one profile table (.csv/.txt), or events kept from one trace:
    # memory grows with rows even when each row is short.
    max_profile_rows: int = 400_000
    # Wall-clock seconds one SQLite export may take to query (a progress handler interrupts it).
    max_query_seconds: float = 60.0

    def __post_init__(self) -> None:
        check_positive(self)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The defaults, with every field that has a ``PERF_DOCTOR_<FIELD>`` variable set replaced by it."""
        return settings_from_env(cls, environ)


TABLE_SUFFIXES = (".csv", ".txt")  # profile files read as tables of rows (the row budget applies)


def is_table(name: str) -> bool:
    """True for a profile file name that readers parse as rows (CSV, or the text timelines)."""
    return name.lower().endswith(TABLE_SUFFIXES)


class LineCounter:
    """Line breaks of a table read in chunks: `\n`, `\r\n` and a lone `\r` (old Mac files) each count
    once, also when a chunk ends between the `\r` and the `\n`."""

    def __init__(self) -> None:
        self.breaks = 0
        self._ends_in_cr = False

    def add(self, chunk: bytes) -> int:
        """Count one more chunk; returns the line breaks so far."""
        if not chunk:
            return self.breaks
        pairs = self._ends_in_cr and chunk.startswith(b"\n")  # a CR|LF split by the chunk boundary
        if b"\r" not in chunk:  # LF only (real MindSpore CPU runs and Ascend samples): one count, not three
            self.breaks += chunk.count(b"\n") - pairs
            self._ends_in_cr = False
            return self.breaks
        pairs += chunk.count(b"\r\n")
        self.breaks += chunk.count(b"\n") + chunk.count(b"\r") - pairs
        self._ends_in_cr = chunk.endswith(b"\r")
        return self.breaks


def env_name(field_name: str) -> str:
    """The environment variable that overrides one Limits field, e.g. PERF_DOCTOR_MAX_MEMBERS."""
    return ENV_PREFIX + field_name.upper()


def parse_setting(name: str, raw: str, kind: type) -> int | float:
    """One positive number from an environment variable; a bad value is reported by variable name."""
    expected = say("limits.positive-whole" if kind is int else "limits.positive")
    try:
        value = kind(raw.strip())
    except ValueError:
        raise InputError(say("limits.not-number", raw=repr(raw)), path=name, expected=expected) from None
    if not value > 0:
        raise InputError(say("limits.not-positive", raw=repr(raw)), path=name, expected=expected)
    return value


def check_positive(settings: DataclassInstance) -> None:
    """Every field of a settings dataclass must be a positive number (a bool is not one here)."""
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(
                f"{type(settings).__name__}.{field.name} must be a positive number, got {value!r}"
            )


def settings_from_env(cls: type[S], environ: Mapping[str, str] | None = None, prefix: str = "") -> S:
    """A settings dataclass with its defaults, each field replaced by ``PERF_DOCTOR_<PREFIX><FIELD>``
    when that variable is set (a bad value is an InputError naming the variable)."""
    env = os.environ if environ is None else environ
    hints = typing.get_type_hints(cls)
    overrides: dict[str, int | float] = {}
    for field in dataclasses.fields(cls):  # pyright: ignore[reportArgumentType]  # cls: a settings dataclass
        name = env_name(prefix + field.name)
        if env.get(name, "").strip():
            overrides[field.name] = parse_setting(name, env[name], hints[field.name])
    return cls(**overrides)

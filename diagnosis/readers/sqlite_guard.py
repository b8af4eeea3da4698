"""Budgeted, read-only access to an uploaded SQLite database, shared by every reader of SQLite exports.

A 2 KB database can cost gigabytes: a key the schema makes unique but that repeats multiplies every join
over it, one huge string referenced by many rows is copied once per row, and SQLite's sorter spills to
the system's temporary folder. A `Guarded` connection bounds each of these before rows are read:

- opened read-only (``mode=ro``), ``query_only``, ``trusted_schema=OFF`` (no function in the schema runs);
- ``temp_store=MEMORY`` and a bounded page cache: SQLite writes no temporary file anywhere (in the
  isolated child, ``RLIMIT_FSIZE=0`` refuses any write as well);
- no text or blob value over `MAX_VALUE_BYTES` (``SQLITE_LIMIT_LENGTH``): names and shapes are far shorter;
- a wall-clock limit (``max_query_seconds``) checked by a progress handler that interrupts the query;
- `check_rows`: a table's rows counted before any is read, against the row budget;
- `refuse_duplicates`: a key the schema makes unique must be unique, so joins over it cannot multiply.

The readers decode in whatever process reads the profile: the doctor facade reads every profile in an
isolated child (sandbox.isolation.read_profile) under memory, CPU and time limits.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from core.errors import InputError
from core.text import Text, say
from diagnosis.limits import MIB, Limits, env_name
from diagnosis.readers.io import display

MAX_VALUE_BYTES = MIB  # one text or blob value (a kernel name, a shape list) in an export
CACHE_KIB = 16 * 1024  # page cache of one connection (SQLite's default is 2 MiB)
_PRAGMAS = ("query_only=ON", "trusted_schema=OFF", "temp_store=MEMORY", f"cache_size=-{CACHE_KIB}")
SqlValue = int | float | str | bytes | None  # what SQLite hands back for one column of a row
_PROGRESS_STEPS = 20_000  # virtual-machine instructions between two looks at the clock
# Canonical kernel column <- COMPUTE_TASK_INFO column (an id into STRING_IDS), when the table has it:
# one mapping for both SQLite readers (sqlite_db, torch_npu_db).
STRING_COLUMNS = {
    "name": "name",
    "op_type": "opType",
    "core": "taskType",
    "input_shapes": "inputShapes",
    "input_dtypes": "inputDataTypes",
    "input_formats": "inputFormats",
    "output_shapes": "outputShapes",
    "output_dtypes": "outputDataTypes",
    "output_formats": "outputFormats",
    "op_state": "opState",
}


class Guarded:
    """One read-only connection to `path` under a deadline, with the budget checks of this module."""

    def __init__(self, path: Path, seconds: float, expected: Text | str | None) -> None:
        self.path = path
        self.expected = expected
        self.seconds = seconds
        self._deadline = time.monotonic() + seconds
        self.timed_out = False
        try:
            self.connection = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise self.error(say("sqlite.cannot-open", error=str(exc))) from None
        self.connection.text_factory = _text  # invalid UTF-8 in a name must not fail the whole read
        self.connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        self.connection.set_progress_handler(self._past_deadline, _PROGRESS_STEPS)
        for pragma in _PRAGMAS:
            self.execute(f"PRAGMA {pragma}")

    def _past_deadline(self) -> int:
        """Progress handler: a non-zero answer interrupts the running statement."""
        self.timed_out = time.monotonic() > self._deadline
        return int(self.timed_out)

    def error(self, problem: Text | str, expected: Text | str | None = None) -> InputError:
        """An InputError naming this database."""
        return InputError(problem, path=display(self.path), expected=expected or self.expected)

    def translate(self, exc: sqlite3.Error) -> InputError:
        """A SQLite error as the user's problem: the deadline, a value over the limit, or unreadable."""
        if self.timed_out:
            return self.error(
                say("sqlite.too-slow", s=self.seconds),
                say("archive.smaller-override", variable=env_name("max_query_seconds")),
            )
        if isinstance(exc, sqlite3.DataError) or "too big" in str(exc):
            return self.error(say("sqlite.value-too-big", mib=MAX_VALUE_BYTES / MIB))
        return self.error(say("sqlite.cannot-read", error=str(exc)))

    def execute(self, sql: str, parameters: tuple[SqlValue, ...] = ()) -> sqlite3.Cursor:
        """Run one statement; a SQLite error becomes an InputError naming the database."""
        try:
            return self.connection.execute(sql, parameters)
        except sqlite3.Error as exc:
            raise self.translate(exc) from None

    def scalar(self, sql: str) -> SqlValue:
        """The first column of the first row of a query."""
        try:
            row = self.execute(sql).fetchone()
        except sqlite3.Error as exc:
            raise self.translate(exc) from None
        return row[0] if row else None

    def rows(self, sql: str, limit: int | None, chunk: int = 10_000) -> Iterator[tuple[SqlValue, ...]]:
        """Stream a query's rows; more than `limit` of them is the row budget's refusal."""
        cursor = self.execute(sql)
        seen = 0
        while True:
            try:
                batch = cursor.fetchmany(chunk)
            except sqlite3.Error as exc:
                raise self.translate(exc) from None
            if not batch:
                return
            seen += len(batch)
            if limit is not None and seen > limit:
                raise self.rows_over("?", seen, limit)
            yield from batch

    def check_rows(self, table: str, limit: int | None) -> int:
        """Count `table`'s rows before reading any; over `limit` is an InputError naming the table."""
        count = int(self.scalar(f'SELECT COUNT(*) FROM "{table}"') or 0)
        if limit is not None and count > limit:
            raise self.rows_over(table, count, limit)
        return count

    def rows_over(self, table: str, count: int, limit: int) -> InputError:
        """The row budget's refusal for one table."""
        return self.error(
            say("sqlite.rows-over", table=table, rows=count, limit=limit),
            say("io.fewer-steps", variable=env_name("max_profile_rows")),
        )

    def refuse_duplicates(self, table: str, column: str) -> None:
        """A key the schema makes unique (a PRIMARY KEY) must not repeat: a join over a repeated key
        multiplies rows without bound. Counted with an index-backed or in-memory distinct count."""
        extra = int(self.scalar(f'SELECT COUNT("{column}") - COUNT(DISTINCT "{column}") FROM "{table}"') or 0)
        if extra > 0:
            raise self.error(say("sqlite.duplicate-key", table=table, column=column, n=extra))

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


def _text(raw: bytes) -> str:
    """A TEXT value as str; bytes that are not UTF-8 become U+FFFD."""
    return raw.decode("utf-8", "replace")


@contextmanager
def guarded(
    path: Path, *, expected: Text | str | None = None, limits: Limits | None = None
) -> Generator[Guarded, None, None]:
    """A `Guarded` connection to `path` (the deadline from ``max_query_seconds``), closed on exit."""
    seconds = float((limits or Limits.from_env()).max_query_seconds)
    connection = Guarded(path, seconds, expected)
    try:
        yield connection
    finally:
        connection.close()

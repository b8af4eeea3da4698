"""A SQLite decoding runner that records which process called it, for the rank pool's isolation test:
module-level, so a pool worker unpickles it by name (bound to its log file with functools.partial: the
pool's forkserver keeps the environment it started with, so a variable set later would not reach it)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any


def recording_runner(log: str, subject: str, func: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Append "<pid> <subject>" to `log`, then decode in doctor's isolated child."""
    from sandbox.isolation import decode_database

    with open(log, "a", encoding="utf-8") as out:
        out.write(f"{os.getpid()} {subject}\n")
    return decode_database(subject, func, args)

"""A SQLite decoding runner that records which process called it, for the rank pool's isolation test:
module-level, so a pool worker unpickles it by name."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

LOG_ENV = "PERF_DOCTOR_TEST_DECODER_LOG"


def recording_runner(subject: str, func: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Append "<pid> <subject>" to the file named by LOG_ENV, then run doctor's isolated child."""
    from doctor.isolation import decode_database

    with open(Path(os.environ[LOG_ENV]), "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {subject}\n")
    return decode_database(subject, func, args)

"""What every browser test module shares: Debian's Chromium, its flags and pytest-playwright's launch
arguments pointed at it (a fixture imported by name into each browser test module)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 60_000


def require_chromium() -> None:
    """Skip the calling test module without Chromium, unless PERF_DOCTOR_REQUIRE_BROWSER=1 (CI, `make
    test`): then fail, so a missing browser can never pass silently. Call it at module level."""
    if CHROMIUM.exists():
        return
    if os.environ.get("PERF_DOCTOR_REQUIRE_BROWSER") == "1":
        raise RuntimeError(
            f"{CHROMIUM} is missing but PERF_DOCTOR_REQUIRE_BROWSER=1: apt-get install chromium"
        )
    pytest.skip(f"{CHROMIUM} is not installed", allow_module_level=True)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """pytest-playwright's launch arguments, pointed at Debian's Chromium."""
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": ARGS}

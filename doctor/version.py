"""The installed version of perf-doctor, for the report's generator field."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("perf-doctor")
except PackageNotFoundError:  # running from a source checkout that was not pip-installed (e.g. a Space)
    VERSION = "0+source"

"""Errors in the user's terms: the file named relative to what they uploaded (never the private folder an
archive was unpacked into), the layouts and versions known to write that file, and what to do."""

from __future__ import annotations

import re
from pathlib import Path

from core.errors import InputError
from core.text import Text, say

# Which profiler layouts and versions write each file a reader opens, as shown to users (headers abridged).
KNOWN_FILES: tuple[tuple[re.Pattern[str], Text], ...] = tuple(
    (re.compile(pattern), say(key))
    for pattern, key in (
        ("kernel_details\\.csv", "explain.kernel-details"),
        ("op_summary_[\\w.-]*\\.csv", "explain.op-summary"),
        ("step_trace_time\\.csv", "explain.step-trace-time"),
        ("step_trace_[\\d_]+\\.csv", "explain.step-trace-cann"),
        ("framework_raw_\\d+\\.csv", "explain.framework-raw"),
        ("aicore_intermediate_\\d+_detail\\.csv", "explain.aicore"),
        ("output_timeline_data_\\d+\\.txt", "explain.timeline"),
        ("step_trace_raw_\\d+_detail_time\\.csv", "explain.step-trace-raw"),
        ("profiler_info(_\\d+)?\\.json", "explain.profiler-info"),
        ("sample\\.json", "explain.sample"),
        ("trace_view\\.json", "explain.trace-view"),
    )
)
TODO = say("explain.todo")


def known_versions(name: str) -> Text | None:
    """Which layouts and versions write a file of this name, or None for a name no reader opens."""
    return next((text for pattern, text in KNOWN_FILES if pattern.fullmatch(name)), None)


def in_user_terms(error: InputError, folder: Path, display: str) -> InputError:
    """`error` with its path relative to what the user gave (`display`, the upload's name) instead of the
    folder it was unpacked into, and, for a file a reader opens, the versions known to write it."""
    path = _relative(error.path, folder, display) if error.path else error.path
    name = path.rsplit("/", 1)[-1] if path else ""
    known = known_versions(name)
    expected = error.expected
    if known and (expected is None or "known:" not in expected):
        if expected:
            expected = say("explain.expected-known", expected=expected, known=known, todo=TODO)
        else:
            expected = say("explain.known", known=known, todo=TODO)
    if path == error.path and expected == error.expected:
        return error
    return InputError(error.problem, path=path, expected=expected)


def _relative(path: str, folder: Path, display: str) -> str:
    """Replace everything up to the unpacked folder (and its private parents) by the upload's name."""
    parts = path.replace("\\", "/").split("/")
    private = {folder.name, folder.parent.name}
    cut = max((i for i, part in enumerate(parts) if part in private), default=-1)
    if cut < 0 or folder.name == display:
        return path
    rest = parts[cut + 1 :]
    return "/".join([display, *rest]) if rest else display

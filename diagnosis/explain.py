"""Errors in the user's terms: the file named relative to what they uploaded (never the private folder an
archive was unpacked into), the layouts and versions known to write that file, and what to do."""

from __future__ import annotations

import re
from pathlib import Path

from core.errors import InputError

# Which profiler layouts and versions write each file a reader opens, as shown to users (headers abridged).
KNOWN_FILES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), text)
    for pattern, text in (
        (
            r"kernel_details\.csv",
            "MindSpore 2.3+ and torch_npu write it in ASCEND_PROFILER_OUTPUT/ (Name, Type, Accelerator Core, "
            "Start Time(us), Duration(us), ...)",
        ),
        (
            r"op_summary_[\w.-]*\.csv",
            "CANN msprof writes it in PROF_*/mindstudio_profiler_output/ (Device_id, Op Name, OP Type, "
            "Task Type, Task Start Time(us), Task Duration(us), ...)",
        ),
        (r"step_trace_time\.csv", "MindSpore 2.3+ and torch_npu (Step, Computing, ..., Free)"),
        (
            r"step_trace_[\d_]+\.csv",
            "CANN msprof (Device_id, Iteration ID, FP Start(us), BP End(us), Iteration End(us), "
            "Iteration Time(us))",
        ),
        (
            r"framework_raw_\d+\.csv",
            "MindSpore 2.0-2.4 (task_id, stream_id, block_dim, full_op_name, op_name, op_type, subgraph, "
            "op_info) and 1.x (..., full_kernel_name, op_name, kernel_name, kernel_type, subgraph, op_info)",
        ),
        (
            r"aicore_intermediate_\d+_detail\.csv",
            "MindSpore 1.x/2.0 (full_op_name, execution_time[, execution_frequency]), 2.1-2.2 (full_op_name, "
            "task_duration, execution_frequency, task_type), 2.3/2.4 (full_kernel_name, ...)",
        ),
        (
            r"output_timeline_data_\d+\.txt",
            "MindSpore 1.x-2.2 (op_name, stream_id, start_time(ms|us), duration(ms)); 2.0 also "
            "space-separated",
        ),
        (
            r"step_trace_raw_\d+_detail_time\.csv",
            "MindSpore 1.x-2.4 (step_num, start_point, end_point, total, fp_point, bp_point, ...)",
        ),
        (r"profiler_info(_\d+)?\.json", "MindSpore 2.0+ and torch_npu write a JSON object"),
        (r"sample\.json", "CANN msprof writes a JSON object in PROF_*/device_<id>/"),
        (r"trace_view\.json", "MindSpore 2.3+ and torch_npu write a Chrome-trace list of events"),
    )
)
TODO = (
    "copy the file again from the run folder (large files are often truncated), or make a fresh archive "
    "with `perf-doctor pack RUN_FOLDER`"
)


def known_versions(name: str) -> str | None:
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
        expected = f"{expected + '; ' if expected else ''}known: {known}; what to do: {TODO}"
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

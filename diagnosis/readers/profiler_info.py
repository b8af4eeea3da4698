"""profiler_info records of MindSpore 2.5+, torch_npu, MindSpore 2.3/2.4 and 2.0-2.2, normalised to
one :class:`InfoRecord`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from core.errors import InputError
from core.jsontypes import JsonObject
from core.model import Limitation, ProfilerConfig
from core.text import say
from diagnosis.readers.io import display, load_json

# --------------------------------------------------------------------------------- profiler_info records

_AIC_METRICS = {
    "ACL_AICORE_PIPE_UTILIZATION": "PipeUtilization",
    "ACL_AICORE_ARITHMETIC_UTILIZATION": "ArithmeticUtilization",
    "ACL_AICORE_MEMORY_BANDWIDTH": "Memory",
    "ACL_AICORE_L0B_AND_WIDTH": "MemoryL0",
    "ACL_AICORE_MEMORY_UB": "MemoryUB",
    "ACL_AICORE_RESOURCE_CONFLICT_RATIO": "ResourceConflictRatio",
    "ACL_AICORE_L2_CACHE": "L2Cache",
    "ACL_AICORE_MEMORY_ACCESS": "MemoryAccess",
    "ACL_AICORE_NONE": "None",
    "AICORENONE": "None",
}
_LEVELS = {"level0": "Level0", "level1": "Level1", "level2": "Level2", "levelnone": "LevelNone"}


@dataclass
class InfoRecord:
    """What a profiler_info file says about the run, normalised across MindSpore and torch_npu."""

    config: ProfilerConfig
    framework: str = "mindspore"
    framework_version: str | None = None
    cann_version: str | None = None
    jit_level: str | None = None
    rank: int | None = None
    execution_mode: str = "unknown"
    options_recorded: bool = True  # False for MindSpore 2.0-2.2 records (no profiler options)
    duplicate_keys: tuple[str, ...] = ()  # keys the file gives twice in one object (the last value is used)


def canonical_aic_metrics(value: object) -> str | None:
    """`ACL_AICORE_PIPE_UTILIZATION` / `PipeUtilization` -> `PipeUtilization`; None stays None."""
    if value is None:
        return None
    text = str(value).strip()
    key = text.upper().replace(" ", "_")
    return _AIC_METRICS.get(key, text if text.lower() not in ("none", "") else "None")


def canonical_level(value: object) -> str | None:
    """`ProfilerLevel.Level1` / `level1` -> `Level1`."""
    if value is None or str(value).strip() == "":
        return None
    text = str(value).strip().rsplit(".", 1)[-1]
    return _LEVELS.get(text.lower(), text)


def as_bool(value: object) -> bool | None:
    """Booleans as profilers write them: true/false, "on"/"off", 1/0."""
    if isinstance(value, bool) or value is None:
        return value
    text = str(value).strip().lower()
    if text in ("true", "on", "1", "yes"):
        return True
    if text in ("false", "off", "0", "no"):
        return False
    return None


def _activities(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list | tuple):
        return None
    return tuple(sorted(str(v).rsplit(".", 1)[-1].upper() for v in cast("Sequence[Any]", value)))


def _schedule(value: Any) -> dict[str, Any] | None:
    return dict(cast(JsonObject, value)) if isinstance(value, dict) and value else None


def _int_or_none(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: JSON `1e309` is float infinity
        return None
    return number if number >= 0 else None


def read_profiler_info(path: Path) -> InfoRecord:
    """Load and normalise one profiler_info file, noting keys it gives twice."""
    duplicates: list[str] = []
    data = load_json(path, expected=say("profiler-info.object"), duplicates=duplicates)
    return replace(parse_profiler_info(data, path), duplicate_keys=tuple(dict.fromkeys(duplicates)))


def duplicate_key_limitations(path: Path, keys: tuple[str, ...] | list[str], topic: str) -> list[Limitation]:
    """A warning naming the keys a JSON file gives twice: json keeps the last value silently."""
    if not keys:
        return []
    named = ", ".join(repr(key) for key in list(keys)[:5])
    listed = say("profiler-info.and-more", named=named) if len(keys) > 5 else named
    return [
        Limitation(
            topic,
            say("profiler-info.twice", path=display(path), named=listed),
            say("profiler-info.check"),
        )
    ]


def parse_profiler_info(data: object, path: Path) -> InfoRecord:
    """Normalise any profiler_info record: MindSpore 2.5+ `profiler_parameters`, torch_npu `config`,
    MindSpore 2.3/2.4 `profiling_options`, or MindSpore 2.0-2.2 (no options recorded)."""
    if not isinstance(data, dict):
        raise InputError(say("json.not-object"), path=display(path), expected=say("profiler-info.object"))
    record = cast(JsonObject, data)
    if isinstance(record.get("profiler_parameters"), dict):
        return _ms_info(record)
    if isinstance(record.get("config"), dict):
        return _torch_info(record)
    return _legacy_info(record)


def _ms_info(data: dict[str, Any]) -> InfoRecord:
    params = data["profiler_parameters"]
    config = ProfilerConfig(
        level=canonical_level(params.get("profiler_level")),
        aic_metrics=canonical_aic_metrics(params.get("aic_metrics")),
        activities=_activities(params.get("activities")),
        with_stack=as_bool(params.get("with_stack")),
        profile_memory=as_bool(params.get("profile_memory")),
        data_process=as_bool(params.get("data_process")),
        record_shapes=as_bool(params.get("record_shapes")),
        data_simplification=as_bool(params.get("data_simplification")),
        schedule=_schedule(params.get("schedule")),
        raw=dict(params),
    )
    ms_info = cast(JsonObject, m) if isinstance(m := data.get("ms_profiler_info"), dict) else {}
    jit = str(data.get("jit_level") or "").strip() or None
    return InfoRecord(
        config=config,
        framework_version=_str_or_none(data.get("ms_version")),
        cann_version=_str_or_none(data.get("cann_version")),
        jit_level=jit,
        rank=_int_or_none(ms_info.get("rank_id")),
        execution_mode="graph" if jit == "O2" else "unknown",
    )


def _torch_info(data: dict[str, Any]) -> InfoRecord:
    common = cast(JsonObject, data["config"].get("common_config") or {})
    experimental = cast(JsonObject, data["config"].get("experimental_config") or {})
    config = ProfilerConfig(
        level=canonical_level(experimental.get("_profiler_level")),
        aic_metrics=canonical_aic_metrics(experimental.get("_aic_metrics")),
        activities=_activities(common.get("activities")),
        with_stack=as_bool(common.get("with_stack")),
        profile_memory=as_bool(common.get("profile_memory")),
        data_process=None,
        record_shapes=as_bool(common.get("record_shapes")),
        data_simplification=as_bool(experimental.get("_data_simplification")),
        schedule=_schedule(common.get("schedule")),
        raw=dict(data["config"]),
    )
    return InfoRecord(
        config=config,
        framework="torch_npu",
        framework_version=_str_or_none(data.get("torch_npu_version")),
        cann_version=_str_or_none(data.get("cann_version")),
        rank=_int_or_none(data.get("rank_id")),
    )


def _legacy_info(data: dict[str, Any]) -> InfoRecord:
    options = data.get("profiling_options")
    if isinstance(options, str):
        try:
            options = json.loads(options)
        except (ValueError, RecursionError):  # invalid, over-long numbers or too deep: kept as text
            options = {"raw": options}
    jit = str(data.get("jit_level") or "").strip() or None
    mode = _context_mode(data.get("context_mode"))
    if mode == "unknown" and jit == "O2":
        mode = "graph"
    record = InfoRecord(
        config=ProfilerConfig(),
        framework_version=_str_or_none(data.get("ms_version")),
        jit_level=jit,
        rank=_int_or_none(data.get("rank_id")),
        execution_mode=mode,
        options_recorded=isinstance(options, dict) and bool(cast(JsonObject, options)),
    )
    if record.options_recorded:
        record.config = _options_config(cast("dict[str, Any]", options))
    return record


def _options_config(options: dict[str, Any]) -> ProfilerConfig:
    """MindSpore 2.3/2.4 msprof options (free-form; on/off strings)."""
    level = options.get("profiler_level") or options.get("profile_level")
    return ProfilerConfig(
        level=canonical_level(level),
        aic_metrics=canonical_aic_metrics(options.get("aic_metrics")),
        activities=None,
        with_stack=as_bool(options.get("with_stack")),
        profile_memory=as_bool(options.get("profile_memory")),
        data_process=as_bool(options.get("data_process")),
        record_shapes=as_bool(options.get("record_shapes")),
        schedule=None,
        raw=dict(options),
    )


def _context_mode(value: Any) -> str:
    """Legacy `context_mode`: 0 / "graph" / GRAPH_MODE -> graph, 1 / "pynative" -> pynative."""
    text = str(value).strip().lower() if value is not None else ""
    if text in ("0", "graph", "graph_mode"):
        return "graph"
    if text in ("1", "pynative", "pynative_mode"):
        return "pynative"
    return "unknown"


def _str_or_none(value: Any) -> str | None:
    return str(value).strip() or None if value is not None else None

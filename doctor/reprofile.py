"""The `reprofile.py` download of a diagnosis: a script that re-profiles the user's inference after the
fixes they ticked, with exactly the baseline's recorded profiler settings (MindSpore 2.5+ API).

The script is rendered from doctor/render/templates/reprofile.py.j2. Nothing from the report reaches it as
raw text: profiler settings are checked against the names MindSpore 2.10 defines and written as Python
literals, the target's name only as a `repr` string, and fix code is taken from the packaged knowledge
base by rule id (never from a report document, which may come from a stored case).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from jinja2 import Environment, PackageLoader, StrictUndefined

from core import InputError
from diagnosis import kept_names
from doctor.report import Report
from doctor.version import VERSION
from knowledge import load_rules

TEMPLATE = "reprofile.py.j2"
WARMUP_STEPS = 3
# What MindSpore 2.10 defines (mindspore.profiler.ProfilerLevel / AicoreMetrics / ProfilerActivity).
LEVELS = ("LevelNone", "Level0", "Level1", "Level2")
AIC_METRICS = {
    "PipeUtilization": "PipeUtilization",
    "ArithmeticUtilization": "ArithmeticUtilization",
    "Memory": "Memory",
    "MemoryL0": "MemoryL0",
    "MemoryUB": "MemoryUB",
    "ResourceConflictRatio": "ResourceConflictRatio",
    "L2Cache": "L2Cache",
    "MemoryAccess": "MemoryAccess",
    "None": "AiCoreNone",
    "AiCoreNone": "AiCoreNone",
}
ACTIVITIES = ("CPU", "NPU", "GPU")
# Fixes of how profiling is done, not of the net: the script never runs their code (it would profile a
# second time into another folder) but says what it does about them.
PROFILING_FIXES = {
    "profiler-config-mismatch": "applied by this script: it profiles with the baseline's settings below",
    "profiler-level-insufficient": "not applied: this script keeps the baseline's level; re-profile the "
    "baseline and the target at Level1 to act on it",
}
SCHEDULE_KEYS = ("wait", "warmup", "active", "repeat", "skip_first")


@dataclass(frozen=True)
class Settings:
    """Profiler settings as the script writes them: MindSpore enum member names and plain values."""

    level: str
    aic_metrics: str
    activities: list[str]
    with_stack: bool
    profile_memory: bool
    schedule: dict[str, int]
    recorded: bool  # taken from the baseline's profiler_info, not the defaults


# Used when the baseline recorded no settings (a CPU profile never does): the configuration of
# tests/fixtures/cpu/generate.py, Level1 so that Ascend kernels carry dtypes.
DEFAULTS = Settings(
    level="Level1",
    aic_metrics="PipeUtilization",
    activities=["CPU", "NPU"],
    with_stack=False,
    profile_memory=False,
    schedule={"wait": 0, "warmup": 1, "active": 5, "repeat": 1, "skip_first": 3},
    recorded=False,
)


def baseline_settings(report: Report) -> Settings:
    """The baseline's recorded level, aic_metrics, activities, with_stack, profile_memory and schedule;
    a setting it did not record (or recorded as something MindSpore does not define) takes the default."""
    runs = [run for run in report.document.runs if run.role == "baseline"]
    if not runs:
        raise InputError("a re-profiling script needs a diagnosis of two profiles", expected="a baseline")
    config = runs[0].profiler_config
    level = config.level if config.level in LEVELS else DEFAULTS.level
    metrics = AIC_METRICS.get(str(config.aic_metrics), AIC_METRICS[DEFAULTS.aic_metrics])
    if config.level in LEVELS and config.aic_metrics is None:
        metrics = "AiCoreNone"  # recorded as none (Level0 resets it)
    activities = [a for a in ACTIVITIES if a in (config.activities or [])] or list(DEFAULTS.activities)
    return Settings(
        level=level,
        aic_metrics=metrics,
        activities=activities,
        with_stack=_flag(config.with_stack, "with_stack"),
        profile_memory=_flag(config.profile_memory, "profile_memory"),
        schedule=_schedule(config.schedule),
        recorded=config.recorded,
    )


def _flag(value: bool | None, key: Literal["with_stack", "profile_memory"]) -> bool:
    default = DEFAULTS.with_stack if key == "with_stack" else DEFAULTS.profile_memory
    return value if isinstance(value, bool) else default


def _schedule(recorded: dict[str, Any] | None) -> dict[str, int]:
    """The recorded schedule's five counts (non-negative ints, active ≥ 1), else the default one."""
    plan = dict(DEFAULTS.schedule)
    if not isinstance(recorded, dict):
        return plan
    counts: dict[str, int] = {}
    for key in SCHEDULE_KEYS:
        value = recorded.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return plan
        counts[key] = value
    return counts if counts["active"] >= 1 else plan


def fix_ids(report: Report) -> list[str]:
    """The ids of the causes whose fix the script can apply: every cause of the report, rank order."""
    return [cause.id for cause in report.document.causes]


def reprofile_script(report: Report, fixes: Sequence[str] | None = None) -> str:
    """The reprofile.py text for a pair diagnosis; `fixes` are the ticked cause ids (default: the ranked
    causes). An id that is not a cause of the report is an InputError."""
    settings = baseline_settings(report)
    causes = fix_ids(report)
    ticked = [c.id for c in report.document.causes if c.section == "ranked"] if fixes is None else list(fixes)
    unknown = [fix for fix in ticked if fix not in causes]
    if unknown:
        raise InputError(f"{len(unknown)} ticked fix(es) are not causes of this report", expected="cause ids")
    codes = _fix_codes()
    blocks = [_block(cause, codes[cause]) for cause in causes if cause in ticked]
    target = next((run.source for run in report.document.runs if run.role == "target"), "")
    origin = "recorded in its profiler_info" if settings.recorded else _DEFAULT_ORIGIN
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            version=VERSION,
            created=report.document.created_utc,
            target=target,
            settings=settings,
            settings_origin=origin,
            warmup_steps=WARMUP_STEPS,
            kept=kept_names(),
            fixes=blocks,
        )
    )


_DEFAULT_ORIGIN = (
    "it recorded none, as a CPU profile never does: these are Perf Doctor's defaults; set them to what "
    "the baseline used"
)


@cache
def _fix_codes() -> dict[str, str]:
    return {rule.id: rule.fix.code for rule in load_rules()}


def _block(cause: str, code: str) -> dict[str, Any]:
    """One fix block: the rule's code lines, or for a profiling fix one comment saying what is done."""
    if cause in PROFILING_FIXES:
        return {"id": cause, "lines": [f"# {PROFILING_FIXES[cause]}"]}
    return {"id": cause, "lines": code.rstrip("\n").splitlines()}


@cache
def _environment() -> Environment:
    """A plain-text environment (no autoescape: the output is Python, its values made by `py`)."""
    env = Environment(
        loader=PackageLoader("doctor.render", "templates"),
        autoescape=False,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["py"] = _literal
    return env


def _literal(value: Any) -> str:
    """A Python literal of a str, bool, int, list or dict of them (repr is exact for these)."""
    if isinstance(value, (str, bool, int)) or value is None:
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(str(k))}: {_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a literal the script may contain: {type(value).__name__}")

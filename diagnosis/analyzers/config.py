"""Configuration symptoms: execution mode, profiler settings, profiler level, comparability."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from core.model import ProfilerConfig
from core.symptoms import Emits, Kind, Symptom, SymptomValues
from core.text import join, say
from diagnosis.analyzers import pair_analyzer
from diagnosis.analyzers.common import rnd, rows
from diagnosis.compare import Comparison


@dataclass(frozen=True, kw_only=True)
class ExecutionModeMismatch(SymptomValues):
    """One run executed in graph mode, the other in PyNative (op-by-op) mode."""

    KIND = Kind("execution-mode-mismatch", ("pair",), ("execution-mode-mismatch",))
    baseline_mode: str
    target_mode: str


@dataclass(frozen=True, kw_only=True)
class ProfilerConfigDiff(SymptomValues):
    """The two runs were profiled with settings that skew operator times or change columns (level,
    aic_metrics, activities, with_stack, profile_memory, data_process, record_shapes,
    data_simplification); window_differences notes a different schedule, which is no evidence."""

    KIND = Kind("profiler-config-diff", ("pair",), ("profiler-config-diff",))
    differences: dict[str, list[object]]  # name -> [baseline value, target value]
    window_differences: dict[str, list[object]]


@dataclass(frozen=True, kw_only=True)
class ProfilerLevelLow(SymptomValues):
    """A run lacks dtype/format/shape columns (profiled at Level0)."""

    KIND = Kind(
        "profiler-level-low",
        ("pair",),
        (
            "profiler-level-low",
            "profiler-level-low.many",
        ),
    )
    runs: list[str]  # the roles (baseline, target) profiled at Level0


@dataclass(frozen=True, kw_only=True)
class OpSetMismatch(SymptomValues):
    """Large parts of one run have no counterpart in the other: different workloads."""

    KIND = Kind("op-set-mismatch", ("pair",), ("op-set-mismatch",))
    matched_share_baseline: float | None
    matched_share_target: float | None
    unmatched_ms_per_step: float | None


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(ExecutionModeMismatch, ProfilerConfigDiff, ProfilerLevelLow, OpSetMismatch)

# Settings that skew per-operator times (host overhead of stacks, memory, dataset or shape recording;
# counter collection at a higher level) or change the columns the analyzers read: they support
# profiler-config-mismatch.
SKEWING_FIELDS = (
    "level",
    "aic_metrics",
    "activities",
    "with_stack",
    "profile_memory",
    "data_process",
    "record_shapes",
    "data_simplification",
)
# Settings that only choose which steps are recorded: per-step numbers stay comparable (a warm-up in
# the window is first-step-outlier's question), so a difference is a note, not evidence.
WINDOW_FIELDS = ("schedule",)
MIN_MATCHED_SHARE = 0.5


@pair_analyzer
def execution_mode_mismatch(c: Comparison) -> list[Symptom]:
    """One run in graph mode, the other in PyNative."""
    b, t = c.baseline.run.meta.execution_mode, c.target.run.meta.execution_mode
    if "unknown" in (b, t) or b == t:
        return []
    return [
        ExecutionModeMismatch(baseline_mode=b, target_mode=t).symptom(
            say("execution-mode-mismatch", b=b, t=t), "pair", 1.0
        )
    ]


def config_differences(
    a: ProfilerConfig, b: ProfilerConfig, fields: tuple[str, ...] = SKEWING_FIELDS
) -> dict[str, list[object]]:
    """`fields` recorded in both configurations whose values differ: name -> [a's value, b's value]."""
    diffs: dict[str, list[object]] = {}
    for name in fields:
        va, vb = getattr(a, name), getattr(b, name)
        if va is not None and vb is not None and va != vb:
            diffs[name] = [_plain(va), _plain(vb)]
    return diffs


def _plain(value: object) -> object:
    # a tuple setting (e.g. the profiled ranks) becomes a JSON list
    return list(cast("tuple[object, ...]", value)) if isinstance(value, tuple) else value


@pair_analyzer
def profiler_config_diff(c: Comparison) -> list[Symptom]:
    """The two runs were profiled with settings that skew operator times or change columns (only when
    both recorded them). A different schedule alone is no symptom: compare.py notes it."""
    a, b = c.baseline.run.meta.config, c.target.run.meta.config
    if not (a.recorded and b.recorded):
        return []
    diffs = config_differences(a, b)
    if not diffs:
        return []
    text = ", ".join(f"{k}: {v[0]} vs {v[1]}" for k, v in diffs.items())
    return [
        ProfilerConfigDiff(
            differences=diffs, window_differences=config_differences(a, b, WINDOW_FIELDS)
        ).symptom(say("profiler-config-diff", text=text), "pair", min(1.0, 0.6 + 0.1 * len(diffs)))
    ]


@pair_analyzer
def profiler_level_low(c: Comparison) -> list[Symptom]:
    """A device run without dtype/shape columns: it was profiled at Level0."""
    low = [
        role
        for role, side in (("baseline", c.baseline), ("target", c.target))
        if side.run.meta.device in ("Ascend", "GPU") and side.kernels["input_dtypes"].isna().all()
    ]
    if not low:
        return []
    levels = {
        r: getattr(s.run.meta.config, "level", None)
        for r, s in (("baseline", c.baseline), ("target", c.target))
    }
    return [
        ProfilerLevelLow(runs=low).symptom(
            say(
                "profiler-level-low.many" if len(low) > 1 else "profiler-level-low",
                runs=join([say(f"role.{r}") for r in low], "sep.and"),
                levels=", ".join(str(levels[r]) for r in low),
            ),
            "pair",
            1.0,
        )
    ]


@pair_analyzer
def op_set_mismatch(c: Comparison) -> list[Symptom]:
    """Most of one run's time has no counterpart in the other: the workloads differ."""
    sb, st = c.alignment.baseline_matched_share, c.alignment.target_matched_share
    if min(sb, st) >= MIN_MATCHED_SHARE:
        return []
    unmatched = c.table.loc[c.table["match"] == "target-only"].sort_values(
        "target_us_per_step", ascending=False
    )
    return [
        OpSetMismatch(
            matched_share_baseline=rnd(sb),
            matched_share_target=rnd(st),
            unmatched_ms_per_step=rnd(float(unmatched["target_us_per_step"].sum()) / 1000),
        ).symptom(
            say("op-set-mismatch", sb=sb, st=st),
            "pair",
            min(1.0, (MIN_MATCHED_SHARE - min(sb, st)) * 2 + 0.3),
            evidence=rows(unmatched, ["operator", "op_type", "target_us_per_step"]),
        )
    ]

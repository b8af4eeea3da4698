"""Close the loop: judge the causes of a diagnosis again on a run profiled after the fixes.

Pure functions over report models (doctor.model): the facade diagnoses baseline-vs-after like any pair
and hands both cause lists here. Nothing is plotted here (doctor.plots draws the waterfall).

How the waterfall avoids counting time twice. Each ranked cause with a recoverable time claims it from
a *pool*:

- `operators`: the operators its evidence rows name with their target time per step (all rows kept, so
  the list is complete). Operators shared by two causes are one pool: a later cause can take only what
  the earlier ones left of those operators, and each operator gives at most its own time.
- `step`: a cause whose evidence names no operator (a compile spike, an idle gap) claims from the step.

Whatever the pool, no cause takes more than the step time still unclaimed, so the counted gains add up
to at most the measured target step time and the waterfall never ends below zero. Causes are taken in
rank order (the most useful fix first), so an overlap is charged to the lower-ranked cause.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from doctor.model import After, AfterCause, Cause, NewCause, RunInfo, WaterfallStep

WORSE_FACTOR = 1.25  # a remaining cause is `worse` at this multiple of its time before ...
WORSE_MIN_MS = 0.05  # ... and at least this many ms/step more (timer noise on tiny causes)
ROUND = 4


@dataclass(frozen=True)
class Measured:
    """The measured side of the loop: operator time, recorded wall time (when both runs record step
    wall times) and batch of the target and the after run."""

    target_op_ms: float
    after_op_ms: float
    target_batch: int | None
    after_batch: int | None
    target_wall_ms: float | None = None  # mean recorded wall time per step, when the run records it
    after_wall_ms: float | None = None

    @property
    def per_sample(self) -> bool:
        return bool(self.target_batch and self.after_batch and self.target_batch != self.after_batch)

    @property
    def basis(self) -> Literal["wall", "operators"]:
        """`wall` when both runs record step wall times (idle gaps and compilation count), else
        `operators` (the compared operator time of the report's timing)."""
        return "wall" if self.target_wall_ms is not None and self.after_wall_ms is not None else "operators"

    @property
    def target_ms(self) -> float:
        wall = self.target_wall_ms
        return wall if wall is not None and self.after_wall_ms is not None else self.target_op_ms

    @property
    def after_ms(self) -> float:
        wall = self.after_wall_ms
        return wall if wall is not None and self.target_wall_ms is not None else self.after_op_ms

    def per_sample_gain(self, target: float, after: float) -> float | None:
        """Target minus after per sample, ms (None when the batches are equal or unknown)."""
        target_batch, after_batch = self.target_batch, self.after_batch
        if not self.per_sample or not target_batch or not after_batch:
            return None
        return target / target_batch - after / after_batch

    def per_step_gain(self, target: float, after: float) -> float:
        """Target minus after per target step; per sample × target batch when the batches differ."""
        per_sample = self.per_sample_gain(target, after)
        batch = self.target_batch
        return target - after if per_sample is None or batch is None else per_sample * batch


def after_section(before: Sequence[Cause], after: Sequence[Cause], measured: Measured, run: RunInfo) -> After:
    """The `after` section: each first-diagnosis cause's status, new causes, measured vs predicted gain,
    all on the step basis (wall time when both runs record it)."""
    steps = waterfall(before, measured.target_ms)
    counted = {step.cause: step.counted_ms for step in steps}
    predicted = round(sum(counted.values()), ROUND)
    gain = measured.per_step_gain(measured.target_ms, measured.after_ms)
    per_sample = measured.per_sample_gain(measured.target_ms, measured.after_ms)
    found = {cause.id: cause for cause in after}
    known = {cause.id for cause in before}
    return After(
        source=run.source,
        run=run,
        step_basis=measured.basis,
        target_ms_per_step=round(measured.target_ms, ROUND),
        after_ms_per_step=round(measured.after_ms, ROUND),
        target_batch=measured.target_batch,
        after_batch=measured.after_batch,
        per_sample=measured.per_sample,
        gain_ms_per_step=round(gain, ROUND),
        gain_ms_per_sample=None if per_sample is None else round(per_sample, 6),
        operator_gain_ms_per_step=round(
            measured.per_step_gain(measured.target_op_ms, measured.after_op_ms), ROUND
        ),
        predicted_gain_ms_per_step=predicted,
        predicted_ms_per_step=round(max(0.0, measured.target_ms - predicted), ROUND),
        measured_to_predicted=round(gain / predicted, ROUND) if predicted > 0 else None,
        causes=[_judged(cause, found.get(cause.id), counted.get(cause.id)) for cause in before],
        new_causes=[_new(cause) for cause in after if cause.section == "ranked" and cause.id not in known],
        waterfall=steps,
    )


def outcome(after: After) -> str | None:
    """How the fixes fared, for the verdict: `resolved` (every ranked cause of the first diagnosis),
    `partly` (some of them) or `not` (none); None when the first diagnosis ranked no cause."""
    ranked = [c for c in after.causes if c.ranked]
    if not ranked:
        return None
    resolved = sum(c.status == "resolved" for c in ranked)
    return "resolved" if resolved == len(ranked) else "partly" if resolved else "not"


def cause_status(before: Cause, after: Cause | None) -> Literal["resolved", "remaining", "worse"]:
    """resolved / remaining / worse: a ranked cause remains while it is still ranked, a below-threshold
    one while it is found at all; a remaining cause is worse when its time grew clearly."""
    if after is None or (after.section != "ranked" and before.section == "ranked"):
        return "resolved"
    old, new = before.recoverable_ms_per_step, after.recoverable_ms_per_step
    if old is not None and new is not None and new >= old * WORSE_FACTOR and new - old >= WORSE_MIN_MS:
        return "worse"
    return "remaining"


def _judged(before: Cause, after: Cause | None, counted: float | None) -> AfterCause:
    status = cause_status(before, after)
    after_ms = None if after is None else after.recoverable_ms_per_step
    if after is None and before.recoverable_ms_per_step is not None:
        after_ms = 0.0  # not found at all: nothing of it is left to recover
    return AfterCause(
        id=before.id,
        title=before.title,
        status=status,
        ranked=before.section == "ranked",
        before_ms_per_step=before.recoverable_ms_per_step,
        after_ms_per_step=after_ms,
        predicted_gain_ms_per_step=counted,
    )


def _new(cause: Cause) -> NewCause:
    return NewCause(
        id=cause.id,
        title=cause.title,
        severity=cause.severity,
        recoverable_ms_per_step=cause.recoverable_ms_per_step,
    )


# -------------------------------------------------------------------------------------- waterfall


def waterfall(causes: Sequence[Cause], target_ms: float) -> list[WaterfallStep]:
    """The predicted gains of the ranked, quantified causes with overlaps removed (see the module doc)."""
    operator_left: dict[str, float] = {}
    left = max(0.0, target_ms)
    steps: list[WaterfallStep] = []
    for cause in causes:
        claimed = cause.recoverable_ms_per_step
        if cause.section != "ranked" or not claimed or claimed <= 0:
            continue
        operators = operator_times(cause)
        if operators:
            for name, ms in operators.items():
                operator_left.setdefault(name, ms)
            room = sum(operator_left[name] for name in operators)
            counted = min(claimed, room, left)
            for name in operators:  # take from each operator in proportion to what it has left
                share = operator_left[name] / room if room > 0 else 0.0
                operator_left[name] = max(0.0, operator_left[name] - counted * share)
        else:
            counted = min(claimed, left)
        steps.append(
            WaterfallStep(
                cause=cause.id,
                claimed_ms=round(claimed, ROUND),
                counted_ms=round(counted, ROUND),
                start_ms=round(left, ROUND),
                end_ms=round(left - counted, ROUND),
                pool="operators" if operators else "step",
            )
        )
        left -= counted
    return steps


def operator_times(cause: Cause) -> dict[str, float]:
    """Target ms/step of each operator the cause's quantifying evidence names; empty (the `step` pool)
    when a piece that gives recoverable time names no operator time or lost rows to the cap (an
    incomplete list would understate the overlap)."""
    found: dict[str, float] = {}
    for piece in cause.evidence:
        if piece.role == "contradicts" or not piece.recoverable_ms_per_step:
            continue
        times = {name: us / 1000.0 for name, us in map(_operator_time, piece.rows) if name is not None}
        if not times or piece.rows_total > len(piece.rows):
            return {}
        for name, ms in times.items():
            found[name] = max(found.get(name, 0.0), ms)
    return found


def _operator_time(row: dict[str, Any]) -> tuple[str | None, float]:
    """(operator, target µs/step) of an evidence row, or (None, 0) when it is not an operator row."""
    name, us = row.get("operator"), row.get("target_us_per_step")
    if isinstance(name, str) and isinstance(us, (int, float)) and not isinstance(us, bool) and us > 0:
        return name, float(us)
    return None, 0.0

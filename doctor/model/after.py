"""The `after` section: how the causes of a diagnosis fared in a run profiled after the fixes.

It is present only when an "after the fix" profile was given; it sets the measured gain beside the gain
the diagnosis predicted, so every fix also checks the prediction.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from doctor.model.base import Integer, NonNegative, Number, Record
from doctor.model.findings import Severity
from doctor.model.runs import RunInfo

AfterStatus = Literal["resolved", "remaining", "worse"]


class AfterCause(Record):
    """One cause of the first diagnosis, judged again on the after run."""

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", description="The rule id.")
    title: str = Field(description="Title in the report language.")
    status: AfterStatus = Field(
        description="`resolved`: the rule no longer finds the cause (or only below the reporting threshold "
        "when it was ranked); `remaining`: still found; `worse`: still found with at least 1.25x (and "
        "0.05 ms) more time per step."
    )
    ranked: bool = Field(description="Whether the first diagnosis ranked it (significant).")
    before_ms_per_step: Number | None = Field(
        description="Its recoverable time in the first diagnosis (target), ms/step."
    )
    after_ms_per_step: Number | None = Field(
        description="Its recoverable time in the after run, ms/step; 0 when resolved and not found at all."
    )
    predicted_gain_ms_per_step: Number | None = Field(
        description="The part of its recoverable time the waterfall counts (no time counted twice), ms."
    )


class NewCause(Record):
    """A ranked cause of the after run that the first diagnosis did not find."""

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", description="The rule id.")
    title: str = Field(description="Title in the report language.")
    severity: Severity = Field(description="Its severity in the after run.")
    recoverable_ms_per_step: Number | None = Field(description="Its recoverable time in the after run, ms.")


class WaterfallStep(Record):
    """One bar of the waterfall: a cause's predicted gain, after overlaps were removed."""

    cause: str = Field(description="The rule id.")
    claimed_ms: NonNegative = Field(description="The recoverable time the cause claims, ms/step.")
    counted_ms: NonNegative = Field(description="What the waterfall subtracts, ms/step (≤ claimed).")
    start_ms: NonNegative = Field(description="Predicted step time before this cause's fix, ms.")
    end_ms: NonNegative = Field(description="Predicted step time after it, ms.")
    pool: str = Field(
        description="Whose time the gain comes from: `operators` (the operators its evidence names) or "
        "`step` (the step as a whole)."
    )


class After(Record):
    """The after-the-fix run compared with the target: status of each cause and the measured gain."""

    source: str = Field(description="The after run's display name.")
    run: RunInfo = Field(description="Metadata of the after run (role `after`).")
    step_basis: Literal["wall", "operators"] = Field(
        description="What a step's time is here: `wall` (the recorded step wall time, idle gaps and "
        "compilation included) when both runs record it, else `operators` (compared operator time)."
    )
    target_ms_per_step: NonNegative = Field(description="Target's mean step time on the step basis, ms.")
    after_ms_per_step: NonNegative = Field(
        description="The after run's mean step time on the step basis, ms."
    )
    target_batch: Integer | None = Field(description="Target batch size.")
    after_batch: Integer | None = Field(description="After run's batch size.")
    per_sample: bool = Field(
        description="True when the batches differ: the gain is then measured per sample and expressed "
        "per target step (× target batch)."
    )
    gain_ms_per_step: Number = Field(
        description="Measured gain: target minus after, ms per target step on the step basis (per sample "
        "× target batch when the batches differ); negative when the after run is slower."
    )
    gain_ms_per_sample: Number | None = Field(
        description="Measured gain per sample, ms; `null` when the batches are equal or unknown."
    )
    operator_gain_ms_per_step: Number = Field(
        description="The same gain in compared operator time (the report's `timing`), ms per target step."
    )
    predicted_gain_ms_per_step: NonNegative = Field(
        description="The gain the diagnosis predicted: the waterfall's total (overlaps removed, capped at "
        "the target step time), ms/step."
    )
    predicted_ms_per_step: NonNegative = Field(
        description="Target step time minus the predicted gain, ms (where the waterfall ends)."
    )
    measured_to_predicted: Number | None = Field(
        description="Measured ÷ predicted gain; `null` when nothing was predicted."
    )
    causes: list[AfterCause] = Field(description="Every cause of the first diagnosis, in its rank order.")
    new_causes: list[NewCause] = Field(description="Ranked causes of the after run not found before.")
    waterfall: list[WaterfallStep] = Field(description="Predicted gains of the ranked causes, in rank order.")

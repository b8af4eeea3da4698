"""What was given and read: the inputs, each profiled run's metadata, and the headline timing."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from doctor.model.base import Count, Integer, NonNegative, Number, Positive, Record

Phase = Literal["train", "inference", "unknown"]
ProfileRole = Literal["baseline", "target", "after"]
InputRole = Literal["baseline", "target", "mindir", "after"]


class Input(Record):
    """One user input."""

    role: InputRole = Field(
        description="`baseline`, `target`, `mindir` or `after` (the run after the fixes)."
    )
    name: str = Field(description='Folder, archive or file name, or "N files" for a folder upload.')
    kind: Literal["profile", "mindir"] = Field(description="What the input is.")
    layout: str | None = Field(description="Detected profiler layout, e.g. `cpu-ms`; `null` for a model.")


class ProfilerConfig(Record):
    """The profiler settings the run recorded (`null` where the layout does not record one)."""

    recorded: bool = Field(description="False when the layout records no settings (as on CPU).")
    level: str | None = Field(description="Profiler level, e.g. `Level1`.")
    aic_metrics: str | None = Field(description="AI Core metrics collected, e.g. `PipeUtilization`.")
    activities: list[str] | None = Field(description="Profiled activities (CPU, NPU ...).")
    with_stack: bool | None = Field(description="Whether Python call stacks were recorded.")
    profile_memory: bool | None = Field(description="Whether memory was profiled.")
    data_process: bool | None = Field(description="Whether the dataset pipeline was profiled.")
    record_shapes: bool | None = Field(description="Whether input shapes were recorded.")
    schedule: dict[str, object] | None = Field(
        description="The profiler schedule (wait, warmup, active ...)."
    )


class RunInfo(Record):
    """Metadata of one profile: what was read, what was inferred, and the size of the data."""

    role: ProfileRole = Field(
        description="`baseline` (the fast run, by default training), `target`, or `after` (the target after "
        "the fixes, only in the `after` section)."
    )
    source: str = Field(description="The input's display name.")
    layout: str = Field(description="Detected profiler layout.")
    device: str = Field(description="`CPU`, `Ascend`, `GPU` or `unknown`.")
    framework: str = Field(description="Framework that wrote the profile.")
    framework_version: str | None = Field(description="Its version, when recorded.")
    rank: Integer | None = Field(description="The rank that was read, when the profile has ranks.")
    ranks_available: list[Integer] = Field(description="Every rank the profile holds.")
    execution_mode: Literal["graph", "pynative", "unknown"] = Field(description="Inferred execution mode.")
    phase: Phase = Field(description="Inferred phase.")
    jit_level: str | None = Field(description="JIT level (O0, O1 ...), when recorded.")
    amp: dict[str, object] = Field(description="Cast counts and AMP scope markers.")
    profiler_config: ProfilerConfig = Field(description="The recorded profiler settings.")
    steps: Positive = Field(description="Number of steps the kernels cover.")
    batch: Integer | None = Field(description="Batch size from the first Conv/MatMul input shape.")
    ms_per_step: NonNegative = Field(description="Compared (forward) operator time per step, ms.")
    kernel_launches: Count = Field(description="Kernel launches read.")
    operators: Count = Field(description="Distinct operators compared.")
    files: list[str] = Field(description="Files that were read.")


class PhaseTiming(Record):
    """One generation phase of a pair, compared with the same phase of the other run."""

    phase: Literal["prefill", "decode"] = Field(description="`prefill` (the whole prompt) or `decode`.")
    baseline_steps: Count = Field(description="Baseline steps of this phase (0: the baseline has none).")
    target_steps: Count = Field(description="Target steps of this phase.")
    baseline_ms_per_step: Number | None = Field(
        description="Baseline's median wall time per step of the phase."
    )
    target_ms_per_step: Number | None = Field(description="Target's median wall time per step of the phase.")
    ratio: Number | None = Field(
        description="Target ÷ baseline for this phase; `null` when one run lacks it."
    )
    slower: bool = Field(description="Whether the target is slower in this phase beyond noise.")


class Headline(Record):
    """The slowdown the verdict states: one measure, one robust statistic, and each run's noise."""

    measure: Literal["wall", "operator"] = Field(
        description="`wall`: recorded step wall time (both runs record it, neither is a training step); "
        "`operator`: compared operator time per step (a training baseline's forward pass)."
    )
    statistic: Literal["median"] = Field(description="The robust figure compared.")
    per_sample: bool = Field(description="Whether `ratio` is per sample (the batches differ).")
    baseline_ms: Number = Field(description="Baseline's median step time on the measure, ms.")
    target_ms: Number = Field(description="Target's median step time on the measure, ms.")
    ratio: Number = Field(description="Target ÷ baseline of the medians (per sample when batches differ).")
    baseline_p10_ms: Number | None = Field(description="Baseline's 10th percentile step time, ms.")
    target_p10_ms: Number | None = Field(description="Target's 10th percentile step time, ms.")
    baseline_spread: Number | None = Field(
        description="Baseline's measured noise, (p90 − p10) ÷ median of its steps; `null` under 3 steps."
    )
    target_spread: Number | None = Field(description="The same for the target.")
    baseline_steps: Count = Field(description="Baseline steps measured.")
    target_steps: Count = Field(description="Target steps measured.")
    beyond_noise: bool | None = Field(
        description="Whether the 95 % bootstrap interval of the median ratio lies above 1; `null` when "
        "either run has fewer than 3 steps (noise not measurable)."
    )
    operator_delta_ms: Number = Field(description="Target − baseline compared operator time per step, ms.")
    gap_delta_ms: Number | None = Field(
        description="With the wall measure: the rest of the wall-time change (gaps between kernels), ms."
    )
    slower_steps: Count | None = Field(
        description="Target steps slower than the baseline's 90th percentile; `null` under 3 steps."
    )
    same_run: bool = Field(
        description="Whether both inputs hold one run (the same kernels with the same timestamps)."
    )


class Timing(Record):
    """Headline timing; the comparison fields are `null` in a single-run report."""

    baseline_ms_per_step: Number | None = Field(description="Baseline's compared operator time per step.")
    target_ms_per_step: Number | None = Field(description="Target's compared operator time per step.")
    ratio: Number | None = Field(description="Target ÷ baseline per step.")
    per_sample_ratio: Number | None = Field(description="The same per sample, when the batches differ.")
    baseline_batch: Integer | None = Field(description="Baseline batch size.")
    target_batch: Integer | None = Field(description="Target batch size.")
    baseline_phase: Phase | None = Field(description="Baseline's phase.")
    target_phase: Phase | None = Field(description="Target's phase.")
    alignment_method: str | None = Field(description="`scope`, `sequence` or `scope+sequence`.")
    matched_share_baseline: Number | None = Field(description="Share of baseline time with a counterpart.")
    matched_share_target: Number | None = Field(description="Share of target time with a counterpart.")
    headline: Headline | None = Field(
        description="The verdict's measure of the slowdown (median wall or operator time, noise); "
        "`null` in a single-run report."
    )
    phases: list[PhaseTiming] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="When either run is a generation (prefill and decode steps): the pair compared phase by "
        "phase; absent otherwise.",
    )
    phase_ratio: Number | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="With `phases`: the target's time at its own phase mix ÷ the baseline's phases at that "
        "mix (the phases both runs have); the verdict's slowdown. Absent otherwise.",
    )

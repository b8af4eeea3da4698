"""The "Ranks" section: every rank of a multi-rank job, its per-step time breakdown, the slow rank with why
it is slow, slow links, and how two jobs were compared (rank by rank, or a typical rank of each)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from doctor.model.base import Count, Integer, NonNegative, Number, Record

JobRole = Literal["baseline", "target", "after"]


class RankStep(Record):
    """One step of one rank: wall time and where it went (msprof-analyze's step_trace_time terms)."""

    step: Integer = Field(description="Step id.")
    wall_ms: NonNegative = Field(description="Wall time of the step.")
    computing_ms: NonNegative = Field(description="Computing (compute kernels, overlapping streams once).")
    communication_ms: NonNegative = Field(description="Communication not overlapped by computing.")
    overlapped_ms: NonNegative = Field(description="Communication hidden under computing.")
    free_ms: NonNegative = Field(description="Nothing running: wall - computing - exposed communication.")


class RankRow(Record):
    """One rank of a job."""

    rank: Integer = Field(description="Rank id.")
    root: str = Field(description="The rank's run folder, relative to the input (user data).")
    status: Literal["ok", "broken"] = Field(description="`broken`: its files could not be read.")
    error: str | None = Field(description="Why it could not be read; `null` when read.")
    breakdown_source: Literal["step_trace_time", "kernels", "cluster", ""] = Field(
        description="Where the breakdown came from: the run's step_trace_time, HCCL against compute "
        "kernels by time overlap, or msprof-analyze's cluster_step_trace_time.csv (`cluster`, every step "
        "summed into step 0 unless it names the step); empty for a broken rank."
    )
    kernels: Count = Field(description="Kernel launches read.")
    steps: list[RankStep] = Field(description="The breakdown of each step.")
    wall_ms: NonNegative | None = Field(description="Median wall time per step.")
    computing_ms: NonNegative | None = Field(description="Median computing per step.")
    communication_ms: NonNegative | None = Field(description="Median exposed communication per step.")
    free_ms: NonNegative | None = Field(description="Median free time per step.")
    aicore_mhz: NonNegative | None = Field(
        description="Median AI Core clock recorded, `null` when not recorded."
    )
    link_gbps: dict[str, NonNegative] = Field(
        description="Mean bandwidth (GB/s) per link type (communication.json)."
    )


class RankCause(Record):
    """A cause found by diagnosing the slow rank against a typical rank of the same job."""

    id: str = Field(description="Rule id.")
    title: str = Field(description="Rule title in the report language.")
    recoverable_ms_per_step: NonNegative | None = Field(description="Time per step the fix could give back.")


class SlowRank(Record):
    """The rank the others wait for, and why it is slow."""

    rank: Integer = Field(description="The slow rank.")
    typical_rank: Integer = Field(description="The rank it was diagnosed against (closest to the median).")
    ratio: Number = Field(description="Its computing time over the median rank's (median over steps).")
    extra_ms_per_step: Number = Field(description="Its extra computing per step over the median rank.")
    steps_flagged: Count = Field(
        description="Steps in which it was an outlier (by `test`) and computed >= 10 % more than the median."
    )
    test: Literal["mad", "dixon", "pair"] = Field(
        "mad",
        description="The test that named it: 'mad' (modified z-score > 3.5, over 10 ranks), 'dixon' (Dixon's "
        "Q above its 95 % value, 3 to 10 ranks) or 'pair' (2 ranks: it computes >= 10 % longer than the "
        "other, which waits for it in collectives).",
    )
    steps_total: Count = Field(description="Steps every rank recorded.")
    victims: list[Integer] = Field(description="Ranks that wait for it in collectives (victims, not causes).")
    wait_ms_per_step: NonNegative = Field(
        description="The victims' median extra exposed communication per step."
    )
    why: list[RankCause] = Field(
        description="Causes of the slow rank against the typical rank, most useful first."
    )


class SlowLink(Record):
    """A rank's links of one type, or one link (`pair`), whose bandwidth is under half the median of its
    link type."""

    rank: Integer = Field(description="Rank id.")
    link: str = Field(description="Link type: HCCS, RDMA, SDMA, PCIE, SIO.")
    gbps: NonNegative = Field(description="Its mean bandwidth (GB/s).")
    median_gbps: NonNegative = Field(description="The median of that link type over the job's ranks.")
    pair: str | None = Field(
        None,
        description="The link as '<src>-<dst>' in global ranks (communication_matrix.json's group ranks "
        "mapped through the job's ranks, or msprof-analyze's cluster_communication_matrix.json); absent "
        "for a rank's mean over its links of that type.",
    )


class RankJob(Record):
    """One multi-rank input: its ranks, the rank read in full, the slow rank and slow links."""

    role: JobRole = Field(description="Which input this job is.")
    ranks: Count = Field(description="Ranks found.")
    chosen_rank: Integer | None = Field(description="The rank the operator analysis read in full.")
    rows: list[RankRow] = Field(description="Every rank, in rank order.")
    slow_rank: SlowRank | None = Field(description="The slow rank; `null` when none stands out.")
    slow_links: list[SlowLink] = Field(description="Links under half the median bandwidth of their type.")
    note: str = Field(description="Why no slow-rank test ran (too few ranks), or empty.")


class RankDelta(Record):
    """One rank of two jobs with the same ranks: its median computing and wall time per step in each."""

    rank: Integer = Field(description="Rank id.")
    baseline_computing_ms: NonNegative | None = Field(description="Baseline median computing per step.")
    target_computing_ms: NonNegative | None = Field(description="Target median computing per step.")
    baseline_wall_ms: NonNegative | None = Field(description="Baseline median wall per step.")
    target_wall_ms: NonNegative | None = Field(description="Target median wall per step.")


class Ranks(Record):
    """Every rank of the multi-rank inputs, and how the jobs were compared."""

    jobs: list[RankJob] = Field(description="One entry per multi-rank input.")
    comparison: str = Field(
        description="How the operator analysis paired the jobs: rank by rank, or a typical rank of each."
    )
    by_rank: list[RankDelta] = Field(
        description="Rank by rank, when both jobs have the same ranks; else empty."
    )

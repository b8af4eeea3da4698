"""Job symptoms: where each step's time goes between computing and communication, and which rank the
others wait for (diagnosis/ranks.py computes the per-rank breakdown and the straggler test).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.model import RankSummary, StepBreakdown
from core.symptoms import Emits, Kind, Symptom, SymptomValues
from core.text import say
from diagnosis.analyzers import run_analyzer
from diagnosis.analyzers.common import rnd
from diagnosis.compare import Side
from diagnosis.ranks import step_breakdown


@dataclass(frozen=True, kw_only=True)
class CommunicationBound(SymptomValues):
    """A training step waits for communication more than it computes: exposed communication (not
    overlapped by computing) is 30 % or more of the step."""

    KIND = Kind("communication-bound", ("run",), ("communication-bound",))
    communication_share: float | None
    communication_ms_per_step: float | None
    computing_ms_per_step: float | None
    free_ms_per_step: float | None
    breakdown_source: str


@dataclass(frozen=True, kw_only=True)
class SlowRank(SymptomValues):
    """One rank of a multi-rank job computes longer than the others in most steps (robust z-score over
    ranks); the others wait for it in collectives."""

    KIND = Kind("slow-rank", ("run",), ("slow-rank",))
    rank: int
    typical_rank: int
    compute_ratio: float | None
    extra_ms_per_step: float | None
    stable_share: float | None
    victims: list[int]  # the ranks that wait for it
    wait_ms_per_step: float | None
    ranks: int


@dataclass(frozen=True, kw_only=True)
class SlowLink(SymptomValues):
    """A rank's bandwidth on a link type (HCCS, RDMA, SDMA, PCIe) is under half the median of the
    others."""

    KIND = Kind("slow-link", ("run",), ("slow-link",))
    links: int
    rank: int
    link: str
    bandwidth_ratio: float | None


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(CommunicationBound, SlowRank, SlowLink)

COMM_BOUND_SHARE = 0.3  # exposed communication at least 30 % of the step ...
# ... and more than the computing time: the step waits for collectives more than it computes


def breakdown_of(side: Side) -> tuple[tuple[StepBreakdown, ...], str]:
    """The run's per-step breakdown (computed once per prepared run)."""
    return side.memo("step_breakdown", lambda s: step_breakdown(s.run))


@run_analyzer
def communication_bound(side: Side, role: str) -> list[Symptom]:
    """A training step spent mostly in communication that computing does not hide (exposed communication
    >= 30 % of the step and more than the computing). Inference runs get communication-share instead."""
    if side.run.meta.phase != "train":
        return []
    steps, source = breakdown_of(side)
    if not steps:
        return []
    wall = float(np.sum([s.wall_us for s in steps]))
    comm = np.array([s.communication_us for s in steps])
    compute = np.array([s.computing_us for s in steps])
    if wall <= 0 or float(comm.sum()) / wall < COMM_BOUND_SHARE or comm.sum() <= compute.sum():
        return []
    share = float(comm.sum()) / wall
    ms = float(np.median(comm)) / 1000
    free_ms = float(np.median([s.free_us for s in steps])) / 1000
    return [
        CommunicationBound(
            communication_share=rnd(share),
            communication_ms_per_step=rnd(ms, 4),
            computing_ms_per_step=rnd(float(np.median(compute)) / 1000, 4),
            free_ms_per_step=rnd(free_ms, 4),
            breakdown_source=source,
        ).symptom(
            say(
                "communication-bound",
                role=say(f"role.{role}"),
                share=share,
                comm_ms=ms,
                compute_ms=float(np.median(compute)) / 1000,
                free_ms=free_ms,
                source=source,
            ),
            role,
            min(1.0, share / 0.6),
            evidence=tuple(_step_row(s) for s in steps[:10]),
            recoverable_ms_per_step=rnd(ms, 4),
        )
    ]


def _step_row(step: StepBreakdown) -> dict[str, float | int | None]:
    return {
        "step": step.step,
        **{
            name.replace("_us", "_ms"): rnd(getattr(step, name) / 1000, 4)
            for name in ("wall_us", "computing_us", "communication_us", "overlapped_us", "free_us")
        },
    }


@run_analyzer
def slow_rank(side: Side, role: str) -> list[Symptom]:
    """One rank of the job computes longer than the others in most steps; the others wait for it."""
    ranks = side.run.ranks
    if ranks is None or ranks.straggler is None:
        return []
    slow = ranks.straggler
    return [
        SlowRank(
            rank=slow.rank,
            typical_rank=slow.typical_rank,
            compute_ratio=rnd(slow.ratio, 4),
            extra_ms_per_step=rnd(slow.extra_ms, 4),
            stable_share=rnd(slow.steps_flagged / max(slow.steps_total, 1)),
            victims=list(slow.victims),
            wait_ms_per_step=rnd(slow.wait_ms, 4),
            ranks=len(ranks.summaries),
        ).symptom(
            say(
                "slow-rank",
                role=say(f"role.{role}"),
                rank=slow.rank,
                ratio=slow.ratio,
                extra_ms=slow.extra_ms,
                flagged=slow.steps_flagged,
                steps=slow.steps_total,
                victims=len(slow.victims),
                wait_ms=slow.wait_ms,
                typical=slow.typical_rank,
            ),
            role,
            min(1.0, (slow.ratio - 1.0) / 0.3),
            evidence=tuple(_rank_row(s, slow.rank) for s in ranks.summaries if s.ok)[:16],
            recoverable_ms_per_step=rnd(slow.extra_ms, 4),
        )
    ]


def _rank_row(summary: RankSummary, slow: int) -> dict[str, float | int | bool | None]:
    steps = summary.breakdown
    return {
        "rank": summary.rank,
        "slow": summary.rank == slow,
        "computing_ms": rnd(float(np.median([s.computing_us for s in steps])) / 1000, 4) if steps else None,
        "communication_ms": rnd(float(np.median([s.communication_us for s in steps])) / 1000, 4)
        if steps
        else None,
    }


@run_analyzer
def slow_link(side: Side, role: str) -> list[Symptom]:
    """A rank whose bandwidth on a link type (HCCS, RDMA, SDMA, PCIe) is under half the others' median."""
    ranks = side.run.ranks
    if ranks is None or not ranks.slow_links:
        return []
    worst = min(ranks.slow_links, key=lambda x: float(x["gbps"]) / float(x["median_gbps"]))
    return [
        SlowLink(
            links=len(ranks.slow_links),
            rank=worst["rank"],
            link=worst["link"],
            bandwidth_ratio=rnd(float(worst["gbps"]) / float(worst["median_gbps"])),
        ).symptom(
            say(
                "slow-link",
                role=say(f"role.{role}"),
                n=len(ranks.slow_links),
                rank=worst["rank"],
                link=f"{worst['link']} {pair}" if (pair := worst.get("pair")) else worst["link"],
                gbps=worst["gbps"],
                median=worst["median_gbps"],
            ),
            role,
            min(1.0, 1.0 - float(worst["gbps"]) / float(worst["median_gbps"])),
            evidence=tuple(dict(x) for x in ranks.slow_links[:10]),
        )
    ]

"""The report's "Ranks" section, built as its typed model (doctor.model.ranks) from each multi-rank input's
RankSet, and the slow rank's causes found by diagnosing it against a typical rank of the same job."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median
from typing import TYPE_CHECKING, Any

from core import in_lang

if TYPE_CHECKING:
    from core import RankSet
    from diagnosis import Side
    from knowledge import Cause
from doctor.model.ranks import RankCause, RankDelta, RankJob, RankRow, Ranks, RankStep, SlowLink, SlowRank

JOB_LEVEL = frozenset({"slow-rank", "slow-link", "communication-bound"})  # not a reason of one rank
WHY_LIMIT = 3


def slow_rank_causes(side: Side) -> list[Cause]:
    """The causes of a job's slow rank against its typical rank (the pair engine on two ranks of one job),
    most useful first; empty without a slow rank."""
    from diagnosis import analyze_pair, compare_sides
    from knowledge import evaluate

    if side.typical is None:
        return []
    comparison = compare_sides(side.typical, side, baseline="first")
    symptoms = analyze_pair(comparison)
    limitations = [*side.typical.run.limitations, *side.run.limitations]
    found = evaluate(symptoms, limitations, {"pair"}, side.ms_per_step)
    return [c for c in found.causes if c.id not in JOB_LEVEL and c.significant][:WHY_LIMIT]


def ranks_section(jobs: Sequence[tuple[str, RankSet, Sequence[Cause]]], comparison: str, lang: str) -> Ranks:
    """The section: one RankJob per multi-rank input (role, RankSet, the slow rank's causes)."""
    built = [_job(role, ranks, why, lang) for role, ranks, why in jobs]
    return Ranks(jobs=built, comparison=str(in_lang(comparison, lang)), by_rank=_by_rank(built))


def _job(role: str, ranks: Any, why: Sequence[Any], lang: str) -> RankJob:
    slow = ranks.straggler
    return RankJob(
        role=role,  # pyright: ignore[reportArgumentType]  # callers pass a JobRole
        ranks=len(ranks.summaries),
        chosen_rank=ranks.chosen,
        rows=[_row(s, lang) for s in ranks.summaries],
        slow_rank=None if slow is None else _slow(slow, why, lang),
        slow_links=[SlowLink(**link) for link in ranks.slow_links],
        note=str(in_lang(ranks.reason, lang)) if ranks.reason else "",
    )


def _ms(value: float) -> float:
    return round(float(value) / 1000.0, 4)


def _median_ms(steps: Sequence[Any], name: str) -> float | None:
    return _ms(median(getattr(s, name) for s in steps)) if steps else None


def _row(summary: Any, lang: str) -> RankRow:
    steps = summary.breakdown
    return RankRow(
        rank=summary.rank,
        root=summary.root,
        status="ok" if summary.ok else "broken",
        error=None if summary.ok else str(in_lang(summary.error, lang)),
        breakdown_source=summary.breakdown_source,
        kernels=summary.kernels,
        steps=[
            RankStep(
                step=s.step,
                wall_ms=_ms(s.wall_us),
                computing_ms=_ms(s.computing_us),
                communication_ms=_ms(s.communication_us),
                overlapped_ms=_ms(s.overlapped_us),
                free_ms=_ms(s.free_us),
            )
            for s in steps
        ],
        wall_ms=_median_ms(steps, "wall_us"),
        computing_ms=_median_ms(steps, "computing_us"),
        communication_ms=_median_ms(steps, "communication_us"),
        free_ms=_median_ms(steps, "free_us"),
        aicore_mhz=summary.aicore_mhz,
        link_gbps=dict(summary.link_gbps),
    )


def _slow(slow: Any, why: Sequence[Any], lang: str) -> SlowRank:
    causes = []
    for cause in why:
        item = cause.to_dict(lang)
        causes.append(
            RankCause(
                id=item["id"], title=item["title"], recoverable_ms_per_step=item["recoverable_ms_per_step"]
            )
        )
    return SlowRank(
        rank=slow.rank,
        typical_rank=slow.typical_rank,
        ratio=slow.ratio,
        extra_ms_per_step=slow.extra_ms,
        steps_flagged=slow.steps_flagged,
        steps_total=slow.steps_total,
        test=slow.test,
        victims=list(slow.victims),
        wait_ms_per_step=max(slow.wait_ms, 0.0),
        why=causes,
    )


def _by_rank(jobs: list[RankJob]) -> list[RankDelta]:
    """Rank by rank, when a baseline and a target job hold the same ranks."""
    by_role = {job.role: job for job in jobs}
    base, target = by_role.get("baseline"), by_role.get("target")
    if base is None or target is None or [r.rank for r in base.rows] != [r.rank for r in target.rows]:
        return []
    return [
        RankDelta(
            rank=b.rank,
            baseline_computing_ms=b.computing_ms,
            target_computing_ms=t.computing_ms,
            baseline_wall_ms=b.wall_ms,
            target_wall_ms=t.wall_ms,
        )
        for b, t in zip(base.rows, target.rows, strict=True)
    ]

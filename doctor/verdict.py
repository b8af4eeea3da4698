"""The one-line verdict: how much slower the target is, and the most likely cause with its recoverable time.

Example: "Inference is 1.79x slower per step in operator time than the training forward pass (median of
5 and 5 steps); most likely cause: precision mismatch, about 3.24 ms/step recoverable". The ratio is the
timing's headline: the median step wall time where both runs record it and neither is a training step
(the time the user feels), else the compared operator time, per sample when the batches differ; the
sentence names the measure. A materially slower target (>= 1.2x beyond both runs' noise) without a
significant cause is an "unexplained slowdown" that says where the time went and what data would decide
it, never "nothing significant". It reads the typed document parts (doctor.build) and returns the
typed `Verdict`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeGuard

from doctor.i18n import t
from doctor.model import After, Cause, Graph, OperatorRow, Ranks, RunInfo, Timing, Verdict
from doctor.text import fmt_number

SAME_BAND = 0.05  # ratios within 5% of 1 read as "about as long"
MIN_RATIO = 1e-4  # the smallest ratio the timing can hold (rounded to 4 decimals)
UNEXPLAINED_RATIO = 1.2  # a slowdown this large without a significant cause is not "nothing significant"
NOISY_SPREAD = 0.3  # (p90 - p10) / median of the baseline's steps above which it is called noisy
TOP_OPERATORS = 3


def verdict(
    kind: str,
    timing: Timing | None,
    causes: Sequence[Cause],
    status: str,
    undecided: int,
    lang: str,
    graph: Graph | None = None,
    *,
    runs: Sequence[RunInfo] = (),
    operators: Sequence[OperatorRow] = (),
    npu_smi: bool = False,
    ranks: Ranks | None = None,
    after: After | None = None,
) -> Verdict:
    """The verdict section of the report: text, status, slowdown ratio, top cause and its recoverable time.

    `status` is the engine's: "problem" (a material cause), "findings" (significant findings of one
    input on its own, not material) or "nothing-found"; the top cause is the first material one. A pair
    with no cause whose target is materially slower becomes "unexplained-slowdown" (`runs`, `operators`
    and whether npu-smi readings were given say where the time went and which data is still missing).
    With an `after` run the sentence ends with how the fixes fared and the measured step time change."""
    top = _top(causes, status)
    base = _subject(kind, timing, graph, lang)
    if top is None and kind == "pair" and _same_run(timing):
        status, text = "nothing-found", t("v_same_run", lang)
    elif top is None and kind == "pair" and _unexplained(timing):
        status = "unexplained-slowdown"
        text = t(
            "v_unexplained",
            lang,
            base=base,
            where=_where(timing, operators, lang),
            asks=_asks(runs, npu_smi, lang),
        )
    elif top is None:
        status = "nothing-found"
        text = _no_cause(base, timing, kind, lang)
        if undecided:
            text += t("v_undecided", lang, n=undecided)
    elif status == "findings":
        text = base + t("v_findings", lang, title=top.title)
    elif kind == "pair" and (_slowdown(timing) or 1.0) <= 1.0 + SAME_BAND:
        # Not slower: a "most likely cause" of a slowdown that is not there would read wrongly.
        text = base + t("v_finding", lang, title=top.title)
    else:
        text = base + _cause(top, lang)
    text += _slow_rank(ranks, lang) + _after(after, lang)
    return Verdict.of(
        text=text,
        status=status,
        slowdown=_slowdown(timing),
        top_cause=None if top is None else top.id,
        recoverable_ms_per_step=None if top is None else top.recoverable_ms_per_step,
    )


def _top(causes: Sequence[Cause], status: str) -> Cause | None:
    """The cause the verdict names: the first material one for a problem, else the first significant."""
    if status == "nothing-found":
        return None
    wanted = "material" if status == "problem" else "significant"
    return next((c for c in causes if getattr(c, wanted)), None)


def _slowdown(timing: Timing | None) -> float | None:
    """For a generation pair the ratio at the target's phase mix (phase against phase; None without a
    phase in common), else the headline's median ratio (wall or operator time, per sample when batches
    differ), else (older documents) the per-sample or per-step operator-time ratio."""
    if timing is None:
        return None
    if timing.phases is not None:
        return timing.phase_ratio
    if timing.headline is not None:
        return timing.headline.ratio
    return timing.per_sample_ratio or timing.ratio


def _same_run(timing: Timing | None) -> bool:
    """Whether the two inputs are one run: identical kernels and timestamps (see diagnosis)."""
    headline = None if timing is None else timing.headline
    return headline is not None and headline.same_run


def _unexplained(timing: Timing | None) -> TypeGuard[Timing]:
    """A material slowdown: >= UNEXPLAINED_RATIO on the headline measure and not within both runs'
    measured noise (unmeasurable noise, under 3 steps, does not hide it)."""
    ratio = _slowdown(timing)
    if ratio is None or ratio < UNEXPLAINED_RATIO:
        return False
    headline = None if timing is None else timing.headline
    return headline is None or headline.beyond_noise is not False


def _where(timing: Timing, operators: Sequence[OperatorRow], lang: str) -> str:
    """Where the extra time went: operators, the gaps between them, the largest operator changes and
    how many steps are slow."""
    headline = timing.headline
    parts = []
    op_delta = None if headline is None else headline.operator_delta_ms
    totals = (timing.target_ms_per_step, timing.baseline_ms_per_step)
    if op_delta is None and totals[0] is not None and totals[1] is not None:
        op_delta = totals[0] - totals[1]  # a document without a headline
    if op_delta is not None:
        parts.append(t("v_where_ops", lang, ms=_signed(op_delta)))
    if headline is not None and headline.gap_delta_ms is not None:
        parts.append(t("v_where_gaps", lang, ms=_signed(headline.gap_delta_ms)))
    grown = sorted(
        (r for r in operators if (r.delta_us_per_step or 0) > 0),
        key=lambda r: -(r.delta_us_per_step or 0),
    )[:TOP_OPERATORS]
    if grown:
        ops = ", ".join(f"{r.operator} ({_signed((r.delta_us_per_step or 0) / 1000)} ms)" for r in grown)
        parts.append(t("v_where_top", lang, ops=ops))
    if headline is not None and headline.slower_steps is not None:
        parts.append(t("v_where_steps", lang, n=headline.slower_steps, m=headline.target_steps))
    return "; ".join(parts)


def _signed(ms: float) -> str:
    return ("+" if ms >= 0 else "") + fmt_number(ms)


def _asks(runs: Sequence[RunInfo], npu_smi: bool, lang: str) -> str:
    """The data that would decide an unexplained slowdown, leaving out what was given."""
    ascend = any(r.device == "Ascend" for r in runs)
    asks = []
    if ascend:
        asks.append("v_ask_clock")
        if not npu_smi:
            asks.append("v_ask_npu_smi")
        levels = [r.profiler_config.level for r in runs]
        if any(level not in ("Level1", "Level2") for level in levels):
            asks.append("v_ask_level1")
    else:
        asks.append("v_ask_load")
    stacks = [r.profiler_config.with_stack for r in runs]
    if not runs or not all(stacks):
        asks.append("v_ask_host")
    return "; ".join(t(key, lang) for key in asks)


def _subject(kind: str, timing: Timing | None, graph: Graph | None, lang: str) -> str:
    """The first half of the sentence: the measured gap, the single run's time, or the model summary."""
    if kind == "mindir" and graph is not None:
        chains = graph.chains
        return t("v_mindir", lang, name=graph.file, chains=chains.total, fusible=chains.fusible)
    if kind == "single" or timing is None or timing.ratio is None:
        return t("v_single", lang, ms=fmt_number(None if timing is None else timing.target_ms_per_step))
    train_vs_infer = timing.baseline_phase == "train" and timing.target_phase != "train"
    subject = t("v_infer_vs_train" if train_vs_infer else "v_target", lang)
    ref = t("v_ref_train" if train_vs_infer else "v_ref_baseline", lang)
    if timing.phases is not None:
        return _phases(timing, subject, ref, lang)
    headline = timing.headline
    if headline is None:  # a document from before the headline measure
        per_sample = timing.per_sample_ratio
        unit = t("v_unit_sample" if per_sample else "v_unit_step", lang)
        return _compared(subject, float(per_sample or timing.ratio), unit, ref, lang)
    wall = headline.measure == "wall"
    unit_key = "v_unit_sample" if headline.per_sample else "v_unit_step"
    unit = t(unit_key + ("_wall" if wall else ""), lang)
    if min(headline.baseline_steps, headline.target_steps) > 1:
        unit += t("v_median", lang, b=headline.baseline_steps, t=headline.target_steps)
    text = _compared(subject, float(headline.ratio), unit, ref, lang)
    spread = headline.baseline_spread
    if spread is not None and spread >= NOISY_SPREAD:
        text += t(
            "v_noisy_baseline",
            lang,
            spread=f"{spread:.0%}",
            b_p10=fmt_number(headline.baseline_p10_ms),
            t_p10=fmt_number(headline.target_p10_ms),
        )
    return text


def _compared(subject: str, ratio: float, unit: str, ref: str, lang: str) -> str:
    """ "X is 1.4x slower per step in wall time than Y", or faster, or about as long."""
    if abs(ratio - 1.0) <= SAME_BAND:
        return t("v_same", lang, subject=subject, ratio=f"{ratio:.2f}", unit=unit, ref=ref)
    if ratio > 1.0:
        return t("v_slower", lang, subject=subject, ratio=f"{ratio:.2f}", unit=unit, ref=ref)
    return t("v_faster", lang, subject=subject, ratio=_inverse(ratio), unit=unit, ref=ref)


def _inverse(ratio: float) -> str:
    """1/ratio for "Nx faster"; the timing keeps 4 decimals, so a ratio that rounded to 0 (a target of
    0.1 ns launches) is "more than 10000x", never a division by zero."""
    return f"{1.0 / ratio:.2f}" if ratio >= MIN_RATIO else f">{1.0 / MIN_RATIO:.0f}"


def _phases(timing: Timing, subject: str, ref: str, lang: str) -> str:
    """A generation pair: each phase's ratio against the same phase of the other run, the ratio at the
    target's phase mix, and the target's phases the other run lacks (never one phase-blind ratio)."""
    phases = timing.phases or ()
    parts = [
        t("v_phase_part", lang, phase=t(f"v_phase_{p.phase}", lang), ratio=f"{p.ratio:.2f}")
        for p in phases
        if p.ratio is not None
    ]
    missing = "".join(
        t("v_phase_missing", lang, steps=p.target_steps, phase=t(f"v_phase_{p.phase}", lang), ref=ref)
        for p in phases
        if p.ratio is None and p.target_steps
    )
    phase_ratio = timing.phase_ratio
    if not parts or phase_ratio is None:
        return t("v_phases_none", lang, subject=subject, ref=ref) + missing
    joined = t("v_phase_join", lang).join(parts)
    return t("v_phases", lang, subject=subject, ref=ref, parts=joined, ratio=f"{phase_ratio:.2f}") + missing


def _cause(top: Cause, lang: str) -> str:
    recoverable = top.recoverable_ms_per_step
    if recoverable:
        return t("v_cause_ms", lang, title=top.title, ms=fmt_number(recoverable))
    return t("v_cause", lang, title=top.title)


def _no_cause(base: str, timing: Timing | None, kind: str, lang: str) -> str:
    """Plain 'nothing significant' wording; a measured slowdown without a cause is stated as such."""
    if kind != "pair":
        return t("v_nothing_after", lang, base=base)
    ratio = _slowdown(timing)
    if ratio is not None and ratio > 1.0 + SAME_BAND:
        return t("v_no_cause", lang, base=base)
    return t("v_nothing", lang, base=base)


def _slow_rank(ranks: Ranks | None, lang: str) -> str:
    """The slow rank of the target job (else of a job given alone), named with its most likely reason."""
    jobs = [] if ranks is None else [j for j in ranks.jobs if j.slow_rank is not None]
    job = next((j for j in jobs if j.role == "target"), jobs[0] if jobs else None)
    if job is None or job.slow_rank is None:
        return ""
    slow = job.slow_rank
    ratio = f"{slow.ratio:.2f}"
    if slow.why:
        why = slow.why[0].title
        return t("v_slow_rank_why", lang, rank=slow.rank, ratio=ratio, typical=slow.typical_rank, why=why)
    return t("v_slow_rank", lang, rank=slow.rank, ratio=ratio, typical=slow.typical_rank)


def _after(after: After | None, lang: str) -> str:
    """The after run's outcome (resolved / partly / not, with how many ranked causes were resolved) and
    the measured step time change, so the verdict alone says whether the fix worked ("" without one)."""
    if after is None:
        return ""
    from doctor.followup import outcome  # pure functions over the models, no import cost

    target, gain = after.target_ms_per_step, after.gain_ms_per_step
    change = f"{-gain / target:+.0%}".replace("-", "−") if target > 0 else "—"
    times = t(
        "v_after_time",
        lang,
        target=fmt_number(target),
        after=fmt_number(after.after_ms_per_step),
        gain=_signed(-gain).replace("-", "−"),
        change=change,
    )
    result = outcome(after)
    if result is None:
        return t("v_after_plain", lang, times=times)
    ranked = [c for c in after.causes if c.ranked]
    resolved = sum(c.status == "resolved" for c in ranked)
    return t(
        "v_after",
        lang,
        outcome=t(f"v_after_{result}", lang),
        resolved=resolved,
        causes=len(ranked),
        times=times,
    )

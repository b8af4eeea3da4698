"""The one-line verdict: how much slower the target is, and the most likely cause with its recoverable time.

Example: "Inference is 1.79x slower per step in operator time than the training forward pass; most likely
cause: precision mismatch, about 3.24 ms/step recoverable". The ratio is compared operator time
(the timing's `ratio`), named in the sentence, so it never reads like the wall step time some evidence states.
When no cause is significant it says so plainly. It reads and returns document parts as JSON data
(doctor.build), so a command-line report needs no report model.
"""

from __future__ import annotations

from collections.abc import Sequence

from doctor.i18n import t
from doctor.shape import Part
from doctor.text import fmt_number

SAME_BAND = 0.05  # ratios within 5% of 1 read as "about as long"


def verdict(
    kind: str,
    timing: Part | None,
    causes: Sequence[Part],
    status: str,
    undecided: int,
    lang: str,
    graph: Part | None = None,
    ranks: Part | None = None,
) -> Part:
    """The verdict section of the report: text, status, slowdown ratio, top cause and its recoverable time.

    `status` is the engine's: "problem" (a material cause), "findings" (significant findings of one
    input on its own, not material) or "nothing-found"; the top cause is the first material one."""
    top = _top(causes, status)
    base = _subject(kind, timing, graph, lang)
    if top is None:
        status = "nothing-found"
        text = _no_cause(base, timing, kind, lang)
        if undecided:
            text += t("v_undecided", lang, n=undecided)
    elif status == "findings":
        text = base + t("v_findings", lang, title=top["title"])
    elif kind == "pair" and (_slowdown(timing) or 1.0) <= 1.0 + SAME_BAND:
        # Not slower: a "most likely cause" of a slowdown that is not there would read wrongly.
        text = base + t("v_finding", lang, title=top["title"])
    else:
        text = base + _cause(top, lang)
    text += _slow_rank(ranks, lang)
    return {
        "text": text,
        "status": status,
        "slowdown": _slowdown(timing),
        "top_cause": None if top is None else top["id"],
        "recoverable_ms_per_step": None if top is None else top["recoverable_ms_per_step"],
    }


def _top(causes: Sequence[Part], status: str) -> Part | None:
    """The cause the verdict names: the first material one for a problem, else the first significant."""
    if status == "nothing-found":
        return None
    wanted = "material" if status == "problem" else "significant"
    return next((c for c in causes if c[wanted]), None)


def _slowdown(timing: Part | None) -> float | None:
    """For a generation pair the ratio at the target's phase mix (phase against phase; None without a
    phase in common), else the per-sample ratio when batches differ, else the per-step ratio."""
    if timing is None:
        return None
    if timing.get("phases") is not None:
        return timing.get("phase_ratio")
    return timing["per_sample_ratio"] or timing["ratio"]


def _subject(kind: str, timing: Part | None, graph: Part | None, lang: str) -> str:
    """The first half of the sentence: the measured gap, the single run's time, or the model summary."""
    if kind == "mindir" and graph is not None:
        chains = graph["chains"]
        return t("v_mindir", lang, name=graph["file"], chains=chains["total"], fusible=chains["fusible"])
    if kind == "single" or timing is None or timing["ratio"] is None:
        return t("v_single", lang, ms=fmt_number(None if timing is None else timing["target_ms_per_step"]))
    train_vs_infer = timing["baseline_phase"] == "train" and timing["target_phase"] != "train"
    subject = t("v_infer_vs_train" if train_vs_infer else "v_target", lang)
    ref = t("v_ref_train" if train_vs_infer else "v_ref_baseline", lang)
    if timing.get("phases") is not None:
        return _phases(timing, subject, ref, lang)
    per_sample = timing["per_sample_ratio"]
    unit = t("v_unit_sample" if per_sample else "v_unit_step", lang)
    ratio = float(per_sample or timing["ratio"])
    if abs(ratio - 1.0) <= SAME_BAND:
        return t("v_same", lang, subject=subject, ratio=f"{ratio:.2f}", unit=unit, ref=ref)
    if ratio > 1.0:
        return t("v_slower", lang, subject=subject, ratio=f"{ratio:.2f}", unit=unit, ref=ref)
    return t("v_faster", lang, subject=subject, ratio=f"{1.0 / ratio:.2f}", unit=unit, ref=ref)


def _phases(timing: Part, subject: str, ref: str, lang: str) -> str:
    """A generation pair: each phase's ratio against the same phase of the other run, the ratio at the
    target's phase mix, and the target's phases the other run lacks (never one phase-blind ratio)."""
    phases = timing.get("phases") or ()
    parts = [
        t("v_phase_part", lang, phase=t(f"v_phase_{p['phase']}", lang), ratio=f"{p['ratio']:.2f}")
        for p in phases
        if p["ratio"] is not None
    ]
    missing = "".join(
        t("v_phase_missing", lang, steps=p["target_steps"], phase=t(f"v_phase_{p['phase']}", lang), ref=ref)
        for p in phases
        if p["ratio"] is None and p["target_steps"]
    )
    phase_ratio = timing.get("phase_ratio")
    if not parts or phase_ratio is None:
        return t("v_phases_none", lang, subject=subject, ref=ref) + missing
    joined = t("v_phase_join", lang).join(parts)
    return t("v_phases", lang, subject=subject, ref=ref, parts=joined, ratio=f"{phase_ratio:.2f}") + missing


def _cause(top: Part, lang: str) -> str:
    recoverable = top["recoverable_ms_per_step"]
    if recoverable:
        return t("v_cause_ms", lang, title=top["title"], ms=fmt_number(recoverable))
    return t("v_cause", lang, title=top["title"])


def _no_cause(base: str, timing: Part | None, kind: str, lang: str) -> str:
    """Plain 'nothing significant' wording; a measured slowdown without a cause is stated as such."""
    if kind != "pair":
        return t("v_nothing_after", lang, base=base)
    ratio = _slowdown(timing)
    if ratio is not None and ratio > 1.0 + SAME_BAND:
        return t("v_no_cause", lang, base=base)
    return t("v_nothing", lang, base=base)


def _slow_rank(ranks: Part | None, lang: str) -> str:
    """The slow rank of the target job (else of a job given alone), named with its most likely reason."""
    jobs = [] if ranks is None else [j for j in ranks["jobs"] if j["slow_rank"] is not None]
    job = next((j for j in jobs if j["role"] == "target"), jobs[0] if jobs else None)
    if job is None:
        return ""
    slow = job["slow_rank"]
    ratio = f"{slow['ratio']:.2f}"
    if slow["why"]:
        why = slow["why"][0]["title"]
        return t(
            "v_slow_rank_why", lang, rank=slow["rank"], ratio=ratio, typical=slow["typical_rank"], why=why
        )
    return t("v_slow_rank", lang, rank=slow["rank"], ratio=ratio, typical=slow["typical_rank"])

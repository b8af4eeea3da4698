"""Evaluate every rule against the symptoms and rank the root causes by expected benefit.

Inputs are only the symptoms, the limitations of the inputs and the input kinds, so the same engine
serves a pair of profiles, a single run, a MINDIR or a MINDIR joined with a profile. The scoring,
ranking and verdict are documented in knowledge/README.md ("Scoring and ranking").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar, cast

from core.jsontypes import JsonObject
from core.model import Limitation
from core.symptoms import SYMPTOM_KINDS, Symptom
from core.text import in_lang
from knowledge.loader import load_rules
from knowledge.schema import (
    DEFAULT_SUPPORT_SOURCES,
    INPUT_KINDS,
    SEVERITIES,
    Explanation,
    Fix,
    Need,
    Reference,
    Rule,
    Signal,
    Support,
    Text,
    severity_rank,
)

SignalT = TypeVar("SignalT", bound=Signal)

MIN_REPORTED_CONFIDENCE = 0.15  # below this a cause is dropped: too weak or contradicted away
SIGNIFICANT_CONFIDENCE = 0.5  # a cause counts for the verdict at this confidence ...
SIGNIFICANT_SEVERITY = "medium"  # ... and at this severity or above
CAPPED_SEVERITY = "low"  # the most a weak (confidence) or negligible (step share) cause is shown as
# A finding of a lone input (one profile, a MINDIR) makes the verdict "problem" only when fixing it
# gives back at least this share of the step: below it a single run cannot tell it from normal cost.
MATERIAL_SHARE = 0.10
RAISE_SHARE = 0.25  # recoverable share of the step that raises severity by one level
LOWER_SHARE = 0.05  # share below which severity drops by one level
# Below this share a fix gives back about as much as a steady run varies from step to step (a robust
# sigma of 0.7 % on the repeated real CPU runs, measured by bench/diagnosis.py): severity is at most
# "low", so such a cause is never significant.
NEGLIGIBLE_SHARE = 0.01
# Where the engine reads the inference step time (ms) to express recoverable time as a share.
STEP_TIME_FROM = (
    ("step-time-gap", "target_ms_per_step", ("pair",)),
    ("step-jitter", "p50_ms", ("target",)),
    ("first-step-outlier", "median_ms", ("target",)),
)

VERDICT_NOTHING = Text(
    en="Nothing significant found: no cause reaches confidence 0.5 at medium severity or above.",
    zh="未发现显著问题：没有任何原因达到置信度 0.5 且严重程度为中等及以上。",
)
VERDICT_FOUND = Text(
    en="Significant causes found: fix them in the order listed.",
    zh="发现显著原因：请按列出的顺序修复。",
)
VERDICT_FINDINGS = Text(
    en="Findings of the input on its own (no comparison backs them): check them in the order listed.",
    zh="仅针对该输入本身的发现（没有对比数据支撑）：请按列出的顺序检查。",
)
STATUSES = ("problem", "findings", "nothing-found")
# Where evidence comes from: the difference between the two runs, or one input on its own.
BASES = ("differential", "lone")
CANNOT_DECIDE = Text(en="Cannot decide, because {reason}", zh="无法判断，因为{reason}")
PARTIAL_DATA = Text(
    en="Decided without all the data: {reason}", zh="在数据不完整的情况下作出的判断：{reason}"
)


@dataclass(frozen=True)
class Evidence:
    """One symptom that supports or contradicts a cause, with its numbers and proving rows."""

    symptom: str
    role: str  # "supports" | "contradicts"
    source: str
    summary: str
    strength: float
    weight: float
    values: dict[str, object]  # the symptom's numbers
    rows: tuple[Mapping[str, object], ...]  # the rows that prove it
    recoverable_ms_per_step: float | None
    basis: str = "differential"  # see BASES
    baseline_summary: str | None = None  # the baseline's symptom of the same kind, when subtracted

    def to_dict(self) -> JsonObject:
        """JSON-able form."""
        return {
            "symptom": self.symptom,
            "role": self.role,
            "source": self.source,
            "summary": self.summary,
            "strength": round(self.strength, 4),
            "weight": self.weight,
            "values": self.values,
            "rows": list(self.rows),
            "recoverable_ms_per_step": _round(self.recoverable_ms_per_step),
            "basis": self.basis,
            "baseline_summary": self.baseline_summary,
        }


@dataclass(frozen=True)
class Cause:
    """A ranked root cause: how sure, how bad, how much time per step a fix gives back, and the fix."""

    id: str
    title: Text
    severity: str
    default_severity: str
    confidence: float
    recoverable_ms_per_step: float | None
    expected_benefit_ms: float | None
    step_share: float | None
    evidence: tuple[Evidence, ...]
    fix: Fix
    explanation: Explanation
    references: tuple[Reference, ...]
    caveats: tuple[Text, ...] = ()
    basis: str = "differential"  # "lone": a finding of one input, not the cause of a gap
    absorbed: tuple[str, ...] = ()  # ids of symptom-level causes this root cause explains

    @property
    def significant(self) -> bool:
        """Whether the cause reaches the documented minimum for the verdict."""
        return self.confidence >= SIGNIFICANT_CONFIDENCE and severity_rank(self.severity) >= severity_rank(
            SIGNIFICANT_SEVERITY
        )

    @property
    def quantified(self) -> bool:
        """Whether the recoverable share of the step is known (severity was measured, not defaulted)."""
        return self.step_share is not None

    @property
    def severity_label(self) -> str:
        """The severity as shown: the level, or "unquantified" when the step share is unknown."""
        return self.severity if self.quantified else "unquantified"

    @property
    def material(self) -> bool:
        """A significant cause that makes the verdict a problem: differential evidence, or a lone
        finding whose recoverable time is at least MATERIAL_SHARE of the step."""
        if not self.significant:
            return False
        return self.basis == "differential" or (self.step_share or 0.0) >= MATERIAL_SHARE

    @property
    def fix_code(self) -> str:
        """The fix as runnable MindSpore 2.10 code."""
        return self.fix.code

    def to_dict(self, lang: str = "en") -> JsonObject:
        """JSON-able form with user-facing text in `lang`."""
        return {
            "id": self.id,
            "title": self.title.get(lang),
            "severity": self.severity,
            "default_severity": self.default_severity,
            "confidence": round(self.confidence, 3),
            "recoverable_ms_per_step": _round(self.recoverable_ms_per_step),
            "expected_benefit_ms": _round(self.expected_benefit_ms),
            "step_share": _round(self.step_share),
            "significant": self.significant,
            "material": self.material,
            "severity_label": self.severity_label,
            "basis": self.basis,
            "absorbed": list(self.absorbed),
            "evidence": [e.to_dict() for e in self.evidence],
            "fix": {
                "code": self.fix.code_in(lang),
                "language": self.fix.language,
                "notes": self.fix.notes.get(lang),
            },
            "explanation": {
                "what_it_detects": self.explanation.what_it_detects.get(lang),
                "why_it_matters": self.explanation.why_it_matters.get(lang),
                "how_to_confirm": self.explanation.how_to_confirm.get(lang),
            },
            "references": [{"title": r.title, "url": r.url} for r in self.references],
            "caveats": [c.get(lang) for c in self.caveats],
        }


@dataclass(frozen=True)
class Undecided:
    """A cause the inputs cannot decide: which data is missing, why it matters, how to get it."""

    id: str
    title: Text
    topics: tuple[str, ...]
    reason: Text
    remedy: Text
    details: tuple[str, ...] = ()  # the inputs' own Limitation reasons (core.text messages from the readers)

    def text(self, lang: str = "en") -> str:
        """'Cannot decide, because ...' in `lang`."""
        return CANNOT_DECIDE.get(lang).format(reason=self.reason.get(lang))

    def to_dict(self, lang: str = "en") -> JsonObject:
        """JSON-able form with user-facing text in `lang`."""
        return {
            "id": self.id,
            "title": self.title.get(lang),
            "topics": list(self.topics),
            "text": self.text(lang),
            "reason": self.reason.get(lang),
            "remedy": self.remedy.get(lang),
            "details": [in_lang(detail, lang) for detail in self.details],
        }


@dataclass(frozen=True)
class Diagnosis:
    """Ranked causes, undecidable causes, and the plain verdict."""

    causes: list[Cause]
    undecided: list[Undecided]
    nothing_found: bool
    step_ms: float | None = None

    @property
    def status(self) -> str:
        """ "problem" (a material significant cause), "findings" (significant findings of a lone input
        that are not material) or "nothing-found"."""
        if any(c.material for c in self.causes):
            return "problem"
        return "nothing-found" if self.nothing_found else "findings"

    def verdict(self, lang: str = "en") -> str:
        """One sentence saying whether anything significant was found."""
        text = {"problem": VERDICT_FOUND, "findings": VERDICT_FINDINGS, "nothing-found": VERDICT_NOTHING}
        return text[self.status].get(lang)

    def to_dict(self, lang: str = "en") -> JsonObject:
        """JSON-able form with user-facing text in `lang` ("en" or "zh")."""
        return {
            "nothing_found": self.nothing_found,
            "status": self.status,
            "verdict": self.verdict(lang),
            "step_ms": _round(self.step_ms),
            "causes": [c.to_dict(lang) for c in self.causes],
            "undecided": [u.to_dict(lang) for u in self.undecided],
        }


def evaluate(
    symptoms: Sequence[Symptom],
    limitations: Sequence[Limitation],
    inputs: Iterable[str],
    step_ms: float | None = None,
) -> Diagnosis:
    """Every packaged rule against the symptoms of the given input kinds, ranked. `step_ms` is the
    inference run's measured time per step, used when no symptom carries it (e.g. a target that is not
    slower has no step-time-gap), so recoverable times can still be weighed against the step."""
    return evaluate_rules(load_rules(), symptoms, limitations, inputs, step_ms)


def evaluate_rules(
    rules: Sequence[Rule],
    symptoms: Sequence[Symptom],
    limitations: Sequence[Limitation],
    inputs: Iterable[str],
    step_ms: float | None = None,
) -> Diagnosis:
    """`evaluate` with an explicit rule list (tests use hand-made rules)."""
    kinds = _check_inputs(inputs)
    for symptom in symptoms:
        if symptom.kind not in SYMPTOM_KINDS:
            raise ValueError(f"unknown symptom kind {symptom.kind!r}; add it to SYMPTOM_KINDS first")
    missing = _missing_topics(limitations)
    step_ms = inference_step_ms(symptoms) or (step_ms if _positive(step_ms) else None)
    causes: list[Cause] = []
    undecided: list[Undecided] = []
    for rule in rules:
        if not rule.applies(kinds):
            continue
        outcome = assess(rule, symptoms, missing, kinds, step_ms)
        if isinstance(outcome, Cause):
            causes.append(outcome)
        elif isinstance(outcome, Undecided):
            undecided.append(outcome)
    causes = absorb_explained(causes, {r.id: r for r in rules}, symptoms, step_ms)
    causes.sort(key=rank_key)
    return Diagnosis(
        causes=causes,
        undecided=sorted(undecided, key=lambda u: u.id),
        nothing_found=not any(c.significant for c in causes),
        step_ms=step_ms,
    )


@dataclass(frozen=True)
class Match:
    """One (entry, symptom) pair that matched, scored after the baseline's share was subtracted.

    In a pair diagnosis a target-run symptom is compared with the baseline's symptom of the same kind
    (the `reference`): a trait both runs share explains no gap. `basis` says whether the evidence is
    differential (a pair symptom, or target minus baseline) or comes from one input alone."""

    entry: Signal
    symptom: Symptom
    score: float
    recoverable: float | None
    basis: str
    reference: Symptom | None = None


def assess(
    rule: Rule,
    symptoms: Sequence[Symptom],
    missing: dict[str, list[str]],
    inputs: frozenset[str],
    step_ms: float | None,
) -> Cause | Undecided | None:
    """One rule's verdict: a cause, an undecided question, or None (decided: not present)."""
    raw_supports = _matches(rule.supports, symptoms, DEFAULT_SUPPORT_SOURCES)
    supports = [m for m in (score_support(e, s, symptoms, inputs) for e, s in raw_supports) if m.score > 0]
    supports = _without_lone_corroboration(supports)
    contradictions = [_plain(e, s) for e, s in _matches(rule.contradicts, symptoms, None)]
    lacking = [need for need in rule.needs_for(inputs) if need.topic in missing]
    if not supports:
        # Matched but fully shared with the baseline, or a contradicting symptom answered the question
        # (e.g. a MINDIR showing FP16): decided absent. Nothing matched and data missing: undecided.
        answered = bool(raw_supports or contradictions)
        return _undecided(rule, lacking, missing, inputs) if lacking and not answered else None
    best = _best_per_symptom(supports)
    contra = _best_per_symptom(contradictions)
    confidence = _clamp(
        _noisy_or(m.score for m in best.values()) - _noisy_or(m.score for m in contra.values())
    )
    if confidence < MIN_REPORTED_CONFIDENCE:
        return None
    recoverable = _recoverable(rule, supports)
    share = recoverable / step_ms if recoverable is not None and step_ms else None
    return Cause(
        id=rule.id,
        title=rule.title,
        severity=displayed_severity(_measured_severity(rule, share), confidence),
        default_severity=rule.severity,
        confidence=confidence,
        recoverable_ms_per_step=recoverable,
        expected_benefit_ms=None if recoverable is None else confidence * recoverable,
        step_share=share,
        evidence=_evidence(best, "supports") + _evidence(contra, "contradicts"),
        fix=rule.fix,
        explanation=rule.explanation,
        references=rule.references,
        caveats=tuple(_fill(PARTIAL_DATA, need.reason) for need in lacking),
        basis=_basis(best.values()),
    )


def score_support(
    entry: Support, symptom: Symptom, symptoms: Sequence[Symptom], inputs: frozenset[str]
) -> Match:
    """Score one matched support; a target-run symptom of a pair counts only beyond the baseline's.

    The same entry (condition and weight) is evaluated on the baseline's symptom of that kind; where it
    holds, a quantified entry keeps the part of the target's time the baseline does not have
    (recoverable = max(0, target - baseline), strength scaled by that extra fraction) and an
    unquantified one subtracts the baseline's strength. Where it does not hold, the baseline does not
    show the trait by the rule's own measure, and nothing is subtracted."""
    strength = _clamp(symptom.strength)
    target_ms = entry.recoverable_ms(symptom)
    if symptom.source != "target" or "pair" not in inputs:
        basis = "differential" if symptom.source == "pair" else "lone"
        return Match(entry, symptom, strength * entry.weight, target_ms, basis)
    reference = _baseline_of(symptom, symptoms)
    if reference is None or not (entry.when is None or entry.when.holds(reference.values)):
        # The baseline does not show the trait by the rule's own condition: nothing to subtract.
        return Match(entry, symptom, strength * entry.weight, target_ms, "differential")
    if target_ms:  # a positive time (a denormal scaled by recoverable_scale can reach 0.0)
        extra = max(0.0, target_ms - (entry.recoverable_ms(reference) or 0.0))
        score = strength * entry.weight * extra / target_ms
        return Match(entry, symptom, score, extra, "differential", reference)
    shared = _clamp(reference.strength)
    return Match(entry, symptom, max(0.0, strength - shared) * entry.weight, None, "differential", reference)


def _baseline_of(symptom: Symptom, symptoms: Sequence[Symptom]) -> Symptom | None:
    """The baseline run's symptom of the same kind, if the baseline showed it."""
    return next((s for s in symptoms if s.kind == symptom.kind and s.source == "baseline"), None)


def _plain(entry: Signal, symptom: Symptom) -> Match:
    """A contradicting match: strength times weight, no subtraction."""
    basis = "lone" if symptom.source in ("mindir", "mindir+profile") else "differential"
    return Match(entry, symptom, _clamp(symptom.strength) * entry.weight, None, basis)


def _corroborating(entry: Signal) -> bool:
    """A support that counts only beside a non-corroborating one (contradictions never are)."""
    return isinstance(entry, Support) and entry.corroborating


def _without_lone_corroboration(supports: list[Match]) -> list[Match]:
    """Corroborating supports count only beside a non-corroborating one that kept a score."""
    return [] if all(_corroborating(m.entry) for m in supports) else supports


def _basis(matches: Iterable[Match]) -> str:
    """Differential when a non-corroborating support compares the runs; else a lone finding."""
    decisive = [m for m in matches if not _corroborating(m.entry)]
    return "differential" if any(m.basis == "differential" for m in decisive) else "lone"


def absorb_explained(
    causes: list[Cause], rules: dict[str, Rule], symptoms: Sequence[Symptom], step_ms: float | None = None
) -> list[Cause]:
    """A significant root cause takes the causes it explains (jitter, drift, a uniform slowdown) as its
    own evidence instead of ranking beside or above them; explained symptoms that are no cause join its
    evidence too. Roots are taken in rank order, so the strongest explanation keeps the evidence."""
    out: dict[str, Cause] = {c.id: c for c in causes}
    for root_id in [c.id for c in sorted(causes, key=rank_key)]:
        root = out.get(root_id)
        if root is None or not root.significant or not rules[root_id].explains:
            continue
        kinds = set(rules[root_id].explains)
        victims = [c for c in out.values() if c.id != root_id and _only(c, kinds)]
        carried = tuple(
            replace(e, role="explains") for c in victims for e in c.evidence if e.role != "contradicts"
        )
        seen = {e.symptom for e in root.evidence} | {e.symptom for e in carried}
        loose = tuple(
            _explained(s) for s in symptoms if s.kind in kinds and s.kind not in seen and _on_target(s)
        )
        if not victims and not loose:
            continue
        for victim in victims:
            del out[victim.id]
        out[root_id] = replace(
            _quantified_by(root, victims, rules[root_id], step_ms),
            evidence=root.evidence + carried + loose,
            absorbed=root.absorbed + tuple(i for v in victims for i in (v.id, *v.absorbed)),
        )
    return list(out.values())


def _quantified_by(root: Cause, victims: list[Cause], rule: Rule, step_ms: float | None) -> Cause:
    """An unquantified root cause takes the largest recoverable time of the causes it absorbs, with the
    step share and severity that time gives (as if it had been its own)."""
    if root.recoverable_ms_per_step is not None:
        return root
    recoverable = max((v.recoverable_ms_per_step or 0.0 for v in victims), default=0.0) or None
    if recoverable is None:
        return root
    share = recoverable / step_ms if step_ms else None
    return replace(
        root,
        recoverable_ms_per_step=recoverable,
        expected_benefit_ms=root.confidence * recoverable,
        step_share=share,
        severity=displayed_severity(_measured_severity(rule, share), root.confidence),
    )


def _only(cause: Cause, kinds: set[str]) -> bool:
    """Whether every supporting symptom of the cause is one of `kinds`."""
    supports = [e.symptom for e in cause.evidence if e.role == "supports"]
    return bool(supports) and set(supports) <= kinds


def _on_target(symptom: Symptom) -> bool:
    return symptom.source in ("pair", "target")


def _explained(symptom: Symptom) -> Evidence:
    """An explained symptom that is no cause of its own: shown with its own numbers, weight 0."""
    return _as_evidence(symptom, "explains", 0.0, symptom.recoverable_ms_per_step, "differential")


def _as_evidence(
    symptom: Symptom,
    role: str,
    weight: float,
    recoverable: float | None,
    basis: str,
    reference: Symptom | None = None,
) -> Evidence:
    """A symptom as evidence of one role, with the recoverable time and basis the engine gave it."""
    return Evidence(
        symptom=symptom.kind,
        role=role,
        source=symptom.source,
        summary=symptom.summary,
        strength=_clamp(symptom.strength),
        weight=weight,
        values=dict(symptom.values),
        rows=tuple(symptom.evidence),
        recoverable_ms_per_step=recoverable,
        basis=basis,
        baseline_summary=None if reference is None else reference.summary,
    )


def _measured_severity(rule: Rule, share: float | None) -> str:
    """The rule's severity moved by the recoverable share; a cause that changes results (Dropout at
    inference) is never lowered by a small share, since its harm is not the kernels' time."""
    adjusted = adjust_severity(rule.severity, share)
    if rule.changes_results and severity_rank(adjusted) < severity_rank(rule.severity):
        return rule.severity
    return adjusted


def displayed_severity(severity: str, confidence: float) -> str:
    """Severity capped by confidence: a cause below SIGNIFICANT_CONFIDENCE is shown at most "low"."""
    if confidence < SIGNIFICANT_CONFIDENCE:
        return SEVERITIES[min(severity_rank(severity), severity_rank(CAPPED_SEVERITY))]
    return severity


def rank_key(cause: Cause) -> tuple[int | float | str, ...]:
    """Significant causes first; within each group, quantified causes by expected benefit, then the
    unquantified ones by severity and confidence; the id breaks ties so the order is stable."""
    if cause.expected_benefit_ms is not None:
        order: tuple[int | float, ...] = (0, -cause.expected_benefit_ms, 0.0)
    else:
        order = (1, -severity_rank(cause.severity), -cause.confidence)
    return (0 if cause.significant else 1, *order, cause.id)


def adjust_severity(severity: str, share: float | None) -> str:
    """Raise one level when a fix recovers >= RAISE_SHARE of the step, lower one below LOWER_SHARE, and
    cap at "low" below NEGLIGIBLE_SHARE."""
    rank = severity_rank(severity)
    if share is not None and share >= RAISE_SHARE:
        rank = min(rank + 1, len(SEVERITIES) - 1)
    elif share is not None and share < LOWER_SHARE:
        rank = max(rank - 1, 0)
    if share is not None and share < NEGLIGIBLE_SHARE:
        rank = min(rank, severity_rank(CAPPED_SEVERITY))
    return SEVERITIES[rank]


def inference_step_ms(symptoms: Sequence[Symptom]) -> float | None:
    """The inference run's time per step, from the first symptom in STEP_TIME_FROM that carries it."""
    for kind, key, sources in STEP_TIME_FROM:
        for symptom in symptoms:
            value = symptom.values.get(key)
            if symptom.kind == kind and symptom.source in sources and _positive(value):
                return float(cast(float, value))
    return None


def _check_inputs(inputs: Iterable[str]) -> frozenset[str]:
    if isinstance(inputs, str):
        raise TypeError("inputs must be a collection of input kinds, e.g. {'pair'}, not a string")
    kinds = frozenset(inputs)
    unknown = sorted(kinds - set(INPUT_KINDS))
    if not kinds or unknown:
        raise ValueError(f"input kinds must be a non-empty subset of {INPUT_KINDS}, got {sorted(kinds)}")
    return kinds


def _missing_topics(limitations: Sequence[Limitation]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for lim in limitations:
        reasons = out.setdefault(lim.topic, [])
        if lim.reason and lim.reason not in reasons:
            reasons.append(lim.reason)
    return out


def _matches(
    entries: Sequence[SignalT], symptoms: Sequence[Symptom], default_sources: tuple[str, ...] | None
) -> list[tuple[SignalT, Symptom]]:
    """Every (entry, symptom) pair that matches; corroborating supports alone count for nothing."""
    found = [(e, s) for e in entries for s in symptoms if e.matches(s, default_sources)]
    return [] if all(_corroborating(e) for e, _ in found) else found


Scored = dict[int, Match]  # id(symptom) -> its strongest match


def _best_per_symptom(matches: Sequence[Match]) -> Scored:
    """Per symptom, the strongest matching entry: one symptom never counts twice."""
    best: Scored = {}
    for match in matches:
        key = id(match.symptom)
        if key not in best or match.score > best[key].score:
            best[key] = match
    return best


def _recoverable(rule: Rule, supports: list[Match]) -> float | None:
    """Recoverable ms/step: per symptom the largest estimate its entries name, then max or sum over the
    symptoms as the rule says; None when no supporting symptom quantifies the cause."""
    per_symptom: dict[int, float] = {}
    for match in supports:
        value = match.recoverable
        if value is not None and value > 0:
            per_symptom[id(match.symptom)] = max(value, per_symptom.get(id(match.symptom), 0.0))
    if not per_symptom:
        return None
    return sum(per_symptom.values()) if rule.recoverable_combine == "sum" else max(per_symptom.values())


def _evidence(best: Scored, role: str) -> tuple[Evidence, ...]:
    """Evidence entries, strongest first; a support's recoverable time is after the subtraction."""
    return tuple(
        _as_evidence(
            m.symptom,
            role,
            m.entry.weight,
            m.recoverable if role == "supports" else None,
            m.basis,
            m.reference,
        )
        for m in sorted(best.values(), key=lambda m: -m.score)
    )


def _undecided(
    rule: Rule, lacking: list[Need], missing: dict[str, list[str]], inputs: frozenset[str]
) -> Undecided:
    details = tuple(reason for need in lacking for reason in missing[need.topic])
    return Undecided(
        id=rule.id,
        title=rule.title,
        topics=tuple(need.topic for need in lacking),
        reason=Text(
            en=" ".join(n.reason.en for n in lacking),
            zh="".join(n.reason.zh for n in lacking),
        ),
        remedy=Text(
            en=" ".join(n.remedy_for(inputs).en for n in lacking),
            zh="".join(n.remedy_for(inputs).zh for n in lacking),
        ),
        details=tuple(dict.fromkeys(details)),
    )


def _fill(template: Text, reason: Text) -> Text:
    return Text(en=template.en.format(reason=reason.en), zh=template.zh.format(reason=reason.zh))


def _noisy_or(scores: Iterable[float]) -> float:
    """1 - prod(1 - s): independent pieces of evidence add up without exceeding 1."""
    return 1.0 - math.prod(1.0 - s for s in scores)


def _clamp(value: object) -> float:
    if not isinstance(value, (int, float)) or math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)

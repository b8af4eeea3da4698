"""Evaluate every rule against the symptoms and rank the root causes by expected benefit.

Inputs are only the symptoms, the limitations of the inputs and the input kinds, so the same engine
serves a pair of profiles, a single run, a MINDIR or a MINDIR joined with a profile. The scoring,
ranking and verdict are documented in knowledge/README.md ("Scoring and ranking").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from diagnosis.model import Limitation
from diagnosis.symptoms import SYMPTOM_KINDS, Symptom
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
RAISE_SHARE = 0.25  # recoverable share of the step that raises severity by one level
LOWER_SHARE = 0.05  # share below which severity drops by one level
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
    values: dict[str, Any]
    rows: tuple[dict[str, Any], ...]
    recoverable_ms_per_step: float | None

    def to_dict(self) -> dict[str, Any]:
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

    @property
    def significant(self) -> bool:
        """Whether the cause reaches the documented minimum for the verdict."""
        return self.confidence >= SIGNIFICANT_CONFIDENCE and severity_rank(self.severity) >= severity_rank(
            SIGNIFICANT_SEVERITY
        )

    @property
    def fix_code(self) -> str:
        """The fix as runnable MindSpore 2.10 code."""
        return self.fix.code

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
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
            "evidence": [e.to_dict() for e in self.evidence],
            "fix": {
                "code": self.fix.code,
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
    details: tuple[str, ...] = ()  # the inputs' own Limitation reasons (English, from the readers)

    def text(self, lang: str = "en") -> str:
        """'Cannot decide, because ...' in `lang`."""
        return CANNOT_DECIDE.get(lang).format(reason=self.reason.get(lang))

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        """JSON-able form with user-facing text in `lang`."""
        return {
            "id": self.id,
            "title": self.title.get(lang),
            "topics": list(self.topics),
            "text": self.text(lang),
            "reason": self.reason.get(lang),
            "remedy": self.remedy.get(lang),
            "details": list(self.details),
        }


@dataclass(frozen=True)
class Diagnosis:
    """Ranked causes, undecidable causes, and the plain verdict."""

    causes: list[Cause]
    undecided: list[Undecided]
    nothing_found: bool
    step_ms: float | None = None

    def verdict(self, lang: str = "en") -> str:
        """One sentence saying whether anything significant was found."""
        return (VERDICT_NOTHING if self.nothing_found else VERDICT_FOUND).get(lang)

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        """JSON-able form with user-facing text in `lang` ("en" or "zh")."""
        return {
            "nothing_found": self.nothing_found,
            "verdict": self.verdict(lang),
            "step_ms": _round(self.step_ms),
            "causes": [c.to_dict(lang) for c in self.causes],
            "undecided": [u.to_dict(lang) for u in self.undecided],
        }


def evaluate(
    symptoms: Sequence[Symptom], limitations: Sequence[Limitation], inputs: Iterable[str]
) -> Diagnosis:
    """Every packaged rule against the symptoms of the given input kinds, ranked."""
    return evaluate_rules(load_rules(), symptoms, limitations, inputs)


def evaluate_rules(
    rules: Sequence[Rule],
    symptoms: Sequence[Symptom],
    limitations: Sequence[Limitation],
    inputs: Iterable[str],
) -> Diagnosis:
    """`evaluate` with an explicit rule list (tests use hand-made rules)."""
    kinds = _check_inputs(inputs)
    for symptom in symptoms:
        if symptom.kind not in SYMPTOM_KINDS:
            raise ValueError(f"unknown symptom kind {symptom.kind!r}; add it to SYMPTOM_KINDS first")
    missing = _missing_topics(limitations)
    step_ms = inference_step_ms(symptoms)
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
    causes.sort(key=rank_key)
    return Diagnosis(
        causes=causes,
        undecided=sorted(undecided, key=lambda u: u.id),
        nothing_found=not any(c.significant for c in causes),
        step_ms=step_ms,
    )


def assess(
    rule: Rule,
    symptoms: Sequence[Symptom],
    missing: dict[str, list[str]],
    inputs: frozenset[str],
    step_ms: float | None,
) -> Cause | Undecided | None:
    """One rule's verdict: a cause, an undecided question, or None (decided: not present)."""
    supports = _matches(rule.supports, symptoms, DEFAULT_SUPPORT_SOURCES)
    contradictions = _matches(rule.contradicts, symptoms, None)
    lacking = [need for need in rule.needs_for(inputs) if need.topic in missing]
    if not supports:
        # A contradicting symptom is data that answered the question (e.g. a MINDIR showing FP16).
        return _undecided(rule, lacking, missing) if lacking and not contradictions else None
    best = _best_per_symptom(supports)
    contra = _best_per_symptom(contradictions)
    confidence = _clamp(_noisy_or(s for s, _ in best.values()) - _noisy_or(s for s, _ in contra.values()))
    if confidence < MIN_REPORTED_CONFIDENCE:
        return None
    recoverable = _recoverable(rule, supports)
    share = recoverable / step_ms if recoverable is not None and step_ms else None
    return Cause(
        id=rule.id,
        title=rule.title,
        severity=adjust_severity(rule.severity, share),
        default_severity=rule.severity,
        confidence=confidence,
        recoverable_ms_per_step=recoverable,
        expected_benefit_ms=None if recoverable is None else confidence * recoverable,
        step_share=share,
        evidence=_evidence(best, "supports", supports) + _evidence(contra, "contradicts", []),
        fix=rule.fix,
        explanation=rule.explanation,
        references=rule.references,
        caveats=tuple(_fill(PARTIAL_DATA, need.reason) for need in lacking),
    )


def rank_key(cause: Cause) -> tuple:
    """Significant causes first; within each group, quantified causes by expected benefit, then the
    unquantified ones by severity and confidence; the id breaks ties so the order is stable."""
    if cause.expected_benefit_ms is not None:
        order: tuple = (0, -cause.expected_benefit_ms, 0.0)
    else:
        order = (1, -severity_rank(cause.severity), -cause.confidence)
    return (0 if cause.significant else 1, *order, cause.id)


def adjust_severity(severity: str, share: float | None) -> str:
    """Raise one level when a fix recovers >= RAISE_SHARE of the step, lower one below LOWER_SHARE."""
    rank = severity_rank(severity)
    if share is not None and share >= RAISE_SHARE:
        rank = min(rank + 1, len(SEVERITIES) - 1)
    elif share is not None and share < LOWER_SHARE:
        rank = max(rank - 1, 0)
    return SEVERITIES[rank]


def inference_step_ms(symptoms: Sequence[Symptom]) -> float | None:
    """The inference run's time per step, from the first symptom in STEP_TIME_FROM that carries it."""
    for kind, key, sources in STEP_TIME_FROM:
        for symptom in symptoms:
            value = symptom.values.get(key)
            if symptom.kind == kind and symptom.source in sources and _positive(value):
                return float(value)
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
    if all(isinstance(e, Support) and e.corroborating for e, _ in found):
        return []
    return found


Scored = dict[int, tuple[float, tuple[Signal, Symptom]]]  # id(symptom) -> (score, (entry, symptom))


def _best_per_symptom(matches: Sequence[tuple[Signal, Symptom]]) -> Scored:
    """Per symptom, the strongest matching entry: one symptom never counts twice."""
    best: Scored = {}
    for entry, symptom in matches:
        score = _clamp(symptom.strength) * entry.weight
        key = id(symptom)
        if key not in best or score > best[key][0]:
            best[key] = (score, (entry, symptom))
    return best


def _recoverable(rule: Rule, supports: list[tuple[Support, Symptom]]) -> float | None:
    """Recoverable ms/step: per symptom the largest estimate its entries name, then max or sum over the
    symptoms as the rule says; None when no supporting symptom quantifies the cause."""
    per_symptom: dict[int, float] = {}
    for entry, symptom in supports:
        value = entry.recoverable_ms(symptom)
        if value is not None:
            per_symptom[id(symptom)] = max(value, per_symptom.get(id(symptom), 0.0))
    if not per_symptom:
        return None
    return sum(per_symptom.values()) if rule.recoverable_combine == "sum" else max(per_symptom.values())


def _evidence(best: Scored, role: str, supports: list[tuple[Support, Symptom]]) -> tuple[Evidence, ...]:
    """Evidence entries, strongest first."""
    items = sorted(best.values(), key=lambda item: -item[0])
    out = []
    for _score, (entry, symptom) in items:
        recoverable = None
        if role == "supports":
            values = [e.recoverable_ms(s) for e, s in supports if s is symptom]
            recoverable = max((v for v in values if v is not None), default=None)
        out.append(
            Evidence(
                symptom=symptom.kind,
                role=role,
                source=symptom.source,
                summary=symptom.summary,
                strength=_clamp(symptom.strength),
                weight=entry.weight,
                values=dict(symptom.values),
                rows=tuple(symptom.evidence),
                recoverable_ms_per_step=recoverable,
            )
        )
    return tuple(out)


def _undecided(rule: Rule, lacking: list[Need], missing: dict[str, list[str]]) -> Undecided:
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
            en=" ".join(n.remedy.en for n in lacking),
            zh="".join(n.remedy.zh for n in lacking),
        ),
        details=tuple(dict.fromkeys(details)),
    )


def _fill(template: Text, reason: Text) -> Text:
    return Text(en=template.en.format(reason=reason.en), zh=template.zh.format(reason=reason.zh))


def _noisy_or(scores: Iterable[float]) -> float:
    """1 - prod(1 - s): independent pieces of evidence add up without exceeding 1."""
    return 1.0 - math.prod(1.0 - s for s in scores)


def _clamp(value: float) -> float:
    if not isinstance(value, (int, float)) or math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)

"""What the diagnosis found: the verdict, the ranked causes with their evidence, the symptoms they were
weighed on, and the warnings (what cannot be decided, input limitations, notes)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from doctor.model.base import Count, Number, Positive, Record, Row, Share, Values

Severity = Literal["info", "low", "medium", "high", "critical"]
Source = Literal["pair", "baseline", "target", "mindir", "mindir+profile"]
Basis = Literal["differential", "lone"]
RECOVERABLE = "Time per step the fix is expected to give back, ms (`null` when not quantified)."


class Verdict(Record):
    """The one-line answer."""

    text: str = Field(
        min_length=1, description="The measured gap and the most likely cause, in one sentence."
    )
    status: Literal["problem", "findings", "unexplained-slowdown", "nothing-found"] = Field(
        description="`problem`: a material cause; `findings`: only significant findings of one input "
        "below 10 % of the step; `unexplained-slowdown`: the target is materially slower (≥ 1.2x on the "
        "headline measure, beyond both runs' noise) and no cause is significant; else `nothing-found`."
    )
    slowdown: Number | None = Field(
        description="Per-sample ratio when batches differ, else per-step ratio; `null` without a pair."
    )
    top_cause: str | None = Field(description="Id of the first material (for `findings`: significant) cause.")
    recoverable_ms_per_step: Number | None = Field(description="The top cause's recoverable time, ms.")


class Evidence(Record):
    """One symptom weighed for (or against, or explained by) a cause."""

    symptom: str = Field(description="The symptom kind (core/symptoms.py).")
    role: Literal["supports", "contradicts", "explains"] = Field(description="How it bears on the cause.")
    source: Source = Field(description="Where it was seen.")
    summary: str = Field(description="The symptom's summary.")
    strength: Share = Field(description="How clear the symptom is, in [0, 1].")
    weight: Number = Field(description="The rule's weight for this symptom.")
    values: Values = Field(description="The symptom's numbers.")
    rows: list[Row] = Field(description="Up to 25 proving rows.")
    rows_total: Count = Field(description="Number of proving rows before the cap.")
    recoverable_ms_per_step: Number | None = Field(
        description="Recoverable time it suggests after the baseline's share was subtracted, ms."
    )
    basis: Basis = Field(description="`differential` (compares the runs) or `lone` (one input on its own).")
    baseline_summary: str | None = Field(
        description="The baseline's symptom of the same kind, when one was subtracted."
    )


class Fix(Record):
    """The remedy of a cause."""

    code: str = Field(description="Runnable MindSpore 2.10 code.")
    language: str = Field(description="Language of `code`, e.g. `python`.")
    notes: str = Field(description="Notes on the fix, in the report language.")


class Explanation(Record):
    """Why a cause matters, in the report language."""

    what_it_detects: str = Field(description="What the rule detects.")
    why_it_matters: str = Field(description="Why it costs time.")
    how_to_confirm: str = Field(description="How to confirm it by hand.")


class Reference(Record):
    """A document that explains a cause or its fix."""

    title: str = Field(description="Title of the document.")
    url: str = Field(description="Its address.")


class Cause(Record):
    """One ranked root cause, from one rule of the knowledge base (docs/rules.md)."""

    rank: Positive = Field(description="Position in the ranking, from 1.")
    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", description="The rule id.")
    title: str = Field(description="Title in the report language.")
    severity: Severity = Field(
        description="The rule's severity adjusted by the step share the fix recovers (at most `low` "
        "below confidence 0.5)."
    )
    confidence: Share = Field(description="How sure the cause is, in [0, 1].")
    significant: bool = Field(description="Confidence ≥ 0.5 and severity ≥ medium.")
    material: bool = Field(
        description="Significant and backed by differential evidence, or a lone finding worth at least "
        "10 % of the step."
    )
    section: Literal["ranked", "below-threshold"] = Field(
        description="`ranked` for significant causes (the only ones reports number), else `below-threshold`."
    )
    severity_label: Literal[Severity, "unquantified"] = Field(
        description="What reports show: the severity, or `unquantified` when the step share is unknown."
    )
    basis: Basis = Field(description="`differential` (compares the runs) or `lone` (one input on its own).")
    absorbed: list[str] = Field(description="Symptom-level causes this root cause explains.")
    recoverable_ms_per_step: Number | None = Field(description=RECOVERABLE)
    expected_benefit_ms: Number | None = Field(description="Confidence × recoverable time, ms.")
    step_share: Number | None = Field(description="Recoverable share of the inference step.")
    evidence: list[Evidence] = Field(description="The symptoms weighed.")
    fix: Fix = Field(description="The remedy.")
    explanation: Explanation = Field(description="What the rule detects, why it matters, how to confirm.")
    references: list[Reference] = Field(description="Further reading.")
    caveats: list[str] = Field(description="What the cause was decided without.")


class SymptomRecord(Record):
    """One observed fact, as the analyzers and graph checks emitted it."""

    kind: str = Field(description="The symptom kind (core/symptoms.py).")
    summary: str = Field(description="One line with its numbers.")
    source: Source = Field(description="Where it was seen.")
    strength: Share = Field(description="How clear it is, in [0, 1].")
    values: Values = Field(description="Its numbers.")
    recoverable_ms_per_step: Number | None = Field(description=RECOVERABLE)
    evidence: list[Row] = Field(description="Up to 25 proving rows.")
    evidence_total: Count = Field(description="Number of proving rows before the cap.")


class ReportWarning(Record):
    """Something the report could not decide, an input limitation, or a note on the method."""

    kind: Literal["undecided", "limitation", "note", "model"] = Field(
        description="`undecided`: a cause the inputs cannot decide; `limitation`: something an input does "
        "not record; `note`: how the comparison was made; `model`: a remark of the MINDIR loader."
    )
    text: str = Field(description="The warning, in the report language for `undecided`.")
    remedy: str | None = Field(description="How to get the missing data.")
    topic: str | None = Field(description="The limitation's topic, e.g. `dtypes`, `profiler-config`.")
    rule: str | None = Field(description="The rule an `undecided` warning is about.")
    roles: list[Literal["baseline", "target", "mindir"]] = Field(description="The inputs it applies to.")

"""The typed form of a rule file: what a root cause needs, what supports and contradicts it, its fix.

The YAML layout is documented in knowledge/README.md; :mod:`knowledge.loader` validates files into
these frozen dataclasses, so the engine never sees an unchecked rule.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.symptoms import Symptom
from knowledge.conditions import Condition

SEVERITIES = ("info", "low", "medium", "high", "critical")  # ascending
INPUT_KINDS = ("pair", "single", "mindir", "mindir+profile")
LANGS = ("en", "zh")
VERIFY_MODES = ("execute", "resolve")
COMBINE_MODES = ("max", "sum")

# Symptom sources that may support an inference cause when an entry names none: a symptom seen on
# the baseline (training) run never explains why the inference run is slow.
DEFAULT_SUPPORT_SOURCES = ("pair", "target", "mindir", "mindir+profile")
# `recoverable: symptom` takes the Symptom's own recoverable_ms_per_step instead of a value key.
RECOVERABLE_FROM_SYMPTOM = "symptom"

# Limitation topics the readers record and rules may `need`; a rule naming another topic is rejected.
LIMITATION_TOPICS: dict[str, str] = {
    "dtypes": "no per-operator dtype columns (Ascend Level0, CPU)",
    "shapes": "no per-operator input shapes (Ascend Level0)",
    "formats": "no per-operator data formats (Ascend Level0, CPU)",
    "cores": "no accelerator-core column (CPU, GPU)",
    "steps": "no step boundaries (no schedule, CPU)",
    "timeline": "no per-launch start times, so gaps and host synchronisation cannot be measured",
    "profiler-config": "the profiler settings were not recorded (CPU)",
    "execution-mode": "graph or PyNative mode could not be inferred",
    "scopes": "no framework scope names (PyNative)",
    "dataset": "no data-pipeline records (data_process off)",
    "memory": "no memory records (profile_memory off)",
    "frequency": "no AI Core frequency samples",
    "environment": "no record of environment variables or run settings",
    "communication": "no communication breakdown for a multi-device run",
    "op-state": "no OP State column, so dynamic-shape kernels cannot be told apart (older CANN)",
}


# Titles state the hypothesis and the evidence states the number: a title may not claim a quantity
# ("a large share") that the measured evidence may contradict (it said "1 %" once).
QUANTITY_CLAIMS = re.compile(
    r"(?i)\b(?:large|huge|most|many|much|majority|dominat\w*|a share|significant)\b|大量|大部分|大多数|占用了"
)


@dataclass(frozen=True)
class Text:
    """One user-facing text in English and Simplified Chinese."""

    en: str
    zh: str

    def get(self, lang: str) -> str:
        """The text in `lang` ("en" or "zh")."""
        if lang not in LANGS:
            raise ValueError(f"unknown language {lang!r}; expected one of {LANGS}")
        return self.en if lang == "en" else self.zh


@dataclass(frozen=True)
class Signal:
    """A symptom kind a rule reacts to, optionally narrowed by a condition and by where it was seen."""

    symptom: str
    weight: float
    when: Condition | None = None
    sources: tuple[str, ...] | None = None  # None: the role's default (see DEFAULT_SUPPORT_SOURCES)

    def matches(self, symptom: Symptom, default_sources: tuple[str, ...] | None) -> bool:
        """Whether `symptom` is of this kind, from an accepted source, and meets the condition."""
        sources = self.sources if self.sources is not None else default_sources
        if symptom.kind != self.symptom or (sources is not None and symptom.source not in sources):
            return False
        return self.when is None or self.when.holds(symptom.values)


@dataclass(frozen=True)
class Support(Signal):
    """Evidence for the cause; `recoverable` names the value holding ms/step it would give back."""

    recoverable: str | None = None
    recoverable_scale: float = 1.0
    corroborating: bool = False  # counts only when a non-corroborating support also matched

    def recoverable_ms(self, symptom: Symptom) -> float | None:
        """Milliseconds per step this symptom says fixing the cause gives back, or None."""
        if self.recoverable is None:
            return None
        if self.recoverable == RECOVERABLE_FROM_SYMPTOM:
            raw: Any = symptom.recoverable_ms_per_step
        else:
            raw = symptom.values.get(self.recoverable)
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not raw > 0:
            return None
        return float(raw) * self.recoverable_scale


@dataclass(frozen=True)
class Need:
    """Data the rule needs; missing (a Limitation with this topic) and no support -> undecided."""

    topic: str
    reason: Text
    remedy: Text
    inputs: tuple[str, ...] | None = None  # only for these input kinds; None: every kind
    remedy_with_mindir: Text | None = None  # the remedy when a MINDIR was given (never ask for it again)

    def remedy_for(self, inputs: set[str] | frozenset[str]) -> Text:
        """The remedy to show for these input kinds: advice never asks for an input that was given."""
        return self.remedy_with_mindir if self.remedy_with_mindir and "mindir" in inputs else self.remedy


@dataclass(frozen=True)
class Explanation:
    """The fixed documentation headings of a rule."""

    what_it_detects: Text
    why_it_matters: Text
    how_to_confirm: Text


@dataclass(frozen=True)
class Fix:
    """Code that removes the cause, and how the test suite proves the code is real MindSpore 2.10."""

    code: str
    language: str
    verify: str  # "execute": run on CPU; "resolve": every ms name and keyword resolves
    notes: Text
    comments_zh: tuple[str, ...] = ()  # the code's comments in Chinese, in the order of the code

    def code_in(self, lang: str) -> str:
        """The code as a report in `lang` shows it: the same code, its comments in `lang` (the code
        that runs, and every verified line, is the English `code`)."""
        if lang == "en" or not self.comments_zh:
            return self.code
        return with_comments(self.code, self.comments_zh)


def code_comments(code: str) -> list[tuple[int, int, str]]:
    """(line index, column, text without the "#") of each comment of Python `code`, in order (found
    by the tokenizer, so a "#" inside a string is no comment)."""
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return [(t.start[0] - 1, t.start[1], t.string[1:].strip()) for t in tokens if t.type == tokenize.COMMENT]


def with_comments(code: str, comments: Sequence[str]) -> str:
    """`code` with its comments replaced, in order, by `comments` (a comment runs to its line's end)."""
    lines = code.split("\n")
    for (row, column, _), text in zip(code_comments(code), comments, strict=True):
        lines[row] = f"{lines[row][:column]}# {text}"
    return "\n".join(lines)


@dataclass(frozen=True)
class Reference:
    """A source the rule rests on."""

    title: str
    url: str


@dataclass(frozen=True)
class Rule:
    """One root cause: when it is supported, contradicted or undecidable, and how to fix it."""

    id: str
    title: Text
    severity: str
    applies_to: tuple[str, ...]
    supports: tuple[Support, ...]
    contradicts: tuple[Signal, ...]
    needs: tuple[Need, ...]
    explanation: Explanation
    fix: Fix
    references: tuple[Reference, ...]
    recoverable_combine: str = "max"
    explains: tuple[str, ...] = ()  # symptom kinds this root cause accounts for (jitter, drift, gap)
    changes_results: bool = False  # the cause changes outputs, not only time: no share lowers severity
    source: str = ""  # the file the rule came from

    def applies(self, inputs: set[str] | frozenset[str]) -> bool:
        """Whether the rule is about any of the given input kinds."""
        return bool(set(self.applies_to) & set(inputs))

    def needs_for(self, inputs: set[str] | frozenset[str]) -> tuple[Need, ...]:
        """The data needs that apply to these input kinds."""
        return tuple(n for n in self.needs if n.inputs is None or set(n.inputs) & set(inputs))

    def texts(self) -> list[str]:
        """Every user-facing string of the rule, both languages (for scans and checks)."""
        out = [self.title.en, self.title.zh, self.fix.notes.en, self.fix.notes.zh]
        for text in (
            self.explanation.what_it_detects,
            self.explanation.why_it_matters,
            self.explanation.how_to_confirm,
        ):
            out += [text.en, text.zh]
        for need in self.needs:
            out += [need.reason.en, need.reason.zh, need.remedy.en, need.remedy.zh]
            if need.remedy_with_mindir is not None:
                out += [need.remedy_with_mindir.en, need.remedy_with_mindir.zh]
        out += [ref.title for ref in self.references]
        return out


def severity_rank(severity: str) -> int:
    """Position of a severity in SEVERITIES (higher is more severe)."""
    return SEVERITIES.index(severity)

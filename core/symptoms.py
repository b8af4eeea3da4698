"""The symptom type shared by the profile analyzers, the graph checks and the knowledge base."""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Final, TypedDict

# Where a symptom was seen. Rules declare which of these they apply to.
SOURCES = ("pair", "baseline", "target", "mindir", "mindir+profile")


@dataclass(frozen=True)
class Symptom:
    """One observed fact with numbers, the rows that prove it and, where it can be estimated,
    the time per step that removing it would give back.

    `kind` is a stable kebab-case id (e.g. ``precision-change``) that rules refer to;
    `strength` in [0, 1] says how clear the evidence is (effect size beyond noise).
    """

    kind: str
    summary: str
    source: str = "pair"
    strength: float = 1.0
    values: dict[str, object] = field(default_factory=dict[str, object])  # JSON-able numbers and names
    evidence: tuple[Mapping[str, object], ...] = ()  # operator rows or graph nodes (JSON-able dicts)
    recoverable_ms_per_step: float | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON-able form used by the report model."""
        return {
            "kind": self.kind,
            "summary": self.summary,
            "source": self.source,
            "strength": round(float(self.strength), 4),
            "values": self.values,
            "evidence": list(self.evidence),
            "recoverable_ms_per_step": self.recoverable_ms_per_step,
        }


@dataclass(frozen=True)
class Emits:
    """The symptom kinds one emitter module declares, by what they describe; a test runs every emitter
    over tests/fixtures/symptoms and fails on an undeclared kind or a declared kind without cases.

    `pair` kinds describe a difference (source "pair"), `run` kinds one run (source "baseline" or
    "target"), `mindir` kinds an exported graph, `mindir_profile` kinds a graph joined with a profile.
    """

    pair: tuple[str, ...] = ()
    run: tuple[str, ...] = ()
    mindir: tuple[str, ...] = ()
    mindir_profile: tuple[str, ...] = ()

    @classmethod
    def of(cls, *declared: type[SymptomValues]) -> Emits:
        """The declaration of a module emitting the given kinds, each filed under what it describes."""
        by = {scope: tuple(k.KIND.id for k in declared if scope in k.KIND.describes) for scope in DESCRIBES}
        return cls(**by)

    def kinds(self) -> frozenset[str]:
        """Every kind declared, whatever it describes."""
        return frozenset(self.pair + self.run + self.mindir + self.mindir_profile)

    def scope(self, source: str) -> tuple[str, ...]:
        """The kinds declared for symptoms of one `source` (one of SOURCES)."""
        if source == "pair":
            return self.pair
        if source in ("baseline", "target"):
            return self.run
        return self.mindir if source == "mindir" else self.mindir_profile


# What a kind can describe: the fields of `Emits`.
DESCRIBES = ("pair", "run", "mindir", "mindir_profile")


class Unset:
    """The type of `UNSET`, a value the emitter did not give: it is left out of `Symptom.values`."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset()


@dataclass(frozen=True)
class Kind:
    """What one symptom kind declares beside its emitter: its stable id, what it describes (fields of
    `Emits`) and the ids of the messages (core/messages.py) its summaries are said with."""

    id: str
    describes: tuple[str, ...]
    messages: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.describes or set(self.describes) - set(DESCRIBES):
            raise ValueError(f"{self.id}: describes {self.describes}, expected some of {DESCRIBES}")


@dataclass(frozen=True, kw_only=True)
class SymptomValues:
    """The typed values of one symptom kind, declared beside the module that emits it.

    A subclass is a frozen dataclass whose docstring says what the kind means, whose `KIND` gives its id,
    what it describes and its message ids, and whose fields are the numbers it carries, in the order
    `Symptom.values` lists them; a field left `UNSET` is left out, a key that is no Python name
    (``conv-bn-act``) is the field's ``metadata["key"]`` and counts by name are one `spread` field. The
    vocabulary `SYMPTOM_KINDS` is generated from these declarations into core/symptom_kinds.json
    (``python -m doctor.vocabulary``). An analyzer's rounded number is ``float | None``: its ``rnd`` says
    NaN as None, so that JSON stays valid.
    """

    KIND: ClassVar[Kind]

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The keys of the values, in their order in `Symptom.values` (a spread field's keys in its place)."""
        return tuple(k for f in dataclasses.fields(cls) for k in f.metadata.get("spread", (_key(f),)))

    @classmethod
    def description(cls) -> str:
        """What the kind means: the class docstring."""
        return " ".join(inspect.cleandoc(cls.__doc__ or "").split())

    def as_values(self) -> dict[str, object]:
        """The JSON-able `Symptom.values`: every given field under its key, in declaration order."""
        out: dict[str, object] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if "spread" in f.metadata:
                out.update(value)
            elif value is not UNSET:
                out[_key(f)] = value
        return out

    def symptom(
        self,
        summary: str,
        source: str = "pair",
        strength: float = 1.0,
        *,
        evidence: tuple[Mapping[str, object], ...] = (),
        recoverable_ms_per_step: float | None = None,
    ) -> Symptom:
        """The `Symptom` of this kind with these values, the rows that prove it and the time it costs."""
        values = self.as_values()
        return Symptom(self.KIND.id, summary, source, strength, values, evidence, recoverable_ms_per_step)


def spread(keys: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The metadata of a field holding counts by name (``{"conv-bn": 2}``) whose items go into
    `Symptom.values` in its place, in their own order; `keys` are the names it may hold (the vocabulary
    lists them): ``counts: dict[str, int] = field(default_factory=dict, metadata=spread(NAMES))``."""
    return {"spread": keys}


def _key(f: dataclasses.Field[Any]) -> str:
    """The key of one value field: its name, or ``metadata["key"]`` for a key that is no Python name."""
    return f.metadata.get("key", f.name)


def declared_in(module: ModuleType) -> tuple[type[SymptomValues], ...]:
    """The symptom kinds `module` declares (its `SymptomValues` subclasses), in their order there."""
    return tuple(
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, SymptomValues)
        and "KIND" in vars(value)  # a shared base of several kinds declares none
        and value.__module__ == module.__name__
    )


def vocabulary_entry(declared: type[SymptomValues], module: str) -> VocabularyEntry:
    """One kind's entry in core/symptom_kinds.json, from its declaration in `module`."""
    return {
        "description": declared.description(),
        "values": list(declared.keys()),
        "describes": list(declared.KIND.describes),
        "messages": list(declared.KIND.messages),
        "module": module,
    }


class VocabularyEntry(TypedDict):
    """One kind as core/symptom_kinds.json writes it (see `SymptomKind`)."""

    description: str
    values: list[str]
    describes: list[str]
    messages: list[str]
    module: str


@dataclass(frozen=True)
class SymptomKind:
    """One kind of the vocabulary: what it means, the numbers it carries, what it describes, its
    message ids and the module declaring it (a `SymptomValues` subclass there)."""

    description: str
    values: tuple[str, ...] = ()
    describes: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    module: str = ""


VOCABULARY_FILE = Path(__file__).resolve().with_name("symptom_kinds.json")


def load_vocabulary(entries: Mapping[str, VocabularyEntry]) -> dict[str, SymptomKind]:
    """The vocabulary from its JSON entries (`vocabulary_entry`), by kind."""
    return {
        kind: SymptomKind(
            description=entry["description"],
            values=tuple(entry["values"]),
            describes=tuple(entry["describes"]),
            messages=tuple(entry["messages"]),
            module=entry["module"],
        )
        for kind, entry in entries.items()
    }


# The vocabulary rules may refer to, generated from the declarations beside the emitters (a test fails
# when it is stale): core cannot import its emitters, so it reads what they declared.
SYMPTOM_KINDS: dict[str, SymptomKind] = load_vocabulary(
    json.loads(VOCABULARY_FILE.read_text(encoding="utf-8"))["kinds"]
)

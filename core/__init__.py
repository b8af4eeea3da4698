"""The vocabulary every stage shares: the run model, the symptom vocabulary, limitations and errors.

The bottom layer of the corridor (docs/architecture.md): it imports no other package of the project,
and every package may import it.

Public API: Run, RunMeta, ProfilerConfig, Limitation, Symptom, SymptomKind, SYMPTOM_KINDS, SOURCES, the
kind declarations (SymptomValues, Kind, UNSET, spread, declared_in, vocabulary_entry, VOCABULARY_FILE),
InputError, the user-facing Text (say, join, in_lang) and the canonical table schemas. Names are
imported on first use (PEP 562): graph
imports the symptom vocabulary, and the isolated MINDIR child (300 MB address-space limit) must not
load the pandas that the run model pulls in; an eager import made a normal model fail to decode there.

`core.forks` (work split over forked workers answering over pipes, for a process that may write no file)
is no part of the vocabulary: the stages that fork (diagnosis.scale, outputs.ms_dump) import it by path;
its `may_fork` (whether this process may fork a worker) is public, for the sandbox's warm reader too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.lazy import lazy_getattr

_EXPORTS: dict[str, str] = {
    "InputError": "core.errors",
    "JsonObject": "core.jsontypes",
    "JsonValue": "core.jsontypes",
    "may_fork": "core.forks",
    "AmpMarkers": "core.model",
    "SlowLinkRecord": "core.model",
    "KERNEL_SCHEMA": "core.model",
    "PIPE_COUNTERS": "core.model",
    "STEP_SCHEMA": "core.model",
    "Limitation": "core.model",
    "ProfilerConfig": "core.model",
    "Run": "core.model",
    "RunMeta": "core.model",
    "RankSet": "core.model",
    "conform_kernels": "core.model",
    "conform_steps": "core.model",
    "empty_kernels": "core.model",
    "empty_steps": "core.model",
    "SOURCES": "core.symptoms",
    "SYMPTOM_KINDS": "core.symptoms",
    "Symptom": "core.symptoms",
    "SymptomKind": "core.symptoms",
    "VOCABULARY_FILE": "core.symptoms",
    "SymptomValues": "core.symptoms",
    "Kind": "core.symptoms",
    "UNSET": "core.symptoms",
    "Unset": "core.symptoms",
    "declared_in": "core.symptoms",
    "spread": "core.symptoms",
    "vocabulary_entry": "core.symptoms",
    "VocabularyEntry": "core.symptoms",
    "error_line": "core.errors",
    "Text": "core.text",
    "join": "core.text",
    "in_lang": "core.text",
    "say": "core.text",
}

if TYPE_CHECKING:
    from core.errors import InputError, error_line
    from core.forks import may_fork
    from core.jsontypes import JsonObject, JsonValue
    from core.model import (
        KERNEL_SCHEMA,
        PIPE_COUNTERS,
        STEP_SCHEMA,
        AmpMarkers,
        Limitation,
        ProfilerConfig,
        RankSet,
        Run,
        RunMeta,
        SlowLinkRecord,
        conform_kernels,
        conform_steps,
        empty_kernels,
        empty_steps,
    )
    from core.symptoms import (
        SOURCES,
        SYMPTOM_KINDS,
        UNSET,
        VOCABULARY_FILE,
        Kind,
        Symptom,
        SymptomKind,
        SymptomValues,
        Unset,
        VocabularyEntry,
        declared_in,
        spread,
        vocabulary_entry,
    )
    from core.text import Text, in_lang, join, say


__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())


__all__ = [
    "KERNEL_SCHEMA",
    "PIPE_COUNTERS",
    "SOURCES",
    "STEP_SCHEMA",
    "SYMPTOM_KINDS",
    "UNSET",
    "VOCABULARY_FILE",
    "AmpMarkers",
    "InputError",
    "JsonObject",
    "JsonValue",
    "Kind",
    "Limitation",
    "ProfilerConfig",
    "RankSet",
    "Run",
    "RunMeta",
    "SlowLinkRecord",
    "Symptom",
    "SymptomKind",
    "SymptomValues",
    "Text",
    "Unset",
    "VocabularyEntry",
    "conform_kernels",
    "conform_steps",
    "declared_in",
    "empty_kernels",
    "empty_steps",
    "error_line",
    "in_lang",
    "join",
    "may_fork",
    "say",
    "spread",
    "vocabulary_entry",
]

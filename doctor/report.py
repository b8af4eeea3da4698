"""A finished diagnosis: the typed report document (doctor.model) and the chain figure beside it.

The document is what every renderer and the app read, and what JSON, Markdown, HTML and CSV are made
of; docs/report.schema.json is generated from its model. The only thing kept outside it is the
fusion-chain figure, which needs the model graph that the document deliberately does not carry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pandas as pd

from doctor.version import SCHEMA_VERSION

if TYPE_CHECKING:
    from doctor.model import ReportDocument

__all__ = ["SCHEMA_VERSION", "Report"]


@dataclass(frozen=True)
class Report:
    """The report document plus the chain figure (a plotly Figure from graph.view, not part of the JSON)
    and, for a fresh diagnosis, the same document in each other language (`in_lang`)."""

    document: ReportDocument
    chain_figure: Any = field(default=None, repr=False, compare=False)
    translations: Mapping[str, ReportDocument] = field(default_factory=dict, repr=False, compare=False)

    def in_lang(self, lang: str) -> Report:
        """This report in `lang`: itself, or its translation; itself when it has none (a stored report of
        one language)."""
        if lang == self.lang or lang not in self.translations:
            return self
        others = {other: doc for other, doc in self.translations.items() if other != lang}
        return Report(self.translations[lang], self.chain_figure, {**others, self.lang: self.document})

    def translation_data(self) -> dict[str, dict[str, Any]]:
        """The translations as plain JSON-able documents by language (what a case keeps beside the report)."""
        return {lang: doc.model_dump() for lang, doc in self.translations.items()}

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], chain_figure: Any = None, translations: Mapping[str, Any] | None = None
    ) -> Report:
        """A report from a stored document (a case, a batch result) and its stored translations,
        validated against the model."""
        from doctor.model import ReportDocument

        others = {lang: ReportDocument.model_validate(doc) for lang, doc in (translations or {}).items()}
        return cls(ReportDocument.model_validate(data), chain_figure, others)

    @cached_property
    def data(self) -> dict[str, Any]:
        """The document as plain JSON-able data, dumped once: read it, and take to_dict() to change it."""
        return self.document.model_dump()

    def to_dict(self) -> dict[str, Any]:
        """A fresh copy of the document, exactly as docs/report.schema.json describes it."""
        return self.document.model_dump()

    @property
    def kind(self) -> str:
        return self.document.kind

    @property
    def lang(self) -> str:
        return self.document.lang

    @property
    def verdict(self) -> str:
        """The one-line verdict."""
        return self.document.verdict.text

    @property
    def causes(self) -> list[dict[str, Any]]:
        """The ranked causes as documents (typed: `document.causes`)."""
        return list(self.data["causes"])

    @property
    def top_cause(self) -> str | None:
        """Id of the first-ranked cause, if any."""
        return self.document.verdict.top_cause

    def operators(self) -> pd.DataFrame:
        """The operator table as a DataFrame with the report's columns (empty for a model-only report)."""
        records = self.data["operators"]["records"]
        from doctor.model import OPERATOR_COLUMN_NAMES, OPERATOR_COLUMNS

        frame = pd.DataFrame.from_records(records, columns=list(OPERATOR_COLUMN_NAMES))
        for name, kind in OPERATOR_COLUMNS:
            if kind in ("number", "integer"):
                frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64")
        return frame

    def chain_counts(self) -> dict[str, int]:
        """Chains per pattern, empty without a model."""
        graph = self.document.graph
        if graph is None:
            return {}
        return {row.pattern: row.count for row in graph.chains.by_pattern}

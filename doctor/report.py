"""A finished diagnosis: the typed report document and the chain figure beside it.

The document is the pydantic `ReportDocument` (doctor.model), built as that model by doctor.build,
doctor.verdict and the facade (`model_construct`: the analysis checked the values; the golden test
validates every pinned case). Every renderer, view, plot, the case store and triage read it typed; the JSON
renderer writes it through the records' own serialisation (`doctor.model.base.json_default`), which needs
no pydantic core schema: a command-line JSON report pays only the model's import (bench/RESULTS.md).
docs/report.schema.json is generated from the model. The only thing kept outside the document is the
fusion-chain figure, which needs the model graph that the document deliberately does not carry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, cast

import pandas as pd

from core import InputError, JsonObject, say
from doctor.version import SCHEMA_VERSION

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from doctor.model import Cause, ReportDocument

__all__ = ["SCHEMA_VERSION", "Report"]

Document = JsonObject  # the whole report document as JSON data (docs/report.schema.json)


@dataclass(frozen=True)
class Report:
    """The typed report document plus the chain figure (a plotly Figure from graph.view, not part of the
    JSON) and, for a fresh diagnosis, the same document and chain figure in each other language
    (`in_lang`: a switched page or a reopened case shows the figure's legend and notes in its language)."""

    document: ReportDocument
    chain_figure: go.Figure | None = field(default=None, repr=False, compare=False)
    translated: Mapping[str, ReportDocument] = field(default_factory=dict, repr=False, compare=False)
    translated_figures: Mapping[str, go.Figure] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(
        cls,
        document: ReportDocument,
        chain_figure: go.Figure | None = None,
        translations: Mapping[str, ReportDocument] | None = None,
        figures: Mapping[str, go.Figure] | None = None,
    ) -> Report:
        """A report of a typed document and its typed translations (`figures`: the chain figure in
        each other language)."""
        return cls(document, chain_figure, dict(translations or {}), dict(figures or {}))

    @cached_property
    def data(self) -> Document:
        """The document as JSON data (the model's own serialisation, what the JSON renderer writes)."""
        return self.document.to_data()

    @property
    def translations(self) -> dict[str, Document]:
        """The translations as JSON data by language (what a case keeps beside the report)."""
        return {lang: doc.to_data() for lang, doc in self.translated.items()}

    def in_lang(self, lang: str) -> Report:
        """This report in `lang`: itself, or its translation with the chain figure drawn in `lang`;
        itself when it has none (a stored report of one language)."""
        if lang == self.lang or lang not in self.translated:
            return self
        others = {other: doc for other, doc in self.translated.items() if other != lang}
        figures = {other: fig for other, fig in self.translated_figures.items() if other != lang}
        if self.chain_figure is not None:
            figures[self.lang] = self.chain_figure
        figure = self.translated_figures.get(lang, self.chain_figure)  # an older case kept only one
        return Report(self.translated[lang], figure, {**others, self.lang: self.document}, figures)

    def figure_data(self) -> dict[str, str]:
        """The chain figure in each other language as plotly JSON by language (what a case keeps)."""
        return {lang: cast(str, figure.to_json()) for lang, figure in self.translated_figures.items()}

    def translation_data(self) -> dict[str, Document]:
        """The translations as plain JSON-able documents by language (what a case keeps beside the report)."""
        return self.translations

    def with_case(self, case_id: str, link: str) -> Report:
        """This report (and its translations) carrying the case it is kept as: the app's downloads."""
        from doctor.model.document import CaseRef

        case = CaseRef.of(id=case_id, link=link)
        translated = {lang: doc.model_copy(update={"case": case}) for lang, doc in self.translated.items()}
        document = self.document.model_copy(update={"case": case})
        return Report(document, self.chain_figure, translated, self.translated_figures)

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, object],
        chain_figure: go.Figure | None = None,
        translations: Mapping[str, Mapping[str, object]] | None = None,
        figures: Mapping[str, go.Figure] | None = None,
    ) -> Report:
        """A report from a stored document (a case, a batch result) and its stored translations (and
        chain figures by language), validated against the model."""
        from doctor.model import ReportDocument

        stored = translations or {}
        others = {lang: ReportDocument.model_validate(doc) for lang, doc in stored.items()}
        return cls(ReportDocument.model_validate(data), chain_figure, others, dict(figures or {}))

    @classmethod
    def from_client(cls, data: object) -> Report:
        """A report a client sent back (the app's private events receive the shown report from the
        browser, which may have edited it): one that does not match the model is an InputError, not a
        validation traceback."""
        from pydantic import ValidationError

        try:
            return cls.from_dict(cast("Mapping[str, object]", data))  # anything else fails validation
        except (ValidationError, TypeError, ValueError) as error:
            count = error.error_count() if isinstance(error, ValidationError) else 1
            raise InputError(
                say("report.edited", n=count), path="report", expected=say("report.as-shown")
            ) from None

    def to_dict(self) -> Document:
        """A fresh copy of the document as JSON data, exactly as docs/report.schema.json describes it."""
        return self.document.to_data()

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
    def causes(self) -> list[Cause]:
        """The ranked causes."""
        return list(self.document.causes)

    @property
    def top_cause(self) -> str | None:
        """Id of the first-ranked cause, if any."""
        return self.document.verdict.top_cause

    def operators(self) -> pd.DataFrame:
        """The operator table as a DataFrame with the report's columns (empty for a model-only report)."""
        from doctor.model.tables import OPERATOR_COLUMNS

        names = [name for name, _ in OPERATOR_COLUMNS]
        records = [row.__dict__ for row in self.document.operators.records]
        frame = pd.DataFrame.from_records(records, columns=names)
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

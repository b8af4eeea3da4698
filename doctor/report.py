"""A finished diagnosis: the report document and the chain figure beside it.

The document is built as plain JSON data in the model's shape (doctor.build) and the typed model
(doctor.model, pydantic) is that data validated: `Report.document`, made on first use, is what the
Markdown, HTML and CSV renderers and the app read. The JSON renderer writes the data itself, so a
command-line JSON report never loads pydantic (0.58 G instructions, about 8 % of a 100k-row compare).
The two are the same document: `tests/test_golden_reports.py` checks, on every pinned case, that
validating the data and dumping it again gives it back key for key. docs/report.schema.json is generated
from the model. The only thing kept outside the document is the fusion-chain figure, which needs the
model graph that the document deliberately does not carry.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pandas as pd

from core import InputError, say
from doctor.shape import Part
from doctor.version import SCHEMA_VERSION

if TYPE_CHECKING:
    from doctor.model import ReportDocument

__all__ = ["SCHEMA_VERSION", "Report"]

Document = Part  # the whole report document as JSON data (docs/report.schema.json)


@dataclass(frozen=True)
class Report:
    """The report document as data plus the chain figure (a plotly Figure from graph.view, not part of the
    JSON) and, for a fresh diagnosis, the same document in each other language (`in_lang`)."""

    data: Document
    chain_figure: Any = field(default=None, repr=False, compare=False)
    translations: Mapping[str, Document] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(
        cls,
        document: ReportDocument,
        chain_figure: Any = None,
        translations: Mapping[str, Document] | None = None,
    ) -> Report:
        """A report of a typed document (a stored case once validated, a changed copy in tests and tools);
        its data is the document dumped, and the typed document is kept (not validated again)."""
        report = cls(document.model_dump(), chain_figure, dict(translations or {}))
        report.__dict__["document"] = document
        return report

    @cached_property
    def document(self) -> ReportDocument:
        """The typed document: the data validated against the model, once (frozen, extra keys refused)."""
        from doctor.model import ReportDocument

        return ReportDocument.model_validate(self.data)

    def in_lang(self, lang: str) -> Report:
        """This report in `lang`: itself, or its translation; itself when it has none (a stored report of
        one language)."""
        if lang == self.lang or lang not in self.translations:
            return self
        others = {other: doc for other, doc in self.translations.items() if other != lang}
        return Report(self.translations[lang], self.chain_figure, {**others, self.lang: self.data})

    def translation_data(self) -> dict[str, Document]:
        """The translations as plain JSON-able documents by language (what a case keeps beside the report)."""
        return {lang: copy.deepcopy(doc) for lang, doc in self.translations.items()}

    def with_case(self, case_id: str, link: str) -> Report:
        """This report (and its translations) carrying the case it is kept as: the app's downloads."""
        case = {"id": case_id, "link": link}
        translations = {lang: {**doc, "case": case} for lang, doc in self.translation_data().items()}
        return Report.from_dict({**self.data, "case": case}, self.chain_figure, translations)

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], chain_figure: Any = None, translations: Mapping[str, Any] | None = None
    ) -> Report:
        """A report from a stored document (a case, a batch result) and its stored translations,
        validated against the model."""
        from doctor.model import ReportDocument

        stored = translations or {}
        others = {lang: ReportDocument.model_validate(doc).model_dump() for lang, doc in stored.items()}
        return cls.of(ReportDocument.model_validate(data), chain_figure, others)

    @classmethod
    def from_client(cls, data: Any) -> Report:
        """A report a client sent back (the app's private events receive the shown report from the
        browser, which may have edited it): one that does not match the model is an InputError, not a
        validation traceback."""
        from pydantic import ValidationError

        try:
            return cls.from_dict(data)
        except (ValidationError, TypeError, ValueError) as error:
            count = error.error_count() if isinstance(error, ValidationError) else 1
            raise InputError(
                say("report.edited", n=count), path="report", expected=say("report.as-shown")
            ) from None

    def to_dict(self) -> Document:
        """A fresh copy of the document, exactly as docs/report.schema.json describes it."""
        return copy.deepcopy(self.data)

    @property
    def kind(self) -> str:
        return self.data["kind"]

    @property
    def lang(self) -> str:
        return self.data["lang"]

    @property
    def verdict(self) -> str:
        """The one-line verdict."""
        return self.data["verdict"]["text"]

    @property
    def causes(self) -> list[dict[str, Any]]:
        """The ranked causes as documents (typed: `document.causes`)."""
        return list(self.data["causes"])

    @property
    def top_cause(self) -> str | None:
        """Id of the first-ranked cause, if any."""
        return self.data["verdict"]["top_cause"]

    def operators(self) -> pd.DataFrame:
        """The operator table as a DataFrame with the report's columns (empty for a model-only report)."""
        from doctor.shape import OPERATOR_COLUMN_NAMES, OPERATOR_COLUMNS

        records = self.data["operators"]["records"]
        frame = pd.DataFrame.from_records(records, columns=list(OPERATOR_COLUMN_NAMES))
        for name, kind in OPERATOR_COLUMNS:
            if kind in ("number", "integer"):
                frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64")
        return frame

    def chain_counts(self) -> dict[str, int]:
        """Chains per pattern, empty without a model."""
        graph = self.data.get("graph")
        if graph is None:
            return {}
        return {row["pattern"]: row["count"] for row in graph["chains"]["by_pattern"]}

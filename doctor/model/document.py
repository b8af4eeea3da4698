"""The whole report document: every diagnosis, from the app, the API or the CLI, is one of these."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from doctor.model.after import After
from doctor.model.base import Record
from doctor.model.findings import Cause, ReportWarning, SymptomRecord, Verdict
from doctor.model.graph import Graph
from doctor.model.outputs import OutputsSection
from doctor.model.ranks import Ranks
from doctor.model.runs import Input, RunInfo, Timing
from doctor.model.tables import Leaderboards, Operators, Step

ReportKind = Literal["pair", "single", "mindir"]
InputKind = Literal["pair", "single", "mindir", "mindir+profile"]


def _absent(value: Any) -> bool:
    """`after`, `ranks`, `outputs` and `case` are left out when null (other reports are unchanged)."""
    return value is None


class Generator(Record):
    """The tool that wrote the report."""

    name: Literal["perf-doctor"] = Field(description="Always `perf-doctor`.")
    version: str = Field(description="Its version.")


class CaseRef(Record):
    """The case a report is kept as (the app's downloads): its id and the link that reopens it."""

    id: str = Field(pattern=r"^[A-Za-z0-9_-]{22}$", description="The case id.")
    link: str = Field(description="The link that reopens the case in the app.")


class ReportDocument(Record):
    """One diagnosis of MindSpore profiles and/or a MINDIR model (docs/report-schema.md)."""

    schema_version: Literal["1.0"] = Field(description="Version of this schema.")
    generator: Generator = Field(description="Name and version of the tool that wrote the report.")
    created_utc: str = Field(
        pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
        description="Creation time, `YYYY-MM-DDTHH:MM:SSZ`.",
    )
    lang: Literal["en", "zh"] = Field(
        description="Language of the verdict, cause titles, fixes' notes and 'cannot decide' texts."
    )
    kind: ReportKind = Field(
        description="Two profiles compared; one profile on its own (treated as the target, the inference "
        "run); or a model only."
    )
    input_kinds: list[InputKind] = Field(
        min_length=1, description="The input kinds the knowledge base was asked about."
    )
    inputs: list[Input] = Field(min_length=1, description="One entry per input.")
    runs: list[RunInfo] = Field(description="Metadata of each profile; empty for a model-only report.")
    timing: Timing | None = Field(description="Headline timing; `null` for a model-only report.")
    verdict: Verdict = Field(description="The one-line answer: gap, top cause, status.")
    causes: list[Cause] = Field(description="Ranked root causes, most useful fix first.")
    symptoms: list[SymptomRecord] = Field(description="Every observed fact the causes were weighed on.")
    operators: Operators = Field(description="The operator comparison table.")
    leaderboards: Leaderboards = Field(description="The ten operators with the most time per step, per side.")
    steps: list[Step] = Field(description="Step times of each run.")
    graph: Graph | None = Field(
        description="The MINDIR summary and its fusion chains; `null` without a model."
    )
    warnings: list[ReportWarning] = Field(
        description="What could not be decided and why, input limitations and notes."
    )
    after: After | None = Field(
        default=None,
        exclude_if=_absent,
        description="How the causes fared in the run profiled after the fixes; the key is absent when no "
        "after run was given.",
    )
    ranks: Ranks | None = Field(
        default=None,
        exclude_if=_absent,
        description="Every rank of the multi-rank inputs (per-step breakdown, slow rank and why, slow "
        "links); the key is absent when every input holds one rank or --rank chose one.",
    )
    outputs: OutputsSection | None = Field(
        default=None,
        exclude_if=_absent,
        description="Two runs' dumps compared layer by layer (where their outputs first part ways, and why); "
        "the key is absent when no dumps were given.",
    )

    case: CaseRef | None = Field(
        default=None,
        exclude_if=_absent,
        description="The case the app keeps this report as; the key is absent outside the app's downloads.",
    )

    def shown_runs(self) -> list[RunInfo]:
        """The runs a Runs table lists: the compared runs, then the after-the-fix run (role `after`)
        when one was given, so that every run read is one row."""
        return [*self.runs, *([self.after.run] if self.after is not None else [])]

"""The report as a typed model (pydantic): one module per part of the document.

`ReportDocument` is the whole document; docs/report.schema.json is generated from it (doctor.schema).
Field order is the JSON key order, and every field is always present (`null` when unknown).
"""

from doctor.model.after import After, AfterCause, NewCause, WaterfallStep
from doctor.model.base import Record
from doctor.model.document import Generator, ReportDocument
from doctor.model.findings import (
    Cause,
    Evidence,
    Explanation,
    Fix,
    Reference,
    ReportWarning,
    SymptomRecord,
    Verdict,
)
from doctor.model.graph import Chain, Chains, Graph, Parameters, PatternCount, Tensor
from doctor.model.outputs import DeterministicCost, DumpInfo, FirstDivergence, LayerPoint, OutputsSection
from doctor.model.ranks import RankCause, RankDelta, RankJob, RankRow, Ranks, RankStep, SlowLink, SlowRank
from doctor.model.runs import Headline, Input, PhaseTiming, ProfilerConfig, RunInfo, Timing
from doctor.model.tables import (
    OPERATOR_COLUMN_NAMES,
    OPERATOR_COLUMNS,
    BoardRow,
    Leaderboards,
    OperatorRow,
    Operators,
    Step,
)
from doctor.version import SCHEMA_VERSION

__all__ = [
    "OPERATOR_COLUMNS",
    "OPERATOR_COLUMN_NAMES",
    "SCHEMA_VERSION",
    "After",
    "AfterCause",
    "BoardRow",
    "Cause",
    "Chain",
    "Chains",
    "DeterministicCost",
    "DumpInfo",
    "Evidence",
    "Explanation",
    "FirstDivergence",
    "Fix",
    "Generator",
    "Graph",
    "Headline",
    "Input",
    "LayerPoint",
    "Leaderboards",
    "NewCause",
    "OperatorRow",
    "Operators",
    "OutputsSection",
    "Parameters",
    "PatternCount",
    "PhaseTiming",
    "ProfilerConfig",
    "RankCause",
    "RankDelta",
    "RankJob",
    "RankRow",
    "RankStep",
    "Ranks",
    "Record",
    "Reference",
    "ReportDocument",
    "ReportWarning",
    "RunInfo",
    "SlowLink",
    "SlowRank",
    "Step",
    "SymptomRecord",
    "Tensor",
    "Timing",
    "Verdict",
    "WaterfallStep",
]

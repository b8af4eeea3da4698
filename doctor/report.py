"""The report model: one JSON-able document (docs/report-schema.md) that every renderer and the app read.

The document is plain data so that it can be rendered to JSON, Markdown, HTML and CSV, shown in the app
and compared in tests without any of the analysis objects. The only thing kept beside it is the
fusion-chain figure, which needs the model graph that the document deliberately does not carry.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

SCHEMA_VERSION = "1.0"

# The operator table as the report carries it: (column, JSON type). The analysis table has more
# columns (first start times, block dims ...); these are the ones a reader needs.
OPERATOR_COLUMNS: tuple[tuple[str, str], ...] = (
    ("operator", "string"),
    ("op_type", "string"),
    ("match", "string"),
    ("baseline_us_per_step", "number"),
    ("target_us_per_step", "number"),
    ("delta_us_per_step", "number"),
    ("ratio", "number"),
    ("baseline_share", "number"),
    ("target_share", "number"),
    ("baseline_rank", "integer"),
    ("target_rank", "integer"),
    ("baseline_launches_per_step", "number"),
    ("target_launches_per_step", "number"),
    ("baseline_input_shapes", "string"),
    ("target_input_shapes", "string"),
    ("baseline_input_dtypes", "string"),
    ("target_input_dtypes", "string"),
    ("baseline_input_formats", "string"),
    ("target_input_formats", "string"),
    ("baseline_core", "string"),
    ("target_core", "string"),
    ("input_dtypes_changed", "boolean"),
    ("input_formats_changed", "boolean"),
    ("input_shapes_changed", "boolean"),
    ("core_changed", "boolean"),
    ("z", "number"),
    ("significant", "boolean"),
    ("baseline_output_dtypes", "string"),
    ("target_output_dtypes", "string"),
    ("output_dtypes_changed", "boolean"),
    ("baseline_block_dim", "integer"),
    ("target_block_dim", "integer"),
    ("block_dim_changed", "boolean"),
    ("baseline_bound", "string"),
    ("target_bound", "string"),
    ("baseline_aic_mac_ratio", "number"),
    ("target_aic_mac_ratio", "number"),
    ("baseline_aic_mte2_ratio", "number"),
    ("target_aic_mte2_ratio", "number"),
    ("baseline_aiv_vec_ratio", "number"),
    ("target_aiv_vec_ratio", "number"),
    ("baseline_aiv_mte2_ratio", "number"),
    ("target_aiv_mte2_ratio", "number"),
    ("one_side_reason", "string"),
    ("baseline_us_per_sample", "number"),
    ("target_us_per_sample", "number"),
    ("ratio_per_sample", "number"),
)
OPERATOR_COLUMN_NAMES = tuple(name for name, _ in OPERATOR_COLUMNS)
MATCH_KINDS = ("scope", "sequence", "baseline-only", "target-only", "single")
KINDS = ("pair", "single", "mindir")
ROLES = ("baseline", "target", "run", "mindir")


@dataclass
class Report:
    """A finished diagnosis: the schema document plus the chain figure (not part of the JSON)."""

    data: dict[str, Any]
    chain_figure: Any = field(default=None, repr=False)  # plotly Figure from graph.view, or None

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the document, exactly as docs/report.schema.json describes it."""
        return copy.deepcopy(self.data)

    @property
    def kind(self) -> str:
        return str(self.data["kind"])

    @property
    def lang(self) -> str:
        return str(self.data["lang"])

    @property
    def verdict(self) -> str:
        """The one-line verdict."""
        return str(self.data["verdict"]["text"])

    @property
    def causes(self) -> list[dict[str, Any]]:
        return list(self.data["causes"])

    @property
    def top_cause(self) -> str | None:
        """Id of the first-ranked cause, if any."""
        return self.data["verdict"]["top_cause"]

    def operators(self) -> pd.DataFrame:
        """The operator table as a DataFrame with the report's columns (empty for a model-only report)."""
        records = self.data["operators"]["records"]
        frame = pd.DataFrame.from_records(records, columns=list(OPERATOR_COLUMN_NAMES))
        for name, kind in OPERATOR_COLUMNS:
            if kind in ("number", "integer"):
                frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64")
        return frame

    def chain_counts(self) -> dict[str, int]:
        """Chains per pattern, empty without a model."""
        graph = self.data.get("graph")
        if not graph:
            return {}
        return {row["pattern"]: row["count"] for row in graph["chains"]["by_pattern"]}

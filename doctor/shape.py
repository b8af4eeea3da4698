"""The report document's shape where the builders need it without the report model: the operator
table's columns with their JSON types, and the key order of the records built from other objects' dicts.

doctor.build, the JSON report, the CSV download and `Report.operators()` take them from here, so writing
a report loads no pydantic. The models (doctor.model) declare the same fields in the same order;
`tests/test_report.py` fails when the two differ.
"""

from __future__ import annotations

from typing import Any

Part = dict[str, Any]  # a part of the report document (or the whole) as JSON data in its model's shape

# (column, JSON type: "string", "number", "integer" or "boolean"), in the table's order.
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
OPERATOR_COLUMN_NAMES: tuple[str, ...] = tuple(name for name, _ in OPERATOR_COLUMNS)

# Key order of the records made from another object's dict (a cause, a symptom, a chain, a cross-link
# row): each model's fields, in order.
CAUSE_KEYS: tuple[str, ...] = (
    "rank",
    "id",
    "title",
    "severity",
    "confidence",
    "significant",
    "material",
    "section",
    "severity_label",
    "basis",
    "absorbed",
    "recoverable_ms_per_step",
    "expected_benefit_ms",
    "step_share",
    "evidence",
    "fix",
    "explanation",
    "references",
    "caveats",
)
EVIDENCE_KEYS: tuple[str, ...] = (
    "symptom",
    "role",
    "source",
    "summary",
    "strength",
    "weight",
    "values",
    "rows",
    "rows_total",
    "recoverable_ms_per_step",
    "basis",
    "baseline_summary",
)
SYMPTOM_KEYS: tuple[str, ...] = (
    "kind",
    "summary",
    "source",
    "strength",
    "values",
    "recoverable_ms_per_step",
    "evidence",
    "evidence_total",
)
CHAIN_KEYS: tuple[str, ...] = (
    "pattern",
    "nodes",
    "scopes",
    "ops",
    "fusible",
    "blocked_reason",
    "depthwise",
    "casts",
    "replaced_by",
)
CROSSLINK_KEYS: tuple[str, ...] = (
    "chain",
    "pattern",
    "ops",
    "anchor_scope",
    "fusible",
    "blocked_reason",
    "status",
    "matched_nodes",
    "separate_kernels",
    "separate_us_per_step",
    "recoverable_us_per_step",
    "separate_kernel_names",
    "join",
)
PHASE_KEYS: tuple[str, ...] = (
    "phase",
    "baseline_steps",
    "target_steps",
    "baseline_ms_per_step",
    "target_ms_per_step",
    "ratio",
    "slower",
)
HEADLINE_KEYS: tuple[str, ...] = (
    "measure",
    "statistic",
    "per_sample",
    "baseline_ms",
    "target_ms",
    "ratio",
    "baseline_p10_ms",
    "target_p10_ms",
    "baseline_spread",
    "target_spread",
    "baseline_steps",
    "target_steps",
    "beyond_noise",
    "operator_delta_ms",
    "gap_delta_ms",
    "slower_steps",
    "same_run",
)
# model -> its key tuple, for the test that holds them to the models
KEY_ORDERS: dict[str, tuple[str, ...]] = {
    "Cause": CAUSE_KEYS,
    "Evidence": EVIDENCE_KEYS,
    "SymptomRecord": SYMPTOM_KEYS,
    "Chain": CHAIN_KEYS,
    "CrosslinkRow": CROSSLINK_KEYS,
    "PhaseTiming": PHASE_KEYS,
    "Headline": HEADLINE_KEYS,
}


def in_order(fields: dict, keys: tuple[str, ...]) -> dict:
    """`fields` with `keys` first, in that order; any other key kept after them, so that the model still
    refuses it when it validates the document (nothing is dropped or filled in here)."""
    ordered = {key: fields[key] for key in keys if key in fields}
    ordered.update((key, value) for key, value in fields.items() if key not in ordered)
    return ordered

"""Ops that fall back to the AI CPU on Ascend for some dtypes: a data table with its sources.

A rule matches a graph op when the op type matches (``"*"`` = any op not in ``exclude``) and one of
its input or output dtypes (``where``) is in ``dtypes``. ``confidence`` is "documented" when a vendor
document or a real profile shows it, "heuristic" when it is general advice.
"""

from __future__ import annotations

from dataclasses import dataclass

MSPROF_AICPU_DOC = (
    "msprof-analyze docs/en/aicpu_operator_replacement_example.md "
    "(https://gitcode.com/Ascend/msprof-analyze): per-op AI CORE vs AI CPU dtypes"
)


@dataclass(frozen=True)
class AicpuRule:
    """Op type (or "*") whose listed dtypes send it to the AI CPU."""

    op: str
    dtypes: frozenset[str]
    where: str  # "input" | "output" | "any"
    source: str
    confidence: str = "documented"
    exclude: frozenset[str] = frozenset()


AICPU_RULES: tuple[AicpuRule, ...] = (
    AicpuRule(
        "TopK",
        frozenset({"int32", "int64"}),
        "input",
        "MindSDK Rec tuning guide, 'AI CPU Operator Elimination' case 1: TopK on int32/int64 values runs "
        "only on the AI CPU (hiascend.com mindsdk Rec recug mxrec_performance_tuning_0018)",
    ),
    AicpuRule("Mul", frozenset({"int16", "complex128"}), "input", MSPROF_AICPU_DOC),
    AicpuRule("Equal", frozenset({"int16", "complex64", "complex128"}), "input", MSPROF_AICPU_DOC),
    AicpuRule(
        "Cast",
        frozenset({"uint64"}),
        "output",
        "real Ascend kernel_details.csv (msprof-analyze test data, 2023 training job): every Cast "
        "INT32->UINT64 ran on AI_CPU (7 kernels)",
    ),
    AicpuRule(
        "*",
        frozenset({"float64"}),
        "any",
        "msprof-analyze advisor AI CPU check and CANN advisor: DOUBLE/INT64 compute lands on the AI CPU; "
        "advice 'convert to float' (diagnosis-knowledge.md S8, S11)",
        confidence="heuristic",
        exclude=frozenset({"Cast"}),  # the Cast out of float64 is the fix, reported as mindir-float64-input
    ),
)


def matching_rules(op: str, inputs: list[str], outputs: list[str]) -> list[AicpuRule]:
    """Rules of AICPU_RULES that flag an op with these input and output dtypes."""
    hits: list[AicpuRule] = []
    for rule in AICPU_RULES:
        if rule.op not in (op, "*") or op in rule.exclude:
            continue
        seen = {"input": inputs, "output": outputs, "any": [*inputs, *outputs]}[rule.where]
        if rule.dtypes.intersection(seen):
            hits.append(rule)
    return hits

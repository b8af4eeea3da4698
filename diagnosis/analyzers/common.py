"""Small helpers shared by the analyzers: rounding, JSON-able evidence rows, op-type groups."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import SupportsFloat

import pandas as pd

# Compute-heavy operator types: where precision and fusion matter most.
COMPUTE_OPS = (
    "Conv2D",
    "Conv3D",
    "Conv2DFusion",
    "Conv",
    "Convolution",
    "MatMul",
    "MatMulV2",
    "MatMulV3",
    "BatchMatMul",
    "BatchMatMulV2",
    "Dense",
    "FlashAttentionScore",
    "GroupedMatmul",
    "QuantBatchMatmul",
)
# Strength of a symptom that is a direct measurement of kernel time (TransData, Cast): the evidence is
# as clear at 1 ms as at 20 ms; how much it matters is carried by the recoverable time and the severity,
# and the engine scales the strength by the share of it the baseline does not have.
MEASURED_STRENGTH = 0.9
LOW_PRECISION = ("FLOAT16", "BF16", "BFLOAT16", "DT_BF16", "DT_FLOAT16", "FP16", "HALF")
FULL_PRECISION = ("FLOAT", "FLOAT32", "DT_FLOAT", "FP32")


def rnd(x: SupportsFloat | None, nd: int = 3) -> float | None:
    """Round for display; None and NaN become None so JSON stays valid."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else round(x, nd)


def rows(table: pd.DataFrame, cols: list[str], n: int = 10) -> tuple[dict[str, object], ...]:
    """The first `n` rows of `cols` as JSON-able dicts (floats rounded, missing -> None)."""
    cols = [c for c in cols if c in table.columns]
    out: list[dict[str, object]] = []
    for record in table[cols].head(n).to_dict("records"):
        clean: dict[str, object] = {}
        for key, value in record.items():
            clean[str(key)] = _plain_cell(value)
        out.append(clean)
    return tuple(out)


def _plain_cell(value: object) -> object:
    """A table cell as JSON-able Python: missing -> None, floats rounded, numpy scalars unwrapped."""
    if value is pd.NA or value is None:
        return None
    if isinstance(value, float):
        return rnd(value)
    item: Callable[[], object] | None = getattr(value, "item", None)
    return value if item is None else item()


def first_dtype(dtypes: pd.Series) -> pd.Series:
    """The first input's dtype from ';'-separated dtype lists, upper-cased."""
    return dtypes.astype("string").str.split(";").str[0].str.strip().str.upper()


OP_COLS = ["operator", "op_type", "baseline_us_per_step", "target_us_per_step", "ratio", "z"]

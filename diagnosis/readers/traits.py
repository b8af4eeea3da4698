"""Run traits inferred from operator names, shared by every reader: mode, phase, AMP markers.

All functions are vectorised over the kernel table's string columns.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray

from core.model import AmpMarkers
from diagnosis.unique import factorize

# Optimizer update kernels (MindSpore and CANN spellings); their presence means a training step.
OPTIMIZER_OPS = (
    "ApplyMomentum",
    "ApplyAdam",
    "Adam",
    "AdamWeightDecay",
    "ApplyAdamW",
    "AdamW",
    "FusedAdam",
    "FusedAdamWeightDecay",
    "ApplyGradientDescent",
    "SGD",
    "ApplyRMSProp",
    "ApplyAdagrad",
    "Lamb",
    "LARSUpdate",
    "ApplyFtrl",
)
_BACKWARD_TYPE_RE = r"(?:Grad|Backprop|Backward)"
_GRAD_SCOPE_PREFIX = "Gradients/"


def backward_mask(names: pd.Series, op_types: pd.Series) -> pd.Series:
    """True for backward kernels: `Gradients/` scopes, `*Grad*`/`*Backprop*` types, torch `*Backward*`."""
    by_scope = names.str.contains(_GRAD_SCOPE_PREFIX, regex=False).fillna(False)
    by_type = op_types.fillna("").str.contains(_BACKWARD_TYPE_RE, regex=True)
    return (by_scope | by_type).astype(bool)


def optimizer_mask(names: pd.Series, op_types: pd.Series) -> pd.Series:
    """True for optimizer kernels, by type or by an `optimizer-` scope segment."""
    by_type = op_types.fillna("").isin(OPTIMIZER_OPS)
    by_scope = names.str.contains(r"(?:^|/)optimizer-", regex=True).fillna(False)
    return (by_type | by_scope).astype(bool)


def infer_phase(names: pd.Series, op_types: pd.Series) -> str:
    """`train` when backward or optimizer kernels run, else `inference`."""
    if names.empty:
        return "unknown"
    if backward_mask(names, op_types).any() or optimizer_mask(names, op_types).any():
        return "train"
    return "inference"


def infer_execution_mode(names: pd.Series) -> str:
    """`graph` when ops carry cell scopes (`Default/<cell>/<Op>-opN`), `pynative` when they do not.

    PyNative names are bare types (`MatMul`) or sit directly under `Default/`; graph-mode names
    nest under at least one cell scope.
    """
    text = names.dropna().astype(str)
    if text.empty:
        return "unknown"
    depth = text.str.count("/")
    scoped = (text.str.startswith(("Default/", "Gradients/")) & (depth >= 2)).mean()
    bare = (depth == 0).mean()
    if scoped >= 0.5:
        return "graph"
    if bare > 0 or (text.str.startswith("Default/") & (depth == 1)).mean() >= 0.5:
        return "pynative"
    return "unknown"


def amp_markers(kernels: pd.DataFrame, steps: int, launches: pd.Series | None = None) -> AmpMarkers:
    """Cast kernels per step and AMP wrapper scopes (`_OutputTo16`/`_OutputTo32`).

    `launches`: how many launches each row stands for, when the rows are distinct (name, op_type) pairs
    rather than single launches (the result is then the same as over every launch)."""
    names = kernels["name"].fillna("").astype(str)
    types = kernels["op_type"].fillna("").astype(str)
    forward = ~backward_mask(kernels["name"], kernels["op_type"])
    cast = ((types == "Cast") | names.str.contains("trans_Cast", regex=False)) & forward
    cast = cast.to_numpy(dtype=bool)
    casts = int(cast.sum()) if launches is None else int(launches.to_numpy(dtype="int64")[cast].sum())
    return {
        "cast_ops_per_step": round(casts / max(steps, 1), 3),
        "output_to16_scopes": bool(names.str.contains("_OutputTo16", regex=False).any()),
        "output_to32_scopes": bool(names.str.contains("_OutputTo32", regex=False).any()),
    }


# ------------------------------------------------------------------------ traits over distinct names


def name_pairs(kernels: pd.DataFrame) -> pd.DataFrame:
    """Distinct (name, op_type) pairs (a missing value is a value) with their launch counts, in order
    of first launch.

    Both columns go through the shared factorization (the analyzers reuse it) and the two codes are
    combined into one integer, so counting is one NumPy pass (pyarrow's group_by would load its
    query engine, ~25 ms of every start)."""
    names, name_codes = _values_and_codes(kernels["name"])
    types, type_codes = _values_and_codes(kernels["op_type"])
    pair_ids, pairs = pd.factorize(name_codes * len(types) + type_codes)  # in order of first launch
    counts = cast(
        ExtensionArray,
        pd.array(np.bincount(pair_ids, minlength=len(pairs)), dtype="int64[pyarrow]"),  # pyright: ignore[reportCallIssue, reportArgumentType]  # pandas-stubs omits pyarrow dtype names
    )
    return pd.DataFrame(
        {
            "name": pd.array(names[pairs // len(types)], dtype="string[pyarrow]"),
            "op_type": pd.array(types[pairs % len(types)], dtype="string[pyarrow]"),
            "count": counts,
        }
    )


def _values_and_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values with a last entry for "missing", int64 code of each row into them)."""
    codes, uniques = factorize(column)
    values = cast(np.ndarray, np.append(np.asarray(uniques, dtype=object), None))  # pyright: ignore[reportCallIssue, reportArgumentType]  # numpy's stubs: no None value
    return values, np.where(codes >= 0, codes, len(values) - 1).astype("int64")


def phase_of(kernels: pd.DataFrame, pairs: pd.DataFrame | None = None) -> str:
    """infer_phase ("is there any backward or optimizer kernel") decided on distinct names: exact."""
    if kernels.empty:
        return "unknown"
    pairs = name_pairs(kernels) if pairs is None else pairs
    return infer_phase(pairs["name"], pairs["op_type"])


def amp_of(kernels: pd.DataFrame, steps: int, pairs: pd.DataFrame | None = None) -> AmpMarkers:
    """amp_markers evaluated once per distinct (name, op_type), each weighted by its launches:
    the same answer as per launch (all launches of a pair look alike) without the per-launch string
    matching (~0.7 s per million launches)."""
    pairs = name_pairs(kernels) if pairs is None else pairs
    return amp_markers(pairs[["name", "op_type"]], steps, launches=pairs["count"])

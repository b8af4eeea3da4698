"""Operator alignment between two runs: per-operator per-step aggregates, matched by normalised
scope first and by (op type, input shape, order of appearance) sequence alignment for the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

import numpy as np
import pandas as pd

from core.model import PIPE_COUNTERS
from diagnosis.unique import factorize, first_rows, runs

# Per-operator attributes whose most common value is kept per side (changes are symptoms).
ATTRS = ("op_type", "input_shapes", "input_dtypes", "input_formats", "output_dtypes", "core", "block_dim")


@dataclass
class Alignment:
    """Matched operator keys of two runs and how much of each side was matched."""

    pairs: pd.DataFrame  # columns: baseline_key, target_key, match ("scope" | "sequence")
    baseline_ops: pd.DataFrame  # per-operator aggregates of the baseline, indexed by key
    target_ops: pd.DataFrame
    baseline_matched_share: float  # share of baseline per-step time that found a partner
    target_matched_share: float
    method: str  # "scope", "sequence" or "scope+sequence"


def operator_aggregates(kernels: pd.DataFrame, steps: int) -> pd.DataFrame:
    """One row per operator key: time and launches per step, first appearance, modal attributes.

    Everything is computed on the key's integer codes with NumPy (bincount, fmin.at, one sort per
    attribute), ordered by first launch; the result is indexed by the key text.
    """
    steps = max(int(steps), 1)
    codes = _key_codes(kernels)
    if (codes < 0).any():  # launches with neither scope nor name cannot be attributed
        kernels, codes = kernels.loc[codes >= 0], codes[codes >= 0]
    n_codes = int(codes.max()) + 1 if len(codes) else 0
    dur = kernels["duration_us"].to_numpy(dtype="float64", na_value=0.0)
    start = kernels["start_us"].to_numpy(dtype="float64", na_value=np.nan)
    rows = _by_first_launch(codes, n_codes)
    first_start = np.full(n_codes, np.nan)
    np.fmin.at(first_start, codes, start)  # fmin skips NaN: a key's first known start
    total = np.bincount(codes, weights=dur, minlength=n_codes)[rows].astype("float64")  # also when empty
    launches = np.bincount(codes, minlength=n_codes)[rows]
    columns: dict[str, Any] = {
        "total_us": total,
        "launches": launches.astype("int64"),
        "mean_us": total / np.maximum(launches, 1),
        "first_start_us": first_start[rows],
        "us_per_step": total / steps,
        "launches_per_step": launches / steps,
    }
    for col in ATTRS:
        columns.update(_attribute_columns(kernels, col, codes, rows, n_codes))
    agg = pd.DataFrame(columns, index=pd.Index(_key_text(kernels, rows), name="key", dtype="object"))
    counters = [c for c in PIPE_COUNTERS if c in kernels.columns]  # what bounds an operator
    if counters:
        means = _counter_means(kernels[counters], codes)
        agg = pd.concat([agg, means.reindex(rows).set_axis(agg.index)], axis=1)
    agg = agg.iloc[np.argsort(agg["first_start_us"].to_numpy(), kind="stable")]  # NaN last
    agg["order"] = np.arange(len(agg))
    return agg


def _by_first_launch(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """The codes that occur, in the order of their first launch."""
    first_row = first_rows(codes, n_codes)
    present = np.flatnonzero(first_row < len(codes))
    return present[np.argsort(first_row[present], kind="stable")]


def _attribute_columns(
    kernels: pd.DataFrame, col: str, codes: np.ndarray, rows: np.ndarray, n_codes: int
) -> dict[str, Any]:
    """The modal value of `col` per key (missing where a key has none) and, for the attributes whose
    variety matters, the number of distinct values per key; `pd.NA` when the layout lacks `col`."""
    if col not in kernels or not kernels[col].notna().any():
        return {col: np.full(len(rows), pd.NA, dtype=object)}
    vcodes, uniques = factorize(kernels[col])
    pair_code, pair_value, counts = _value_counts(codes, vcodes, len(uniques))
    modal_code, modal_value = _modal(pair_code, pair_value, counts)
    position = np.full(n_codes, -1, dtype="int64")
    position[rows] = np.arange(len(rows))
    modal = np.full(len(rows), np.nan, dtype=object)
    modal[position[modal_code]] = np.asarray(uniques, dtype=object)[modal_value]
    out: dict[str, Any] = {col: modal}
    if col in ("input_shapes", "input_dtypes", "input_formats", "core"):
        distinct = np.bincount(pair_code, minlength=n_codes)[rows]
        out[f"{col}_distinct"] = (
            np.where(distinct > 0, distinct, np.nan) if (distinct == 0).any() else distinct
        )
    return out


def _value_counts(
    codes: np.ndarray, vcodes: np.ndarray, n_values: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(key code, value code, launches) of every (key, value) pair that occurs, missing values left out;
    one sort of the combined pair number (no string group-by)."""
    present = vcodes >= 0
    width = n_values + 1
    unique_pairs, counts = runs(np.sort(codes[present].astype("int64") * width + vcodes[present]))
    return unique_pairs // width, unique_pairs % width, counts


def _modal(
    pair_code: np.ndarray, pair_value: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per key code, its most frequent value; a tie goes to the value seen first (smallest value code)."""
    order = np.lexsort((pair_value, -counts, pair_code))
    ordered = pair_code[order]
    first = order[np.r_[True, ordered[1:] != ordered[:-1]]] if len(order) else order
    return pair_code[first], pair_value[first]


def _key_codes(kernels: pd.DataFrame) -> np.ndarray:
    key = kernels["key"]
    if isinstance(key.dtype, pd.CategoricalDtype):
        return key.cat.codes.to_numpy()
    return pd.factorize(key, use_na_sentinel=True)[0]


def _key_text(kernels: pd.DataFrame, codes: np.ndarray) -> np.ndarray:
    key = kernels["key"]
    if isinstance(key.dtype, pd.CategoricalDtype):
        return np.asarray(key.cat.categories, dtype=object)[codes]
    return np.asarray(pd.factorize(key, use_na_sentinel=True)[1], dtype=object)[codes]


def _counter_means(counters: pd.DataFrame, codes: np.ndarray) -> pd.DataFrame:
    """Mean of each pipeline counter per key code (index: the codes present), non-numeric cells ignored.

    Each column is summed and counted per code with np.bincount over its non-missing cells (no
    DataFrame block, no group-by: the counter columns of a million launches are not copied); non-float
    columns go through pd.to_numeric first. The means are plain float64 (NaN: no value), one NumPy block
    that the operator table joins and concatenates cheaply (as Arrow columns they made it 1.5x slower).
    """
    n_codes = int(codes.max()) + 1 if len(codes) else 0
    present = np.flatnonzero(np.bincount(codes, minlength=n_codes))
    means: dict[Hashable, np.ndarray] = {}
    for name in counters:
        column = counters[name]
        if not pd.api.types.is_float_dtype(column.dtype):
            column = pd.to_numeric(column, errors="coerce")
        values = column.to_numpy(dtype="float64", na_value=np.nan)
        known = ~np.isnan(values)
        sums = np.bincount(codes[known], weights=values[known], minlength=n_codes)
        counts = np.bincount(codes[known], minlength=n_codes)
        with np.errstate(invalid="ignore", divide="ignore"):  # 0 / 0: no value for that code -> NaN
            means[name] = (sums / counts)[present]
    return pd.DataFrame(means, index=present, dtype="float64")


def per_step_times(kernels: pd.DataFrame) -> pd.DataFrame:
    """Operator time per step as a (key x step) matrix; the noise model's samples."""
    if "step" not in kernels or kernels["step"].isna().all():
        return pd.DataFrame()
    codes = _key_codes(kernels)
    if (codes < 0).any():  # launches with neither scope nor name cannot be attributed
        kernels, codes = kernels.loc[codes >= 0], codes[codes >= 0]
    if kernels["step"].isna().any():
        frame = pd.DataFrame(
            {
                "code": codes,
                "step": kernels["step"].to_numpy(),
                "d": kernels["duration_us"].to_numpy(dtype="float64"),
            }
        ).dropna(subset=["step"])
        matrix = frame.groupby(["code", "step"])["d"].sum().unstack(fill_value=0.0)  # pyright: ignore[reportArgumentType]  # pandas-stubs: int fill only
    else:
        matrix = _step_matrix(codes, kernels["step"].to_numpy(dtype="int64"), kernels["duration_us"])
    matrix.index = pd.Index(_key_text(kernels, matrix.index.to_numpy()), name="key", dtype="object")
    return matrix


def _step_matrix(codes: np.ndarray, steps: np.ndarray, durations: pd.Series) -> pd.DataFrame:
    """Sum of durations per (code, step) as a dense matrix (absent cells are 0): codes and steps are
    renumbered densely and the sums are one np.bincount over the combined cell number."""
    step_index, step_values = pd.factorize(steps, sort=True)
    code_values = np.flatnonzero(np.bincount(codes))  # codes are small non-negative integers
    dense = np.zeros(int(code_values[-1]) + 1 if len(code_values) else 0, dtype="int64")
    dense[code_values] = np.arange(len(code_values))
    cell = dense[codes] * len(step_values) + step_index
    weights = durations.to_numpy(dtype="float64", na_value=0.0)
    cells = np.bincount(cell, weights=weights, minlength=len(code_values) * len(step_values))
    return pd.DataFrame(
        cells.reshape(len(code_values), len(step_values)),
        index=pd.Index(code_values, name="code"),
        columns=pd.Index(step_values, name="step"),
    )


def align(baseline: pd.DataFrame, target: pd.DataFrame, *, use_scopes: bool) -> Alignment:
    """Match operator keys of two aggregate tables (from `operator_aggregates`)."""
    pairs: list[pd.DataFrame] = []
    if use_scopes:
        common = baseline.index.intersection(target.index)
        pairs.append(pd.DataFrame({"baseline_key": common, "target_key": common, "match": "scope"}))
    matched_b: set[object] = set(pairs[0]["baseline_key"]) if pairs else set()
    matched_t: set[object] = set(pairs[0]["target_key"]) if pairs else set()
    rest_b = baseline.loc[~baseline.index.isin(matched_b)]
    rest_t = target.loc[~target.index.isin(matched_t)]
    seq = sequence_pairs(rest_b, rest_t)
    if len(seq):
        pairs.append(seq)
    table = pd.concat(pairs, ignore_index=True) if pairs else _empty_pairs()
    methods = sorted(set(table["match"]))
    return Alignment(
        pairs=table,
        baseline_ops=baseline,
        target_ops=target,
        baseline_matched_share=_share(baseline, table["baseline_key"]),
        target_matched_share=_share(target, table["target_key"]),
        method="+".join(methods) if methods else "none",
    )


def _empty_pairs() -> pd.DataFrame:
    return pd.DataFrame({"baseline_key": [], "target_key": [], "match": []}, dtype="object")


def _share(ops: pd.DataFrame, keys: pd.Series) -> float:
    total = float(ops["us_per_step"].sum())
    return float(ops.loc[ops.index.isin(keys), "us_per_step"].sum()) / total if total > 0 else 0.0


def sequence_pairs(baseline: pd.DataFrame, target: pd.DataFrame) -> pd.DataFrame:
    """Align the leftover operators in order of first appearance on the columns both runs have.

    Three passes, each over what the one before left: op type and input shape (when both sides record
    shapes), op type alone (the batch differs), and the name with its numbers masked (a Level0 export
    has no type or shape; a communication kernel's name carries a per-run id, hcom_allReduce__586_0_1
    against hcom_allReduce__868_0_1). A profiler-level difference removes columns; it never makes the
    same work look different. Only operators with a known equal signature are paired.
    """
    out_b: list[Any] = []
    out_t: list[Any] = []
    shapes = _has_shapes(baseline, target)
    passes: list[Callable[[pd.DataFrame], list[str | None]]] = [lambda ops: _signatures(ops, shapes=False)]
    if shapes:
        passes.insert(0, lambda ops: _signatures(ops, shapes=True))
    for signature in passes:
        left_b, left_t = _left(baseline, out_b), _left(target, out_t)
        if left_b.empty or left_t.empty:
            break
        _extend(out_b, out_t, _ordered_pairs(left_b, left_t, signature(left_b), signature(left_t)))
    left_b, left_t = _left(baseline, out_b), _left(target, out_t)
    if len(left_b) and len(left_t):
        stems_b, stems_t = name_signatures(list(left_b.index), list(left_t.index))
        _extend(out_b, out_t, _unique_pairs(left_b, left_t, stems_b, stems_t))
        left_b, left_t = _left(baseline, out_b), _left(target, out_t)
        stems_b, stems_t = name_signatures(list(left_b.index), list(left_t.index))
        _extend(out_b, out_t, _ordered_pairs(left_b, left_t, stems_b, stems_t))
    if not out_b:
        return _empty_pairs()
    return pd.DataFrame({"baseline_key": out_b, "target_key": out_t, "match": "sequence"})


def _left(ops: pd.DataFrame, matched: list[Any]) -> pd.DataFrame:
    return ops.loc[~ops.index.isin(matched)]


def _extend(out_b: list[Any], out_t: list[Any], pairs: tuple[list[Any], list[Any]]) -> None:
    out_b += pairs[0]
    out_t += pairs[1]


def _ordered_pairs(
    left_b: pd.DataFrame, left_t: pd.DataFrame, sig_b: Sequence[str | None], sig_t: Sequence[str | None]
) -> tuple[list[Any], list[Any]]:
    """Operators paired where equal known signatures line up in order of first appearance."""
    matcher = SequenceMatcher(a=_unmatchable(sig_b, "b"), b=_unmatchable(sig_t, "t"), autojunk=False)
    keys_b, keys_t = list(left_b.index), list(left_t.index)
    pb: list[Any] = []
    pt: list[Any] = []
    for block in matcher.get_matching_blocks():
        pb += keys_b[block.a : block.a + block.size]
        pt += keys_t[block.b : block.b + block.size]
    return pb, pt


def _unique_pairs(
    left_b: pd.DataFrame, left_t: pd.DataFrame, sig_b: Sequence[str | None], sig_t: Sequence[str | None]
) -> tuple[list[Any], list[Any]]:
    """Operators paired by a signature that occurs once on each side, whatever their order (a
    collective launched asynchronously starts earlier in one run than in the other)."""
    once_b = _once(sig_b)
    once_t = _once(sig_t)
    keys_b, keys_t = list(left_b.index), list(left_t.index)
    common = [s for s in once_b if s in once_t]
    return [keys_b[once_b[s]] for s in common], [keys_t[once_t[s]] for s in common]


def _once(signatures: Sequence[str | None]) -> dict[str, int]:
    """Signature -> position, for the known signatures that occur exactly once."""
    counts = pd.Series([s for s in signatures if s is not None], dtype="object").value_counts()
    return {s: i for i, s in enumerate(signatures) if s is not None and counts[s] == 1}


def _has_shapes(baseline: pd.DataFrame, target: pd.DataFrame) -> bool:
    return bool(baseline["input_shapes"].notna().any() and target["input_shapes"].notna().any())


def _signatures(ops: pd.DataFrame, *, shapes: bool) -> list[str | None]:
    """Op type (and input shape) per operator; None where the type (or shape) is not recorded."""
    types = ops["op_type"].astype("string")
    sig = types + "|" + ops["input_shapes"].astype("string") if shapes else types
    return [None if pd.isna(v) else str(v) for v in sig]


def name_signatures(names_b: list[str], names_t: list[str]) -> tuple[list[str], list[str]]:
    """Names reduced to what tells operators apart: runs of digits are masked where they are the same
    for every operator of that name pattern on one side (a per-run id such as the 586 of
    hcom_allReduce__586_0_1) and kept where they vary (its bucket index, 0)."""
    tokens_b = [_DIGITS.split(n) for n in names_b]
    tokens_t = [_DIGITS.split(n) for n in names_t]
    groups: dict[str, list[list[str]]] = {}
    for parts in tokens_b + tokens_t:
        groups.setdefault(_stem(parts), []).append(parts)
    varying: dict[str, set[int]] = {}
    for side in (tokens_b, tokens_t):
        per_stem: dict[str, list[list[str]]] = {}
        for parts in side:
            per_stem.setdefault(_stem(parts), []).append(parts)
        for stem, members in per_stem.items():
            numbers = range(1, len(members[0]), 2)
            varying.setdefault(stem, set()).update(i for i in numbers if len({m[i] for m in members}) > 1)
    return [_masked(p, varying) for p in tokens_b], [_masked(p, varying) for p in tokens_t]


_DIGITS = re.compile(r"(\d+)")


def _stem(parts: list[str]) -> str:
    """The name with every run of digits replaced by #."""
    return "#".join(parts[0::2])


def _masked(parts: list[str], varying: dict[str, set[int]]) -> str:
    keep = varying.get(_stem(parts), set())
    return "".join(p if i % 2 == 0 or i in keep else "#" for i, p in enumerate(parts))


def _unmatchable(signatures: Sequence[str | None], side: str) -> list[str]:
    """Signatures with every unknown one made unique to its side, so it never pairs."""
    return [s if s is not None else f"\0{side}{i}" for i, s in enumerate(signatures)]

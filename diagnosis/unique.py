"""Apply string work to distinct values only: a profile has millions of launches but a few thousand
distinct names, so regexes run on the uniques and the result is broadcast back by code."""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np
import pandas as pd

# id(Arrow data) -> (weak reference to it, codes, uniques). Analyzers test the same kernel columns
# (name, op_type, dtypes) of the same two runs again and again; a factorization is kept exactly as long
# as the column's Arrow data lives, so nothing outlives its diagnosis.
_FACTORIZED: dict[int, tuple[weakref.ref[object], np.ndarray, pd.Index]] = {}


def factorize(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """pd.factorize(values, use_na_sentinel=True), remembered for Arrow-backed columns (codes read-only).

    Arrow data is immutable, so the same data always gives the same codes."""
    data = getattr(values.array, "_pa_array", None)
    if data is None:
        return pd.factorize(values, use_na_sentinel=True)
    key = id(data)
    hit = _FACTORIZED.get(key)
    if hit is not None and hit[0]() is data:
        return hit[1], hit[2]
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    codes.flags.writeable = False
    _FACTORIZED[key] = (weakref.ref(data, lambda _, key=key: _FACTORIZED.pop(key, None)), codes, uniques)
    return codes, uniques


def per_unique_mask(values: pd.Series, fn: Callable[[pd.Series], pd.Series]) -> np.ndarray:
    """Boolean `fn` evaluated on the distinct values and broadcast back (missing values -> False)."""
    codes, uniques = factorize(values)
    result = np.asarray(fn(pd.Series(uniques, dtype="string")).fillna(False), dtype=bool)
    out = np.zeros(len(codes), dtype=bool)
    present = codes >= 0
    out[present] = result[codes[present]]
    return out


def per_unique_category(values: pd.Series, fn: Callable[[pd.Series], pd.Series]) -> pd.Series:
    """String `fn` evaluated on the distinct values; the result is a categorical Series, so later
    group-bys work on integer codes."""
    codes, uniques = factorize(values)
    mapped = fn(pd.Series(uniques, dtype="string")).astype("string")
    new_codes, categories = pd.factorize(mapped, use_na_sentinel=True)
    final = np.where(codes >= 0, new_codes[np.maximum(codes, 0)], -1)
    cats = pd.Index(np.asarray(categories, dtype=object))
    return pd.Series(pd.Categorical.from_codes(final, categories=cats), index=values.index)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique of a 1-D array by sort and neighbour test (NumPy 2.4's np.unique hashes first and is
    ~40x slower on a million mostly-sorted int64 codes)."""
    return runs(np.sort(values))[0]


def runs(ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each distinct value, how many times it occurs) of a sorted 1-D array, by neighbour test."""
    if not len(ordered):
        return ordered, np.zeros(0, dtype="int64")
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    return ordered[starts], np.diff(np.r_[starts, len(ordered)])


def first_rows(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Row of the first occurrence of each code 0..n_codes-1, len(codes) for a code that never occurs
    (negative codes, "no value", are ignored)."""
    first = np.full(n_codes, len(codes), dtype="int64")
    known = np.flatnonzero(codes >= 0)
    np.minimum.at(first, codes[known].astype("int64"), known)
    return first

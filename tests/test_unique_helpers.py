"""diagnosis.unique: sorted_unique is np.unique by another road (sort and neighbour test); factorize is
pd.factorize remembered for as long as the Arrow data lives."""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from diagnosis import unique
from diagnosis.unique import factorize, sorted_unique


@given(st.lists(st.integers(-(2**62), 2**62), max_size=200))
def test_sorted_unique_equals_numpy_unique(values):
    array = np.array(values, dtype="int64")
    np.testing.assert_array_equal(sorted_unique(array), np.unique(array))


@given(st.lists(st.one_of(st.none(), st.sampled_from(["Conv2D", "ReLU", "", "a;b"])), max_size=80))
@pytest.mark.slow
def test_factorize_equals_pandas_and_repeats_are_remembered(values):
    series = pd.Series(pd.array(values, dtype="string[pyarrow]"))
    codes, uniques = factorize(series)
    expected_codes, expected_uniques = pd.factorize(series, use_na_sentinel=True)
    np.testing.assert_array_equal(codes, expected_codes)
    assert list(uniques) == list(expected_uniques)
    again_codes, again_uniques = factorize(series.copy(deep=False))  # same Arrow data, new Series
    assert again_codes is codes and again_uniques is uniques
    assert not codes.flags.writeable  # shared: nobody may change them


def test_factorize_forgets_a_column_when_its_data_is_gone():
    series = pd.Series(pd.array(["x", "y", "x"] * 10, dtype="string[pyarrow]"))
    key = id(series.array._pa_array)
    factorize(series)
    assert key in unique._FACTORIZED
    del series
    gc.collect()
    assert key not in unique._FACTORIZED


def test_factorize_of_numpy_backed_values_is_plain_pandas():
    series = pd.Series([3, 1, 3, 2])
    codes, uniques = factorize(series)
    np.testing.assert_array_equal(codes, [0, 1, 0, 2])
    assert list(uniques) == [3, 1, 2]


@given(st.lists(st.integers(-3, 5), max_size=60))
def test_runs_and_first_rows_equal_numpy_unique(values):
    array = np.array(values, dtype="int64")
    distinct, counts = unique.runs(np.sort(array))
    want_distinct, want_first, want_counts = np.unique(array, return_index=True, return_counts=True)
    np.testing.assert_array_equal(distinct, want_distinct)
    np.testing.assert_array_equal(counts, want_counts)
    first = unique.first_rows(array, 6)
    for code in range(6):
        hit = want_distinct == code
        np.testing.assert_array_equal(first[code], want_first[hit][0] if hit.any() else len(array))

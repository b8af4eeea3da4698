"""diagnosis.unique's sorted_unique is np.unique by another road (sort and neighbour test)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from diagnosis.unique import sorted_unique


@given(st.lists(st.integers(-(2**62), 2**62), max_size=200))
def test_sorted_unique_equals_numpy_unique(values):
    array = np.array(values, dtype="int64")
    np.testing.assert_array_equal(sorted_unique(array), np.unique(array))

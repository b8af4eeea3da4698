"""Per-operator means of the pipeline counters (np.bincount) against pandas' own group-by mean, on
random launches with missing cells, absent codes and a column of text."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.align import _counter_means

cell = st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 6), cell, cell), min_size=1, max_size=60),
    text_column=st.booleans(),
)
@pytest.mark.slow
def test_counter_means_equal_a_pandas_group_by(rows, text_column):
    codes = np.array([code for code, _, _ in rows], dtype="int64")
    counters = pd.DataFrame(
        {
            "aic_mac_ratio": pd.array([a for _, a, _ in rows], dtype="double[pyarrow]"),
            "aiv_vec_ratio": pd.array([b for _, _, b in rows], dtype="float64"),
        }
    )
    if text_column:  # a counter that came as text: numeric cells count, the rest are ignored
        counters["aic_time_us"] = pd.Series(
            ["x" if a is None else str(a) for _, a, _ in rows], dtype="object"
        )
    expected = pd.DataFrame({c: pd.to_numeric(counters[c], errors="coerce") for c in counters}).groupby(codes)
    expected = expected.mean()
    got = _counter_means(counters, codes)
    assert got.index.tolist() == expected.index.tolist()  # exactly the codes present, sorted
    assert set(got.dtypes) <= {np.dtype("float64")}  # one NumPy block, NaN for no value
    for name in counters:
        np.testing.assert_allclose(
            got[name].to_numpy(dtype="float64", na_value=np.nan),
            expected[name].to_numpy(dtype="float64", na_value=np.nan),
            rtol=1e-9,
            atol=1e-6,
        )

"""shapes.step_gaps (NumPy) against a pandas group-by of the launches per step."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.analyzers.shapes import step_gaps

value = st.one_of(st.none(), st.floats(0, 1e6, allow_nan=False))


class FakeSide:
    def __init__(self, kernels: pd.DataFrame) -> None:
        self.kernels = kernels


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 6)), value, value), max_size=40))
def test_step_gaps_equal_a_group_by(launches):
    kernels = pd.DataFrame(
        {
            "step": pd.array([s for s, _, _ in launches], dtype="int64[pyarrow]"),
            "start_us": pd.array([a for _, a, _ in launches], dtype="double[pyarrow]"),
            "duration_us": pd.array([d for _, _, d in launches], dtype="double[pyarrow]"),
        }
    )
    known = kernels.dropna(subset=["step"]).astype({"start_us": "float64", "duration_us": "float64"})
    known = known.assign(end=known["start_us"] + known["duration_us"])
    want = known.groupby(known["step"].astype("int64")).agg(start=("start_us", "min"), end=("end", "max"))
    got = step_gaps(FakeSide(kernels))
    assert got.index.tolist() == want.index.tolist()  # every step once, ascending
    np.testing.assert_array_equal(got["start"].to_numpy(float), want["start"].to_numpy(float))
    np.testing.assert_array_equal(got["end"].to_numpy(float), want["end"].to_numpy(float))
    gap = want["start"] - want["end"].shift(1)
    np.testing.assert_array_equal(got["gap_before"].to_numpy(float), gap.to_numpy(float))
    np.testing.assert_array_equal(got["span"].to_numpy(float), (want["end"] - want["start"]).to_numpy(float))

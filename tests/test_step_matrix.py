"""The per-step operator time matrix (np.bincount over dense cell numbers) against pandas' two-key
group-by, on random launches with gaps in codes and steps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.align import _step_matrix

launch = st.tuples(st.integers(0, 9), st.integers(0, 400), st.floats(0, 1e5, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(launches=st.lists(launch, min_size=1, max_size=80))
@pytest.mark.slow
def test_step_matrix_equals_a_two_key_group_by(launches):
    codes = np.array([c for c, _, _ in launches], dtype="int64") * 3  # codes with gaps
    steps = np.array([s for _, s, _ in launches], dtype="int64") * 5 + 1000  # sparse step numbers
    durations = pd.Series([d for _, _, d in launches], dtype="double[pyarrow]")
    frame = pd.DataFrame({"code": codes, "step": steps, "d": durations.to_numpy(dtype="float64")})
    expected = frame.groupby(["code", "step"])["d"].sum().unstack(fill_value=0.0)
    got = _step_matrix(codes, steps, durations)
    assert got.index.tolist() == expected.index.tolist()
    assert got.columns.tolist() == expected.columns.tolist()
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-12, atol=1e-9)

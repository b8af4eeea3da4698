"""readers.traits.name_pairs (dictionary codes + NumPy) against pandas' own group-by, and the AMP markers
weighted over those pairs against the markers over every launch."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from diagnosis.readers.traits import amp_markers, amp_of, name_pairs

cell = st.one_of(st.none(), st.sampled_from(["Conv2D-op1", "ReLU", "Cast", "", "a;b", "<b>x</b>"]))


def as_rows(frame: pd.DataFrame, count: str | int) -> list[tuple]:
    """(name, op_type, count) tuples with missing values as None, in the frame's order."""
    return [
        (None if pd.isna(n) else n, None if pd.isna(o) else o, int(c))
        for n, o, c in zip(frame["name"], frame["op_type"], frame[count], strict=True)
    ]


@given(st.lists(st.tuples(cell, cell), max_size=60))
@pytest.mark.slow
def test_name_pairs_equals_groupby_in_first_launch_order(rows):
    kernels = pd.DataFrame(
        {
            "name": pd.array([r[0] for r in rows], dtype="string[pyarrow]"),
            "op_type": pd.array([r[1] for r in rows], dtype="string[pyarrow]"),
        }
    )
    expected = kernels.groupby(["name", "op_type"], dropna=False, sort=False).size().reset_index()
    got = name_pairs(kernels)
    assert list(got.columns) == ["name", "op_type", "count"]
    assert as_rows(got, "count") == as_rows(expected, 0)
    assert int(got["count"].sum()) == len(rows)


amp_cell = st.one_of(
    st.none(),
    st.sampled_from(
        ["Default/net/Cast-op1", "trans_Cast_3", "Gradients/Default/Cast-op9", "a/_OutputTo16/Conv-op2", "X"]
    ),
)


@pytest.mark.slow
@given(st.lists(st.tuples(amp_cell, st.sampled_from([None, "Cast", "Conv2D", "ReluGrad"])), max_size=60))
def test_amp_of_on_distinct_pairs_equals_amp_markers_on_every_launch(rows):
    kernels = pd.DataFrame(
        {
            "name": pd.array([r[0] for r in rows], dtype="string[pyarrow]"),
            "op_type": pd.array([r[1] for r in rows], dtype="string[pyarrow]"),
        }
    )
    for steps in (1, 3):
        assert amp_of(kernels, steps) == amp_markers(kernels, steps)

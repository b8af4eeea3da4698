"""readers.common.name_pairs (dictionary codes + NumPy) against pandas' own group-by."""

from __future__ import annotations

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from diagnosis.readers.common import name_pairs

cell = st.one_of(st.none(), st.sampled_from(["Conv2D-op1", "ReLU", "Cast", "", "a;b", "<b>x</b>"]))


def as_rows(frame: pd.DataFrame, count: str | int) -> list[tuple]:
    """(name, op_type, count) tuples with missing values as None, in the frame's order."""
    return [
        (None if pd.isna(n) else n, None if pd.isna(o) else o, int(c))
        for n, o, c in zip(frame["name"], frame["op_type"], frame[count], strict=True)
    ]


@given(st.lists(st.tuples(cell, cell), max_size=60))
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

"""align.operator_aggregates (NumPy on key codes) against a plain pandas group-by of the same launches:
sums, counts, first start, modal attribute with ties to the value seen first, distinct counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.align import ATTRS, operator_aggregates

key = st.sampled_from(["a/Conv2D-op1", "a/ReLU-op2", "b/Add-op3", "c/Cast-op4"])
text = st.one_of(st.none(), st.sampled_from(["1,3;3", "8,8", "FLOAT16", "NC1HWC0"]))
number = st.one_of(st.none(), st.floats(0, 1e4, allow_nan=False))
launch = st.tuples(key, number, number, text, text, st.one_of(st.none(), st.integers(1, 48)))
MODAL = ("input_shapes", "input_dtypes", "block_dim")
DISTINCT = ("input_shapes", "input_dtypes")


def expected_aggregates(kernels: pd.DataFrame, steps: int) -> pd.DataFrame:
    """The definition, spelled with pandas group-bys on the key text."""
    keys = kernels["key"].astype(object)
    frame = pd.DataFrame(
        {
            "key": keys,
            "dur": kernels["duration_us"].astype("float64").fillna(0.0),
            "start": kernels["start_us"].astype("float64"),
        }
    )
    out = frame.groupby("key", sort=False).agg(
        total_us=("dur", "sum"), launches=("dur", "size"), first_start_us=("start", "min")
    )
    out["us_per_step"] = out["total_us"] / steps
    for col in MODAL:
        values = kernels[col].astype(object).where(kernels[col].notna(), None)
        seen_order = {v: i for i, v in enumerate(dict.fromkeys(v for v in values if v is not None))}
        modal, distinct = {}, {}
        for name, group in values.groupby(keys, sort=False):
            counts = pd.Series([v for v in group if v is not None], dtype=object).value_counts()
            if len(counts):
                modal[name] = max(counts.index, key=lambda v: (counts[v], -seen_order[v]))
                distinct[name] = len(counts)
        out[col] = pd.Series(modal, dtype=object).reindex(out.index)
        out[f"{col}_distinct"] = pd.Series(distinct, dtype="float64").reindex(out.index)
    return out.sort_values("first_start_us", kind="stable")


def kernels_of(launches: list[tuple]) -> pd.DataFrame:
    key, dur, start, shapes, dtypes, block = zip(*launches, strict=True)
    return pd.DataFrame(
        {
            "key": pd.Categorical(key),
            "duration_us": pd.array(dur, dtype="double[pyarrow]"),
            "start_us": pd.array(start, dtype="double[pyarrow]"),
            "input_shapes": pd.array(shapes, dtype="string[pyarrow]"),
            "input_dtypes": pd.array(dtypes, dtype="string[pyarrow]"),
            "block_dim": pd.array(block, dtype="int64[pyarrow]"),
        }
    )


def plain(values: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in values]


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(launches=st.lists(launch, min_size=1, max_size=50), steps=st.integers(1, 5))
def test_aggregates_match_the_group_by_definition(launches, steps):
    kernels = kernels_of(launches)
    got = operator_aggregates(kernels, steps)
    want = expected_aggregates(kernels, steps)
    assert got.index.tolist() == want.index.tolist()  # one row per key, by first start, NaN last
    assert got["order"].tolist() == list(range(len(got)))
    assert got["launches"].tolist() == want["launches"].tolist()
    for col in ("total_us", "first_start_us", "us_per_step"):
        np.testing.assert_allclose(got[col].to_numpy(float), want[col].to_numpy(float), rtol=1e-12)
    for col in MODAL:
        assert plain(got[col]) == plain(want[col])
    for col in DISTINCT:
        if kernels[col].notna().any():
            np.testing.assert_array_equal(got[f"{col}_distinct"].to_numpy(float), want[f"{col}_distinct"])
        else:  # a column with no value at all: missing, and no distinct count
            assert f"{col}_distinct" not in got
    absent = [c for c in ATTRS if c not in kernels]
    assert all(got[c].isna().all() for c in absent)  # attributes the layout lacks are missing


def test_no_launch_gives_an_empty_table_with_the_columns():
    kernels = kernels_of([("k", 1.0, 0.0, None, None, None)]).iloc[:0]
    got = operator_aggregates(kernels, 3)
    assert got.empty
    assert {"total_us", "launches", "us_per_step", "first_start_us", "order", *ATTRS} <= set(got.columns)
    assert got["total_us"].dtype == "float64" and got["launches"].dtype == "int64"

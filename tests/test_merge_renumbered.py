"""forward.merge_renumbered (NumPy) against its definition with pandas group-bys: a position whose names
never share a step is one operator under its first name; names that share a step stay apart."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.forward import merge_renumbered

name = st.sampled_from(["Conv2D-op0", "Conv2D-op3", "Conv2D-op7", "ReLU-op1", "ReLU-op2", "Add-op5", "Cast"])
step = st.one_of(st.none(), st.integers(1, 4))


def by_definition(keys: pd.Series, steps: pd.Series) -> list:
    cats = pd.Series(keys.cat.categories, dtype="string")
    position = cats.str.replace(r"-op\d+$", "", regex=True).to_numpy(dtype=object)
    frame = pd.DataFrame({"key": keys.astype(object), "step": steps.astype("Int64")}).dropna(subset=["key"])
    frame["pos"] = frame["key"].map(dict(zip(cats, position, strict=True)))
    per_step = frame.dropna(subset=["step"]).groupby(["pos", "step"])["key"].nunique().groupby(level=0).max()
    total = frame.groupby("pos")["key"].nunique()
    merged = [p for p in total.index if total[p] > 1 and per_step.get(p, 0) == 1]
    first = frame.drop_duplicates("pos").set_index("pos")["key"]
    rename = {k: first[p] for k, p in zip(cats, position, strict=True) if p in merged}
    return [None if pd.isna(k) else rename.get(k, k) for k in keys.astype(object)]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), name), step), min_size=1, max_size=40))
def test_merge_renumbered_equals_its_definition(launches):
    keys = pd.Series(pd.Categorical([k for k, _ in launches]))
    steps = pd.Series(pd.array([s for _, s in launches], dtype="int64[pyarrow]"))
    got = merge_renumbered(keys, steps)
    assert list(got.cat.categories) == list(keys.cat.categories)  # codes keep their meaning
    if steps.isna().all():
        assert got is keys
    else:
        assert [None if pd.isna(k) else k for k in got.astype(object)] == by_definition(keys, steps)


def test_a_recompiled_graph_is_one_operator_and_a_repeated_cell_is_not():
    keys = pd.Series(
        pd.Categorical(["Conv2D-op0", "ReLU-op1", "ReLU-op2", "Conv2D-op3", "ReLU-op1", "ReLU-op2"])
    )
    steps = pd.Series(pd.array([1, 1, 1, 2, 2, 2], dtype="int64[pyarrow]"))
    got = merge_renumbered(keys, steps).astype(str).tolist()
    assert got == ["Conv2D-op0", "ReLU-op1", "ReLU-op2", "Conv2D-op0", "ReLU-op1", "ReLU-op2"]
    assert np.array_equal(merge_renumbered(keys, steps).cat.codes[:3], keys.cat.codes[:3])

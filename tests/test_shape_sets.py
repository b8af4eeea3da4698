"""The distinct-shape count of the dynamic-shapes analyzer, checked against a plain-Python reference on
random launches (including launches without an operator key), on both of its code paths."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.analyzers import shapes
from diagnosis.compare import prepare
from tests.support.runs import cpu_run

launch = st.tuples(st.integers(-1, 4), st.integers(0, 5), st.integers(0, 3))  # position, step, shape


def reference(launches: list[tuple[int, int, int]]) -> dict[str, int]:
    """Per operator (named `op<position>`): how many distinct per-step sets of shapes it saw."""
    sets: dict[tuple[int, int], set[int]] = {}
    for pos, step, shape in launches:
        if pos >= 0:
            sets.setdefault((pos, step), set()).add(shape)
    per_pos: dict[int, set[frozenset[int]]] = {}
    for (pos, _), seen in sets.items():
        per_pos.setdefault(pos, set()).add(frozenset(seen))
    return {f"op{pos}": len(seen) for pos, seen in per_pos.items()}


def shaped(launches: list[tuple[int, int, int]]) -> tuple[pd.DataFrame, shapes._ShapedLaunches]:
    """The analyzer's input for `launches`, with positions renumbered by first appearance as it does."""
    raw = np.array([p for p, _, _ in launches])
    order = list(dict.fromkeys(p for p in raw if p >= 0))
    position = np.array([order.index(p) if p >= 0 else -1 for p in raw])
    names = [f"op{p}" for p in order]
    shape_text = np.array([f"{s},8" for s in range(4)], dtype=object)
    kernels = pd.DataFrame({"op_type": ["Conv2D"] * len(launches)})
    data = shapes._ShapedLaunches(
        rows=np.arange(len(launches)),
        position=position,
        operators=np.array(names, dtype=object),
        shape=np.array([s for _, _, s in launches]),
        shapes=shape_text,
        step=np.array([s for _, s, _ in launches], dtype="int64") * 7 + 100,  # any step numbers
    )
    return kernels, data


@pytest.mark.slow
@pytest.mark.parametrize("packed", [True, False], ids=["packed", "unique-rows"])
@settings(max_examples=150, deadline=None)
@given(launches=st.lists(launch, min_size=1, max_size=40))
def test_distinct_shape_sets_match_the_reference(launches, packed):
    kernels, data = shaped(launches)
    original = shapes.PACK_LIMIT
    shapes.PACK_LIMIT = original if packed else 1  # 1: nothing fits, the unique-rows path runs
    try:
        top, table = shapes._distinct_shapes(kernels, data)
    finally:
        shapes.PACK_LIMIT = original
    expected = reference(launches)
    got = dict(zip(table["operator"], table["distinct_shapes"], strict=True)) if len(table) else {}
    assert got == expected
    assert top == max(expected.values(), default=0)


def test_both_paths_give_the_same_symptom_on_a_real_dynamic_shape_run(monkeypatch):
    side = prepare(cpu_run("infer_fp32_graph_dynamic_shapes"))
    (packed,) = shapes.dynamic_shapes(side, "target")
    monkeypatch.setattr(shapes, "PACK_LIMIT", 1)
    (fallback,) = shapes.dynamic_shapes(side, "target")
    assert packed.values == fallback.values and packed.evidence == fallback.evidence
    assert packed.values["max_distinct_shapes"] >= 3

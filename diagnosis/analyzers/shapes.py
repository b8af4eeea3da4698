"""Shape symptoms: different shapes between the runs (batch), many shapes for one operator
(recompiles), and a small inference batch that leaves the device under-used.

`OP State = dynamic` says how a kernel was compiled (every aclnn kernel of torch_npu, many of
MindSpore's), not that shapes change: it is carried as a fact (`dynamic_ops_share`, a comparison note)
and never makes a shape symptom on its own. Changing shapes are shown by distinct input shapes per
operator position or by recompiles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.symptoms import Emits, Kind, Symptom, SymptomValues
from core.text import join, say
from diagnosis.analyzers import pair_analyzer, run_analyzer
from diagnosis.analyzers.common import rnd, rows
from diagnosis.analyzers.timing import utilisation
from diagnosis.compare import Comparison, Side, dynamic_kernel_share
from diagnosis.unique import first_rows, runs, sorted_unique


@dataclass(frozen=True, kw_only=True)
class ShapeMismatch(SymptomValues):
    """Matched operators see different input shapes (usually a different batch size)."""

    KIND = Kind("shape-mismatch", ("pair",), ("shape-mismatch",))
    baseline_batch: int | None
    target_batch: int | None
    ops_with_different_shapes: int


@dataclass(frozen=True, kw_only=True)
class DynamicShapes(SymptomValues):
    """One operator sees many distinct input shapes, or the step times show recompile spikes at new
    shapes (dynamic_ops_share, the OP State share, is a fact carried along, never evidence alone)."""

    KIND = Kind("dynamic-shapes", ("run",), ("dynamic-shapes",))
    max_distinct_shapes: int
    dynamic_ops_share: float | None
    recompile_steps: int


@dataclass(frozen=True, kw_only=True)
class SmallBatch(SymptomValues):
    """The target's batch is much smaller than the baseline's and kernels are short (device
    under-used)."""

    KIND = Kind("small-batch", ("pair",), ("small-batch",))
    baseline_batch: int
    target_batch: int
    utilisation: float | None


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(ShapeMismatch, DynamicShapes, SmallBatch)

SHAPE_CHANGED_SHARE = 0.2
DISTINCT_SHAPES = 3
SMALL_BATCH_FACTOR = 4
RECOMPILE_RATIO = 3.0
# A long step hides a compile in the ratio (180 ms on a 565 ms step is 1.3x): a new-shape step that
# stalls this much longer than the steady median, and RECOMPILE_MIN_SHARE of it, recompiled too. The
# real CPU recompiles of the tiny fixture net cost about 180 ms each (a larger net compiles longer),
# while a new shape that only enlarges the kernels adds milliseconds (the real set_inputs run: +5 to
# +15 ms); 100 ms sits between the two.
RECOMPILE_MIN_EXTRA_US = 100_000.0
RECOMPILE_MIN_SHARE = 0.2
PACK_LIMIT = int(np.iinfo("int64").max)  # (position, step, shape) codes are packed into one int64 below it


@pair_analyzer
def shape_mismatch(c: Comparison) -> list[Symptom]:
    """Matched operators whose data input (input 0) has different shapes: durations are not comparable
    as they stand. Only input 0 counts: a fused kernel (Conv2D_BNInfer_Relu) lists the BN scale, offset,
    mean and variance after the data and the weights, which is no change of the work's shape."""
    matched = c.table.loc[c.table["match"].isin(["scope", "sequence"])]
    if matched.empty or not matched["baseline_input_shapes"].notna().any():
        return []
    b_data, t_data = data_shape(matched["baseline_input_shapes"]), data_shape(matched["target_input_shapes"])
    known = (b_data.notna() & t_data.notna()).to_numpy(dtype=bool)
    changed = matched.loc[known & (b_data != t_data).fillna(False).to_numpy(dtype=bool)]
    share = len(changed) / max(int(known.sum()), 1)
    b, t = c.baseline.batch, c.target.batch
    if share < SHAPE_CHANGED_SHARE and not (b and t and b != t):
        return []
    return [
        ShapeMismatch(baseline_batch=b, target_batch=t, ops_with_different_shapes=len(changed)).symptom(
            say(
                "shape-mismatch",
                ops=len(changed),
                of=int(known.sum()),
                batch=say("shape-mismatch.batch", b=b, t=t) if b and t and b != t else "",
            ),
            "pair",
            min(1.0, 0.5 + share),
            evidence=rows(changed, ["operator", "op_type", "baseline_input_shapes", "target_input_shapes"]),
        )
    ]


def data_shape(shapes: pd.Series) -> pd.Series:
    """The shape of input 0 (the data input) from ';'-separated input shape lists, spaces removed."""
    first = shapes.astype("string").str.split(";").str[0].str.replace(" ", "", regex=False)
    return first.where(first != "")


@run_analyzer
def dynamic_shapes(side: Side, role: str) -> list[Symptom]:
    """Many distinct shapes for one operator, or slow steps at new shapes; the dynamic OP State share
    rides along as a fact (it says how kernels were compiled, not that shapes change)."""
    launches = _shaped_launches(side.kernels)
    max_distinct, per_position = _distinct_shapes(side.kernels, launches)
    spans = step_gaps(side) if launches is not None else None
    recompiles = _recompile_steps(side.kernels, launches, spans)
    if max_distinct < DISTINCT_SHAPES and not recompiles:
        return []
    dynamic_share = dynamic_kernel_share(side)
    parts: list[str] = []
    if max_distinct >= DISTINCT_SHAPES:
        parts.append(say("dynamic-shapes.distinct", n=max_distinct))
    if recompiles:
        parts.append(
            say(
                "dynamic-shapes.recompile",
                steps=len(recompiles),
                ratio=RECOMPILE_RATIO,
                extra_ms=RECOMPILE_MIN_EXTRA_US / 1000,
            )
        )
    return [
        DynamicShapes(
            max_distinct_shapes=max_distinct,
            dynamic_ops_share=rnd(dynamic_share),
            recompile_steps=len(recompiles),
        ).symptom(
            say("dynamic-shapes", parts=join(parts)),
            role,
            _dynamic_strength(max_distinct, len(recompiles), _varied_share(per_position)),
            evidence=rows(per_position, ["operator", "op_type", "distinct_shapes", "example_shapes"]),
            recoverable_ms_per_step=_recompile_cost(spans, recompiles),
        )
    ]


def _dynamic_strength(max_distinct: int, recompiles: int, varied: float) -> float:
    """How clear the evidence of changing shapes is: distinct shapes seen, recompile spikes, and how
    many operator positions see more than one shape (one odd operator is weaker than the whole net)."""
    return min(1.0, 0.4 + 0.2 * max_distinct / DISTINCT_SHAPES + 0.2 * recompiles + 0.3 * varied)


def _varied_share(per_position: pd.DataFrame) -> float:
    """Share of operator positions that see more than one per-step shape set."""
    if per_position.empty:
        return 0.0
    return float((per_position["distinct_shapes"] >= 2).mean())


@dataclass
class _ShapedLaunches:
    """Launches with an input shape and a step, as integer codes (computed once per run, shared by the
    distinct-shape count and the recompile search)."""

    rows: np.ndarray  # row numbers in the kernel table
    position: np.ndarray  # operator position code (-1: no key)
    operators: np.ndarray  # position code -> operator name
    shape: np.ndarray  # input shape code
    shapes: np.ndarray  # shape code -> shape text
    step: np.ndarray  # step number (int64)


def _shaped_launches(k: pd.DataFrame) -> _ShapedLaunches | None:
    rows = np.flatnonzero((k["input_shapes"].notna() & k["step"].notna()).to_numpy(dtype=bool))
    if not len(rows):
        return None
    position, operators = _position_codes(k["key"], rows)
    shape, shapes = pd.factorize(k["input_shapes"].take(rows), use_na_sentinel=True)
    step = k["step"].take(rows).to_numpy(dtype="int64")
    return _ShapedLaunches(rows, position, operators, shape, np.asarray(shapes, dtype=object), step)


def step_gaps(side: Side) -> pd.DataFrame:
    """Per step: first launch, last end, and the host gap before it (where a recompile shows on CPU)."""
    k = side.kernels
    step: np.ndarray = k["step"].to_numpy(dtype="float64", na_value=np.nan)
    known = ~np.isnan(step)
    start = k["start_us"].to_numpy(dtype="float64", na_value=np.nan)[known]
    end = start + k["duration_us"].to_numpy(dtype="float64", na_value=np.nan)[known]
    ids = sorted_unique(step[known])
    cell = np.searchsorted(ids, step[known])
    first, last = np.full(len(ids), np.nan), np.full(len(ids), np.nan)
    np.fmin.at(first, cell, start)  # fmin/fmax skip NaN, like a group-by min/max
    np.fmax.at(last, cell, end)
    spans = pd.DataFrame(
        {"start": first, "end": last}, index=pd.Index(ids.astype("int64"), dtype=k["step"].dtype, name="step")
    )
    spans["gap_before"] = spans["start"] - spans["end"].shift(1)
    spans["span"] = spans["end"] - spans["start"]
    return spans


def _recompile_steps(
    k: pd.DataFrame, launches: _ShapedLaunches | None, spans: pd.DataFrame | None
) -> list[int]:
    """Steps that meet an input shape not seen before and are preceded (or taken) by a long stall."""
    if launches is None or spans is None or len(spans) < 3:
        return []
    known = launches.position >= 0  # a launch without a key has no position
    pair = launches.position[known].astype("int64") * (len(launches.shapes) + 1) + launches.shape[known]
    pairs = sorted_unique(pair)
    first_seen = np.full(len(pairs), np.iinfo("int64").max, dtype="int64")
    np.minimum.at(first_seen, np.searchsorted(pairs, pair), launches.step[known])
    new_shape_steps = set(first_seen[first_seen > int(k["step"].min())].tolist())
    stall = spans["gap_before"].fillna(0.0) + spans["span"]
    # Reference: steps that met no new shape (when every step did, the plain kernel spans).
    steady = stall.loc[~stall.index.isin(new_shape_steps)]
    reference = float(steady.median()) if len(steady) else float(spans["span"].median())
    extra = stall - reference
    long_stall = (extra >= RECOMPILE_MIN_EXTRA_US) & (extra >= RECOMPILE_MIN_SHARE * reference)
    slow = set(spans.index[(stall >= RECOMPILE_RATIO * reference) | long_stall].astype(int).tolist())
    return sorted(slow & new_shape_steps)


def _position_codes(keys: pd.Series, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Operator position of launches `rows` (the key without the `-opN` suffix that a recompiled graph
    renumbers) as integer codes numbered in order of first appearance (-1: no key), and the positions.

    The suffix is stripped once per distinct key, not once per launch.
    """
    if isinstance(keys.dtype, pd.CategoricalDtype):
        key_codes, names = keys.cat.codes.to_numpy()[rows], keys.cat.categories
    else:
        key_codes, names = pd.factorize(keys.take(rows), use_na_sentinel=True)
    stripped = pd.Series(np.asarray(names, dtype=object), dtype="string").str.replace(
        r"-op\d+$", "", regex=True
    )
    per_name, positions = pd.factorize(stripped, use_na_sentinel=True)
    position = np.where(key_codes >= 0, per_name[np.maximum(key_codes, 0)], -1).astype("float64")
    position[position < 0] = np.nan
    codes, order = pd.factorize(position, use_na_sentinel=True)  # renumber by first appearance
    return codes, np.asarray(positions, dtype=object)[order.astype("int64")]


def _recompile_cost(spans: pd.DataFrame | None, recompile_steps: list[int]) -> float | None:
    if not recompile_steps or spans is None:
        return None
    stall = spans["gap_before"].fillna(0.0) + spans["span"]
    steady = stall.loc[~stall.index.isin(recompile_steps)]
    extra = float((stall.loc[recompile_steps] - steady.median()).clip(lower=0).sum())
    return rnd(extra / 1000 / len(spans))


def _distinct_shapes(k: pd.DataFrame, launches: _ShapedLaunches | None) -> tuple[int, pd.DataFrame]:
    """Most distinct per-step shape sets seen at one operator position, and the per-position table.

    An operator launched several times per step with the same shapes every step (PyNative merges
    same-type ops into one name) is not dynamic: shapes are compared as per-step sets, each set
    summarised by an order-free hash of its distinct shapes. Positions, steps and shapes are handled
    as integer codes packed into one int64 (NumPy sorts, no pandas group-by); each distinct shape is
    hashed once.
    """
    if launches is None:
        return 0, pd.DataFrame()
    pos, shape = launches.position.astype("int64"), launches.shape.astype("int64")
    step = np.searchsorted(sorted_unique(launches.step), launches.step)
    n_steps, n_shapes = int(step.max()) + 1, len(launches.shapes)
    # One row per distinct (position, step, shape), sorted by (position, step); position -1 (no key)
    # sorts first and is dropped below.
    pos_step = (pos + 1) * n_steps + step
    if int(pos_step.max()) < PACK_LIMIT // max(n_shapes, 1):
        packed = sorted_unique(pos_step * n_shapes + shape)
        pos_step, shape_of = packed // n_shapes, packed % n_shapes
    else:  # too many codes to pack into one int64 (pathological input): unique rows instead
        pos_step, shape_of = np.unique(np.stack([pos_step, shape], axis=1), axis=0).T
    hashes = pd.util.hash_array(launches.shapes).astype("uint64")[shape_of]
    starts = np.flatnonzero(np.r_[True, pos_step[1:] != pos_step[:-1]])
    set_hash = np.add.reduceat(hashes, starts)  # wraps modulo 2**64: still order-free
    set_pos = pos_step[starts] // n_steps - 1
    distinct_pos, distinct = _distinct_per_position(set_pos, set_hash)
    keep = distinct_pos >= 0
    distinct_pos, distinct = distinct_pos[keep], distinct[keep]
    if not len(distinct_pos):
        return 0, pd.DataFrame()
    per = pd.DataFrame({"operator": launches.operators[distinct_pos], "distinct_shapes": distinct})
    first_launch = _first_launch(launches.position)  # by position code, as distinct_pos
    per["example_shapes"] = launches.shapes[launches.shape[first_launch]]
    per["op_type"] = k["op_type"].take(launches.rows[first_launch]).to_numpy()
    per = per.sort_values("distinct_shapes", ascending=False, kind="stable").reset_index(drop=True)
    return int(per["distinct_shapes"].max()), per


def _distinct_per_position(set_pos: np.ndarray, set_hash: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position, number of distinct set hashes) for each position, positions ascending."""
    order = np.lexsort((set_hash, set_pos))
    pos, hashes = set_pos[order], set_hash[order]
    new = np.r_[True, (pos[1:] != pos[:-1]) | (hashes[1:] != hashes[:-1])]
    return runs(pos[new])


def _first_launch(position: np.ndarray) -> np.ndarray:
    """Row of the first launch of each position code that occurs (codes >= 0), codes ascending."""
    first = first_rows(position, int(position.max()) + 1 if len(position) else 0)
    return first[first < len(position)]


@pair_analyzer
def small_batch(c: Comparison) -> list[Symptom]:
    """The target's batch is far smaller than the baseline's and the device is mostly idle."""
    b, t = c.baseline.batch, c.target.batch
    if not (b and t) or t * SMALL_BATCH_FACTOR > b:
        return []
    util = utilisation(c.target)
    if util is not None and util > 0.7:
        return []
    return [
        SmallBatch(baseline_batch=b, target_batch=t, utilisation=rnd(util)).symptom(
            say("small-batch", t=t, b=b, busy=say("small-batch.busy", util=util) if util is not None else ""),
            "pair",
            min(1.0, (b / t) / 16),
        )
    ]

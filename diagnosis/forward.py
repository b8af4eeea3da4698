"""Training-run filtering and scope normalisation, so a training step's forward pass lines up
with an inference run operator by operator.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.model import Run
from diagnosis.readers.traits import backward_mask, optimizer_mask
from diagnosis.unique import first_rows, per_unique_category, per_unique_mask, runs, sorted_unique

# Loss-scale bookkeeping kernels (dynamic loss scaling on Ascend / GPU).
LOSS_SCALE_OPS = (
    "NPUAllocFloatStatus",
    "NPUGetFloatStatus",
    "NPUClearFloatStatus",
    "NPUGetFloatStatusV2",
    "NPUClearFloatStatusV2",
    "FloatStatus",
    "IsFinite",
    "AllFinite",
)
_LOSS_SCOPE = r"(?:^|/)(?:_loss_fn-|loss_fn-|loss-|_loss-)[^/]+/"
_LOSS_SCALE_SCOPE = r"(?:^|/)(?:scale_sense|loss_scale|loss_scaling_manager)[^/]*/"
# Wrapper segments added by training cells; removing them makes scopes equal to inference scopes.
_WRAPPERS = (
    (r"-_OutputTo(?:16|32)/_backbone-", "-"),  # `bn-_OutputTo16/_backbone-BatchNorm2d` -> `bn-BatchNorm2d`
    (r"(?:^|/)network-[^/]*(?:WithLossCell|WithLoss|TrainOneStep[^/]*|WithGradCell|WithEvalCell)/", "/"),
    (r"(?:^|/)_backbone-[^/]+/", "/"),
    (r"(?:^|/)network-[^/]+/", "/"),
)


def normalise_scopes(names: pd.Series) -> pd.Series:
    """Strip training and AMP wrappers: `Default/network-WithLossCell/_backbone-Net/x` -> `Default/x`."""
    out = names.astype("string[pyarrow]")
    for pattern, repl in _WRAPPERS:
        prev = None
        while prev is None or not out.equals(prev):  # nested wrappers need repeated passes
            prev = out
            out = out.str.replace(pattern, repl, regex=True)
    # A replacement at the start leaves a leading "/" where "Default" was consumed: put it back.
    return out.str.replace(r"^/", "", regex=True)


def training_only_mask(kernels: pd.DataFrame) -> np.ndarray:
    """True for kernels that only a training step runs: backward, optimizer, loss, loss scaling,
    gradient communication. String tests run on distinct names and types only. Where the type is not
    recorded (a Level0 export), the kernel name stands for it (Conv2DBackpropInput5)."""
    by_name = per_unique_mask(kernels["name"], _training_only_name)
    by_type = per_unique_mask(kernels["op_type"].fillna(kernels["name"]), _training_only_type)
    return by_name | by_type


def _training_only_name(names: pd.Series) -> pd.Series:
    empty = pd.Series("", index=names.index, dtype="string")
    loss = names.str.contains(_LOSS_SCOPE, regex=True) | names.str.contains(_LOSS_SCALE_SCOPE, regex=True)
    return backward_mask(names, empty) | optimizer_mask(names, empty) | loss


def _training_only_type(types: pd.Series) -> pd.Series:
    empty = pd.Series("", index=types.index, dtype="string")
    return backward_mask(empty, types) | optimizer_mask(empty, types) | types.isin(LOSS_SCALE_OPS)


def forward_kernels(run: Run) -> pd.DataFrame:
    """The run's kernels that an inference pass would also run, with a normalised `key` column.

    Inference runs keep every kernel; training runs drop backward, optimizer, loss and
    loss-scale kernels. The key (categorical) is the normalised scope, or the name when there is
    no scope.
    """
    kernels = run.kernels
    if run.meta.phase == "train":
        kernels = kernels.loc[~training_only_mask(kernels)]
    kernels = kernels.reset_index(drop=True)
    base = kernels["scope"].fillna(kernels["name"])
    keys = per_unique_category(base, normalise_scopes)
    return kernels.assign(key=merge_renumbered(keys, kernels.get("step")))


def _renumbered_positions(
    key: np.ndarray, pos: np.ndarray, step: np.ndarray, n_keys: int, n_positions: int
) -> np.ndarray:
    """Positions with more than one name where no step (steps known) ran two of its names."""
    names_total = np.bincount(sorted_unique(pos * n_keys + key) // n_keys, minlength=n_positions)
    known = ~np.isnan(step)
    step_ids = np.searchsorted(sorted_unique(step[known]), step[known])
    n_steps = int(step_ids.max()) + 1 if len(step_ids) else 1
    triples = sorted_unique((pos[known] * n_steps + step_ids) * n_keys + key[known])
    cell, names_in_cell = runs(triples // n_keys)  # (position, step) cells and the names run in each
    names_per_step = np.zeros(n_positions, dtype="int64")
    np.maximum.at(names_per_step, cell // n_steps, names_in_cell)
    return np.flatnonzero((names_total > 1) & (names_per_step == 1))


def merge_renumbered(keys: pd.Series, steps: pd.Series | None) -> pd.Series:
    """Keys with a recompiled graph's renumbering undone.

    A static graph recompiled for a new shape renumbers its ops (`Conv2D-op0` becomes `Conv2D-op3`).
    When several names of one position never run in the same step, they are one operator: all
    take the first name seen. Names that share a step (three ReLUs of one cell) stay apart.
    """
    if steps is None or steps.isna().all() or keys.empty:
        return keys
    cats = pd.Series(keys.cat.categories, dtype="string")
    pos_codes, positions = pd.factorize(cats.str.replace(r"-op\d+$", "", regex=True))
    if len(positions) == len(cats):  # every name its own position: nothing can have been renumbered
        return keys
    key_codes = keys.cat.codes.to_numpy()
    valid = key_codes >= 0
    key, pos = key_codes[valid].astype("int64"), pos_codes[key_codes[valid]].astype("int64")
    step = steps.to_numpy(dtype="float64", na_value=np.nan)[valid]
    renumbered = _renumbered_positions(key, pos, step, len(cats), len(positions))
    if not len(renumbered):
        return keys
    first_row = first_rows(pos, len(positions))
    remap = np.arange(len(cats))
    moved = np.isin(pos_codes, renumbered)
    remap[moved] = key[first_row[pos_codes[moved]]]  # every name of the position takes its first name
    new_codes = np.where(key_codes >= 0, remap[np.maximum(key_codes, 0)], -1)
    return pd.Series(pd.Categorical.from_codes(new_codes, categories=keys.cat.categories), index=keys.index)

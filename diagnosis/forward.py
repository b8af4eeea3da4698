"""Training-run filtering and scope normalisation, so a training step's forward pass lines up
with an inference run operator by operator.
"""

from __future__ import annotations

import pandas as pd

from diagnosis.model import Run
from diagnosis.readers.traits import backward_mask, optimizer_mask

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


def training_only_mask(kernels: pd.DataFrame) -> pd.Series:
    """True for kernels that only a training step runs: backward, optimizer, loss, loss scaling,
    gradient communication."""
    names = kernels["name"].fillna("")
    types = kernels["op_type"].fillna("")
    loss = names.str.contains(_LOSS_SCOPE, regex=True) | names.str.contains(_LOSS_SCALE_SCOPE, regex=True)
    scale = types.isin(LOSS_SCALE_OPS)
    return (backward_mask(names, types) | optimizer_mask(names, types) | loss | scale).astype(bool)


def forward_kernels(run: Run) -> pd.DataFrame:
    """The run's kernels that an inference pass would also run, with a normalised `key` column.

    Inference runs keep every kernel; training runs drop backward, optimizer, loss and
    loss-scale kernels. The key is the normalised scope (or name when there is no scope).
    """
    kernels = run.kernels
    if run.meta.phase == "train":
        kernels = kernels.loc[~training_only_mask(kernels).to_numpy()]
    base = kernels["scope"].fillna(kernels["name"])
    kernels = kernels.assign(key=merge_renumbered(kernels.assign(key=normalise_scopes(base))))
    return kernels.reset_index(drop=True)


def merge_renumbered(kernels: pd.DataFrame) -> pd.Series:
    """Keys with a recompiled graph's renumbering undone.

    A static graph recompiled for a new shape renumbers its ops (`Conv2D-op0` becomes `Conv2D-op3`).
    When several names of one position never run in the same step, they are one operator: all
    take the first name seen. Names that share a step (three ReLUs of one cell) stay apart.
    """
    keys = kernels["key"]
    if "step" not in kernels or kernels["step"].isna().all():
        return keys
    position = keys.str.replace(r"-op\d+$", "", regex=True)
    frame = pd.DataFrame({"key": keys, "position": position, "step": kernels["step"]})
    names_per_step = frame.groupby(["position", "step"])["key"].nunique().groupby("position").max()
    names_total = frame.groupby("position")["key"].nunique()
    renumbered = names_total.index[(names_total > 1) & (names_per_step.reindex(names_total.index) == 1)]
    if renumbered.empty:
        return keys
    first_name = frame.loc[frame["position"].isin(renumbered)].groupby("position")["key"].first()
    return keys.where(~position.isin(renumbered), position.map(first_name))

"""Training-mode kernels in an inference run: BatchNorm with batch statistics, Dropout."""

from __future__ import annotations

from dataclasses import dataclass

from core.symptoms import Emits, Kind, Symptom, SymptomValues
from core.text import say
from diagnosis.analyzers import run_analyzer
from diagnosis.analyzers.common import rnd, rows
from diagnosis.compare import Side


@dataclass(frozen=True, kw_only=True)
class TrainModeKernels(SymptomValues):
    """Training-mode BatchNorm (batch statistics) or Dropout kernels run in the inference run."""

    KIND = Kind("train-mode-kernels", ("run",), ("train-mode-kernels",))
    bn_training_kernels: int
    dropout_kernels: int
    ms_per_step: float | None


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(TrainModeKernels)

BN_TRAINING_TYPES = (
    "BNTrainingReduce",
    "BNTrainingUpdate",
    "BatchNormTraining",
    "BNTrainingUpdateV2",
    "BNTrainingUpdateV3",
    "BatchNormWithActivation",
)
DROPOUT_PATTERN = r"(?i)dropout"


@run_analyzer
def train_mode_kernels(side: Side, role: str) -> list[Symptom]:
    """Dropout or training-mode BatchNorm kernels in a run that is otherwise inference."""
    if side.run.meta.phase != "inference":
        return []
    ops = side.ops.reset_index(names="operator")
    types = ops["op_type"].astype(str)
    bn = ops.loc[types.isin(BN_TRAINING_TYPES)]
    dropout = ops.loc[types.str.contains(DROPOUT_PATTERN, regex=True)]
    if bn.empty and dropout.empty:
        return []
    found = ops.loc[bn.index.union(dropout.index)]
    ms = float(found["us_per_step"].sum()) / 1000
    return [
        TrainModeKernels(
            bn_training_kernels=len(bn), dropout_kernels=len(dropout), ms_per_step=rnd(ms)
        ).symptom(
            say("train-mode-kernels", bn=len(bn), dropout=len(dropout), ms=ms),
            role,
            1.0 if len(dropout) or len(bn) >= 2 else 0.7,
            evidence=rows(found, ["operator", "op_type", "us_per_step", "launches_per_step"]),
            recoverable_ms_per_step=rnd(ms),
        )
    ]

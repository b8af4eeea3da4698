"""Training-mode kernels in an inference run: BatchNorm with batch statistics, Dropout."""

from __future__ import annotations

from core.symptoms import Emits, Symptom
from core.text import say
from diagnosis.analyzers import run_analyzer
from diagnosis.analyzers.common import rnd, rows
from diagnosis.compare import Side

# The symptom kinds this module emits (see diagnosis/analyzers/__init__.py).
EMITS = Emits(run=("train-mode-kernels",))

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
        Symptom(
            "train-mode-kernels",
            say("train-mode-kernels", bn=len(bn), dropout=len(dropout), ms=ms),
            source=role,
            strength=1.0 if len(dropout) or len(bn) >= 2 else 0.7,
            values={"bn_training_kernels": len(bn), "dropout_kernels": len(dropout), "ms_per_step": rnd(ms)},
            evidence=rows(found, ["operator", "op_type", "us_per_step", "launches_per_step"]),
            recoverable_ms_per_step=rnd(ms),
        )
    ]

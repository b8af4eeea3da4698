"""Input-pipeline symptoms: steps that wait for data, and random augmentation left in an inference
pipeline. Sources, whichever the run has: the minddata pipeline table (queue samples per dataset op),
dataset.csv (per dataset op and stage, e.g. `GetNext`), GetNext operators among the kernels, and the
run's recorded metadata (profiler_metadata.json) where a script may have stored its pipeline.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.symptoms import Emits, Kind, Symptom, SymptomValues
from core.text import Text, join, say
from diagnosis.analyzers import run_analyzer
from diagnosis.analyzers.common import rnd, rows
from diagnosis.compare import Side


@dataclass(frozen=True, kw_only=True)
class DataPipelineWait(SymptomValues):
    """Steps wait for input data (dataset / minddata queue empty or slow get-next)."""

    KIND = Kind("data-pipeline-wait", ("run",), ("data-pipeline-wait",))
    wait_share: float | None
    empty_queue_share: float | None
    ms_per_step: float | None


@dataclass(frozen=True, kw_only=True)
class RandomAugmentation(SymptomValues):
    """Random augmentation operations run in the inference data pipeline."""

    KIND = Kind("random-augmentation", ("run",), ("random-augmentation",))
    ops: list[str]  # the Random* transforms found


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(DataPipelineWait, RandomAugmentation)

EMPTY_QUEUE_SHARE = 0.6  # MindSpore minddata bottleneck rule: device-queue input empty > 60 % (S6)
WAIT_SHARE = 0.2  # steps spend more than a fifth of their wall time fetching the next batch
GETNEXT_OP_TYPES = ("GetNext", "GetNextFromQueue", "DynamicGetNext", "DynamicGetNextV2", "InitDataSetQueue")
GETNEXT_STAGE = r"(?i)GetNext"
DEVICE_QUEUE = r"(?i)(?:DeviceQueue|DataQueue)"
# Random* transforms of mindspore.dataset.vision / text / audio; samplers are not augmentations.
RANDOM_OP = re.compile(r"\bRandom(?!Sampler|Accessor|Seed|State)[A-Z][A-Za-z0-9]*")


# ------------------------------------------------------------------------------------ data waiting


def queue_samples(cell: object) -> np.ndarray:
    """Sampled queue sizes from a minddata `output_queue_size` cell (`[12, 3, 0]`); empty if not a list."""
    text = "" if cell is None or cell is pd.NA else str(cell)
    if "[" not in text:
        return np.array([])
    return np.array([float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text)])


def device_queue_input(minddata: pd.DataFrame) -> pd.Series | None:
    """The minddata row whose output queue feeds the device/iterator: the child of a DeviceQueue/DataQueue
    op when the table has one, else the root op (no parent)."""
    need = {"op_id", "op_type", "parent_id", "output_queue_size"}
    if not need <= set(minddata.columns) or minddata.empty:
        return None
    parent = pd.to_numeric(minddata["parent_id"].astype("string"), errors="coerce")
    types = minddata["op_type"].astype("string").fillna("")
    queue_ops = minddata.loc[types.str.contains(DEVICE_QUEUE, regex=True).to_numpy()]
    if len(queue_ops):
        feeders = minddata.loc[parent.isin(pd.to_numeric(queue_ops["op_id"], errors="coerce")).to_numpy()]
    else:
        feeders = minddata.loc[(parent.isna() | (parent < 0)).to_numpy()]
    return feeders.iloc[0] if len(feeders) else None


def empty_queue_share(side: Side) -> tuple[float, pd.Series] | None:
    """Share of queue samples in which the queue feeding the device was empty, and that op's row."""
    row = device_queue_input(side.run.pipeline)
    if row is None:
        return None
    samples = queue_samples(row["output_queue_size"])
    if samples.size == 0:
        return None
    return float((samples <= 0).mean()), row


def getnext_us(side: Side) -> tuple[float, Text] | None:
    """Time per step spent getting the next batch (µs) and where it was seen: GetNext operators among the
    kernels, else the slowest `GetNext` stage of dataset.csv per call (one batch per step; dataset.csv
    also counts calls outside the profiled steps, so its call count is not used)."""
    k = side.run.kernels
    ops = k["op_type"].astype("string").isin(GETNEXT_OP_TYPES).fillna(False).to_numpy()
    if ops.any():
        total = float(k.loc[ops, "duration_us"].astype("float64").sum())
        return total / max(side.run.step_count, 1), say("pipeline.getnext")
    stages = side.run.dataset_stages
    hit = stages["stage"].astype("string").str.contains(GETNEXT_STAGE, regex=True).fillna(False)
    if not hit.any():
        return None
    return float(stages.loc[hit.to_numpy(), "avg_us"].astype("float64").max()), say("pipeline.dataset")


def data_wait(side: Side) -> tuple[float, float, Text] | None:
    """(wait µs per step, share of the step, source). The pipeline runs ahead of the model, so fetching a
    batch only costs the step the part the device spends idle: the wait is GetNext time capped by the
    step's free time. Without free time a dataset.csv figure cannot be told from overlapped work."""
    found = getnext_us(side)
    steps = side.run.steps
    wall = steps["duration_us"].astype("float64").dropna()
    if found is None or wall.empty or wall.median() <= 0:
        return None
    fetch, source = found
    free = steps["free_us"].astype("float64").dropna()
    if len(free):
        fetch = min(fetch, float(free.median()))
    elif source.key != "pipeline.getnext":
        return None
    return fetch, fetch / float(wall.median()), source


@run_analyzer
def data_pipeline_wait(side: Side, role: str) -> list[Symptom]:
    """The device waits for input: the queue that feeds it is empty in more than 60 % of the samples, or
    waiting for the next batch takes more than 20 % of the step. Silent when no dataset record exists."""
    queue = empty_queue_share(side)
    wait = data_wait(side)
    empty = queue[0] if queue else None
    wait_share = wait[1] if wait else None
    if (empty or 0.0) <= EMPTY_QUEUE_SHARE and (wait_share or 0.0) <= WAIT_SHARE:
        return []
    parts: list[str] = []
    if queue:
        parts.append(say("pipeline.queue", op_type=queue[1]["op_type"], empty=empty))
    if wait:
        parts.append(say("pipeline.wait", ms=wait[0] / 1000, share=wait[1], source=wait[2]))
    ms = wait[0] / 1000 if wait else None
    return [
        DataPipelineWait(
            wait_share=rnd(wait_share), empty_queue_share=rnd(empty), ms_per_step=rnd(ms, 4)
        ).symptom(
            say("data-pipeline-wait", role=say(f"role.{role}"), parts=join(parts)),
            role,
            min(1.0, max((empty or 0.0), (wait_share or 0.0) / 0.4)),
            evidence=_pipeline_evidence(side),
            recoverable_ms_per_step=rnd(ms, 4),
        )
    ]


def _pipeline_evidence(side: Side) -> tuple[dict[str, object], ...]:
    minddata = side.run.pipeline
    if minddata.empty:
        return ()
    cols = ["op_id", "op_type", "num_workers", "output_queue_size", "output_queue_usage_rate", "parent_id"]
    return rows(minddata, cols)


# ---------------------------------------------------------------------------------- random augmentation


def _text_cells(frame: pd.DataFrame | None) -> list[str]:
    """Distinct string cells of a table (dataset op names, custom info)."""
    if frame is None or frame.empty:
        return []
    cols = [c for c in frame.columns if pd.api.types.is_string_dtype(frame[c]) or frame[c].dtype == object]
    if not cols:
        return []
    cells = pd.concat([frame[c].astype("string") for c in cols], ignore_index=True).dropna()
    return cells.unique().tolist()


def random_ops(side: Side) -> list[str]:
    """Random* transform names recorded for the run: dataset.csv, the minddata pipeline table, and the
    metadata a script added to the profile (e.g. the JSON of `dataset.to_json()`)."""
    texts = _text_cells(side.run.dataset_stages) + _text_cells(side.run.pipeline)
    texts.append(json.dumps(side.run.meta.environment, default=str))
    found = {m.group(0) for text in texts for m in RANDOM_OP.finditer(str(text))}
    return sorted(found)


@run_analyzer
def random_augmentation(side: Side, role: str) -> list[Symptom]:
    """Random augmentation (RandomCrop, RandomHorizontalFlip ...) in the pipeline of the inference run:
    training transforms reused at test time. Training runs are expected to have them, so only an
    inference baseline is a reference the engine subtracts."""
    if side.run.meta.phase == "train":
        return []
    found = random_ops(side)
    if not found:
        return []
    return [
        RandomAugmentation(ops=found).symptom(
            say("random-augmentation", role=say(f"role.{role}"), ops=", ".join(found)), role, 0.8
        )
    ]

"""The canonical, typed run model every reader produces and every analyzer consumes.

One profiler output, whatever its layout, becomes one :class:`Run`: per-launch kernels in a
pyarrow-backed DataFrame with fixed column names, per-step times, run metadata and an
explicit list of questions the run cannot answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypedDict

import pandas as pd

from core.jsontypes import JsonObject

# Canonical kernel columns and their pyarrow-backed dtypes. Readers fill what their layout has and
# leave the rest missing (<NA>); the pipeline counters in PIPE_COUNTERS join them when the profile has them.
KERNEL_SCHEMA: dict[str, str] = {
    "name": "string[pyarrow]",  # full kernel / op name as the profiler wrote it
    "op_type": "string[pyarrow]",  # operator type, e.g. Conv2D
    "scope": "string[pyarrow]",  # framework scope (full_op_name) when known, else <NA>
    "step": "int64[pyarrow]",  # step id when the layout records or implies one
    "start_us": "double[pyarrow]",  # launch start, microseconds (absolute clock of the run)
    "duration_us": "double[pyarrow]",
    "wait_us": "double[pyarrow]",
    "core": "string[pyarrow]",  # AI_CORE, AI_VECTOR_CORE, AI_CPU, MIX_AIC, HCCL, CPU, GPU ...
    "block_dim": "int64[pyarrow]",
    "input_shapes": "string[pyarrow]",  # ';' between inputs, ',' between dims, quotes stripped
    "input_dtypes": "string[pyarrow]",
    "input_formats": "string[pyarrow]",
    "output_shapes": "string[pyarrow]",
    "output_dtypes": "string[pyarrow]",
    "output_formats": "string[pyarrow]",
    "op_state": "string[pyarrow]",  # static / dynamic / <NA> (unknown, never assume dynamic)
}

# The AI Core / AI Vector pipe-utilisation ratios (aic_metrics=PipeUtilization) that say what bounds an
# operator: the only hardware counters the analysis reads, so the only ones a reader keeps. A Level1
# kernel_details.csv has about twenty more; parsing them cost a fifth of the CSV parse (80 -> 62 ms for
# a 100k-row file when they are left out) and nothing read them.
PIPE_COUNTERS = ("aic_mac_ratio", "aic_mte2_ratio", "aiv_vec_ratio", "aiv_mte2_ratio")

STEP_SCHEMA: dict[str, str] = {
    "step": "int64[pyarrow]",
    "start_us": "double[pyarrow]",
    "duration_us": "double[pyarrow]",  # wall time of the step
    "busy_us": "double[pyarrow]",  # device (or host-op) busy time inside the step
    "free_us": "double[pyarrow]",  # idle time (step_trace_time Free or wall - busy)
    "communication_us": "double[pyarrow]",  # communication not overlapped by computing
    "overlapped_us": "double[pyarrow]",  # communication overlapped by computing (step_trace_time Overlapped)
}

# The per-step time breakdown of one rank (msprof-analyze's step_trace_time terms): computing, communication
# not overlapped by computing, communication overlapped by computing, and free (nothing running).
BREAKDOWN_FIELDS = ("wall_us", "computing_us", "communication_us", "overlapped_us", "free_us")


# The optional per-run tables analyzers read, each in one canonical form whatever file it came from.
# An absent record is an empty table with these columns (never None); readers.tables fills them.
MEMORY_SCHEMA: dict[str, str] = {  # memory held over time: memory_record.csv, npu_module_mem.csv, CPU record
    "time_us": "double[pyarrow]",  # sample time, on the kernels' clock
    "mb": "double[pyarrow]",  # allocated memory (MB) where recorded, else reserved (npu_module_mem)
}
DATASET_STAGE_SCHEMA: dict[str, str] = {  # dataset.csv: time per dataset operation and stage
    "operation": "string[pyarrow]",  # e.g. Batch(ID:1), GeneratorOp
    "stage": "string[pyarrow]",  # e.g. GetNext, WorkerProcess, Build
    "occurrences": "int64[pyarrow]",
    "avg_us": "double[pyarrow]",  # mean time per occurrence
    "info": "string[pyarrow]",  # free text the pipeline recorded (Custom Info)
}
PIPELINE_SCHEMA: dict[str, str] = {  # minddata pipeline: one row per dataset op of the input pipeline
    "op_id": "int64[pyarrow]",
    "op_type": "string[pyarrow]",  # e.g. Batch, Map, DataQueue
    "num_workers": "int64[pyarrow]",
    "parent_id": "int64[pyarrow]",  # <NA> for the root op
    "output_queue_size": "string[pyarrow]",  # sampled output queue sizes as written, e.g. "[12, 3, 0]"
    "output_queue_usage_rate": "double[pyarrow]",
}
FREQUENCY_SCHEMA: dict[str, str] = {  # AI Core clock samples (trace_view.json "AI Core Freq" counter)
    "ts_us": "double[pyarrow]",  # the sample holds from this time until the next one
    "mhz": "double[pyarrow]",
}
API_SCHEMA: dict[str, str] = {  # api_statistic.csv: host API calls over the profiled window
    "api": "string[pyarrow]",  # e.g. aclrtSynchronizeStream
    "count": "int64[pyarrow]",
    "time_us": "double[pyarrow]",  # total time of the calls
}
NPU_SMI_SCHEMA: dict[str, str] = {  # npu-smi readings attached to a run (not part of a profiler folder)
    "source": "string[pyarrow]",  # info (device table), watch (sample lines) or common (info -t common)
    "npu": "int64[pyarrow]",
    "chip": "int64[pyarrow]",
    "name": "string[pyarrow]",
    "health": "string[pyarrow]",
    "bus_id": "string[pyarrow]",
    "power_w": "double[pyarrow]",
    "temperature_c": "double[pyarrow]",
    "aicore_pct": "double[pyarrow]",  # AI Core usage
    "aicpu_pct": "double[pyarrow]",
    "ctrlcpu_pct": "double[pyarrow]",
    "memory_pct": "double[pyarrow]",
    "memory_bw_pct": "double[pyarrow]",
    "hbm_pct": "double[pyarrow]",
    "aicore_freq_mhz": "double[pyarrow]",  # current AI Core clock
    "aicore_rated_mhz": "double[pyarrow]",  # rated AI Core clock
    "aicore_count": "double[pyarrow]",
    "memory_used_mb": "double[pyarrow]",
    "memory_total_mb": "double[pyarrow]",
    "hbm_used_mb": "double[pyarrow]",
    "hbm_total_mb": "double[pyarrow]",
}


@dataclass(frozen=True)
class Limitation:
    """A question this input cannot answer, why, and how to get the data that would answer it."""

    topic: str  # stable key, e.g. "dtypes", "profiler-config", "steps", "shapes", "scopes"
    reason: str
    remedy: str = ""


class AmpMarkers(TypedDict, total=False):
    """Mixed-precision traces of a run's kernels (diagnosis.readers.traits.amp_markers)."""

    cast_ops_per_step: float  # forward Cast kernels per step
    output_to16_scopes: bool  # AMP's _OutputTo16 wrapper scopes seen
    output_to32_scopes: bool


class _SlowLinkFigures(TypedDict):
    rank: int
    link: str  # the link type: HCCS, RDMA, SDMA, PCIE, SIO
    gbps: float
    median_gbps: float  # the median of the type over the job's ranks


class SlowLinkRecord(_SlowLinkFigures, total=False):
    """A rank's links of one type, or one link (`pair`, '<src>-<dst>' in global ranks), under half the
    median bandwidth of its type."""

    pair: str


@dataclass
class ProfilerConfig:
    """Profiler settings normalised across layouts; None means the layout did not record it."""

    level: str | None = None  # Level0 / Level1 / Level2 / LevelNone
    aic_metrics: str | None = None  # PipeUtilization, ArithmeticUtilization, ..., None
    activities: tuple[str, ...] | None = None
    with_stack: bool | None = None
    profile_memory: bool | None = None
    data_process: bool | None = None
    record_shapes: bool | None = None
    data_simplification: bool | None = None  # intermediate data deleted after parsing
    schedule: JsonObject | None = None
    raw: JsonObject = field(default_factory=JsonObject)  # the record as written, for diffs

    @property
    def recorded(self) -> bool:
        return bool(self.raw)


@dataclass
class RunMeta:
    """What the run is: layout, framework, device, rank, configuration and inferred traits."""

    layout: str
    source: str  # display name of the input (user data: escape before showing)
    framework: str = "mindspore"  # mindspore | torch_npu
    framework_version: str | None = None
    device: str = "unknown"  # Ascend | GPU | CPU | unknown
    rank: int | None = None
    ranks_available: tuple[int, ...] = ()
    config: ProfilerConfig = field(default_factory=ProfilerConfig)
    jit_level: str | None = None
    execution_mode: str = "unknown"  # graph | pynative | unknown
    phase: str = "unknown"  # train | inference | unknown
    amp: AmpMarkers = field(default_factory=lambda: AmpMarkers())  # empty when no kernels were read
    environment: JsonObject = field(default_factory=JsonObject)  # profiler_metadata.json
    files: tuple[str, ...] = ()  # relative paths of the files that were read


@dataclass(frozen=True)
class StepBreakdown:
    """One step of one rank: wall time and its computing / exposed communication / overlapped / free parts."""

    step: int
    wall_us: float
    computing_us: float
    communication_us: float  # communication not overlapped by computing
    overlapped_us: float  # communication hidden under computing
    free_us: float  # nothing running: wall - computing - communication_us


@dataclass(frozen=True)
class LinkTraffic:
    """What one rank's communication_matrix.json says of one link of a communication group: its ends as
    ranks of that group (mapped to global ranks across the job: `diagnosis.ranks.global_pairs`), and the
    megabytes and milliseconds it carried, summed over the group's total operators."""

    group: str  # the group id after the "@" of the operator names
    transport: str  # HCCS | RDMA | SDMA | PCIE | SIO
    src: int
    dst: int
    size_mb: float
    time_ms: float


@dataclass
class RankSummary:
    """A compact, picklable summary of one rank of a job: what the cross-rank analysis needs, so memory
    does not grow with ranks x kernel rows. `error` is set (and the rest empty) when the rank's files
    could not be read."""

    rank: int
    root: str  # the rank's run folder, relative to the input
    layout: str = ""
    breakdown: tuple[StepBreakdown, ...] = ()
    breakdown_source: str = ""  # step_trace_time | kernels
    kernels: int = 0
    # op type -> total device time (µs); link type -> mean bandwidth (GB/s); link type -> {"src-dst": GB/s}
    op_us: dict[str, float] = field(default_factory=dict[str, float])
    link_gbps: dict[str, float] = field(default_factory=dict[str, float])
    # link type -> {"<src>-<dst>" in global ranks: GB/s}: from msprof-analyze's cluster matrix, or filled
    # from `links` once the job's ranks map each group's ranks to global ones
    pair_gbps: dict[str, dict[str, float]] = field(default_factory=dict[str, dict[str, float]])
    links: tuple[LinkTraffic, ...] = ()  # its matrix's links, in group-local ranks
    group_rank: dict[str, int] = field(default_factory=dict[str, int])  # group id -> its rank in the group
    # group id -> the group's global ranks (profiler_metadata.json's parallel_group_info), when recorded
    group_members: dict[str, tuple[int, ...]] = field(default_factory=dict[str, tuple[int, ...]])
    aicore_mhz: float | None = None  # median AI Core clock while kernels ran, when recorded
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class Straggler:
    """A rank whose computing time per step stands out from the others (robust z-score, stable over steps)."""

    rank: int
    typical_rank: int  # the rank whose computing time is closest to the median
    ratio: float  # its computing time over the median rank's, median over steps
    extra_ms: float  # its extra computing time per step over the median (what the others wait for)
    steps_flagged: int
    steps_total: int
    victims: tuple[int, ...] = ()  # ranks that wait for it in collectives
    wait_ms: float = 0.0  # median exposed communication of the other ranks minus the slow rank's
    test: str = "mad"  # mad (modified z, over 10 ranks) | dixon (Dixon's Q, 3-10 ranks) | pair (2 ranks)


@dataclass
class RankSet:
    """Every rank of a job: the per-rank summaries, the ranks that could not be read and the slow rank."""

    summaries: list[RankSummary]
    chosen: int | None = None  # the rank the single-rank analysis read in full
    straggler: Straggler | None = None
    slow_links: list[SlowLinkRecord] = field(default_factory=list[SlowLinkRecord])
    reason: str = ""  # why no straggler test ran (too few ranks), as a said text

    @property
    def broken(self) -> list[RankSummary]:
        return [s for s in self.summaries if not s.ok]


@dataclass
class Run:
    """One profiler output in canonical form."""

    meta: RunMeta
    kernels: pd.DataFrame  # KERNEL_SCHEMA columns (+ aic_*/aiv_* counters), one row per launch
    steps: pd.DataFrame  # STEP_SCHEMA columns, one row per step; may be empty
    limitations: list[Limitation] = field(default_factory=list[Limitation])
    memory: pd.DataFrame = field(default_factory=lambda: empty_table(MEMORY_SCHEMA))
    dataset_stages: pd.DataFrame = field(default_factory=lambda: empty_table(DATASET_STAGE_SCHEMA))
    pipeline: pd.DataFrame = field(default_factory=lambda: empty_table(PIPELINE_SCHEMA))
    frequency: pd.DataFrame = field(default_factory=lambda: empty_table(FREQUENCY_SCHEMA))
    api_calls: pd.DataFrame = field(default_factory=lambda: empty_table(API_SCHEMA))
    npu_smi: pd.DataFrame = field(default_factory=lambda: empty_table(NPU_SMI_SCHEMA))
    # Optional tables as the profiler wrote them (op_statistic, communication, op_detail ...): shown to
    # nobody and read by no analyzer; kept for inspection. Everything analyzers use is a field above.
    extras: dict[str, pd.DataFrame] = field(default_factory=dict[str, pd.DataFrame])
    # Every rank of a multi-rank job (None for one rank, or when --rank narrowed the input to one).
    ranks: RankSet | None = None

    @property
    def step_count(self) -> int:
        """Number of steps the kernels cover (at least 1)."""
        if len(self.steps):
            return len(self.steps)
        if "step" in self.kernels and self.kernels["step"].notna().any():
            return int(self.kernels["step"].nunique())
        return 1

    def cannot_answer(self, topic: str) -> Limitation | None:
        """The limitation recorded for `topic`, if any."""
        return next((lim for lim in self.limitations if lim.topic == topic), None)


def empty_kernels() -> pd.DataFrame:
    """An empty kernel table with the canonical schema."""
    return conform_kernels(pd.DataFrame())


def empty_steps() -> pd.DataFrame:
    """An empty step table with the canonical schema."""
    return conform_steps(pd.DataFrame())


def empty_table(schema: dict[str, str]) -> pd.DataFrame:
    """A table with no rows and the schema's columns and dtypes: a copy of one built once per schema
    (building it costs about 1 ms of pandas dtype parsing, a copy 0.04 ms, and every run asks ~10 times)."""
    template: pd.DataFrame = _empty_template(tuple(schema.items()))
    return template.copy()


@lru_cache(maxsize=64)
def _empty_template(columns: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series([], dtype=dtype) for name, dtype in columns})


def conform_table(df: pd.DataFrame, schema: dict[str, str]) -> pd.DataFrame:
    """Exactly the schema's columns, missing ones as <NA>, each cast to its dtype (values must convert)."""
    return _conform(df, schema, extra_prefixes=())


def conform_kernels(df: pd.DataFrame) -> pd.DataFrame:
    """Add missing canonical columns as <NA> and cast known ones to their schema dtype."""
    return _conform(df, KERNEL_SCHEMA, extra_prefixes=("aic_", "aiv_", "aicore_", "cube_"))


def conform_steps(df: pd.DataFrame) -> pd.DataFrame:
    """Add missing step columns as <NA> and cast to the schema."""
    return _conform(df, STEP_SCHEMA, extra_prefixes=())


def _conform(df: pd.DataFrame, schema: dict[str, str], extra_prefixes: tuple[str, ...]) -> pd.DataFrame:
    out: dict[str, pd.Series] = {}
    for col, dtype in schema.items():
        if col in df.columns:
            series = df[col]
            # pandas-stubs types astype for literal dtype names only; the schema's are plain str
            out[col] = series if str(series.dtype) == dtype else series.astype(dtype)  # pyright: ignore[reportCallIssue, reportArgumentType]
        else:
            out[col] = pd.Series(pd.NA, index=df.index, dtype=dtype)
    for col in df.columns:
        if col not in schema and col.startswith(extra_prefixes):
            out[col] = df[col]
    return pd.DataFrame(out, index=df.index).reset_index(drop=True)

"""The one catalogue of profiler layouts and file names, read by discovery, the readers and folder uploads.

A per-rank file is a template with ``{r}`` for the rank (``framework_raw_{r}.csv``): the readers fill it
(:func:`of_rank`), discovery and the upload tree match it (:func:`pattern`). Where a folder upload puts a
basename (its "place") is declared here too, so a new file is known to all three by one entry.

Pure data and ``re`` only: the isolated unpacking child imports it without pandas.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.text import join, say

APO = "ASCEND_PROFILER_OUTPUT"
FRAMEWORK = "FRAMEWORK"


@dataclass(frozen=True)
class Layout:
    """A profiler layout, declared once here: its name (RunMeta.layout, Candidate.layout), the module of
    diagnosis/readers that reads it, and the file its per-launch durations come from, named in messages
    about bad durations (``<r>`` = rank). What it looks like to a user is its message ``layout.<name>``
    (core/messages.py, English and Chinese), which `KNOWN_LAYOUTS_TEXT` lists. Declared in this module,
    not in the reader: the isolated unpacking child reads the catalogue without importing pandas."""

    name: str
    reader: str
    durations: str = "kernel_details.csv"

    @property
    def message(self) -> str:
        """The id of the message that says what this layout looks like."""
        return f"layout.{self.name}"


# Every layout, each named once here (a reader takes its `LAYOUT` from its entry: ``CPU_MS.name``).
# MindSpore 2.3/2.4: profiler/ legacy files + rank-*_ascend_ms
ASCEND_MS_23 = Layout("ascend-ms-2.3", "ascend_legacy")
# MindSpore 2.0-2.2 flat profiler/ (Ascend)
LEGACY_ASCEND_FLAT = Layout("legacy-ascend", "ascend_legacy", "output_timeline_data_<r>.txt")
# MindSpore 1.x flat profiler/ with step_trace_raw (and hccl_raw) but no operator files
LEGACY_STEPS = Layout("legacy-steps", "legacy_steps", "step_trace_raw_<r>_detail_time.csv")
TORCH_NPU = Layout("torch-npu", "torch_npu")  # torch_npu *_ascend_pt
# torch_npu *_ascend_pt, export_type=db only
TORCH_NPU_DB = Layout("torch-npu-db", "torch_npu_db", "ascend_pytorch_profiler_<r>.db")
# MindSpore 2.5+ *_ascend_ms with ASCEND_PROFILER_OUTPUT/kernel_details.csv
ASCEND_MS = Layout("ascend-ms", "ascend")
# MindSpore 2.5+ CPU: FRAMEWORK/cpu_*
CPU_MS = Layout("cpu-ms", "cpu", "FRAMEWORK/cpu_op_execute_timestamp_<r>.txt")
# MindSpore 2.0-2.4 flat profiler/ (GPU)
LEGACY_GPU_FLAT = Layout("legacy-gpu", "gpu", "gpu_op_execute_timestamp_<r>.txt")
# MindSpore 2.0-2.4 flat profiler/ (CPU)
LEGACY_CPU_FLAT = Layout("legacy-cpu", "legacy_cpu", "cpu_op_execute_timestamp_<r>.txt")
# CANN msprof: PROF_*/ (Ascend 310 through MindSpore Lite, ACL or the msprof command line)
CANN_MSPROF = Layout("cann-msprof", "cann_msprof", "mindstudio_profiler_output/op_summary_*.csv")
# CANN msprof's older layout: PROF_*/device_<id>/timeline/msprof_<dev>_<model>_<iter>.json, no exports
CANN_MSPROF_TIMELINE = Layout("cann-msprof-timeline", "msprof_timeline", "timeline/msprof_*.json")
# MindSpore 2.5+ export_type=db only
ASCEND_MS_DB = Layout("ascend-ms-db", "sqlite_db", "ascend_mindspore_profiler.db")
CANN_MSPROF_DB = Layout("cann-msprof-db", "sqlite_db", "msprof_*.db")  # CANN msprof --type=db only

# Every layout, in detection order (ingest.READERS is their readers in this order): the most specific
# layouts first, so that a 2.3/2.4 output (legacy profiler/ plus rank-*_ascend_ms) is not taken for a plain
# 2.5+ one. A reader of several layouts is placed by its first.
LAYOUTS = (
    ASCEND_MS_23,
    LEGACY_ASCEND_FLAT,
    LEGACY_STEPS,
    TORCH_NPU,
    TORCH_NPU_DB,
    ASCEND_MS,
    CPU_MS,
    LEGACY_GPU_FLAT,
    LEGACY_CPU_FLAT,
    CANN_MSPROF,
    CANN_MSPROF_TIMELINE,
    ASCEND_MS_DB,
    CANN_MSPROF_DB,
)
BY_NAME = {entry.name: entry for entry in LAYOUTS}
# What an unreadable upload is told we read: every layout's message, in detection order.
KNOWN_LAYOUTS_TEXT = say("error.known-layouts", layouts=join([say(entry.message) for entry in LAYOUTS]))


def of_rank(template: str, rank: int) -> str:
    """A per-rank file name: ``of_rank("framework_raw_{r}.csv", 0)`` -> ``framework_raw_0.csv``."""
    return template.format(r=rank)


def pattern(*templates: str) -> str:
    """A regular expression (no anchors) matching any of the templates, ``{r}`` as the rank digits."""
    return "|".join(re.escape(t).replace(r"\{r\}", r"\d+") for t in templates)


def rank_regex(template: str) -> re.Pattern[str]:
    """A full-name regular expression for one template whose group 1 is the rank."""
    return re.compile("^" + re.escape(template).replace(r"\{r\}", r"(\d+)") + "$")


# ------------------------------------------------------------------ ASCEND_PROFILER_OUTPUT/ (2.3+, torch_npu)

KERNEL_DETAILS = "kernel_details.csv"
STEP_TRACE_TIME = "step_trace_time.csv"
TRACE_VIEW = "trace_view.json"
COMMUNICATION = "communication.json"
COMMUNICATION_MATRIX = "communication_matrix.json"  # per link (src-dst) transit size, time, bandwidth
MINDDATA_PIPELINE = "minddata_pipeline_raw_{r}.csv"  # also flat in the legacy profiler/ folder
# Optional tables, read whole in this order (the order of RunMeta.files); readers.tables turns the ones
# analyzers use into canonical tables, the others stay as written in Run.extras (informational).
OUTPUT_TABLES = {
    "op_statistic": "op_statistic.csv",
    "api_statistic": "api_statistic.csv",
    "memory_record": "memory_record.csv",
    "npu_module_mem": "npu_module_mem.csv",
    "operator_memory": "operator_memory.csv",
    "static_op_mem": "static_op_mem.csv",
    "dataset": "dataset.csv",
    "data_preprocess": "data_preprocess.csv",
    "operator_details": "operator_details.csv",
}
# Written by the profilers, not read, but kept in place by folder uploads.
_OUTPUT_UNREAD = (
    r"(l2_cache|hbm|nic|roce|pcie|hccs|task_time|soc_pmu)\.csv"
    r"|communication_analyzer\.db|ascend_mindspore_profiler(_\d+)?\.db"
)
# torch_npu's db export (export_type=db): read by readers.torch_npu_db.
TORCH_DB = re.compile(r"^ascend_pytorch_profiler(_\d+)?\.db$")
ANALYSIS_DB = "analysis.db"
_OUTPUT_READ = (
    pattern(
        KERNEL_DETAILS,
        STEP_TRACE_TIME,
        TRACE_VIEW,
        COMMUNICATION,
        COMMUNICATION_MATRIX,
        ANALYSIS_DB,
        *OUTPUT_TABLES.values(),
    )
    + r"|ascend_pytorch_profiler(_\d+)?\.db"
)
PROFILER_INFO = "profiler_info_{r}.json"  # torch_npu on one card: profiler_info.json
PROFILER_METADATA = "profiler_metadata.json"

# -------------------------------------------------------------------------------- MindSpore 2.5+ CPU

CPU_OP_DETAIL = "cpu_op_detail_info_{r}.csv"
CPU_OP_TIMESTAMPS = "cpu_op_execute_timestamp_{r}.txt"
CPU_FRAMEWORK = "cpu_framework_{r}.txt"
CPU_MEMORY = "cpu_ms_memory_record_{r}.txt"

# ------------------------------------------------------------------ flat profiler/ folder (MindSpore 2.0-2.4)

OUTPUT_TIMELINE = "output_timeline_data_{r}.txt"
AICORE_DETAIL = "aicore_intermediate_{r}_detail.csv"
AICORE_TYPE = "aicore_intermediate_{r}_type.csv"
FRAMEWORK_RAW = "framework_raw_{r}.csv"
STEP_TRACE_RAW = "step_trace_raw_{r}_detail_time.csv"
# Optional per-rank tables (read whole, in this order), by reader; readers.tables as above.
LEGACY_TABLES = {
    "aicpu": "aicpu_intermediate_{r}.csv",
    "minddata_pipeline": MINDDATA_PIPELINE,
    "hccl": "hccl_raw_{r}.csv",
}
FLAT_ASCEND_TABLES = {**LEGACY_TABLES, "aicore_type": AICORE_TYPE}
GPU_TABLES = {"op_type_info": "gpu_op_type_info_{r}.csv", "gpu_activity": "gpu_activity_data_{r}.csv"}
# The host-op files of a CPU or GPU device ({p} = cpu | gpu).
HOST_OP_DETAIL = "{p}_op_detail_info_{r}.csv"
HOST_OP_TIMESTAMPS = "{p}_op_execute_timestamp_{r}.txt"
HOST_FRAMEWORK = "{p}_framework_{r}.txt"


def host_file(template: str, prefix: str, rank: int) -> str:
    """A host-op file of one device: ``host_file(HOST_OP_DETAIL, "gpu", 0)`` -> gpu_op_detail_info_0.csv."""
    return template.format(p=prefix, r=rank)


# ------------------------------------------------------------------ CANN msprof: PROF_*/ (310, Lite, ACL)

MSPROF_OUTPUT = "mindstudio_profiler_output"
MSPROF_SAMPLE = "sample.json"  # in PROF_*/device_<id>/: the collection settings
MSPROF_OP_SUMMARY = re.compile(r"op_summary_[\w.-]*\.csv")
_MSPROF_READ = r"(op_summary|op_statistic|step_trace)_[\w.-]*\.csv|msprof_[\w.-]*\.db"
_MSPROF_UNREAD = r"(task_time|api_statistic)_[\w.-]*\.csv|msprof_[\w.-]*\.json"  # placed, not read
_MSPROF_FILES = f"{_MSPROF_READ}|{_MSPROF_UNREAD}"
# SQLite exports in the msprof DB schema (TASK, COMPUTE_TASK_INFO, STRING_IDS; times in ns).
MS_DB = re.compile(r"^ascend_mindspore_profiler(_\d+)?\.db$")
MSPROF_DB = re.compile(r"^msprof_[\w.-]*\.db$")
# The older timeline layout: PROF_*/device_<id>/{info.json.<id>, timeline/<kind>_<dev>_<model>_<iter>.json}.
MSPROF_ITERATION = re.compile(r"msprof_(\d+)_(\d+)_(\d+)\.json")  # groups: device, model, iteration
_TIMELINE_FILES = r"(msprof|task_time|step_trace|hccl)_\d+_\d+_\d+\.json"  # placed; msprof_* is read
MSPROF_INFO = r"info\.json\.\d+"

# ----------------------------------------------------------------------------- discovery (file evidence)

INFO_FILE = re.compile(r"^profiler_info_(\d+)\.json$")
RANK_DIR = re.compile(r"^rank-(\d+)_")
RANK_SUFFIX = re.compile(
    r"^(?:ascend_mindspore_profiler|ascend_pytorch_profiler|minddata_pipeline_raw)_(\d+)\."
)
LEGACY_GPU = re.compile(
    r"^(?:gpu_op_detail_info|gpu_op_execute_timestamp|gpu_activity_data|gpu_op_type_info)_(\d+)\."
)
LEGACY_ASCEND = re.compile(
    r"^(?:framework_raw|output_timeline_data|aicore_intermediate|aicpu_intermediate|step_trace_raw"
    r"|ascend_timeline_display)_(\d+)[._]"
)
LEGACY_CPU = re.compile(r"^(?:cpu_op_detail_info|cpu_op_execute_timestamp)_(\d+)\.")
# The per-rank operator files of the flat Ascend folder; without them only steps and communication are read.
LEGACY_OPERATORS = re.compile(r"^(?:output_timeline_data|aicore_intermediate|framework_raw)_(\d+)[._]")
STEP_TRACE_RAW_FILE = rank_regex(STEP_TRACE_RAW)
CPU_DETAIL = rank_regex(CPU_OP_DETAIL)

# ------------------------------------------------------------------------ folder uploads (placement)

# Where a folder upload puts each known basename. "new" = only in MindSpore 2.5+ output; "legacy" =
# only in the flat profiler/ folder of 2.0-2.4; "shared" names occur in both and follow the evidence
# of the other files. Checked in this order; the first full match wins.
PLACES = (
    ("new-output", re.compile(_OUTPUT_READ + "|" + _OUTPUT_UNREAD)),
    ("new-root", re.compile(pattern(PROFILER_METADATA))),
    ("shared-output", re.compile(pattern(MINDDATA_PIPELINE) + r"|minddata_pipeline_summary_\d+\.(csv|json)")),
    (
        "shared-framework",
        re.compile(
            pattern(CPU_OP_DETAIL, CPU_OP_TIMESTAMPS, CPU_FRAMEWORK, CPU_MEMORY)
            + r"|cpu_(op_type_info|ms_memory_record)_\d+\.csv"
        ),
    ),
    ("shared-root", re.compile(r"profiler_info(_\d+)?\.json")),
    (
        "legacy",
        re.compile(
            pattern(AICORE_DETAIL, AICORE_TYPE, FRAMEWORK_RAW, OUTPUT_TIMELINE, STEP_TRACE_RAW)
            + "|"
            + pattern(LEGACY_TABLES["aicpu"], LEGACY_TABLES["hccl"])
            + r"|(ascend|gpu|cpu)_timeline_(display|summary)_\d+\.json"
            r"|(ascend|gpu|cpu)_cluster_analyse_\d+_.*\.csv"
            r"|step_trace_point_info_\d+\.json|step_trace_profiling_\d+\.txt"
            r"|flops_\d+\.txt|flops_(summary|scope|utilization_step)_\d+\.json"
            r"|pynative_op_intermediate_\d+_(type|detail)\.csv|pipeline_profiling_\d+\.json"
            r"|minddata_cpu_utilization_\d+\.json|(device_queue|dataset_iterator)_profiling_\d+\.txt"
            r"|minddata_aicpu_\d+\.txt|memory_usage_(summary|details)_\d+\.json|dynamic_shape_info_\d+\.json"
            r"|gpu_[a-z_]+_\d+\.(csv|txt|json)|activity_execute_timestamp_\d+\.txt"
        ),
    ),
    # CANN msprof (last: legacy step_trace_raw_* and MindSpore's step_trace_time.csv are placed above;
    # the timeline layout's per-iteration JSON before the exports' msprof_*.json)
    ("msprof-timeline", re.compile(_TIMELINE_FILES)),
    ("msprof-output", re.compile(_MSPROF_FILES)),
    ("msprof-device", re.compile(pattern(MSPROF_SAMPLE) + "|" + MSPROF_INFO)),
)


def place_of(name: str) -> str | None:
    """Which upload group a basename belongs to (see PLACES), or None for a name no layout has."""
    return next((place for place, regex in PLACES if regex.fullmatch(name)), None)


# ------------------------------------------------------------------ raw data no reader opens (big inputs)

# Written by the profilers and never read by Perf Doctor: CANN's raw slices (PROF_*/device_<id>/data,
# PROF_*/host/data), logs, and the binary files of FRAMEWORK/ (only its cpu_* text files are read).
# Archive extraction and folder uploads skip these without writing them and outside the budgets.
# What extraction skipped is recorded beside the extracted folder, <folder><SKIP_RECORD>, in the workspace.
SKIP_RECORD = ".perf-doctor-skipped.json"
_RAW_DATA = re.compile(
    r"(?:^|/)(?:PROF_[^/]*/(?:device_\d+|host)/data/|logs/|mindstudio_profiler_log/)|\.log$"
)


def unread_member(path: str) -> bool:
    """True for a member path (``/``-separated, relative to the upload) that no reader opens."""
    text = re.sub(r"^(?:\./|/)+", "", path.replace("\\", "/"))
    if _RAW_DATA.search(text):
        return True
    parts = [part for part in text.split("/") if part]
    return FRAMEWORK in parts[:-1] and not text.endswith("/") and place_of(parts[-1]) is None


def kept_names() -> str:
    """A regular expression (no anchors) of every basename a Perf Doctor reader may open: the upload
    places without the profiler files no reader reads (databases, raw hardware tables). A re-profiling
    script packs only these."""
    mixed = {"new-output": _OUTPUT_READ, "msprof-output": _MSPROF_READ}  # places holding unread files too
    kept = [mixed.get(place, regex.pattern) for place, regex in PLACES]
    return "|".join(f"(?:{part})" for part in kept)

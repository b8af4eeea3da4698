"""Ascend-family readers (MindSpore 2.5+ `*_ascend_ms`, torch_npu `*_ascend_pt`): layout detection, the
canonical run they produce from the schema-exact fixtures and the real msprof-analyze samples, column
aliases, value quirks and the limitations a run declares."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError
from core.model import KERNEL_SCHEMA, PIPE_COUNTERS, STEP_SCHEMA
from diagnosis import ingest
from diagnosis.readers import ascend, ascend_legacy, cann_msprof, gpu, legacy_cpu, sqlite_db, torch_npu
from diagnosis.readers.discover import discover
from diagnosis.readers.io import counter_name
from diagnosis.readers.profiler_info import canonical_aic_metrics
from diagnosis.readers.traits import amp_markers, amp_of, infer_phase, phase_of
from diagnosis.readers.values import canonical_dtype, canonical_format, op_type_of_kernel, scope_of

FIX = Path(__file__).parent / "fixtures" / "ascend"
CPU_FIX = Path(__file__).parent / "fixtures" / "cpu"
SAMPLES = Path(__file__).parents[1] / ".." / "shared" / "samples" / "ascend"
APO = "ASCEND_PROFILER_OUTPUT"
L1_TRAIN = FIX / "level1/train/ubuntu_2201_20251130080000123_ascend_ms"
L1_INFER = FIX / "level1/infer/ubuntu_2301_20251130090000456_ascend_ms"
L0_TRAIN = FIX / "level0/train/ubuntu_2202_20251130100000789_ascend_ms"
L0_INFER = FIX / "level0/infer/ubuntu_2302_20251130110000012_ascend_ms"
TORCH = FIX / "torch_npu/ubuntu_4101_20250109090000123_ascend_pt"
MY_READERS = (ascend, ascend_legacy, gpu, legacy_cpu, torch_npu, cann_msprof, sqlite_db)
LEVEL1_REMEDY = "_ExperimentalConfig(profiler_level=ProfilerLevel.Level1)"


def read_root(root: Path):
    """Read the single candidate found at `root` with the ascend or torch_npu reader."""
    found = ascend.candidates(root) + torch_npu.candidates(root)
    assert len(found) == 1, found
    reader = torch_npu if found[0].layout == "torch-npu" else ascend
    return reader.read(found[0])


def kd_rows(root: Path) -> pd.DataFrame:
    """kernel_details.csv parsed independently with pandas (all cells as text)."""
    return pd.read_csv(root / APO / "kernel_details.csv", dtype=str, keep_default_na=False)


def place(tmp_path: Path, files: dict[str, Path]) -> Path:
    """Copy sample files into a run-folder layout below tmp_path; returns tmp_path."""
    for rel, source in files.items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return tmp_path


# ------------------------------------------------------------------------------------------- detection


def test_run_folder_itself_parent_and_output_folder_find_the_same_root() -> None:
    by_root = ascend.candidates(L1_TRAIN)
    by_parent = ascend.candidates(L1_TRAIN.parent)
    by_grandparent = ascend.candidates(FIX / "level1")
    by_output = ascend.candidates(L1_TRAIN / APO)
    assert [(c.root, c.rank) for c in by_root] == [(L1_TRAIN, 0)]
    assert [(c.root, c.rank) for c in by_parent] == [(L1_TRAIN, 0)]
    assert {c.root for c in by_grandparent} == {L1_TRAIN, L1_INFER}
    assert [(c.root, c.rank) for c in by_output] == [(L1_TRAIN, 0)]
    assert "given directly" in by_output[0].note


@pytest.mark.parametrize(
    ("root", "layout", "rank"),
    [
        (L1_TRAIN, "ascend-ms", 0),
        (L0_INFER, "ascend-ms", 0),
        (TORCH, "torch-npu", None),
        (FIX / "ms23/profiler/rank-0_20240601120000123_ascend_ms", "ascend-ms-2.3", 0),
    ],
)
def test_detection_from_the_run_folder_its_parent_and_its_output_folder(
    root: Path, layout: str, rank
) -> None:
    for given in (root, root.parent, root / APO):
        assert [(c.layout, c.root, c.rank) for c in discover(given)] == [(layout, root, rank)], given


def test_output_folder_alone_is_a_run_without_configuration(tmp_path: Path) -> None:
    alone = tmp_path / "upload" / APO
    shutil.copytree(L1_TRAIN / APO, alone)
    found = ascend.candidates(alone)
    # The folder holding ASCEND_PROFILER_OUTPUT/ acts as the run root, with no configuration record.
    assert [(c.root, c.rank) for c in found] == [(alone.parent, None)]
    run = ascend.read(found[0])
    assert len(run.kernels) == 51
    assert run.cannot_answer("profiler-config") is not None
    assert run.meta.config.level is None
    assert [c.root for c in ascend.candidates(tmp_path)] == [alone.parent]
    # Without profiler_info the rank comes from a file suffix (`ascend_mindspore_profiler_<rank>.db`).
    (alone / "ascend_mindspore_profiler_3.db").write_bytes(b"SQLite format 3\x00")
    assert [c.rank for c in ascend.candidates(tmp_path)] == [3]
    # kernel_details.csv in a folder of another name is still read.
    other = tmp_path / "exported"
    shutil.copytree(alone, other)
    assert [(c.root, c.note.split(":")[0]) for c in ascend.candidates(other)] == [
        (other, "kernel_details.csv without its run folder")
    ]


def test_two_ranks_are_two_candidates_and_a_rank_is_chosen() -> None:
    parent = FIX / "two_rank"
    found = ascend.candidates(parent)
    assert sorted(c.rank for c in found) == [0, 1]
    run = ingest.read_folder(parent, rank=1)
    assert run.meta.rank == 1
    assert run.meta.ranks_available == (0, 1)
    assert run.meta.files[0] == "profiler_info_1.json"
    assert ingest.read_folder(parent).meta.rank == 0


def test_a_rank_that_does_not_exist_is_an_input_error() -> None:
    with pytest.raises(InputError) as err:
        ingest.read_folder(FIX / "two_rank", rank=5)
    assert "rank 5 does not exist" in str(err.value)
    assert "[0, 1]" in str(err.value)


def test_torch_npu_is_recognised_by_folder_name_or_its_config_record(tmp_path: Path) -> None:
    assert [(c.layout, c.root) for c in discover(TORCH.parent)] == [("torch-npu", TORCH)]
    assert ascend.candidates(TORCH.parent) == []
    # A cluster run: profiler_info_<rank>.json in the torch config layout, no *_ascend_pt suffix.
    renamed = tmp_path / "node3_worker"
    shutil.copytree(TORCH, renamed)
    (renamed / "profiler_info.json").rename(renamed / "profiler_info_3.json")
    found = torch_npu.candidates(tmp_path)
    assert [(c.layout, c.root, c.rank) for c in found] == [("torch-npu", renamed, 3)]


def test_every_fixture_is_claimed_by_exactly_one_reader() -> None:
    for folder in sorted(p for p in FIX.iterdir() if p.is_dir()):
        claims = [(c.layout, c.root, c.rank) for reader in MY_READERS for c in reader.candidates(folder)]
        assert claims, folder
        assert len(claims) == len(set(claims)), claims


def test_cpu_runs_are_left_to_the_cpu_reader() -> None:
    run = CPU_FIX / "infer_fp32_graph"
    assert [c.layout for c in discover(run)] == ["cpu-ms"]
    assert all(reader.candidates(run) == [] for reader in MY_READERS)


def test_cluster_analysis_output_is_not_a_run(tmp_path: Path) -> None:
    folder = place(
        tmp_path,
        {
            f"cluster_analysis_output/{name}": SAMPLES / "cluster_analysis_output" / name
            for name in ("cluster_step_trace_time.csv", "cluster_communication.json")
        },
    )
    assert discover(folder) == []
    with pytest.raises(InputError, match="not profiler output"):
        ingest.read_folder(folder)


# --------------------------------------------------------------------------- MindSpore 2.5+, Level1


@pytest.fixture(scope="module")
def train():
    return read_root(L1_TRAIN)


@pytest.fixture(scope="module")
def infer():
    return read_root(L1_INFER)


def test_level1_kernels_match_the_file(train) -> None:
    rows = kd_rows(L1_TRAIN)
    k = train.kernels
    assert len(k) == len(rows) == 51
    assert list(k.columns[: len(KERNEL_SCHEMA)]) == list(KERNEL_SCHEMA)
    assert k["name"].tolist() == rows["Name"].tolist()
    assert k["op_type"].tolist() == rows["Type"].tolist()
    assert k["step"].tolist() == rows["Step ID"].astype(int).tolist()
    assert k["block_dim"].tolist() == rows["Block Num"].astype(int).tolist()
    assert np.allclose(k["duration_us"].to_numpy(dtype=float), rows["Duration(us)"].astype(float))
    # Start Time(us) carries a trailing TAB (unquoted: MindSpore's csv writer); full float64 precision.
    assert rows["Start Time(us)"].str.endswith("\t").all()
    assert k["start_us"].tolist() == [float(v.strip()) for v in rows["Start Time(us)"]]


def test_level1_values_are_normalised(train) -> None:
    conv = train.kernels[train.kernels["op_type"] == "Conv2D"].iloc[0]
    assert conv["input_shapes"] == "32,1,32,32,16;4,1,16,16"  # literal quotes removed
    assert conv["input_dtypes"] == "FLOAT16;FLOAT16"
    assert conv["input_formats"] == "NC1HWC0;FRACTAL_Z"
    assert conv["scope"] == "Default/network-WithLossCell/_backbone-Net/conv1-Conv2d/Conv2D-op0"
    assert conv["core"] == "AI_CORE"
    assert conv["op_state"] == "static"
    assert set(train.kernels["core"]) == {"AI_CORE", "AI_VECTOR_CORE", "AI_CPU"}


def test_level1_pipe_counters_are_snake_named_and_numeric_and_the_rest_not_read(train) -> None:
    k = train.kernels
    for name in PIPE_COUNTERS:
        assert str(k[name].dtype) == "double[pyarrow]", name
    for unused in ("aicore_time_us", "aic_total_cycles", "aiv_vec_time_us", "cube_utilization_pct"):
        assert unused not in k.columns  # in the file, read by no analysis: not parsed
    conv = k[k["op_type"] == "Conv2D"].iloc[0]
    assert conv["aic_mac_ratio"] == pytest.approx(0.7)
    assert k.loc[k["core"] == "AI_CPU", "aic_mac_ratio"].isna().all()  # N/A on the AI CPU
    assert train.cannot_answer("aic-metrics") is None


def test_level1_steps_come_from_step_trace_time(train) -> None:
    trace = pd.read_csv(L1_TRAIN / APO / "step_trace_time.csv")
    steps = train.steps
    assert steps["step"].tolist() == trace["Step"].tolist() == [3, 4, 5]
    assert steps["busy_us"].tolist() == trace["Computing"].tolist()
    assert steps["free_us"].tolist() == trace["Free"].tolist()
    expected = trace["Computing"] + trace["Communication(Not Overlapped)"] + trace["Free"]
    assert steps["duration_us"].tolist() == pytest.approx(expected.tolist())
    first = train.kernels.groupby("step")["start_us"].min()
    assert steps["start_us"].tolist() == first.loc[[3, 4, 5]].tolist()
    assert train.step_count == 3


def test_level1_metadata(train, infer) -> None:
    meta = train.meta
    assert (meta.layout, meta.framework, meta.framework_version, meta.device) == (
        "ascend-ms",
        "mindspore",
        "2.10.0",
        "Ascend",
    )
    assert (meta.rank, meta.jit_level, meta.phase) == (0, "O0", "train")
    config = meta.config
    assert (config.level, config.aic_metrics, config.activities) == (
        "Level1",
        "PipeUtilization",
        ("CPU", "NPU"),
    )
    assert config.schedule == {"wait": 1, "active": 3, "warmup": 1, "repeat": 1, "skip_first": 2}
    assert config.raw["export_type"] == ["text"]
    assert meta.environment["ENV_VARIABLE"]["ASCEND_GLOBAL_LOG_LEVEL"] == "3"
    assert meta.environment["cann_version"] == "8.3.RC1"
    assert meta.execution_mode == "graph"
    assert meta.amp["cast_ops_per_step"] == 1.0  # the input Cast; the Grad_Cast is backward
    assert "ASCEND_PROFILER_OUTPUT/kernel_details.csv" in meta.files
    assert infer.meta.phase == "inference"
    assert train.limitations == [] and infer.limitations == []


def test_level1_extras(train, infer) -> None:
    assert set(train.extras) == {"op_statistic"} and len(train.frequency)
    assert set(infer.extras) == {"op_statistic"}
    assert infer.meta.config.profile_memory is True
    # memory_record.csv wins over npu_module_mem.csv; of its components MindSpore is the framework total
    assert infer.memory["mb"].tolist() == [812.5, 814.75, 817.0]
    stats = train.extras["op_statistic"]
    assert "Device_id" not in stats.columns
    assert stats.set_index("OP Type").loc["ApplyMomentum", "Count"] == 6
    assert train.dataset_stages["operation"].tolist() == ["GeneratorOp", "BatchOp"]
    assert train.dataset_stages["avg_us"].tolist() == [1532.25, 310.5]
    assert train.dataset_stages["info"].tolist()[1] == "batch_size=32"
    assert infer.frequency["mhz"].tolist() == [1800, 1650, 1500]
    spans = [e for e in json.loads((L1_INFER / APO / "trace_view.json").read_text()) if e["ph"] == "C"]
    assert infer.frequency["ts_us"].tolist() == [float(e["ts"]) for e in spans]


def test_inference_run_has_fp32_convs_and_an_aicpu_cast_from_double(infer) -> None:
    k = infer.kernels
    assert set(k.loc[k["op_type"] == "Conv2D", "input_dtypes"]) == {"FLOAT;FLOAT"}
    cast = k[k["op_type"] == "Cast"]
    assert set(cast["core"]) == {"AI_CPU"} and set(cast["input_dtypes"]) == {"DOUBLE"}
    assert "BNInfer" in set(k["op_type"]) and "MatMulV2_BiasAdd_fusion" not in set(
        k["name"].str.rsplit("/").str[-1]
    )


# --------------------------------------------------------------------------------- step derivations


def test_steps_from_step_ids_when_there_is_no_step_table(tmp_path: Path) -> None:
    root = tmp_path / L1_TRAIN.name
    shutil.copytree(L1_TRAIN, root)
    (root / APO / "step_trace_time.csv").unlink()
    (root / APO / "trace_view.json").unlink()
    run = read_root(root)
    k = run.kernels.assign(end=lambda f: f["start_us"] + f["duration_us"])
    per_step = k.groupby("step").agg(
        first=("start_us", "min"), last=("end", "max"), busy=("duration_us", "sum")
    )
    assert run.steps["step"].tolist() == [3, 4, 5]
    assert run.steps["start_us"].tolist() == per_step["first"].tolist()
    assert run.steps["duration_us"].tolist() == pytest.approx((per_step["last"] - per_step["first"]).tolist())
    # One stream, no overlap: busy = the summed durations, to the 0.25 µs grain of float64 at 1.7e15 µs.
    assert run.steps["busy_us"].tolist() == pytest.approx(per_step["busy"].tolist(), abs=0.25)
    assert run.cannot_answer("steps") is None


def test_steps_from_profilerstep_spans_when_there_is_no_step_table(tmp_path: Path) -> None:
    root = tmp_path / L0_INFER.name
    shutil.copytree(L0_INFER, root)
    (root / APO / "step_trace_time.csv").unlink()
    run = read_root(root)
    events = json.loads((root / APO / "trace_view.json").read_text())
    spans = [e for e in events if e["name"].startswith("ProfilerStep#")]
    assert run.steps["duration_us"].tolist() == [float(e["dur"]) for e in spans]
    busy = run.kernels.groupby("step")["duration_us"].sum()
    assert run.steps["busy_us"].tolist() == pytest.approx(busy.tolist(), abs=0.25)
    assert (run.steps["free_us"] == run.steps["duration_us"] - run.steps["busy_us"]).all()


def test_an_empty_step_id_column_falls_back_to_profilerstep_spans(tmp_path: Path) -> None:
    root = tmp_path / L1_TRAIN.name
    shutil.copytree(L1_TRAIN, root)
    kd = root / APO / "kernel_details.csv"
    lines = kd.read_bytes().decode().split("\r\n")
    kd.write_bytes(
        "\r\n".join([lines[0]] + ["N/A" + line[1:] if line else line for line in lines[1:]]).encode()
    )
    run = read_root(root)
    # Kernels go to the last host span opened before they start on the device. The host opens the next
    # step 45 µs before that step's first kernel, while the previous step's last two kernels still run.
    assert run.kernels["step"].value_counts().sort_index().to_dict() == {3: 15, 4: 17, 5: 19}
    assert run.steps["step"].tolist() == [3, 4, 5]


def test_busy_time_counts_overlapping_kernels_once() -> None:
    from diagnosis.readers.steps import union_lengths

    frame = pd.DataFrame(
        {"step": [1, 1, 1, 2], "start": [0.0, 5.0, 20.0, 0.0], "end": [10.0, 12.0, 25.0, 4.0]}
    )
    assert union_lengths(frame, "step").to_dict() == {1: 17.0, 2: 4.0}


# ------------------------------------------------------------------------------------------- Level0


def test_level0_lacks_dtype_shape_and_format_columns(tmp_path: Path) -> None:
    run = read_root(L0_TRAIN)
    for topic in ("dtypes", "shapes", "formats"):
        lim = run.cannot_answer(topic)
        assert lim is not None, topic
        assert "profiled at Level0 (recorded)" in lim.reason
        assert LEVEL1_REMEDY in lim.remedy
    assert run.kernels[["input_dtypes", "input_shapes", "input_formats"]].isna().all().all()
    assert run.cannot_answer("op-state") is not None  # older CANN: no OP State column
    assert run.kernels["op_state"].isna().all()
    assert run.cannot_answer("aic-metrics") is not None
    assert run.kernels["block_dim"].notna().all()  # the "Block Dim" spelling
    # Without the configuration record the level is inferred from the missing columns.
    shutil.copytree(L0_TRAIN / APO, tmp_path / APO)
    bare = ascend.read(ascend.candidates(tmp_path / APO)[0])
    assert "profiled at Level0 (inferred from the missing columns)" in bare.cannot_answer("dtypes").reason


def test_level0_without_step_ids_takes_steps_from_profilerstep_spans() -> None:
    run = read_root(L0_INFER)
    assert "Step ID" not in kd_rows(L0_INFER).columns
    counts = run.kernels["step"].value_counts().sort_index()
    assert counts.index.tolist() == [1, 2, 3, 4] and set(counts) == {len(run.kernels) // 4}
    assert run.meta.jit_level == "O2" and run.meta.execution_mode == "graph"
    assert {"BNTrainingReduce", "BNTrainingUpdate"} <= set(run.kernels["op_type"])
    assert run.meta.phase == "inference"  # train-mode BatchNorm is not a backward pass
    assert run.cannot_answer("op-state") is None  # newer CANN writes OP State even at Level0


def test_two_rank_run_has_communication() -> None:
    run = ingest.read_folder(FIX / "two_rank", rank=0)
    comm = run.extras["communication"]
    assert comm["step"].tolist() == [1, 2]
    assert set(comm["kind"]) == {"collective"}
    assert comm["elapse_time_ms"].tolist() == [0.0625, 0.0625]
    assert comm["hccs_bandwidth_gb_s"].tolist() == [3.9756, 3.9756]
    assert run.steps["communication_us"].tolist() == [62.5, 62.5]
    hccl = run.kernels[run.kernels["core"] == "HCCL"]
    assert len(hccl) == 2 and hccl["block_dim"].tolist() == [0, 0]


# ----------------------------------------------------------------------------------------- torch_npu


def test_torch_npu_config_aliases_and_quoted_tab_times() -> None:
    run = read_root(TORCH)
    meta = run.meta
    assert (meta.layout, meta.framework, meta.framework_version) == ("torch-npu", "torch_npu", "2.1.0.post10")
    assert (meta.config.level, meta.config.aic_metrics) == ("Level1", "PipeUtilization")
    assert meta.config.activities == ("CPU", "NPU") and meta.config.record_shapes is True
    rows = kd_rows(TORCH)
    assert "Step Id" in rows.columns and "Device_id" in rows.columns and "Block Dim" in rows.columns
    k = run.kernels
    assert k["step"].tolist() == rows["Step Id"].astype(int).tolist()
    assert k["start_us"].iloc[0] == float("1736413971558972.912")
    assert set(k["input_dtypes"]) >= {"BF16;BF16", "FLOAT"}  # DT_BF16 / DT_FLOAT
    assert meta.phase == "train"  # FlashAttentionScoreGrad
    assert run.steps["step"].tolist() == [19, 20]  # step_trace_time.csv with Device_id prepended
    assert [lim.topic for lim in run.limitations] == ["scopes"]


# ------------------------------------------------------------------------------------- real samples


def test_sample_2023_kernel_details(tmp_path: Path) -> None:
    place(
        tmp_path,
        {
            f"h_1_2_ascend_ms/{APO}/kernel_details.csv": SAMPLES
            / "kernel_details_2023_training/kernel_details.csv"
        },
    )
    run = read_root(tmp_path / "h_1_2_ascend_ms")
    k = run.kernels
    assert len(k) == 591 and set(k["step"]) == {1}
    assert k["core"].value_counts().to_dict() == {
        "AI_VECTOR_CORE": 520,
        "MIX_AIV": 25,
        "HCCL": 19,
        "AI_CORE": 13,
        "AI_CPU": 7,
        "DSA_SQE": 7,
    }
    cpu_cast = k[(k["core"] == "AI_CPU") & (k["op_type"] == "Cast")]
    assert len(cpu_cast) == 7 and set(cpu_cast["output_dtypes"]) == {"UINT64"}
    assert "FORMAT_ND" not in set(k["input_formats"].dropna()) and "ND" in set(k["input_formats"])
    hccl = k[k["core"] == "HCCL"]
    assert hccl["input_dtypes"].isna().all()  # N/A cells
    # ArithmeticUtilization counters (aic_mac_fp16_ratio ...): no pipe ratios, so no bound analysis, and said
    assert not [c for c in k.columns if c.startswith(("aic_", "aiv_"))]
    assert run.cannot_answer("aic-metrics") is not None
    assert run.meta.phase == "train"  # ApplyAdamW
    assert run.meta.amp == amp_markers(k, 1)
    assert run.cannot_answer("op-state") is not None and run.kernels["op_state"].isna().all()


def test_sample_2025_kernel_details(tmp_path: Path) -> None:
    source = SAMPLES / "kernel_details_2025_bf16_llm/kernel_details.csv"
    place(tmp_path, {f"h_1_2_ascend_ms/{APO}/kernel_details.csv": source})
    run = read_root(tmp_path / "h_1_2_ascend_ms")
    k = run.kernels
    raw = pd.read_csv(source, dtype=str)
    assert len(k) == 29 and set(k["step"]) == {19}
    assert k["start_us"].tolist() == [float(v.strip()) for v in raw["Start Time(us)"]]
    assert set(k["op_state"]) == {"dynamic"}
    assert k.loc[0, "input_shapes"] == "81920,4096;8192,512" and k.loc[0, "input_dtypes"] == "BF16;BF16"
    raw_ratios = pd.to_numeric(raw["aic_mac_ratio"].str.strip(), errors="coerce")
    ratios = k["aic_mac_ratio"].to_numpy(float, na_value=np.nan)
    np.testing.assert_allclose(ratios, raw_ratios.to_numpy(float))
    assert "cube_utilization_pct" not in k.columns and run.cannot_answer("aic-metrics") is None
    assert run.cannot_answer("dtypes") is None and run.cannot_answer("op-state") is None


def test_sample_excerpt_with_na_types(tmp_path: Path) -> None:
    place(tmp_path, {f"x_ascend_ms/{APO}/kernel_details.csv": SAMPLES / "kernel_details_excerpt/test.csv"})
    run = read_root(tmp_path / "x_ascend_ms")
    k = run.kernels
    assert len(k) == 8
    assert k["core"].isna().all()
    by_name = dict(zip(k["name"], k["op_type"], strict=True))
    assert by_name["trans_Cast_19"] == "Cast" and by_name["trans_TransData_20"] == "TransData"
    assert pd.isna(by_name["Conv2D17"])  # "Conv2D17" is type + index: not guessed
    assert {lim.topic for lim in run.limitations} >= {"profiler-config", "dtypes", "steps", "op-state"}
    assert run.steps.empty and run.step_count == 1


def test_sample_torch_npu_trace_only(tmp_path: Path) -> None:
    source = SAMPLES / "torch_npu_cnn_train_step/trace_view.json"
    place(tmp_path, {f"ubuntu_1_2_ascend_pt/{APO}/trace_view.json": source})
    run = read_root(tmp_path / "ubuntu_1_2_ascend_pt")
    events = json.loads(source.read_text())
    hardware = [e for e in events if e.get("pid") == 800 and e["ph"] == "X"]
    computing = sum(e["dur"] for e in events if e.get("name") == "Computing" and e["ph"] == "X")
    k = run.kernels
    assert len(k) == len(hardware) == 276
    assert k["core"].value_counts().to_dict() == {"OTHER": 274, "AI_CPU": 2}
    assert set(k["step"]) == {1}
    assert k["start_us"].is_monotonic_increasing
    step = run.steps.iloc[0]
    assert step["duration_us"] == pytest.approx(14091.97)
    assert step["busy_us"] == pytest.approx(computing, rel=1e-6)  # the trace's own Overlap Analysis
    assert k.loc[k["name"] == "aclnnMm_MatMulCommon_MatMulV2", "op_type"].iloc[0] == "MatMulV2"
    assert run.meta.phase == "train" and run.meta.framework == "torch_npu"
    assert run.cannot_answer("dtypes").reason.startswith("no kernel_details.csv")


# ------------------------------------------------------------------------------------ aliases, values


def test_raw_cann_op_summary_headers_read_like_kernel_details(tmp_path: Path, train) -> None:
    renames = {
        "Name": "Op Name",
        "Type": "OP Type",
        "Accelerator Core": "Task Type",
        "Start Time(us)": "Task Start Time(us)",
        "Duration(us)": "Task Duration(us)",
        "Wait Time(us)": "Task Wait Time(us)",
    }
    text = (L1_TRAIN / APO / "kernel_details.csv").read_bytes().decode()
    header, rest = text.split("\r\n", 1)
    header = ",".join(renames.get(h, h) for h in header.split(","))
    out = tmp_path / "run_ascend_ms" / APO
    out.mkdir(parents=True)
    (out / "kernel_details.csv").write_bytes((header + "\r\n" + rest).encode())
    kernels, _ = ascend.read_kernel_details(out / "kernel_details.csv")
    pd.testing.assert_frame_equal(kernels, train.kernels)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("FLOAT16", "FLOAT16"),
        ("DT_FLOAT16", "FLOAT16"),
        ("DT_BF16", "BF16"),
        ("bfloat16", "BF16"),
        ("FLOAT", "FLOAT"),
        ("DT_FLOAT", "FLOAT"),
        ("float32", "FLOAT"),
        ("DT_DOUBLE", "DOUBLE"),
        ("FLOAT64", "DOUBLE"),
        ("INT64", "INT64"),
        ("DT_INT32", "INT32"),
        ("N/A", "UNDEFINED"),
    ],
)
def test_dtype_spellings(raw: str, canonical: str) -> None:
    assert canonical_dtype(raw) == canonical


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [("FORMAT_ND", "ND"), ("ND", "ND"), ("FORMAT_NCHW", "NCHW"), ("FRAC_Z", "FRACTAL_Z"), ("NULL", "NULL")],
)
def test_format_spellings(raw: str, canonical: str) -> None:
    assert canonical_format(raw) == canonical


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("aicore_time(us)", "aicore_time_us"),
        ("aic_mte2_ratio", "aic_mte2_ratio"),
        ("aiv_vec_time(us)", "aiv_vec_time_us"),
        ("cube_utilization(%)", "cube_utilization_pct"),
        ("aic_l2_read_bw(GB/s)", "aic_l2_read_bw_gb_s"),
    ],
)
def test_counter_names(header: str, name: str) -> None:
    assert counter_name(header) == name


@pytest.mark.parametrize(
    ("name", "scope"),
    [
        ("Default/net/conv-Conv2d/Conv2D-op0/Conv2D", "Default/net/conv-Conv2d/Conv2D-op0"),
        ("Default/net/conv-Conv2d/Conv2D-op5", "Default/net/conv-Conv2d/Conv2D-op5"),
        ("Kernel::Launch/aclnnAdd_AddAiCore_Add", "Kernel::Launch"),
        ("aclnnMatmul_MatMulCommon_MatMulV2", None),
    ],
)
def test_scope_of_kernel_names(name: str, scope: str | None) -> None:
    assert scope_of(name) == scope


@pytest.mark.parametrize(
    ("name", "op_type"),
    [
        ("aclnnMatmul_MatMulCommon_MatMulV2", "MatMulV2"),
        ("trans_TransData_22", "TransData"),
        ("Default/fc-Dense/MatMul-op3", "MatMul"),
        ("Conv2D17", None),
    ],
)
def test_op_type_of_kernel_names(name: str, op_type: str | None) -> None:
    assert op_type_of_kernel(name) == op_type


def test_aic_metrics_spellings() -> None:
    assert canonical_aic_metrics("ACL_AICORE_PIPE_UTILIZATION") == "PipeUtilization"
    assert canonical_aic_metrics("ACL_AICORE_NONE") == "None"
    assert canonical_aic_metrics("ArithmeticUtilization") == "ArithmeticUtilization"
    assert canonical_aic_metrics(None) is None


# ----------------------------------------------------------------------------------- schema, fixtures


@pytest.mark.parametrize("folder", sorted(p.name for p in FIX.iterdir() if p.is_dir()))
@pytest.mark.slow
def test_every_fixture_run_conforms_to_the_schema(folder: str) -> None:
    for reader in MY_READERS:
        for cand in reader.candidates(FIX / folder):
            run = reader.read(cand)
            assert len(run.kernels) > 0
            for col, dtype in KERNEL_SCHEMA.items():
                assert str(run.kernels[col].dtype) == str(pd.Series([], dtype=dtype).dtype), (folder, col)
            for col, dtype in STEP_SCHEMA.items():
                assert str(run.steps[col].dtype) == str(pd.Series([], dtype=dtype).dtype), (folder, col)
            extra = [c for c in run.kernels.columns if c not in KERNEL_SCHEMA]
            assert all(c.startswith(("aic_", "aiv_", "aicore_", "cube_")) for c in extra)


@pytest.mark.parametrize("folder", sorted(p.name for p in FIX.iterdir() if p.is_dir()))
@pytest.mark.slow
def test_traits_on_distinct_names_equal_traits_on_every_launch(folder: str) -> None:
    for reader in MY_READERS:
        for cand in reader.candidates(FIX / folder):
            k = reader.read(cand).kernels
            assert phase_of(k) == infer_phase(k["name"], k["op_type"])
            for steps in (1, 3, 7):
                assert amp_of(k, steps) == amp_markers(k, steps)


def test_amp_with_many_launch_count_classes_matches_the_per_launch_call() -> None:
    names, types = [], []
    for i in range(80):  # 80 distinct launch counts: more classes than grouping is worth
        name = (
            f"Default/b{i}-Block/Cast-op{i}"
            if i % 3
            else f"Default/b{i}-_OutputTo16/_backbone-Net/MatMul-op{i}"
        )
        names += [name] * (i + 1)
        types += ["Cast" if i % 3 else "MatMul"] * (i + 1)
    k = pd.DataFrame({"name": names, "op_type": types}).astype("string[pyarrow]")
    assert amp_of(k, 4) == amp_markers(k, 4)
    assert amp_of(k, 4)["output_to16_scopes"] is True


def test_generator_reproduces_the_committed_fixtures(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(FIX / "generate.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(
        p.relative_to(FIX)
        for p in FIX.rglob("*")
        if p.is_file() and p.suffix != ".py" and p.name != "README.md"
    )
    assert written == committed
    for rel in written:
        assert (tmp_path / rel).read_bytes() == (FIX / rel).read_bytes(), rel

"""Alignment and the operator comparison table on real MindSpore CPU run pairs."""

from __future__ import annotations

import pandas as pd

from core.model import PIPE_COUNTERS
from diagnosis.compare import PIPES, assign_roles, compare_runs, leaderboard
from diagnosis.forward import normalise_scopes, training_only_mask
from diagnosis.ingest import read_folder
from doctor.model import OPERATOR_COLUMN_NAMES
from tests.support.inputs import CPU
from tests.support.runs import cpu_pair, cpu_run


def test_training_run_is_the_baseline_by_default():
    train, infer = cpu_run("train_amp_o2_graph"), cpu_run("infer_fp32_graph")
    assert assign_roles(infer, train) == (train, infer)
    assert assign_roles(infer, train, baseline="first") == (infer, train)


def test_forward_pass_only_from_a_training_run():
    run = cpu_run("train_fp32_graph")
    dropped = run.kernels.loc[training_only_mask(run.kernels), "name"]
    assert dropped.str.startswith("Gradients/").any()
    assert dropped.str.contains("optimizer-", regex=False).any()
    assert dropped.str.contains("_loss_fn-", regex=False).any()
    kept = run.kernels.loc[~training_only_mask(run.kernels), "name"]
    assert not kept.str.startswith("Gradients/").any()


def test_wrapper_scopes_normalised_to_inference_scopes():
    names = pd.Series(
        [
            "Default/network-WithLossCell/_backbone-Net/block1-Block/conv-Conv2d/Conv2D-op0",
            "Default/network-WithLossCell/_backbone-_OutputTo32/_backbone-Net/bn-_OutputTo16/"
            "_backbone-BatchNorm2d/BatchNorm-op0",
            "Default/block1-Block/conv-Conv2d/Conv2D-op0",
            "MatMul",
        ]
    )
    assert normalise_scopes(names).tolist() == [
        "Default/block1-Block/conv-Conv2d/Conv2D-op0",
        "Default/bn-BatchNorm2d/BatchNorm-op0",
        "Default/block1-Block/conv-Conv2d/Conv2D-op0",
        "MatMul",
    ]


def test_train_vs_infer_matched_by_scope():
    c, _ = cpu_pair("train_fp32_graph", "infer_fp32_graph")
    assert c.alignment.method == "scope"
    assert c.alignment.target_matched_share == 1.0
    assert c.alignment.baseline_matched_share > 0.95
    convs = c.table.loc[c.table["op_type"] == "Conv2D"]
    assert (convs["match"] == "scope").all() and len(convs) == 3


def test_amp_casts_are_baseline_only_extra_work():
    c, _ = cpu_pair("train_amp_o2_graph", "infer_fp32_graph")
    casts = c.table.loc[c.table["op_type"] == "Cast"]
    assert len(casts) > 5
    assert set(casts["match"]) == {"baseline-only"}
    assert set(casts["one_side_reason"]) == {"extra work on the baseline (cast / layout / copy)"}


def test_pynative_target_aligned_by_sequence_and_said_so():
    c, _ = cpu_pair("infer_fp32_graph", "infer_fp32_pynative")
    assert c.alignment.method == "sequence"
    assert any("PyNative" in n and "approximate" in n for n in c.notes)
    conv = c.table.loc[(c.table["op_type"] == "Conv2D") & (c.table["match"] == "sequence")]
    assert len(conv) == 3


def test_per_step_and_per_sample_columns_when_batches_differ():
    c, _ = cpu_pair("infer_fp32_graph", "infer_fp32_graph_batch32")
    assert (c.baseline.batch, c.target.batch) == (8, 32)
    assert c.per_sample and "ratio_per_sample" in c.table
    conv = c.table.loc[c.table["op_type"] == "Conv2D"]
    assert conv["input_shapes_changed"].all()
    assert any("Batch sizes differ" in n for n in c.notes)


def test_table_columns_ranks_and_leaderboards():
    c, _ = cpu_pair("train_amp_o2_graph", "infer_fp32_graph")
    t = c.table
    assert t["target_share"].sum() == __import__("pytest").approx(1.0)
    top = leaderboard(t, "target")
    assert len(top) == 10
    assert top["target_us_per_step"].is_monotonic_decreasing
    assert top.iloc[0]["op_type"] == "Conv2D"
    assert (t.loc[t["target_rank"] == 1, "operator"].iloc[0]) == top.iloc[0]["operator"]


def test_pipe_counters_say_what_bounds_an_operator():
    level1 = CPU.parent / "ascend" / "level1"
    c = compare_runs(read_folder(level1 / "train"), read_folder(level1 / "infer"))
    conv = c.table.loc[c.table["op_type"] == "Conv2D"].iloc[0]
    assert conv["target_aic_mte2_ratio"] >= 0.8 and conv["target_bound"] == "memory"
    relu = c.table.loc[c.table["op_type"] == "Relu"].iloc[0]
    assert relu["target_bound"] == "none"  # counters present, no pipe at 80 %
    cpu, _ = cpu_pair("train_fp32_graph", "infer_fp32_graph")
    assert cpu.table["target_bound"].isna().all()  # CPU profiles carry no pipe counters


def test_every_counter_the_comparison_reads_is_averaged_per_operator():
    """bound_by_pipes and the report's operator columns read only counters operator_aggregates keeps."""
    piped = {column for _, columns in PIPES for column in columns}
    reported = {
        name.removeprefix(f"{side}_")
        for name in OPERATOR_COLUMN_NAMES
        for side in ("baseline", "target")
        if name.startswith(f"{side}_ai")
    }
    assert piped <= set(PIPE_COUNTERS) and reported <= set(PIPE_COUNTERS)
    level1 = CPU.parent / "ascend" / "level1"
    c = compare_runs(read_folder(level1 / "train"), read_folder(level1 / "infer"))
    assert set(PIPE_COUNTERS) <= set(c.target.ops.columns)  # a Level1 profile has all four

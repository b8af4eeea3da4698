"""The symptom type shared by the profile analyzers, the graph checks and the knowledge base."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Where a symptom was seen. Rules declare which of these they apply to.
SOURCES = ("pair", "baseline", "target", "mindir", "mindir+profile")


@dataclass(frozen=True)
class Symptom:
    """One observed fact with numbers, the rows that prove it and, where it can be estimated,
    the time per step that removing it would give back.

    `kind` is a stable kebab-case id (e.g. ``precision-change``) that rules refer to;
    `strength` in [0, 1] says how clear the evidence is (effect size beyond noise).
    """

    kind: str
    summary: str
    source: str = "pair"
    strength: float = 1.0
    values: dict[str, Any] = field(default_factory=dict[str, Any])
    evidence: tuple[dict[str, Any], ...] = ()  # operator rows or graph nodes (JSON-able dicts)
    recoverable_ms_per_step: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form used by the report model."""
        return {
            "kind": self.kind,
            "summary": self.summary,
            "source": self.source,
            "strength": round(float(self.strength), 4),
            "values": self.values,
            "evidence": list(self.evidence),
            "recoverable_ms_per_step": self.recoverable_ms_per_step,
        }


@dataclass(frozen=True)
class Emits:
    """The symptom kinds one emitter module declares, by what they describe; a test runs every emitter
    over tests/fixtures/symptoms and fails on an undeclared kind or a declared kind without cases.

    `pair` kinds describe a difference (source "pair"), `run` kinds one run (source "baseline" or
    "target"), `mindir` kinds an exported graph, `mindir_profile` kinds a graph joined with a profile.
    """

    pair: tuple[str, ...] = ()
    run: tuple[str, ...] = ()
    mindir: tuple[str, ...] = ()
    mindir_profile: tuple[str, ...] = ()

    def kinds(self) -> frozenset[str]:
        """Every kind declared, whatever it describes."""
        return frozenset(self.pair + self.run + self.mindir + self.mindir_profile)

    def scope(self, source: str) -> tuple[str, ...]:
        """The kinds declared for symptoms of one `source` (one of SOURCES)."""
        if source == "pair":
            return self.pair
        if source in ("baseline", "target"):
            return self.run
        return self.mindir if source == "mindir" else self.mindir_profile


@dataclass(frozen=True)
class SymptomKind:
    """Documentation of one symptom kind: what it means and which numbers it carries."""

    description: str
    values: tuple[str, ...] = ()


# The vocabulary rules may refer to. Analyzers only emit kinds listed here (a test checks it),
# and every number a rule thresholds on is named in `values`.
SYMPTOM_KINDS: dict[str, SymptomKind] = {
    # --- a pair of profiled runs (source "pair") ---
    "step-time-gap": SymptomKind(
        "Target is slower (or faster) per step than the baseline's forward pass; `basis` says which time "
        "the numbers are: `operator` (compared operator time, the verdict's ratio) or `wall` (step time).",
        ("baseline_ms_per_step", "target_ms_per_step", "ratio", "per_sample_ratio", "basis"),
    ),
    "phase-step-gap": SymptomKind(
        "A pair with a generation run (prefill and decode steps) on either side, compared phase by phase "
        "(prefill against prefill, decode against decode; a run of one phase stands for the phase of its "
        "step size): a phase of the target is slower beyond noise. `matched_ratio` is the target's time at "
        "its own phase mix against the baseline's phases at that mix; `mixed_ratio` what the average "
        "steps say; `slower_ratio` the largest ratio of a phase slower beyond noise; recoverable is the "
        "slower phases' extra time per step of the target.",
        (
            "baseline_prefill_steps",
            "baseline_decode_steps",
            "target_prefill_steps",
            "target_decode_steps",
            "phases_compared",
            "slower_phases",
            "prefill_baseline_ms_per_step",
            "prefill_target_ms_per_step",
            "prefill_ratio",
            "decode_baseline_ms_per_step",
            "decode_target_ms_per_step",
            "decode_ratio",
            "slower_ratio",
            "matched_ratio",
            "mixed_ratio",
            "target_ms_per_step",
        ),
    ),
    "precision-change": SymptomKind(
        "Compute-heavy ops run in FP32 on the target but FP16/BF16 on the baseline (dtype columns), "
        "or Cast ops/AMP scope markers exist on one side only (CPU evidence).",
        (
            "ops_changed",
            "ops_changed_share",
            "fp32_share_target",
            "lost_ms_per_step",
            "lost_share_target",
            "baseline_casts_per_step",
            "target_casts_per_step",
            "evidence_basis",
        ),
    ),
    "cast-heavy": SymptomKind(
        "Cast kernels take a large share of the target's time or outnumber compute ops.",
        ("cast_share", "casts_per_step", "compute_ops_per_step", "cast_ms_per_step"),
    ),
    "attention-split": SymptomKind(
        "Fused attention kernels (FlashAttentionScore, PromptFlashAttention, IncreFlashAttention) of the "
        "baseline run as BatchMatMul + Softmax (+ Dropout) + BatchMatMul kernels on the target.",
        (
            "fused_per_step",
            "split_per_step",
            "split_kernels_per_step",
            "fused_ms_per_step",
            "split_ms_per_step",
        ),
    ),
    "norm-split": SymptomKind(
        "Fused LayerNorm / RmsNorm kernels of the baseline run as ReduceMean, Pow, Rsqrt|Sqrt, Mul and "
        "Add kernels on the target.",
        (
            "fused_per_step",
            "split_per_step",
            "split_kernels_per_step",
            "fused_ms_per_step",
            "split_ms_per_step",
        ),
    ),
    "activation-split": SymptomKind(
        "Fused GeLU / FastGelu / SiLU (Swish) kernels of the baseline run as Sigmoid|Tanh|Erf|Exp with "
        "Mul, Add and Div kernels on the target.",
        (
            "fused_per_step",
            "split_per_step",
            "split_kernels_per_step",
            "fused_ms_per_step",
            "split_ms_per_step",
        ),
    ),
    "rotary-split": SymptomKind(
        "Fused rotary embedding kernels (RotaryPositionEmbedding ...) of the baseline run as StridedSlice, "
        "Neg|Sub, Mul, Add and Concat kernels on the target.",
        (
            "fused_per_step",
            "split_per_step",
            "split_kernels_per_step",
            "fused_ms_per_step",
            "split_ms_per_step",
        ),
    ),
    "fusion-split": SymptomKind(
        "Kernels fused on the baseline run as separate kernels on the target (or Conv and BN run as "
        "separate kernels in an Ascend/GPU inference run).",
        ("split_groups", "extra_kernels_per_step", "split_ms_per_step"),
    ),
    "train-mode-kernels": SymptomKind(
        "Training-mode BatchNorm (batch statistics) or Dropout kernels run in the inference run.",
        ("bn_training_kernels", "dropout_kernels", "ms_per_step"),
    ),
    "ai-cpu-ops": SymptomKind(
        "Operators run on AI CPU in the target (share of time, ops >= 20 us).",
        ("aicpu_share", "aicpu_ms_per_step", "ops"),
    ),
    "core-change": SymptomKind(
        "The same operator runs on a different accelerator core in the two runs (e.g. AI_CORE -> AI_CPU).",
        ("ops", "ms_per_step"),
    ),
    "format-conversion": SymptomKind(
        "TransData / format-conversion kernels take a share of the target or appear more than on baseline.",
        ("transdata_share", "transdata_ms_per_step", "baseline_count_per_step", "target_count_per_step"),
    ),
    "shape-mismatch": SymptomKind(
        "Matched operators see different input shapes (usually a different batch size).",
        ("baseline_batch", "target_batch", "ops_with_different_shapes"),
    ),
    "dynamic-shapes": SymptomKind(
        "One operator sees many distinct input shapes, or the step times show recompile spikes at new "
        "shapes (dynamic_ops_share, the OP State share, is a fact carried along, never evidence alone).",
        ("max_distinct_shapes", "dynamic_ops_share", "recompile_steps"),
    ),
    "uniform-slowdown": SymptomKind(
        "Nearly all matched operators are slower by a similar factor (clock, thermal, contention).",
        ("median_ratio", "ratio_iqr", "matched_ops", "slower_share", "lost_ms_per_step"),
    ),
    "op-slowdown": SymptomKind(
        "Specific operators are much slower on the target than on the baseline beyond noise.",
        ("ops", "lost_ms_per_step"),
    ),
    "step-drift": SymptomKind(
        "Step time trends over the run (e.g. 23 ms -> 35 ms).",
        ("first_ms", "last_ms", "slope_ms_per_step", "relative_change", "kernel_share_of_change"),
    ),
    "step-jitter": SymptomKind(
        "Step times are dispersed: spread = (p90 - p10) / p50, which sees a bimodal series; tail_ms = "
        "p90 - p50, the time a steady run would save at p90.",
        ("spread", "p10_ms", "p50_ms", "p90_ms", "p95_ms", "tail_ms", "steps"),
    ),
    "first-step-outlier": SymptomKind(
        "The first step(s) are much slower than the median: compile / no warm-up inside the window.",
        ("first_ms", "median_ms", "ratio", "outlier_steps"),
    ),
    "device-idle": SymptomKind(
        "The device (or host op executor) is idle for a large share of the step.",
        ("utilisation", "free_share", "free_ms_per_step"),
    ),
    "generation-phases": SymptomKind(
        "A generation run (attention kernels; steps of two shape sizes at least 4x apart) split into prefill "
        "and decode steps, with the step time, kernel share and kernel size of each phase.",
        (
            "prefill_steps",
            "decode_steps",
            "prefill_ms_per_step",
            "decode_ms_per_step",
            "decode_busy_share",
            "decode_median_kernel_us",
            "decode_gap_ms_per_step",
            "decode_host_bound",
        ),
    ),
    "host-bound": SymptomKind(
        "Many tiny kernels separated by gaps: the host cannot feed the device.",
        ("tiny_kernel_share", "median_kernel_us", "median_gap_us", "utilisation"),
    ),
    "execution-mode-mismatch": SymptomKind(
        "One run executed in graph mode, the other in PyNative (op-by-op) mode.",
        ("baseline_mode", "target_mode"),
    ),
    "profiler-config-diff": SymptomKind(
        "The two runs were profiled with settings that skew operator times or change columns (level, "
        "aic_metrics, activities, with_stack, profile_memory, data_process, record_shapes, "
        "data_simplification); window_differences notes a different schedule, which is no evidence.",
        ("differences", "window_differences"),
    ),
    "profiler-level-low": SymptomKind(
        "A run lacks dtype/format/shape columns (profiled at Level0).",
        ("runs",),
    ),
    "data-pipeline-wait": SymptomKind(
        "Steps wait for input data (dataset / minddata queue empty or slow get-next).",
        ("wait_share", "empty_queue_share", "ms_per_step"),
    ),
    "random-augmentation": SymptomKind(
        "Random augmentation operations run in the inference data pipeline.",
        ("ops",),
    ),
    "memory-growth": SymptomKind(
        "Allocated device/host memory grows across the run.",
        ("start_mb", "end_mb", "growth_mb", "relative_growth"),
    ),
    "frequency-drop": SymptomKind(
        "AI Core frequency falls below its maximum while AI Core kernels run (throttling; a clock that drops "
        "only between kernels is power saving and not this symptom), or a busy npu-smi reading shows it. "
        "From the clock counter: `min_mhz` in effect during kernels, `mean_drop` weighted by kernel busy "
        "time, `low_clock_ms`/`low_clock_share` of busy time and `kernels_affected` at a low clock.",
        (
            "max_mhz",
            "min_mhz",
            "mean_drop",
            "low_clock_ms",
            "low_clock_share",
            "kernels_affected",
            "idle_downclock",
            "temperature_c",
            "power_w",
        ),
    ),
    "environment-diff": SymptomKind(
        "Environment recorded in profiler_metadata.json differs or is set for debugging "
        "(log level, launch blocking, deterministic).",
        ("variables",),
    ),
    "communication-share": SymptomKind(
        "Collective communication takes a share of the inference step.",
        ("communication_share", "ms_per_step"),
    ),
    "small-batch": SymptomKind(
        "The target's batch is much smaller than the baseline's and kernels are short (device under-used).",
        ("baseline_batch", "target_batch", "utilisation"),
    ),
    "elementwise-heavy": SymptomKind(
        "Many short elementwise kernels (Add/Mul/ReLU/Cast...) that graph-kernel fusion would merge.",
        ("elementwise_share", "elementwise_ms_per_step", "kernels_per_step"),
    ),
    "float64-input": SymptomKind(
        "DOUBLE inputs reach the device (Cast from DOUBLE, AI CPU ops on DOUBLE/INT64).",
        ("ops", "ms_per_step"),
    ),
    "sync-heavy": SymptomKind(
        "Host synchronisation after launches (SynchronizeStream) dominates gaps: synchronous execution.",
        ("sync_events_per_step", "sync_ms_per_step"),
    ),
    "op-set-mismatch": SymptomKind(
        "Large parts of one run have no counterpart in the other: different workloads.",
        ("matched_share_baseline", "matched_share_target", "unmatched_ms_per_step"),
    ),
    "communication-bound": SymptomKind(
        "A training step waits for communication more than it computes: exposed communication (not "
        "overlapped by computing) is 30 % or more of the step.",
        (
            "communication_share",
            "communication_ms_per_step",
            "computing_ms_per_step",
            "free_ms_per_step",
            "breakdown_source",
        ),
    ),
    "slow-rank": SymptomKind(
        "One rank of a multi-rank job computes longer than the others in most steps (robust z-score over "
        "ranks); the others wait for it in collectives.",
        (
            "rank",
            "typical_rank",
            "compute_ratio",
            "extra_ms_per_step",
            "stable_share",
            "victims",
            "wait_ms_per_step",
            "ranks",
        ),
    ),
    "slow-link": SymptomKind(
        "A rank's bandwidth on a link type (HCCS, RDMA, SDMA, PCIe) is under half the median of the others.",
        ("links", "rank", "link", "bandwidth_ratio"),
    ),
    # --- two runs' dumps compared layer by layer (source "pair", outputs/) ---
    "output-divergence": SymptomKind(
        "The first layer (in execution order) whose output statistics differ beyond the dtype's tolerance.",
        (
            "layer",
            "op_type",
            "family",
            "rel_diff",
            "tolerance",
            "dtype",
            "stat",
            "depth",
            "layers",
            "diverged_layers",
            "one_sided_dropouts",
            "inputs_differ",
        ),
    ),
    "output-inputs-differ": SymptomKind(
        "A network input differs between the runs: other statistics, or equal statistics over other values.",
        ("input", "rel_diff", "same_statistics", "inputs"),
    ),
    "output-weights-differ": SymptomKind(
        "Parameters (weights, not BatchNorm's moving statistics) differ between the runs.",
        ("parameters", "total", "first", "rel_diff"),
    ),
    "output-overflow": SymptomKind(
        "An FP16/BF16 tensor of the target holds inf or values at the FP16 limit (65504); the baseline not.",
        ("layer", "non_finite", "max_abs", "dtype"),
    ),
    "output-dtype-differ": SymptomKind(
        "Matched layers compute in other floating dtypes (another precision mode or mixed-precision level).",
        ("layers", "baseline_dtype", "target_dtype", "layer"),
    ),
    # --- a MINDIR (source "mindir") ---
    "mindir-train-mode": SymptomKind(
        "Exported in training mode: BatchNorm is_training=True or Dropout nodes.",
        ("bn_training", "bn_total", "dropout_ops", "graph_training_flag"),
    ),
    "mindir-fp32-compute": SymptomKind(
        "Compute ops output FP32 and there is no Cast: exported without mixed precision.",
        ("fp32_compute_ops", "compute_ops", "casts", "fp32_parameters"),
    ),
    "mindir-low-precision": SymptomKind(
        "Compute ops run in FP16/BF16.",
        (
            "compute_ops",
            "low_precision_compute_ops",
            "float16_compute_ops",
            "bfloat16_compute_ops",
            "casts_to_low_precision",
            "low_precision_parameters",
        ),
    ),
    "mindir-dynamic-input": SymptomKind(
        "Graph inputs have dynamic (-1) dimensions.", ("dynamic_inputs", "dynamic_dims", "inputs")
    ),
    "mindir-float64-input": SymptomKind("A graph input is float64.", ("float64_inputs", "inputs")),
    "mindir-cast-ops": SymptomKind(
        "Many Cast nodes relative to compute ops.", ("casts", "compute_ops", "casts_per_compute_op")
    ),
    "mindir-aicpu-risk": SymptomKind(
        "Ops that fall back to AI CPU on Ascend for the dtypes used.",
        ("aicpu_risk_ops", "documented", "heuristic"),
    ),
    "mindir-fusible-chains": SymptomKind(
        "Conv/BN/activation (and MatMul) chains that an inference compiler should fuse.",
        (
            "chains",
            "fusible",
            "blocked",
            "depthwise",
            "casts_in_chains",
            "conv-bn-act",
            "conv-bn-add-act",
            "conv-bn",
            "conv-act",
            "matmul-biasadd-act",
            "matmul-biasadd",
            "matmul-add",
        ),
    ),
    "mindir-unfused-attention": SymptomKind(
        "Attention written as MatMul -> (scale) -> (mask) -> Softmax -> (Dropout) -> MatMul instead of one "
        "FlashAttentionScore / PromptFlashAttention / IncreFlashAttention.",
        ("patterns", "decode", "blocked", "casts_in_patterns"),
    ),
    "mindir-unfused-norm": SymptomKind(
        "LayerNorm or RMSNorm written out as ReduceMean/Pow/Sqrt|Rsqrt/Div|Mul/Add instead of one "
        "LayerNorm / RmsNorm op.",
        ("patterns", "layer-norm", "rms-norm", "blocked"),
    ),
    "mindir-decomposed-activation": SymptomKind(
        "GeLU (erf or tanh form), FastGelu, SiLU/Swish, a softmax outside attention or a rotary embedding "
        "written out as elementwise ops instead of one GeLU / FastGelu / SiLU / Softmax / "
        "RotaryPositionEmbedding op.",
        ("patterns", "gelu", "fast-gelu", "silu", "softmax", "rotary", "blocked"),
    ),
    # --- a MINDIR joined with a profile (source "mindir+profile") ---
    "chains-ran-split": SymptomKind(
        "Fusible chains ran as separate kernels in the profile; the BN/activation kernels' time is "
        "recoverable.",
        (
            "chains",
            "chains_split",
            "chains_partly_fused",
            "chains_fused",
            "chains_not_found",
            "separate_ms_per_step",
            "split_ms_per_step",
            "steps",
            "approximate",
            "cpu_run",
        ),
    ),
}

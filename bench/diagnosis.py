"""Diagnosis-accuracy benchmark (`make bench-diagnosis`): inject known causes into real and generated profiles
and check that Perf Doctor names them, and that healthy pairs stay quiet.

Independent of tests/fixtures/rules. Every case is a (baseline, target) pair of profiler folders written to
a temporary directory (or --out, e.g. bench/data/diagnosis), diagnosed with
`doctor.facade.diagnose(baseline, target, isolate=False)`, and scored against the rule id the injected cause
maps to.

Base workloads
--------------
* cpu-real: the real MindSpore 2.10 CPU fixtures (tests/fixtures/cpu). Real pairs that already embody a
  cause (PyNative, train mode, no warm-up, contention, dynamic shapes, AMP vs FP32) are used as they are
  (strength "real"); other causes are injected by editing copies of the real CPU files (timestamps, op
  detail/type tables, framework shapes, trace_view CPU OP events), keeping the four files consistent.
* npu-*: Ascend steps derived from the real NPU kernel_details.csv samples in /work/shared/samples/ascend
  (2025 BF16 LLM step, 2023 large-model training step; torch_npu/CANN output, see that README). Their rows
  (name, type, core, duration, wait, shapes, dtypes, formats, counters) are wrapped in a MindSpore 2.10
  `*_ascend_ms` folder (kernel_details.csv in MindSpore's Level1 layout, step_trace_time.csv, trace_view.json,
  profiler_info_0.json); kernel names get a graph scope `Default/<sample>-Net/<Type>-op<N>/<name>`; the
  real step is repeated with measured noise.
* gen-resnet / gen-transformer: generated ResNet-like (Conv+BN+ReLU fused kernels) and transformer-like
  (MatMul+BiasAdd fusion, FlashAttention, LayerNorm, Gelu) FP16 Ascend inference runs, in the style of
  bench/gen_ascend.py but small, plus an FP16 training run of the ResNet-like net for a train-vs-infer
  healthy pair.

Noise
-----
Measured, not invented: from the real runs infer_fp32_graph, _repeat and _repeat2 the harness measures the
per-launch spread within a run, the per-operator spread between runs, the per-step spread and the run-to-run
spread (robust sigmas of log durations) and applies them, with deterministic seeds, to every derived or
generated run.

Causes and strengths (weak / moderate / strong; the rule id each maps to)
------------------------------------------------------------------------
See CAUSES below: each entry documents what is injected and what the three strengths are. Metrics with
goals are computed over moderate, strong and real cases; weak cases are reported separately.

Scoring
-------
* top-1: the expected rule is the first cause with `significant` true.
* top-3: the expected rule is among the first three causes listed.
* per-rule precision: of the cases whose first significant cause is the rule, the share where it was
  expected (healthy pairs count as cases expecting nothing); "precision (listed)" does the same over every
  significant cause listed.
* healthy pairs: "problem" and "unexplained-slowdown" verdicts, significant causes listed, high/critical
  causes listed.
* injected cases whose cause was missed: how many still end as an unexplained slowdown, how many as
  "nothing significant".

    .venv/bin/python bench/diagnosis.py            # everything, writes bench/DIAGNOSIS.md
    .venv/bin/python bench/diagnosis.py --quick    # a few minutes on 2 cores
"""

from __future__ import annotations

import argparse
import copy
import csv
import datetime as dt
import io
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# This script's folder must not be on the path: bench/diagnosis.py would shadow the `diagnosis` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "fixtures")]

from ascend_schema import (  # noqa: E402  (the documented layouts, shared with the test fixtures)
    APO,
    CRLF,
    KD_TENSORS,
    MODEL_ID,
    PIPE_COLUMNS,
    STEP_TRACE_HEADER,
    freq_counter,
    hardware_kernel,
    ms_profiler_info,
    pipe_utilization,
    process_name,
    profiler_step,
    quoted_shapes,
    step_trace_row,
    us,
    write_csv,
    write_json,
)

CPU_FIXTURES = REPO / "tests" / "fixtures" / "cpu"
SAMPLES = Path(os.environ.get("PERF_DOCTOR_SAMPLES", "/work/shared/samples/ascend"))
REPORT = HERE / "DIAGNOSIS.md"
SEED = 20261130
FREQ_MHZ = 1800
STRENGTHS = ("weak", "moderate", "strong")
GOAL_STRENGTHS = ("moderate", "strong", "real")
UNEXPLAINED = "unexplained-slowdown"  # the verdict status of a material slowdown without a significant cause

# ------------------------------------------------------------------------------------------- run model


@dataclass
class K:
    """One kernel launch. `gap` is the idle time (µs) between the previous launch's end and this start
    (negative when streams overlap); `dur` is in µs."""

    name: str
    type: str
    core: str
    dur: float
    gap: float
    in_shapes: str = ""
    in_dtypes: str = ""
    in_formats: str = ""
    out_shapes: str = ""
    out_dtypes: str = ""
    out_formats: str = ""
    op_state: str = "static"
    block: str = "8"
    mix_block: str = "0"
    stream: str = "2"
    counters: tuple[str, ...] | None = None  # real counter cells, in the run's metric column order
    frame: str | None = None  # CPU: the cpu_framework line of this launch (shapes)


@dataclass
class Run:
    """A profiled run: steps of launches plus what the folder records about it."""

    kind: str  # "cpu" | "ascend"
    steps: list[list[K]]
    step_gap: list[float]  # host idle time (µs) after each step
    origin: str
    config: dict[str, Any] = field(default_factory=dict)  # profiler_parameters overrides (Ascend)
    metric_columns: tuple[str, ...] = PIPE_COLUMNS
    block_names: tuple[str, str] = ("Block Num", "Mix Block Num")
    has_op_state: bool = True
    has_hf32: bool = True
    freq: list[int] | None = None
    t0_ns: int = 1_764_576_000_000_000_000
    # CPU only: the real folder it came from (files copied and then rewritten), pid, framework number
    cpu_source: Path | None = None
    pid: int = 4242
    frame_number: str = "3068079511"

    def launches(self) -> list[K]:
        return [k for s in self.steps for k in s]


def clone(run: Run) -> Run:
    return copy.deepcopy(run)


# ------------------------------------------------------------------------------------------- noise


@dataclass(frozen=True)
class Noise:
    """Robust sigmas of log durations measured on the three identical real CPU runs."""

    launch: float  # launch to launch of one op within a run
    op: float  # one op's mean, run to run
    step: float  # step op-time within a run
    run: float  # mean step op-time, run to run
    source: str

    def apply(self, run: Run, rng: np.random.Generator) -> Run:
        run = clone(run)
        run_f = math.exp(rng.normal(0, self.run))
        op_f: dict[str, float] = {}
        for step in run.steps:
            step_f = math.exp(rng.normal(0, self.step))
            for k in step:
                f = op_f.setdefault(k.name, math.exp(rng.normal(0, self.op)))
                k.dur = max(0.02, k.dur * run_f * f * step_f * math.exp(rng.normal(0, self.launch)))
                if k.gap > 0:
                    k.gap = k.gap * run_f * math.exp(rng.normal(0, self.launch))
        run.step_gap = [g * run_f * math.exp(rng.normal(0, self.step)) for g in run.step_gap]
        return run


def _robust_sigma(values: np.ndarray) -> float:
    values = values[np.isfinite(values)]
    if len(values) < 2:
        return 0.0
    return float(1.4826 * np.median(np.abs(values - np.median(values))))


def measure_noise() -> Noise:
    names = ("infer_fp32_graph", "infer_fp32_graph_repeat", "infer_fp32_graph_repeat2")
    runs = [load_cpu(n) for n in names]
    within, op_means, step_logs, run_means = [], {}, [], []
    for run in runs:
        by_op: dict[str, list[float]] = {}
        for k in run.launches():
            by_op.setdefault(k.name, []).append(k.dur)
        for name, durs in by_op.items():
            logs = np.log(np.array(durs))
            within.extend(logs - np.median(logs))
            op_means.setdefault(name, []).append(float(np.median(durs)))
        busy = np.array([sum(k.dur for k in s) for s in run.steps])
        step_logs.extend(np.log(busy) - np.median(np.log(busy)))
        run_means.append(float(np.mean(busy)))
    between = []
    for means in op_means.values():
        if len(means) == len(runs):
            logs = np.log(np.array(means))
            between.extend(logs - logs.mean())
    # Between-run deviations of 3 runs around their own mean understate sigma by sqrt(2/3).
    correction = math.sqrt(len(runs) / (len(runs) - 1))
    return Noise(
        launch=round(_robust_sigma(np.array(within)), 4),
        op=round(_robust_sigma(np.array(between)) * correction, 4),
        step=round(_robust_sigma(np.array(step_logs)), 4),
        run=round(float(np.std(np.log(run_means), ddof=1)), 4),
        source=" / ".join(names),
    )


# ------------------------------------------------------------------------------------------- CPU runs


def cpu_root(name: str) -> Path:
    roots = sorted((CPU_FIXTURES / name).glob("*_ascend_ms"))
    if len(roots) != 1:
        raise SystemExit(f"{CPU_FIXTURES / name}: expected one *_ascend_ms root")
    return roots[0]


def load_cpu(name: str) -> Run:
    """A real CPU run as launches split into steps at the first op's launches (static GRAPH runs)."""
    root = cpu_root(name)
    fw = root / "FRAMEWORK"
    types = {}
    with open(fw / "cpu_op_detail_info_0.csv", newline="", encoding="utf-8") as fh:
        detail = list(csv.DictReader(fh))
    for row in detail:
        types[row["full_op_name"]] = row["op_type"]
    pid = int(detail[0]["pid"])
    raw = []
    for line in (fw / "cpu_op_execute_timestamp_0.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        op, _, launches = line.split(";", 2)
        for entry in launches.split():
            start, dur, _ = entry.split(",")
            raw.append((int(start), float(dur) * 1000.0, op))
    raw.sort()
    frames = [ln for ln in (fw / "cpu_framework_0.txt").read_text(encoding="utf-8").splitlines() if ln]
    number = frames[0].split(";")[2] if frames else "0"
    by_short: dict[str, list[str]] = {}
    for line in frames:
        by_short.setdefault(line.split(";")[1], []).append(line)
    seen: dict[str, int] = {}
    anchor = raw[0][2]
    steps: list[list[K]] = []
    step_gap: list[float] = []
    prev_end = None
    for start_ns, dur_us, op in raw:
        short = op.rsplit("/", 1)[-1]
        i = seen.get(short, 0)
        seen[short] = i + 1
        lines = by_short.get(short, [])
        frame = lines[i] if i < len(lines) else None
        gap = 0.0 if prev_end is None else start_ns / 1000 - prev_end
        if op == anchor:
            if steps:
                step_gap.append(gap)
            steps.append([])
            gap = 0.0
        steps[-1].append(K(op, types.get(op, short.split("-op")[0]), "CPU", dur_us, gap, frame=frame))
        prev_end = start_ns / 1000 + dur_us
    step_gap.append(step_gap[-1] if step_gap else 500.0)
    return Run(
        "cpu",
        steps,
        step_gap,
        origin=f"tests/fixtures/cpu/{name}",
        cpu_source=root,
        pid=pid,
        frame_number=number,
        t0_ns=raw[0][0],
    )


def write_cpu(run: Run, out: Path) -> Path:
    """Copy the real folder, then rewrite its timestamp, op detail/type, framework and CPU OP trace events
    from the run's launches (Scope Layer spans and metadata events are kept as they were)."""
    assert run.cpu_source is not None
    root = out / run.cpu_source.name
    shutil.copytree(run.cpu_source, root)
    fw = root / "FRAMEWORK"
    t = run.t0_ns  # integer ns, as the profiler writes them
    launches: list[tuple[int, float, K]] = []
    for step, gap_after in zip(run.steps, run.step_gap, strict=True):
        for k in step:
            t += max(round(k.gap * 1000), 0)
            launches.append((t, k.dur, k))
            t += round(k.dur * 1000)
        t += max(round(gap_after * 1000), 0)
    order: list[str] = []
    per_op: dict[str, list[tuple[int, float]]] = {}
    type_of: dict[str, str] = {}
    for start, dur, k in launches:
        if k.name not in per_op:
            order.append(k.name)
        per_op.setdefault(k.name, []).append((start, dur))
        type_of[k.name] = k.type
    lines = []
    for name in order:
        entries = " ".join(f"{s},{d / 1000:.6g},0" for s, d in per_op[name])
        lines.append(f"{name};HostCpuOps;{entries} ")
    (fw / "cpu_op_execute_timestamp_0.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    total_ms = sum(d for _, d, _ in launches) / 1000
    with open(fw / "cpu_op_detail_info_0.csv", newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for name in order:
        durs = [d / 1000 for _, d in per_op[name]]
        short = name.rsplit("/", 1)[-1]
        w.writerow(
            [
                "Host",
                type_of[name],
                short,
                name,
                len(durs),
                f"{sum(durs):.6g}",
                f"{sum(durs) / len(durs):.6g}",
                f"{sum(durs) / total_ms:.6g}",
                "Default",
                run.pid,
            ]
        )
    (fw / "cpu_op_detail_info_0.csv").write_text(buf.getvalue(), encoding="utf-8")
    by_type: dict[str, list[str]] = {}
    for name in order:
        by_type.setdefault(type_of[name], []).append(name)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "op_type",
            "type_occurrences",
            "execution_frequency(per-step)",
            "total_compute_time",
            "avg_time(ms)",
            "percent",
        ]
    )
    for typ, names in sorted(by_type.items(), key=lambda kv: -sum(d for n in kv[1] for _, d in per_op[n])):
        occ = sum(len(per_op[n]) for n in names)
        tot = sum(d for n in names for _, d in per_op[n]) / 1000
        w.writerow(
            [
                typ,
                occ,
                occ // min(len(per_op[n]) for n in names),
                f"{tot:.6g}",
                f"{tot / occ:.6g}",
                f"{tot / total_ms:.6g}",
            ]
        )
    (fw / "cpu_op_type_info_0.csv").write_text(buf.getvalue(), encoding="utf-8")
    frames = []
    for _, _, k in launches:
        short = k.name.rsplit("/", 1)[-1]
        frames.append(k.frame or f"{k.type};{short};{run.frame_number};")
    (fw / "cpu_framework_0.txt").write_text("\n".join(frames) + "\n", encoding="utf-8")
    trace_path = root / APO / "trace_view.json"
    events = json.loads(trace_path.read_text(encoding="utf-8"))
    kept = [e for e in events if not (e.get("pid") == 2 and e.get("ph") == "X")]
    cpu_ops = [
        {
            "name": k.name,
            "pid": 2,
            "tid": 0,
            "ts": f"{(start + 37) / 1000:.3f}",
            "dur": f"{dur:.3f}",
            "ph": "X",
            "args": {"type": "HostCpuOps"},
        }
        for start, dur, k in launches
    ]
    trace_path.write_text(json.dumps(kept[:5] + cpu_ops + kept[5:]), encoding="utf-8")
    return root


def cpu_steps(run: Run, first: int, count: int) -> Run:
    """The steps [first, first + count) of a real run (e.g. the calm half of the contention run)."""
    run = clone(run)
    run.steps = run.steps[first : first + count]
    run.step_gap = run.step_gap[first : first + count]
    return run


# ------------------------------------------------------------------------------------- Ascend workloads


def load_sample(rel: str, label: str) -> Run:
    """One real step of a kernel_details.csv sample as a MindSpore-scoped graph run of that step."""
    path = SAMPLES / rel
    text = path.read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    header = list(rows[0].keys())
    metric_start = header.index("Context ID") + 1
    metrics = tuple(header[metric_start:])
    dim = "Block Dim" in header
    rows.sort(key=lambda r: float(r["Start Time(us)"].strip()))
    counts: dict[str, int] = {}
    step: list[K] = []
    for r in rows:
        dur = float(r["Duration(us)"])
        typ = r["Type"]
        n = counts.get(typ, 0)
        counts[typ] = n + 1
        # The samples are excerpts of longer steps: the kernels are laid out back to back in start order,
        # separated by their real Wait Time (not by the start-time differences, which span left-out kernels).
        gap = 0.0 if not step else _number(r["Wait Time(us)"])
        step.append(
            K(
                name=f"Default/{label}-Net/{typ}-op{n}/{r['Name']}",
                type=typ,
                core=r["Accelerator Core"],
                dur=dur,
                gap=gap,
                in_shapes=r["Input Shapes"],
                in_dtypes=r["Input Data Types"],
                in_formats=r["Input Formats"],
                out_shapes=r["Output Shapes"],
                out_dtypes=r["Output Data Types"],
                out_formats=r["Output Formats"],
                op_state=r.get("OP State", "static"),
                block=r.get("Block Num", r.get("Block Dim", "0")),
                mix_block=r.get("Mix Block Num", r.get("Mix Block Dim", "0")),
                stream=r["Stream ID"],
                counters=tuple(r[c] for c in metrics),
            )
        )
    return Run(
        "ascend",
        [step],
        [50.0],
        origin=f"{path} (real {len(rows)}-kernel step; see {SAMPLES}/README.md)",
        metric_columns=metrics,
        block_names=("Block Dim", "Mix Block Dim") if dim else ("Block Num", "Mix Block Num"),
        has_op_state="OP State" in header,
        has_hf32="HF32 Eligible" in header,
    )


def _number(text: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        return 0.0


def repeat_steps(run: Run, steps: int, host_gap: float) -> Run:
    run = clone(run)
    run.steps = [copy.deepcopy(run.steps[0]) for _ in range(steps)]
    run.step_gap = [host_gap] * steps
    return run


def _k(
    scope: str,
    kernel: str,
    typ: str,
    core: str,
    dur: float,
    shapes: tuple[str, str],
    dtype: str,
    fmt: str,
    block: int = 32,
) -> K:
    n_in = shapes[0].count(";") + 1
    return K(
        name=f"{scope}/{kernel}",
        type=typ,
        core=core,
        dur=dur,
        gap=2.5,
        in_shapes=quoted_shapes(shapes[0]),
        in_dtypes=";".join([dtype] * n_in),
        in_formats=";".join([fmt] * n_in),
        out_shapes=quoted_shapes(shapes[1]),
        out_dtypes=dtype,
        out_formats=fmt,
        block=str(block),
    )


def gen_resnet(train: bool, blocks: int = 8) -> Run:
    """A small ResNet-like FP16 step: stem + `blocks` Conv+BN+ReLU blocks + Dense head. Inference runs fused
    Conv2D+BNInfer+ReLU kernels (UB fusion); training runs Conv2D, BNTrainingReduce/Update, ReLU, gradients
    and ApplyMomentum."""
    prefix = "Default/network-WithLossCell/_backbone-ResNet" if train else "Default"
    dt16, fmt = "FLOAT16", "NC1HWC0"
    ks: list[K] = [
        _k(
            f"{prefix}/Cast-op0",
            "Cast",
            "Cast",
            "AI_VECTOR_CORE",
            9.0,
            ("32,3,64,64", "32,3,64,64"),
            "FLOAT",
            "NCHW",
            40,
        ),
        _k(
            f"{prefix}/conv1-Conv2d/TransData-op0",
            "TransData",
            "TransData",
            "AI_VECTOR_CORE",
            14.0,
            ("32,3,64,64", "32,1,64,64,16"),
            dt16,
            "NCHW",
        ),
    ]
    for b in range(blocks):
        ch, size = 64 * 2 ** (b // 3), 64 // 2 ** (b // 3)
        act = f"32,{ch // 16},{size},{size},16"
        scope = f"{prefix}/layer{b // 3 + 1}-SequentialCell/{b % 3}-ResidualBlock"
        conv_us = 30.0 + 6.0 * b
        if train:
            ks.append(
                _k(
                    f"{scope}/conv-Conv2d/Conv2D-op0",
                    "Conv2D",
                    "Conv2D",
                    "AI_CORE",
                    conv_us,
                    (f"{act};{ch},{ch // 16},3,3,16", act),
                    dt16,
                    fmt,
                )
            )
            ks.append(
                _k(
                    f"{scope}/bn-BatchNorm2d/BatchNorm-op0",
                    "BNTrainingReduce",
                    "BNTrainingReduce",
                    "AI_VECTOR_CORE",
                    conv_us * 0.25,
                    (act, "1,1,1,1,16"),
                    dt16,
                    fmt,
                )
            )
            ks.append(
                _k(
                    f"{scope}/bn-BatchNorm2d/BatchNorm-op0",
                    "BNTrainingUpdate",
                    "BNTrainingUpdate",
                    "AI_VECTOR_CORE",
                    conv_us * 0.3,
                    (act, act),
                    dt16,
                    fmt,
                )
            )
            ks.append(
                _k(
                    f"{scope}/relu-ReLU/ReLU-op0",
                    "Relu",
                    "Relu",
                    "AI_VECTOR_CORE",
                    conv_us * 0.12,
                    (act, act),
                    dt16,
                    fmt,
                )
            )
        else:
            ks.append(
                _k(
                    f"{scope}/conv-Conv2d/Conv2D-op0",
                    "Conv2D_BNInfer_Relu_fusion",
                    "Conv2D",
                    "AI_CORE",
                    conv_us * 1.1,
                    (f"{act};{ch},{ch // 16},3,3,16", act),
                    dt16,
                    fmt,
                )
            )
        ks.append(
            _k(f"{scope}/Add-op0", "Add", "Add", "AI_VECTOR_CORE", 5.0 + b, (f"{act};{act}", act), dt16, fmt)
        )
    ks.append(
        _k(
            f"{prefix}/avgpool-AvgPool2d/ReduceMean-op0",
            "ReduceMean",
            "ReduceMean",
            "AI_VECTOR_CORE",
            6.0,
            ("32,16,16,16,16", "32,256"),
            dt16,
            fmt,
        )
    )
    ks.append(
        _k(
            f"{prefix}/fc-Dense/MatMul-op0",
            "MatMulV2_BiasAdd_fusion",
            "MatMulV2",
            "AI_CORE",
            12.0,
            ("32,256;10,256;10", "32,10"),
            dt16,
            "ND",
            16,
        )
    )
    if train:
        fwd = list(ks)
        grad = "Gradients/Default/network-WithLossCell/_backbone-ResNet"
        for k in reversed(fwd):
            scope = k.name.split("_backbone-ResNet/", 1)[-1].rsplit("/", 2)[0]
            if k.type == "Conv2D":
                ks.append(
                    replace(
                        k,
                        name=f"{grad}/{scope}/Grad_Conv2D/Conv2DBackpropInput-op0/Conv2DBackpropInput",
                        type="Conv2DBackpropInput",
                        dur=k.dur * 1.1,
                    )
                )
                ks.append(
                    replace(
                        k,
                        name=f"{grad}/{scope}/Grad_Conv2D/Conv2DBackpropFilter-op0/Conv2DBackpropFilter",
                        type="Conv2DBackpropFilter",
                        dur=k.dur * 1.2,
                    )
                )
            elif k.type == "BNTrainingUpdate":
                ks.append(
                    replace(
                        k,
                        name=f"{grad}/{scope}/Grad_BatchNorm/BNTrainingUpdateGrad-op0/BNTrainingUpdateGrad",
                        type="BNTrainingUpdateGrad",
                    )
                )
        for i, _ in enumerate(x for x in fwd if x.type in ("Conv2D", "MatMulV2")):
            ks.append(
                _k(
                    f"Default/optimizer-Momentum/ApplyMomentum-op{i}",
                    "ApplyMomentum",
                    "ApplyMomentum",
                    "AI_VECTOR_CORE",
                    3.0 + i % 4,
                    ("64,4,3,3,16;64,4,3,3,16", "64,4,3,3,16"),
                    "FLOAT",
                    "FRACTAL_Z",
                )
            )
    return _generated(
        ks,
        "generated ResNet-like "
        + ("training (FP16 AMP)" if train else "inference (FP16, fused Conv+BN+ReLU)")
        + f", {blocks} blocks",
    )


def gen_transformer(layers: int = 3) -> Run:
    """A small transformer-like FP16 inference step: per layer LayerNorm, fused QKV MatMul+BiasAdd,
    FlashAttentionScore, output projection, LayerNorm, FFN up (MatMul+BiasAdd fusion), FastGelu, FFN down."""
    dt16 = "FLOAT16"
    tok, hid, ffn = "4096", "1024", "4096"
    ks: list[K] = [
        _k(
            "Default/embedding-Embedding/Gather-op0",
            "Gather",
            "Gather",
            "AI_VECTOR_CORE",
            8.0,
            (f"32000,{hid};32,128", f"32,128,{hid}"),
            dt16,
            "ND",
        )
    ]
    for layer in range(layers):
        s = f"Default/encoder-Encoder/layers-CellList/{layer}-Layer"
        ks += [
            _k(
                f"{s}/ln1-LayerNorm/LayerNorm-op0",
                "LayerNormV3",
                "LayerNorm",
                "AI_VECTOR_CORE",
                9.0,
                (f"{tok},{hid};{hid};{hid}", f"{tok},{hid}"),
                dt16,
                "ND",
            ),
            _k(
                f"{s}/attention-Attention/qkv-Dense/MatMul-op0",
                "MatMulV2_BiasAdd_fusion",
                "MatMulV2",
                "AI_CORE",
                60.0,
                (f"{tok},{hid};{hid},3072;3072", f"{tok},3072"),
                dt16,
                "ND",
                24,
            ),
            _k(
                f"{s}/attention-Attention/FlashAttentionScore-op0",
                "FlashAttentionScore",
                "FlashAttentionScore",
                "AI_CORE",
                85.0,
                ("32,16,128,64;32,16,128,64;32,16,128,64", "32,16,128,64"),
                dt16,
                "ND",
                24,
            ),
            _k(
                f"{s}/attention-Attention/proj-Dense/MatMul-op0",
                "MatMulV2_BiasAdd_fusion",
                "MatMulV2",
                "AI_CORE",
                22.0,
                (f"{tok},{hid};{hid},{hid};{hid}", f"{tok},{hid}"),
                dt16,
                "ND",
                24,
            ),
            _k(
                f"{s}/Add-op0",
                "Add",
                "Add",
                "AI_VECTOR_CORE",
                6.0,
                (f"{tok},{hid};{tok},{hid}", f"{tok},{hid}"),
                dt16,
                "ND",
            ),
            _k(
                f"{s}/ln2-LayerNorm/LayerNorm-op0",
                "LayerNormV3",
                "LayerNorm",
                "AI_VECTOR_CORE",
                9.0,
                (f"{tok},{hid};{hid};{hid}", f"{tok},{hid}"),
                dt16,
                "ND",
            ),
            _k(
                f"{s}/ffn-FeedForward/up-Dense/MatMul-op0",
                "MatMulV2_BiasAdd_fusion",
                "MatMulV2",
                "AI_CORE",
                80.0,
                (f"{tok},{hid};{hid},{ffn};{ffn}", f"{tok},{ffn}"),
                dt16,
                "ND",
                24,
            ),
            _k(
                f"{s}/ffn-FeedForward/act-FastGelu/FastGelu-op0",
                "FastGelu",
                "FastGelu",
                "AI_VECTOR_CORE",
                12.0,
                (f"{tok},{ffn}", f"{tok},{ffn}"),
                dt16,
                "ND",
            ),
            _k(
                f"{s}/ffn-FeedForward/down-Dense/MatMul-op0",
                "MatMulV2_BiasAdd_fusion",
                "MatMulV2",
                "AI_CORE",
                78.0,
                (f"{tok},{ffn};{ffn},{hid};{hid}", f"{tok},{hid}"),
                dt16,
                "ND",
                24,
            ),
            _k(
                f"{s}/Add-op1",
                "Add",
                "Add",
                "AI_VECTOR_CORE",
                6.0,
                (f"{tok},{hid};{tok},{hid}", f"{tok},{hid}"),
                dt16,
                "ND",
            ),
        ]
    ks.append(
        _k(
            "Default/head-Dense/MatMul-op0",
            "MatMulV2",
            "MatMulV2",
            "AI_CORE",
            30.0,
            (f"{tok},{hid};{hid},8000", f"{tok},8000"),
            dt16,
            "ND",
            24,
        )
    )
    return _generated(ks, f"generated transformer-like inference (FP16), {layers} layers")


def _generated(ks: list[K], origin: str) -> Run:
    return Run("ascend", [ks], [60.0], origin=origin)


# ------------------------------------------------------------------------------------- Ascend writer


def write_ascend(run: Run, out: Path, pid: int) -> Path:
    root = out / f"benchhost_{pid}_20261130120000000_ascend_ms"
    apo = root / APO
    apo.mkdir(parents=True, exist_ok=True)
    metrics = run.metric_columns
    header = ["Step ID", "Model ID", "Task ID", "Stream ID", "Name", "Type"]
    header += ["OP State"] if run.has_op_state else []
    header += ["Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)", *run.block_names]
    header += ["HF32 Eligible"] if run.has_hf32 else []
    header += [*KD_TENSORS, "Context ID", *metrics]
    rows, trace, step_rows = [], [], []
    spans = []
    t = run.t0_ns
    task = 1
    host_lead = 40_000
    for i, (step, gap_after) in enumerate(zip(run.steps, run.step_gap, strict=True)):
        step_start = t
        prev_end = t
        busy = comm = 0.0
        for k in step:
            start = max(step_start, prev_end + round(k.gap * 1000))
            dur_ns = max(round(k.dur * 1000), 20)
            wait = max(start - prev_end, 0)
            counters = _counters(k, metrics, dur_ns)
            row = [i + 1, MODEL_ID, task, k.stream, k.name, k.type]
            row += [k.op_state] if run.has_op_state else []
            row += [k.core, us(start) + "\t", us(dur_ns), us(wait), k.block, k.mix_block]
            row += ["NO"] if run.has_hf32 else []
            row += [k.in_shapes, k.in_dtypes, k.in_formats, k.out_shapes, k.out_dtypes, k.out_formats, "N/A"]
            rows.append(row + list(counters))
            trace.append(
                hardware_kernel(k.name.rsplit("/", 1)[-1], 800, us(start), us(dur_ns), k.core, task, 2)
            )
            task += 1
            if k.core == "HCCL":
                comm += dur_ns / 1000
            else:
                busy += dur_ns / 1000
            prev_end = max(prev_end, start + dur_ns)
        end = prev_end
        t = end + round(gap_after * 1000)
        wall = (t - step_start) / 1000
        step_rows.append(
            step_trace_row(i + 1, round(busy, 3), round(comm, 3), round(max(wall - busy - comm, 0), 3), 0)
        )
        spans.append((i + 1, step_start - host_lead, t - host_lead))
    write_csv(apo / "kernel_details.csv", header, rows, CRLF)
    write_csv(apo / "step_trace_time.csv", STEP_TRACE_HEADER, step_rows, CRLF)
    events = [
        process_name(1, "MindSpore"),
        process_name(800, "Ascend Hardware"),
        process_name(1000, "AI Core Freq"),
    ]
    for n, (step, a, b) in enumerate(spans):
        events.append(profiler_step(step, 1, us(a), us(b - a)))
        mhz = run.freq[n] if run.freq else FREQ_MHZ
        events.append(freq_counter(us(a), 1000, mhz))
    write_json(apo / "trace_view.json", events + trace)
    info = ms_profiler_info(
        rank=0,
        level="Level1",
        aic_metrics="PipeUtilization" if metrics == PIPE_COLUMNS else "ArithmeticUtilization",
        jit_level="O0",
        profile_memory=False,
        output_path="./data",
        active_steps=len(run.steps),
        collection_begin=str(run.t0_ns // 1000),
        analyse_cost=0.0,
    )
    info["profiler_parameters"].update(run.config)
    write_json(root / "profiler_info_0.json", info, indent=4)
    return root


def _counters(k: K, metrics: tuple[str, ...], dur_ns: int) -> tuple[str, ...]:
    if k.counters is not None:
        return k.counters
    if metrics != PIPE_COLUMNS:
        return tuple("N/A" if k.core in ("AI_CPU", "HCCL") else "0" for _ in metrics)
    if k.core in ("AI_CPU", "HCCL"):
        return tuple("N/A" for _ in metrics)
    busy = round(dur_ns * 0.96 / 1000, 3)
    cube = k.core == "AI_CORE"
    ratios = (0.7, 0.2, 0.4, 0.8, 0.05) if cube else (0.6, 0.3, 0.5, 0.4)
    return tuple(str(v) for v in pipe_utilization(busy, FREQ_MHZ, cube, ratios, 0.001, 70.0 if cube else 0))


# ------------------------------------------------------------------------------------------ injections

COMPUTE_TYPES = (
    "Conv2D",
    "MatMul",
    "MatMulV2",
    "MatMulV3",
    "BatchMatMul",
    "BatchMatMulV2",
    "FlashAttentionScore",
)
LOW = {"FLOAT16": "FLOAT", "DT_BF16": "DT_FLOAT", "BF16": "FLOAT", "DT_FLOAT16": "DT_FLOAT"}


def _pick(n: int, share: float, rng: np.random.Generator) -> list[int]:
    """A deterministic subset of round(share * n) positions (at least one when share > 0)."""
    if n == 0 or share <= 0:
        return []
    m = min(n, max(1, round(share * n)))
    return sorted(rng.choice(n, size=m, replace=False).tolist())


def _positions(run: Run, test: Callable[[K], bool]) -> list[int]:
    return [i for i, k in enumerate(run.steps[0]) if test(k)]


def _each_step(run: Run, edit: Callable[[list[K]], list[K]]) -> None:
    run.steps = [edit(step) for step in run.steps]


def vector_kernel(k: K, name: str, typ: str, dur: float, **changes: Any) -> K:
    """A kernel that a split or an injection adds after `k`: a vector-core kernel of its own type and
    duration, 2.5 us after the one before, with counters to be regenerated."""
    return replace(k, name=name, type=typ, core="AI_VECTOR_CORE", dur=dur, gap=2.5, counters=None, **changes)


def inj_precision(run: Run, share: float, rng: np.random.Generator) -> bool:
    """A share of the FP16/BF16 compute kernels run in FP32 (dtypes FLOAT/DT_FLOAT), 2x slower (FP32 on
    the Cube units runs at a fraction of FP16 throughput)."""
    pos = _positions(run, lambda k: k.type in COMPUTE_TYPES and k.in_dtypes.split(";")[0] in LOW)
    chosen = set(pos[i] for i in _pick(len(pos), share, rng))
    if not chosen:
        return False

    def fp32(dtypes: str) -> str:
        return ";".join(LOW.get(d, d) for d in dtypes.split(";"))

    for step in run.steps:
        for i in chosen:
            k = step[i]
            k.in_dtypes, k.out_dtypes, k.dur = fp32(k.in_dtypes), fp32(k.out_dtypes), k.dur * 2.0
            k.counters = None
    return True


def inj_fusion(run: Run, share: float, rng: np.random.Generator) -> bool:
    """A share of the fused kernels (Conv2D+BNInfer+ReLU or MatMul+BiasAdd UB fusions) run split: the plain
    kernel (80 % of the fused time) followed by separate BNInfer and ReLU (or BiasAdd) kernels."""
    pos = _positions(run, lambda k: "fusion" in k.name.rsplit("/", 1)[-1])
    chosen = set(pos[i] for i in _pick(len(pos), share, rng))
    if not chosen:
        return False

    def edit(step: list[K]) -> list[K]:
        new = []
        for i, k in enumerate(step):
            if i not in chosen:
                new.append(k)
                continue
            scope = k.name.rsplit("/", 2)[0]
            plain = replace(k, name=k.name.rsplit("/", 1)[0] + "/" + k.type, dur=k.dur * 0.8, counters=None)
            new.append(plain)
            if k.type == "Conv2D":
                base = scope.rsplit("/", 1)[0]
                act = k.out_shapes
                new.append(
                    vector_kernel(
                        k,
                        f"{base}/bn-BatchNorm2d/BatchNorm-op0/BNInfer",
                        "BNInfer",
                        k.dur * 0.3,
                        in_shapes=act,
                    )
                )
                new.append(
                    vector_kernel(k, f"{base}/relu-ReLU/ReLU-op0/Relu", "Relu", k.dur * 0.15, in_shapes=act)
                )
            else:
                new.append(
                    vector_kernel(
                        k, f"{scope}/BiasAdd-op0/BiasAdd", "BiasAdd", k.dur * 0.12, in_shapes=k.out_shapes
                    )
                )
        return new

    _each_step(run, edit)
    return True


def inj_train_mode(run: Run, share: float, rng: np.random.Generator) -> bool:
    """A share of the BN/Dropout sites stay in training mode: fused Conv+BN+ReLU kernels become Conv2D +
    BNTrainingReduce + BNTrainingUpdate + ReLU (batch statistics); in nets without BN, DropOutDoMask kernels
    follow a share of the MatMul/attention kernels."""
    convs = _positions(run, lambda k: k.type == "Conv2D" and "fusion" in k.name)
    if convs:
        chosen = set(convs[i] for i in _pick(len(convs), share, rng))

        def edit(step: list[K]) -> list[K]:
            new = []
            for i, k in enumerate(step):
                if i not in chosen:
                    new.append(k)
                    continue
                base = k.name.rsplit("/", 3)[0]
                new.append(
                    replace(k, name=k.name.rsplit("/", 1)[0] + "/Conv2D", dur=k.dur * 0.8, counters=None)
                )
                for typ, f in (("BNTrainingReduce", 0.25), ("BNTrainingUpdate", 0.3)):
                    new.append(vector_kernel(k, f"{base}/bn-BatchNorm2d/BatchNorm-op0/{typ}", typ, k.dur * f))
                new.append(vector_kernel(k, f"{base}/relu-ReLU/ReLU-op0/Relu", "Relu", k.dur * 0.12))
            return new

        _each_step(run, edit)
        return True
    sites = _positions(run, lambda k: k.type in COMPUTE_TYPES)
    chosen = set(sites[i] for i in _pick(len(sites), share, rng))
    if not chosen:
        return False

    def add_dropout(step: list[K]) -> list[K]:
        new = []
        for i, k in enumerate(step):
            new.append(k)
            if i in chosen:
                scope = k.name.rsplit("/", 2)[0]
                new.append(
                    replace(
                        k,
                        name=f"{scope}/dropout-Dropout/DropoutDoMask-op{i}/DropOutDoMask",
                        type="DropOutDoMask",
                        core="AI_VECTOR_CORE",
                        dur=max(2.0, k.dur * 0.15),
                        in_shapes=k.out_shapes,
                        gap=2.5,
                        counters=None,
                        op_state=k.op_state,
                    )
                )
        return new

    _each_step(run, add_dropout)
    return True


def inj_pynative(run: Run, gap_us: float, rng: np.random.Generator) -> bool:
    """PyNative: no cell scopes (`Default/<Type>-op<N>/<kernel>`, N counted over the net) and a host
    dispatch gap of `gap_us` before every kernel."""
    counts: dict[str, int] = {}
    names = []
    for k in run.steps[0]:
        n = counts.get(k.type, 0)
        counts[k.type] = n + 1
        names.append(f"Default/{k.type}-op{n}/{k.name.rsplit('/', 1)[-1]}")
    for step in run.steps:
        for k, name in zip(step, names, strict=True):
            k.name = name
            k.gap = max(k.gap, 0.0) + gap_us * math.exp(rng.normal(0, 0.2))
    return True


def inj_ai_cpu(run: Run, share: float, rng: np.random.Generator) -> bool:
    """A share of the vector-core kernels fall back to AI_CPU, 4x slower plus 20 µs."""
    pos = _positions(run, lambda k: k.core == "AI_VECTOR_CORE")
    chosen = set(pos[i] for i in _pick(len(pos), share, rng))
    for step in run.steps:
        for i in chosen:
            k = step[i]
            k.core, k.dur, k.block, k.counters = "AI_CPU", k.dur * 4 + 20.0, "1", None
    return bool(chosen)


def inj_transdata(run: Run, share: float, rng: np.random.Generator) -> bool:
    """TransData kernels (NCHW/ND -> NC1HWC0/FRACTAL_NZ) before and after a share of the compute kernels,
    each 10 % of the compute kernel's time plus 3 µs."""
    pos = _positions(run, lambda k: k.type in COMPUTE_TYPES)
    chosen = set(pos[i] for i in _pick(len(pos), share, rng))
    if not chosen:
        return False

    def edit(step: list[K]) -> list[K]:
        new = []
        for i, k in enumerate(step):
            if i in chosen:
                scope = k.name.rsplit("/", 2)[0]
                nz = "FRACTAL_NZ" if "MatMul" in k.type else "NC1HWC0"
                td = replace(
                    k,
                    type="TransData",
                    core="AI_VECTOR_CORE",
                    dur=k.dur * 0.1 + 3.0,
                    gap=2.5,
                    counters=None,
                    block="8",
                )
                new.append(
                    replace(
                        td,
                        name=f"{scope}/TransData-op{i}/TransData",
                        in_formats="ND",
                        out_formats=nz,
                        in_shapes=k.in_shapes.split(";")[0].rstrip('"') + '"',
                        in_dtypes=k.in_dtypes.split(";")[0],
                    )
                )
                new.append(k)
                new.append(
                    replace(
                        td,
                        name=f"{scope}/TransData-op{i + 1}/TransData",
                        in_formats=nz,
                        out_formats="ND",
                        in_shapes=k.out_shapes,
                        in_dtypes=k.out_dtypes,
                    )
                )
            else:
                new.append(k)
        return new

    _each_step(run, edit)
    return True


def inj_cast(run: Run, share: float, rng: np.random.Generator) -> bool:
    """A Cast pair (to FP16 before, back to FP32 after) around a share of all kernels, each 8 % of the
    kernel's time plus 2 µs."""
    pos = _positions(
        run, lambda k: k.core in ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIV", "MIX_AIC") and k.type != "Cast"
    )
    chosen = set(pos[i] for i in _pick(len(pos), share, rng))
    if not chosen:
        return False

    def edit(step: list[K]) -> list[K]:
        new = []
        for i, k in enumerate(step):
            if i in chosen:
                scope = k.name.rsplit("/", 2)[0]
                c = replace(
                    k,
                    type="Cast",
                    core="AI_VECTOR_CORE",
                    dur=k.dur * 0.08 + 2.0,
                    gap=2.5,
                    counters=None,
                    block="8",
                )
                shape = (
                    k.in_shapes.split(";")[0].rstrip('"') + '"'
                    if k.in_shapes.startswith('"')
                    else k.in_shapes
                )
                new.append(
                    replace(
                        c,
                        name=f"{scope}/Cast-op{2 * i}/Cast",
                        in_shapes=shape,
                        in_dtypes="FLOAT",
                        out_dtypes="FLOAT16",
                        out_shapes=shape,
                    )
                )
                new.append(k)
                new.append(
                    replace(
                        c,
                        name=f"{scope}/Cast-op{2 * i + 1}/Cast",
                        in_shapes=k.out_shapes,
                        in_dtypes="FLOAT16",
                        out_dtypes="FLOAT",
                    )
                )
            else:
                new.append(k)
        return new

    _each_step(run, edit)
    return True


def inj_recompile(run: Run, new_shapes: int, rng: np.random.Generator) -> bool:
    """`new_shapes` steps (after the first) get a new input size: every kernel's shapes change (a leading
    dimension scaled), its time x1.3, and a 180 ms compile gap opens before that step."""
    n = len(run.steps)
    chosen = sorted(rng.choice(np.arange(1, n), size=min(new_shapes, n - 1), replace=False).tolist())
    for j, s in enumerate(chosen):
        size = 40 + 8 * j
        for k in run.steps[s]:
            k.in_shapes = _rescale_shapes(k.in_shapes, size)
            k.out_shapes = _rescale_shapes(k.out_shapes, size)
            k.dur *= 1.3
            k.counters = None
        run.step_gap[s - 1] += 180_000.0
    return True


def _rescale_shapes(shapes: str, lead: int) -> str:
    return re.sub(r'(^"?|;)(\d+)', lambda m: f"{m.group(1)}{lead}", shapes)


DYNAMIC_LEADS = (32, 24, 16)  # the input sizes a dynamic-shape service sees in turn


def inj_dynamic_kernels(run: Run, share: float, rng: np.random.Generator) -> bool:
    """A share of the kernels are compiled for dynamic shapes (OP State `dynamic`), 15 % slower, and serve
    a variable input size (three leading dimensions in turn, no recompile). OP State alone is how a kernel
    was compiled, never evidence (issue 28): the changing shapes are what the diagnosis must see."""
    if not run.has_op_state:
        return False
    pos = _positions(run, lambda k: k.op_state != "dynamic")
    chosen = set(pos[i] for i in _pick(len(pos), share, rng))
    for s, step in enumerate(run.steps):
        lead = DYNAMIC_LEADS[s % len(DYNAMIC_LEADS)]
        for i in chosen:
            step[i].op_state, step[i].dur = "dynamic", step[i].dur * 1.15
            step[i].in_shapes = _rescale_shapes(step[i].in_shapes, lead)
            step[i].out_shapes = _rescale_shapes(step[i].out_shapes, lead)
    return bool(chosen)


def inj_warmup(run: Run, ratio: float, rng: np.random.Generator) -> bool:
    """The first recorded step is the warm-up: its kernels take `ratio` times as long (compilation and
    first-launch costs land in it)."""
    for k in run.steps[0]:
        k.dur *= ratio
        k.gap = k.gap * ratio if k.gap > 0 else k.gap
    return True


def inj_contention(run: Run, factor: float, rng: np.random.Generator) -> bool:
    """The whole run is slowed uniformly (throttling or a noisy neighbour): every kernel and gap x factor."""
    for k in run.launches():
        k.dur *= factor
        k.gap = k.gap * factor if k.gap > 0 else k.gap
    run.step_gap = [g * factor for g in run.step_gap]
    return True


def inj_jitter(run: Run, spec: tuple[float, float], rng: np.random.Generator) -> bool:
    """Bimodal jitter: a share of the steps (never the first) run `factor` times slower (kernels and gaps)."""
    share, factor = spec
    n = len(run.steps)
    chosen = [1 + i for i in _pick(n - 1, share, rng)]
    for s in chosen:
        for k in run.steps[s]:
            k.dur *= factor
            k.gap = k.gap * factor if k.gap > 0 else k.gap
        run.step_gap[s] *= factor
    return True


def inj_drift(run: Run, rise: float, rng: np.random.Generator) -> bool:
    """Latency drifts: step s runs (1 + rise * s / (n - 1)) times slower, kernels and gaps alike."""
    n = len(run.steps)
    for s, step in enumerate(run.steps):
        f = 1 + rise * s / max(n - 1, 1)
        for k in step:
            k.dur *= f
            k.gap = k.gap * f if k.gap > 0 else k.gap
        run.step_gap[s] *= f
    return True


def inj_profiler(run: Run, spec: tuple[dict[str, Any], float], rng: np.random.Generator) -> bool:
    """The target is profiled with other settings (profiler_info_0.json) that add host overhead to gaps."""
    params, overhead = spec
    run.config.update(params)
    for k in run.launches():
        k.gap = k.gap * (1 + overhead) + 2.0 * overhead if k.gap > 0 else k.gap
    run.step_gap = [g * (1 + overhead) for g in run.step_gap]
    return True


@dataclass(frozen=True)
class Cause:
    key: str
    rule: str
    inject: Callable[[Run, Any, np.random.Generator], bool]
    strengths: dict[str, Any]
    doc: str


CAUSES = (
    Cause(
        "fp32",
        "precision-mismatch",
        inj_precision,
        {"weak": 0.2, "moderate": 0.6, "strong": 1.0},
        "share of FP16/BF16 compute kernels switched to FP32 (x2 time)",
    ),
    Cause(
        "fusion-off",
        "fusion-missing",
        inj_fusion,
        {"weak": 0.2, "moderate": 0.5, "strong": 1.0},
        "share of fused Conv+BN+ReLU / MatMul+BiasAdd kernels split into separate kernels",
    ),
    Cause(
        "train-mode",
        "train-mode-at-inference",
        inj_train_mode,
        {"weak": 0.2, "moderate": 0.5, "strong": 1.0},
        "share of BN sites with BNTrainingReduce/Update (or compute kernels followed by DropOutDoMask)",
    ),
    Cause(
        "pynative",
        "execution-mode-mismatch",
        inj_pynative,
        {"weak": 5.0, "moderate": 20.0, "strong": 80.0},
        "scope-less PyNative names plus a host gap of 5 / 20 / 80 µs before every kernel",
    ),
    Cause(
        "ai-cpu",
        "ai-cpu-fallback",
        inj_ai_cpu,
        {"weak": 0.02, "moderate": 0.1, "strong": 0.3},
        "share of vector-core kernels moved to AI_CPU (x4 + 20 µs)",
    ),
    Cause(
        "transdata",
        "format-conversion-overhead",
        inj_transdata,
        {"weak": 0.1, "moderate": 0.5, "strong": 1.0},
        "share of compute kernels wrapped in two TransData kernels (10 % of their time + 3 µs each)",
    ),
    Cause(
        "casts",
        "cast-overhead",
        inj_cast,
        {"weak": 0.05, "moderate": 0.3, "strong": 0.8},
        "share of kernels wrapped in a Cast pair (8 % of their time + 2 µs each)",
    ),
    Cause(
        "recompile",
        "dynamic-shape-recompile",
        inj_recompile,
        {"weak": 1, "moderate": 2, "strong": 4},
        "number of steps with a new input shape and a 180 ms compile gap before them",
    ),
    Cause(
        "dynamic-kernels",
        "dynamic-shape-kernels",
        inj_dynamic_kernels,
        {"weak": 0.2, "moderate": 0.6, "strong": 1.0},
        "share of kernels with OP State dynamic (x1.15 time) serving 3 input sizes in turn",
    ),
    Cause(
        "no-warmup",
        "missing-warmup",
        inj_warmup,
        {"weak": 1.3, "moderate": 3.0, "strong": 10.0},
        "first step's kernels x1.3 / x3 / x10",
    ),
    Cause(
        "contention",
        "resource-contention",
        inj_contention,
        {"weak": 1.1, "moderate": 1.5, "strong": 2.5},
        "every kernel and gap x1.1 / x1.5 / x2.5",
    ),
    Cause(
        "jitter",
        "latency-jitter",
        inj_jitter,
        {"weak": (0.2, 1.2), "moderate": (0.3, 1.8), "strong": (0.4, 3.0)},
        "(share of steps, slowdown) = (20 %, x1.2) / (30 %, x1.8) / (40 %, x3)",
    ),
    Cause(
        "drift",
        "latency-drift",
        inj_drift,
        {"weak": 0.1, "moderate": 0.5, "strong": 1.5},
        "linear rise of step time to +10 % / +50 % / +150 % by the last step",
    ),
    Cause(
        "profiler-config",
        "profiler-config-mismatch",
        inj_profiler,
        {
            "weak": ({"with_stack": True}, 0.0),
            "moderate": ({"with_stack": True, "profiler_level": "Level2"}, 0.1),
            "strong": (
                {
                    "with_stack": True,
                    "profiler_level": "Level2",
                    "profile_memory": True,
                    "record_shapes": True,
                },
                0.3,
            ),
        },
        "differing profiler_info fields: with_stack / + Level2 (+10 % host gaps) / "
        "+ profile_memory, record_shapes (+30 %)",
    ),
)
CAUSE = {c.key: c for c in CAUSES}
# Causes injected into copies of real CPU files (the others need device columns CPU output lacks, or are
# covered by the real CPU pairs).
CPU_CAUSES = ("casts", "no-warmup", "contention", "jitter", "drift")


def inj_cpu_casts(run: Run, count: float, rng: np.random.Generator, amp: Run) -> bool:
    """CPU: `count` Cast launches per step inserted before ops in order, with durations drawn from the real
    Cast launches of infer_amp_o2_graph."""
    durs = [k.dur for k in amp.launches() if k.type == "Cast"]
    step0 = run.steps[0]
    n = int(count)
    targets = [i % len(step0) for i in range(n)]

    def edit(step: list[K]) -> list[K]:
        new = []
        for i, k in enumerate(step):
            for j in [j for j, t in enumerate(targets) if t == i]:
                scope = k.name.rsplit("/", 1)[0]
                shape = k.frame.split(";", 3)[3].split(";")[0] if k.frame and k.frame.count(";") >= 3 else ""
                new.append(
                    K(
                        f"{scope}/Cast-op{j}",
                        "Cast",
                        "CPU",
                        float(rng.choice(durs)),
                        3.0,
                        frame=f"Cast;Cast-op{j};{run.frame_number};{shape};",
                    )
                )
            new.append(k)
        return new

    _each_step(run, edit)
    return True


CPU_STRENGTH = {
    "casts": {"weak": 2, "moderate": 12, "strong": 26},  # 26 = the real AMP O2 count per step
    "no-warmup": CAUSE["no-warmup"].strengths,
    "contention": CAUSE["contention"].strengths,
    "jitter": CAUSE["jitter"].strengths,
    "drift": CAUSE["drift"].strengths,
}

# ------------------------------------------------------------------------------------------ the cases


@dataclass
class Case:
    id: str
    workload: str
    cause: str  # cause key or "healthy"
    strength: str  # weak / moderate / strong / real / healthy
    expected: str | None  # rule id
    build: Callable[[Path], tuple[Path, Path]]
    origin: str
    result: dict[str, Any] = field(default_factory=dict)


def _fixture(name: str) -> Callable[[Path], Path]:
    return lambda _: CPU_FIXTURES / name


# Real pairs whose cause is not one of the injected ones. The contention fixture starts its load at
# step 15 of 30 (calm 7.1 ms, loaded 19.0 ms per step): a slowdown that changes during the run, which
# the rule vocabulary names latency-drift; resource-contention is the whole run slowed by one factor
# (the injected "contention" cases), so the fixture is scored against latency-drift, as the unit
# test of the real pairs (tests/test_ranking_cpu.py) has always expected.
REAL_RULE = {"load-mid-run": "latency-drift"}


def real_pair(cid: str, base: str, target: str, cause: str, strength: str, expected: str | None) -> Case:
    return Case(
        cid,
        "cpu-real",
        cause,
        strength,
        expected,
        lambda d: (CPU_FIXTURES / base, CPU_FIXTURES / target),
        f"tests/fixtures/cpu/{base} vs {target} (real)",
    )


class Builder:
    """Builds every case lazily; folders go to `root`."""

    def __init__(self, root: Path, quick: bool) -> None:
        self.root = root
        self.quick = quick
        self.noise = measure_noise()
        self.steps = 10 if quick else 16
        self.counter = 0
        self._bases: dict[str, Run] = {}

    def base(self, wname: str) -> Run:
        if wname not in self._bases:
            self._bases[wname] = self.ascend_workloads()[wname]()
        return clone(self._bases[wname])

    def folder(self, label: str) -> Path:
        self.counter += 1
        path = self.root / f"{self.counter:03d}_{label}"
        path.mkdir(parents=True)
        return path

    def write(self, run: Run, label: str) -> Path:
        out = self.folder(label)
        if run.kind == "cpu":
            return write_cpu(run, out)
        return write_ascend(run, out, 7000 + self.counter)

    # ---- workloads
    def ascend_workloads(self) -> dict[str, Callable[[], Run]]:
        w = {
            "npu-bf16-llm": lambda: load_sample(
                "kernel_details_2025_bf16_llm/kernel_details.csv", "bf16_llm"
            ),
            "gen-resnet": lambda: gen_resnet(train=False),
            "gen-transformer": lambda: gen_transformer(),
        }
        if not self.quick:
            w["npu-2023-training"] = lambda: load_sample(
                "kernel_details_2023_training/kernel_details.csv", "train2023"
            )
        return w

    def noisy(self, base: Run, seed: int, host_gap: float | None = None) -> Run:
        run = repeat_steps(base, self.steps, host_gap if host_gap is not None else base.step_gap[0])
        return self.noise.apply(run, np.random.default_rng(seed))

    def cases(self) -> list[Case]:
        cases: list[Case] = []
        # ---- healthy: real CPU
        for a, b in (
            ("infer_fp32_graph", "infer_fp32_graph_repeat"),
            ("infer_fp32_graph", "infer_fp32_graph_repeat2"),
            ("infer_fp32_graph_repeat", "infer_fp32_graph_repeat2"),
            ("train_fp32_graph", "infer_fp32_graph"),
            ("train_amp_o2_graph", "infer_amp_o2_graph"),
            ("infer_fp32_graph", "infer_fp32_graph_batch32"),
            ("infer_fp32_graph", "infer_fp32_graph_mstx"),
        ):
            cases.append(real_pair(f"healthy:{a}~{b}", a, b, "healthy", "healthy", None))
        calm = lambda d: (  # noqa: E731
            CPU_FIXTURES / "infer_fp32_graph",
            self.write(cpu_steps(load_cpu("infer_fp32_graph_contention"), 0, 15), "calm15"),
        )
        cases.append(
            Case(
                "healthy:infer_fp32_graph~contention[0:15]",
                "cpu-real",
                "healthy",
                "healthy",
                None,
                calm,
                "infer_fp32_graph vs the calm first 15 real steps of infer_fp32_graph_contention",
            )
        )
        # ---- healthy: Ascend (two noisy copies of each workload) and generated train vs infer
        for wname in self.ascend_workloads():
            cases.append(self._ascend_case(wname, "healthy", "healthy", None))
        resnet_train = lambda d: (  # noqa: E731
            self.write(self.noisy(gen_resnet(train=True), SEED + 1), "resnet_train"),
            self.write(self.noisy(gen_resnet(train=False), SEED + 2), "resnet_infer"),
        )
        cases.append(
            Case(
                "healthy:gen-resnet train~infer",
                "gen-resnet",
                "healthy",
                "healthy",
                None,
                resnet_train,
                "generated ResNet-like FP16 training vs FP16 fused inference",
            )
        )
        # ---- real CPU pairs embodying a cause
        for cid, a, b, cause in (
            ("real:pynative", "infer_fp32_graph", "infer_fp32_pynative", "pynative"),
            ("real:train-pynative", "train_fp32_graph", "train_fp32_pynative", "pynative"),
            ("real:train-mode", "infer_fp32_graph", "infer_trainmode_graph", "train-mode"),
            ("real:no-warmup", "infer_fp32_graph", "infer_fp32_graph_nowarmup", "no-warmup"),
            ("real:contention", "infer_fp32_graph", "infer_fp32_graph_contention", "load-mid-run"),
            ("real:dynamic-shapes", "infer_fp32_graph", "infer_fp32_graph_dynamic_shapes", "recompile"),
            ("real:amp-train~fp32-infer", "train_amp_o2_graph", "infer_fp32_graph", "fp32"),
            ("real:amp-infer~fp32-infer", "infer_amp_o2_graph", "infer_fp32_graph", "fp32"),
        ):
            cases.append(real_pair(cid, a, b, cause, "real", REAL_RULE.get(cause) or CAUSE[cause].rule))
        # ---- injections into copies of real CPU files
        strengths = ("moderate", "strong") if self.quick else STRENGTHS
        for cause in CPU_CAUSES:
            for s in strengths:
                cases.append(self._cpu_case(cause, s))
        # ---- injections into Ascend workloads
        for wname in self.ascend_workloads():
            for cause in CAUSES:
                for s in strengths:
                    cases.append(self._ascend_case(wname, cause.key, s, cause.rule))
        return cases

    def _cpu_case(self, cause: str, strength: str) -> Case:
        value = CPU_STRENGTH[cause][strength]
        long_run = cause in ("jitter", "drift")
        target_name = "infer_fp32_graph_contention" if long_run else "infer_fp32_graph_repeat"

        def build(d: Path) -> tuple[Path, Path]:
            run = load_cpu(target_name)
            if long_run:
                run = cpu_steps(run, 0, 15)
            rng = np.random.default_rng(SEED + hash_key(cause, strength))
            if cause == "casts":
                inj_cpu_casts(run, value, rng, load_cpu("infer_amp_o2_graph"))
            else:
                CAUSE[cause].inject(run, value, rng)
            return CPU_FIXTURES / "infer_fp32_graph", self.write(run, f"cpu_{cause}_{strength}")

        calm = " (calm steps 0-14)" if long_run else ""
        origin = f"infer_fp32_graph vs a copy of {target_name}{calm} with {cause} injected"
        return Case(
            f"cpu-real:{cause}:{strength}", "cpu-real", cause, strength, CAUSE[cause].rule, build, origin
        )

    def _ascend_case(self, wname: str, cause: str, strength: str, expected: str | None) -> Case:
        def build(d: Path) -> tuple[Path, Path]:
            if cause in NOT_APPLICABLE.get(wname, ()):
                raise NotApplicable(NOT_APPLICABLE[wname][cause])
            base = self.base(wname)
            baseline = self.noisy(base, SEED + hash_key(wname, "baseline"))
            target = self.noisy(base, SEED + hash_key(wname, cause, strength, "target"))
            if cause != "healthy":
                rng = np.random.default_rng(SEED + hash_key(wname, cause, strength))
                if not CAUSE[cause].inject(target, CAUSE[cause].strengths[strength], rng):
                    raise NotApplicable(f"{cause} has nothing to act on in {wname}")
            return self.write(baseline, f"{wname}_base"), self.write(target, f"{wname}_{cause}_{strength}")

        return Case(
            f"{wname}:{cause}:{strength}", wname, cause, strength, expected, build, self.base(wname).origin
        )


class NotApplicable(Exception):
    pass


# Causes a workload cannot carry (the injectors also refuse when there is nothing to act on, e.g. no fused
# kernels in the real samples).
NOT_APPLICABLE = {
    "npu-2023-training": {
        "train-mode": "a training step (ApplyAdamW, DropOutDoMask): train mode is expected"
    },
    "npu-bf16-llm": {
        "train-mode": "a training step (FlashAttentionScoreGrad): train mode is expected",
        "dynamic-kernels": "every kernel of the real sample already has OP State dynamic",
    },
}


def hash_key(*parts: str) -> int:
    """A stable small integer for seeding (Python's hash() is salted per process)."""
    h = 0
    for ch in "|".join(parts):
        h = (h * 131 + ord(ch)) % 1_000_003
    return h


# ------------------------------------------------------------------------------------------ running


def diagnose_case(case: Case, root: Path) -> None:
    from doctor.facade import diagnose

    try:
        baseline, target = case.build(root)
    except NotApplicable as exc:
        case.result = {"skipped": str(exc)}
        return
    began = time.perf_counter()
    try:
        data = diagnose(baseline, target, isolate=False).data
    except Exception as exc:  # the harness reports a crash as a miss, it does not stop
        case.result = {"error": f"{type(exc).__name__}: {exc}"[:300], "causes": [], "status": "error"}
        return
    causes = [
        {k: c.get(k) for k in ("id", "severity", "confidence", "significant", "recoverable_ms_per_step")}
        for c in data.get("causes", [])
    ]
    case.result = {
        "status": data["verdict"]["status"],
        "top_cause": data["verdict"].get("top_cause"),
        "causes": causes,
        "seconds": round(time.perf_counter() - began, 3),
    }


def _also(result: dict[str, Any], first: str) -> str:
    """The other significant causes of a case (what "precision (listed)" counts), or "–"."""
    others = [c["id"] for c in result.get("causes", []) if c.get("significant") and c["id"] != first]
    return ", ".join(others) or "–"


def first_significant(causes: list[dict]) -> str | None:
    return next((c["id"] for c in causes if c.get("significant")), None)


def score(cases: list[Case]) -> dict[str, Any]:
    done = [c for c in cases if "skipped" not in c.result]
    healthy = [c for c in done if c.cause == "healthy"]
    injected = [c for c in done if c.cause != "healthy"]
    for c in injected:
        causes = c.result.get("causes", [])
        ids = [x["id"] for x in causes]
        c.result["top1"] = first_significant(causes) == c.expected
        c.result["top3"] = c.expected in ids[:3]
        c.result["rank"] = ids.index(c.expected) + 1 if c.expected in ids else None
    goal = [c for c in injected if c.strength in GOAL_STRENGTHS]

    def pct(rows: list[Case], key: str) -> float:
        return 100.0 * sum(bool(c.result.get(key)) for c in rows) / len(rows) if rows else float("nan")

    rules = sorted({c.expected for c in injected if c.expected})
    per_rule = []
    for rule in rules:
        row: dict[str, Any] = {"rule": rule}
        for label, subset in (
            ("goal", goal + healthy),
            ("weak", [c for c in injected if c.strength == "weak"]),
        ):
            exp = [c for c in subset if c.expected == rule]
            pred = [c for c in subset if first_significant(c.result.get("causes", [])) == rule]
            listed = [
                c
                for c in subset
                if rule in [x["id"] for x in c.result.get("causes", []) if x.get("significant")]
            ]
            tp = [c for c in pred if c.expected == rule]
            tpl = [c for c in listed if c.expected == rule]
            row[label] = {
                "n": len(exp),
                "recall": len(tp) / len(exp) if exp else None,
                "precision": len(tp) / len(pred) if pred else None,
                "precision_listed": len(tpl) / len(listed) if listed else None,
                "top1": pct(exp, "top1") if exp else None,
                "top3": pct(exp, "top3") if exp else None,
            }
        per_rule.append(row)
    # Rules that fired as first significant cause without ever being expected (false alarms only).
    others = sorted(
        {first_significant(c.result.get("causes", [])) for c in goal + healthy} - set(rules) - {None}
    )
    for rule in others:
        pred = [c for c in goal + healthy if first_significant(c.result.get("causes", [])) == rule]
        per_rule.append(
            {
                "rule": rule,
                "goal": {
                    "n": 0,
                    "recall": None,
                    "precision": 0.0,
                    "precision_listed": 0.0,
                    "top1": None,
                    "top3": None,
                    "false_top1": len(pred),
                },
                "weak": None,
            }
        )
    return {
        "healthy": {
            "pairs": len(healthy),
            "problem": sum(c.result.get("status") == "problem" for c in healthy),
            "unexplained": sum(c.result.get("status") == UNEXPLAINED for c in healthy),
            "significant": sum(
                sum(bool(x.get("significant")) for x in c.result.get("causes", [])) for c in healthy
            ),
            "high_critical": sum(
                sum(x.get("severity") in ("high", "critical") for x in c.result.get("causes", []))
                for c in healthy
            ),
        },
        "injected": {
            "cases": len(goal),
            "top1": pct(goal, "top1"),
            "top3": pct(goal, "top3"),
            # Cases whose cause was missed but whose slowdown was still called unexplained, not "nothing".
            "unexplained": sum(c.result.get("status") == UNEXPLAINED for c in goal),
            "missed_nothing": sum(
                c.result.get("status") == "nothing-found" and not c.result.get("top1") for c in goal
            ),
            "weak_cases": len([c for c in injected if c.strength == "weak"]),
            "weak_top1": pct([c for c in injected if c.strength == "weak"], "top1"),
            "weak_top3": pct([c for c in injected if c.strength == "weak"], "top3"),
        },
        "per_rule": per_rule,
        "skipped": [(c.id, c.result["skipped"]) for c in cases if "skipped" in c.result],
    }


# ------------------------------------------------------------------------------------------ output


def _f(value: float | None, pct: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.0f}%" if pct else f"{value:.2f}"


def tables(cases: list[Case], s: dict[str, Any]) -> list[str]:
    out = ["### Per rule (moderate, strong and real cases; healthy pairs count as expecting nothing)", ""]
    out.append(
        "| rule | cases | recall (top-1) | precision (top-1) | precision (listed significant) "
        "| top-1 | top-3 "
        "| weak cases | weak top-1 | weak top-3 |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for row in s["per_rule"]:
        g, w = row["goal"], row.get("weak") or {}
        note = f" (false top-1 ×{g['false_top1']})" if g.get("false_top1") else ""
        out.append(
            f"| {row['rule']}{note} | {g['n']} | {_f(g['recall'])} | {_f(g['precision'])} | "
            f"{_f(g['precision_listed'])} | {_f(g['top1'], True)} | {_f(g['top3'], True)} | "
            f"{w.get('n', '–')} | "
            f"{_f(w.get('top1'), True)} | {_f(w.get('top3'), True)} |"
        )
    out += [
        "",
        "### Healthy pairs",
        "",
        "| pair | workload | verdict | significant causes | high/critical causes |",
        "|---|---|---|---|---|",
    ]
    for c in cases:
        if c.cause != "healthy" or "skipped" in c.result:
            continue
        causes = c.result.get("causes", [])
        sig = ", ".join(x["id"] for x in causes if x.get("significant")) or "–"
        hc = (
            ", ".join(
                f"{x['id']} ({x['severity']})" for x in causes if x.get("severity") in ("high", "critical")
            )
            or "–"
        )
        out.append(f"| {c.id} | {c.workload} | {c.result.get('status')} | {sig} | {hc} |")
    h = s["healthy"]
    out += [
        "",
        f"Healthy: {h['pairs']} pairs, {h['problem']} problem verdicts, {h['unexplained']} unexplained "
        f"slowdowns, {h['significant']} significant causes "
        f"listed, {h['high_critical']} high/critical causes listed.",
        "",
    ]
    out += [
        "### Injected cases",
        "",
        "| case | strength | expected | first significant | rank of expected | top-1 | top-3 "
        "| also significant |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in cases:
        if c.cause == "healthy" or "skipped" in c.result:
            continue
        r = c.result
        got = first_significant(r.get("causes", [])) or (
            "error: " + r["error"][:60] if r.get("error") else "–"
        )
        out.append(
            f"| {c.id} | {c.strength} | {c.expected} | {got} | {r.get('rank') or '–'} | "
            f"{'✓' if r.get('top1') else '✗'} | {'✓' if r.get('top3') else '✗'} | {_also(r, got)} |"
        )
    if s["skipped"]:
        out += [
            "",
            "Not applicable (nothing to act on, not scored): " + "; ".join(f"{i}" for i, _ in s["skipped"]),
            "",
        ]
    return out


def final_line(s: dict[str, Any]) -> str:
    h, i = s["healthy"], s["injected"]
    return (
        f"healthy: {h['pairs']} pairs, {h['problem']} problem verdicts, {h['unexplained']} unexplained "
        f"slowdowns; injected: {i['cases']} cases, top-1 {i['top1']:.0f}%, top-3 {i['top3']:.0f}%, "
        f"{i['unexplained']} unexplained slowdowns, {i['missed_nothing']} missed as nothing significant"
    )


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def markdown(
    cases: list[Case], s: dict[str, Any], noise: Noise, quick: bool, seconds: float, workloads: dict[str, str]
) -> str:
    dirty = "dirty" if _git("status", "--porcelain", "--untracked-files=no") else "clean"
    lines = [
        "# Diagnosis benchmark",
        "",
        "Written by `make bench-diagnosis` (bench/diagnosis.py"
        + (" --quick" if quick else "")
        + "). Known causes are injected into real and generated profiles at three strengths; healthy pairs "
        "must stay quiet. Nothing here is edited by hand.",
        "",
        "| item | value |",
        "|---|---|",
        f"| date (UTC) | {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} |",
        f"| mode | {'quick' if quick else 'full'} |",
        f"| code | {_git('rev-parse', '--short', 'HEAD')}, {dirty} |",
        f"| Python | {platform.python_version()} |",
        f"| runtime | {seconds:.0f} s |",
        f"| seed | {SEED} |",
        f"| noise (robust sigma of log duration, measured on {noise.source}) | launch {noise.launch}, "
        f"operator between runs {noise.op}, step {noise.step}, run {noise.run} |",
        "",
        "## Result",
        "",
        "```",
        final_line(s),
        "```",
        "",
        "Goals: no problem and no unexplained-slowdown verdict on ≥ 10 healthy pairs; ≥ 30 injected "
        "moderate+ cases with top-1 ≥ 90 %, "
        "top-3 = 100 %, per-rule precision ≥ 0.95. top-1 = the expected rule is the first significant cause; "
        "top-3 = it is among the first three causes listed. "
        f"Weak cases ({s['injected']['weak_cases']}): top-1 {_f(s['injected']['weak_top1'], True)}, "
        f"top-3 {_f(s['injected']['weak_top3'], True)} (reported, no goal). "
        "An injected case whose cause is missed ends either as an unexplained slowdown (the slowdown is "
        "still stated, with where the time went) or as nothing significant; both are counted above.",
        "",
        "## Inputs",
        "",
        "| workload | origin |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in workloads.items()],
        "",
        "## Causes and strengths",
        "",
        "| cause | rule | weak / moderate / strong |",
        "|---|---|---|",
        *[f"| {c.key} | {c.rule} | {c.doc} |" for c in CAUSES],
        "| casts (CPU) | cast-overhead | 2 / 12 / 26 Cast launches per step with real AMP Cast durations |",
        "",
        "Real CPU pairs (strength `real`) count with moderate and strong. CPU copies get casts, no-warm-up, "
        "contention, jitter and drift; the other causes need device columns (dtypes, cores, formats, "
        "OP State, "
        "profiler_info) that CPU output does not have, and are covered there by the real pairs.",
        "",
        "## Tables",
        "",
        *tables(cases, s),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer workloads and strengths (a few minutes)")
    parser.add_argument(
        "--out", type=Path, help="keep the generated folders here (e.g. bench/data/diagnosis)"
    )
    parser.add_argument(
        "--report", type=Path, default=REPORT, help="markdown output (default bench/DIAGNOSIS.md)"
    )
    parser.add_argument("--only", help="run only cases whose id contains this text")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    tmp = None
    if args.out:
        root = args.out
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="perf-doctor-diag-")
        root = Path(tmp.name)
    try:
        builder = Builder(root, args.quick)
        cases = builder.cases()
        if args.only:
            cases = [c for c in cases if args.only in c.id]
        print(
            f"noise ({builder.noise.source}): launch {builder.noise.launch}, op {builder.noise.op}, "
            f"step {builder.noise.step}, run {builder.noise.run}"
        )
        print(f"{len(cases)} cases")
        for n, case in enumerate(cases, 1):
            diagnose_case(case, root)
            r = case.result
            mark = (r.get("skipped") and "n/a") or (first_significant(r.get("causes", [])) or r.get("status"))
            print(f"[{n:3d}/{len(cases)}] {case.id:<55} -> {mark}", flush=True)
        s = score(cases)
        seconds = time.perf_counter() - began
        workloads = {"cpu-real": "real MindSpore 2.10 CPU runs in tests/fixtures/cpu (see its README.md)"}
        for wname in builder.ascend_workloads():
            workloads[wname] = builder.base(wname).origin
        print()
        print("\n".join(tables(cases, s)))
        if not args.only:
            args.report.write_text(
                markdown(cases, s, builder.noise, args.quick, seconds, workloads), encoding="utf-8"
            )
            print(f"wrote {args.report}")
        print(f"runtime {seconds:.0f} s")
        print(final_line(s))
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())

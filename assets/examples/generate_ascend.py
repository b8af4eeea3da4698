"""Build the bundled Ascend example `ascend_derived_fp32_split` from a real NPU step.

Origin: the forward pass of the one real Ascend training step in /work/shared/samples/ascend
(`torch_npu_cnn_train_step/trace_view.json`, torch_npu on an Ascend NPU, 2024-01-02, copied from
Ascend/msprof-analyze at 8399c1cd; see that folder's README). Its 60 forward kernels (from the first
`trans_Cast_0` to `LogSoftmaxV2`: two Conv2D-ReLU-MaxPool blocks, three Addmm-ReLU layers) keep their real
names, their order and their measured durations (the gaps between them are capped at GAP_CAP_US).

Both sides are written as MindSpore 2.10 Ascend runs (`<host>_<pid>_<ts>_ascend_ms`, layout of
shared/reference/profiler-formats.md §2: profiler_info_0.json, ASCEND_PROFILER_OUTPUT/kernel_details.csv
with the Level1/Level2 column order and PipeUtilization counters, step_trace_time.csv), with each kernel
launched by a MindSpore framework op (`<full_op_name>/<kernel>`, §2.3). What is derived, not measured:

* baseline (the fast run): the real kernels in FP16, each Conv2D fused with an (injected) eval-mode
  BatchNorm and its ReLU into one `Conv2D_BNInfer_Relu_fusion` kernel of the real Conv2D's duration;
  Level1.
* target, the three injected culprits:


  2. Conv+BN split: each fused kernel becomes the real `Conv2D<n>` kernel, a separate `BNInfer` kernel
     (BN_OF_RELU times the real ReLU kernel of that block, FP32) and the real ReLU kernel;
  3. a different profiler level in profiler_info_0.json: Level2 against the baseline's Level1.
* five steps, the real step repeated with the duration factors of STEP_JITTER; tensor shapes are those
  of LeNet-5 on 3x32x32 images at batch 64 (the sample records none); the accelerator core follows the
  kernel type (the sample writes `Other`); the PipeUtilization counters are fixed ratios per core.

Deterministic: `.venv/bin/python assets/examples/generate_ascend.py` rewrites the folders byte for byte
(tests/test_examples_ascend.py checks the committed copy).
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
if str(FIXTURES) not in sys.path:  # the shared schema writers of the Ascend fixtures
    sys.path.insert(0, str(FIXTURES))

from ascend_schema import (  # noqa: E402
    APO,
    CRLF,
    KERNEL_DETAILS_LEVEL1,
    MODEL_ID,
    PIPE_COLUMNS,
    STEP_TRACE_HEADER,
    ms_profiler_info,
    ns,
    pipe_utilization,
    step_trace_row,
    tensor_cells,
    us,
    write_csv,
    write_json,
)

BASELINE_ROOT = "npu_4021_20261201090000123_ascend_ms"  # <host>_<pid>_<UTC ts>_ascend_ms (§1)
TARGET_ROOT = "npu_4388_20261201093000456_ascend_ms"
T0_US = 1.0e15  # the first step's start on the device clock (µs)
HARDWARE = "Ascend Hardware"  # the trace process of device kernels
SAMPLE = ROOT.parent / "shared" / "samples" / "ascend" / "torch_npu_cnn_train_step" / "trace_view.json"
NAME = "ascend_derived_fp32_split"
OUT = HERE / NAME
FIRST_KERNEL = "trans_Cast_0"  # the forward pass starts here (the ZerosLike kernels before it zero grads)
LAST_TYPE = "LogSoftmaxV2"  # ... and ends with the log-softmax (NLLLoss and the backward follow)
FP32_CUBE = 4.0  # assumed: the cube units compute FP16 natively, FP32 at about a quarter of the rate
FP32_VECTOR = 2.0  # assumed: vector kernels are bandwidth-bound and move twice the bytes
CUBE_FIXED_US = 2.0  # assumed launch and setup part of a kernel that does not scale with the dtype
VECTOR_FIXED_US = 1.0
BN_OF_RELU = 1.5
STEP_JITTER = (1.0, 1.015, 0.99, 1.005, 0.995)
# Assumed: in a MindSpore graph-mode run the host launches ahead of the device, so the device waits
# little between kernels; the gaps of the eager torch_npu trace (Python dispatch, tens of µs) are
# capped at this.
GAP_CAP_US = 1.0
STEP_GAP_US = 400.0  # host time between two steps' kernels
FREQ_MHZ = 1800
CUBE_TYPES = ("Conv2D", "MatMulV2")
HEADER = (*KERNEL_DETAILS_LEVEL1, *PIPE_COLUMNS)  # MindSpore 2.10 Level1 with PipeUtilization
# LeNet-5 tensors at batch 64 (assumed: the sample records no shapes), by framework op.
SHAPES = {
    "conv1": ("64,1,32,32,16;6,1,5,5,16", "64,1,28,28,16"),
    "relu1": ("64,1,28,28,16", "64,1,28,28,16"),
    "pool1": ("64,1,28,28,16", "64,1,14,14,16"),
    "conv2": ("64,1,14,14,16;16,1,5,5,16", "64,1,10,10,16"),
    "relu2": ("64,1,10,10,16", "64,1,10,10,16"),
    "pool2": ("64,1,10,10,16", "64,1,5,5,16"),
    "fc1": ("64,400;120,400", "64,120"),
    "relu_fc1": ("64,120", "64,120"),
    "fc2": ("64,120;84,120", "64,84"),
    "relu_fc2": ("64,84", "64,84"),
    "fc3": ("64,84;10,84", "64,10"),
    "log_softmax": ("64,10", "64,10"),
}
SCOPES = {  # the cell of each op kind; a kernel's framework op is `<cell>/<OpType>-op<k>`
    "conv": ("Default/conv{n}-Conv2d", "conv{n}"),
    "relu": ("Default/relu{n}-ReLU", "relu{n}"),
    "pool": ("Default/pool{n}-MaxPool2d", "pool{n}"),
    "fc": ("Default/fc{n}-Dense", "fc{n}"),
    "relu_fc": ("Default/relu_fc{n}-ReLU", "relu_fc{n}"),
    "log_softmax": ("Default", "log_softmax"),
}
OP_TYPES = {
    "MatMulV2": "MatMul",
    "Relu": "ReLU",
    "MaxPoolWithArgmaxV1": "MaxPoolWithArgmax",
    "LogSoftmaxV2": "LogSoftmax",
}


@dataclass(frozen=True)
class Kernel:
    """One forward kernel of the real step: its framework op, name, type, duration and the gap after it."""

    op: str
    shapes: str  # SHAPES key
    name: str
    type: str
    dur: float  # µs
    gap: float  # µs to the next kernel's start (0 after the last)


def kernel_type(name: str) -> str:
    """The op type of a real kernel name: `trans_Cast_0` -> Cast, `Conv2D1` -> Conv2D,
    `aclnnAddmm_MatMulCommon_MatMulV2` -> MatMulV2, `MaxPoolWithArgmaxV12` -> MaxPoolWithArgmaxV1."""
    if name.startswith("trans_"):
        return "MemSet" if name.endswith("_MemSet") else name.split("_")[1]
    if name.startswith("aclnn"):
        return name.rsplit("_", 1)[1]
    return name.rstrip("0123456789") if name.startswith("Conv2D") else name[:-1]


def forward_kernels() -> list[Kernel]:
    """The real step's forward kernels in launch order, each assigned to the framework op that launched
    it; a format conversion (`trans_*`) belongs to the next op it prepares data for."""
    events = json.loads(SAMPLE.read_text(encoding="utf-8"))
    pids = {e["pid"] for e in events if e.get("name") == "process_name" and e["args"]["name"] == HARDWARE}
    hardware = sorted(
        (e for e in events if e.get("ph") == "X" and e["pid"] in pids), key=lambda e: float(e["ts"])
    )
    start = next(i for i, e in enumerate(hardware) if e["name"] == FIRST_KERNEL)
    end = next(i for i, e in enumerate(hardware) if kernel_type(e["name"]) == LAST_TYPE)
    picked = hardware[start : end + 1]
    layers = _layers([e["name"] for e in picked])
    kernels, seen = [], {}
    for i, event in enumerate(picked):
        kind, n = layers[i]
        cell, shapes = (part.format(n=n) for part in SCOPES[kind])
        name = event["name"]
        typ = kernel_type(name)
        op_type = OP_TYPES.get(typ, typ)
        k = seen.setdefault((cell, op_type), 0)
        seen[(cell, op_type)] = k + 1
        nxt = picked[i + 1] if i + 1 < len(picked) else None
        gap = float(nxt["ts"]) - float(event["ts"]) - float(event["dur"]) if nxt else 0.0
        gap = min(gap, GAP_CAP_US)
        op = f"{cell}/{op_type}-op{k}"
        kernels.append(Kernel(op, shapes, name, typ, float(event["dur"]), round(gap, 3)))
    return kernels


def _layers(names: list[str]) -> list[tuple[str, int]]:
    """(op kind, its number) per kernel: a new op at each Conv2D, ReLU, MaxPool, Addmm group and the
    log-softmax; conversions take the op of the next kernel that is not one."""
    convs = fcs = 0
    own: list[tuple[str, int] | None] = []
    last: tuple[str, int] = ("conv", 1)
    for name in names:
        typ = kernel_type(name)
        if name.startswith("trans_"):
            own.append(None)
            continue
        if typ == "Conv2D":
            convs += 1
            last = ("conv", convs)
        elif typ == "Relu":
            last = ("relu", convs) if last[0] == "conv" else ("relu_fc", fcs)
        elif typ == "MaxPoolWithArgmaxV1":
            last = ("pool", convs)
        elif name.startswith("aclnnAddmm") and last[0] != "fc":
            fcs += 1
            last = ("fc", fcs)
        elif typ == LAST_TYPE:
            last = ("log_softmax", 0)
        own.append(last)
    out: list[tuple[str, int]] = []
    following = own[-1] or last
    for layer in reversed(own):
        following = layer or following
        out.append(following)
    return out[::-1]


# --------------------------------------------------------------------------------------------- sides


@dataclass(frozen=True)
class Launch:
    """One kernel as a side runs it."""

    kernel: Kernel
    dtype: str
    core: str


def core_of(typ: str) -> str:
    return "AI_CORE" if typ in CUBE_TYPES else "AI_VECTOR_CORE"


def baseline_side(kernels: list[Kernel]) -> list[Launch]:
    """FP16; each Conv2D with its (injected) BatchNorm and its ReLU is one fused kernel of the real
    Conv2D's duration (BN folded into the weights, the ReLU in the convolution's epilogue)."""
    out = []
    for k in kernels:
        if k.type == "Relu" and k.op.startswith("Default/relu") and not k.op.startswith("Default/relu_fc"):
            continue  # fused into the convolution before it
        if k.type == "Conv2D":
            k = replace(k, name=f"Conv2D_BNInfer_Relu_fusion{k.name.removeprefix('Conv2D')}")
        out.append(Launch(k, "FLOAT16", core_of(k.type)))
    return out


def fp32(fp16_us: float, typ: str) -> float:
    """A kernel's FP32 duration from its FP16 one: a fixed launch part, then the rest FP32_CUBE times
    slower on the cube unit, FP32_VECTOR times on the vector units (twice the bytes); MemSet unchanged."""
    if typ == "MemSet":
        return fp16_us
    fixed, factor = (CUBE_FIXED_US, FP32_CUBE) if typ in CUBE_TYPES else (VECTOR_FIXED_US, FP32_VECTOR)
    return round(min(fp16_us, fixed) + max(fp16_us - fixed, 0.0) * factor, 3)


def target_side(kernels: list[Kernel]) -> list[Launch]:
    """FP32 (longer kernels) and Conv+BN(+ReLU) split: the real Conv2D, a separate BNInfer kernel, and
    the real ReLU kernel."""
    relu = {k.op: k.dur for k in kernels if k.type == "Relu"}
    out = []
    for k in kernels:
        out.append(Launch(replace(k, dur=fp32(k.dur, k.type)), "FLOAT", core_of(k.type)))
        if k.type == "Conv2D":
            n = k.shapes.removeprefix("conv")  # the conv's number
            dur = round(fp32(relu[f"{SCOPES['relu'][0].format(n=n)}/ReLU-op0"], "BNInfer") * BN_OF_RELU, 3)
            bn = Kernel(
                f"Default/bn{n}-BatchNorm2d/BatchNorm-op0", f"relu{n}", "BNInfer", "BNInfer", dur, 1.0
            )
            out.append(Launch(bn, "FLOAT", "AI_VECTOR_CORE"))
    return out


def _tensors(launch: Launch) -> list[str]:
    """The tensor cells: 5-D activations in NC1HWC0 (conv weights FRACTAL_Z), 2-D ones in ND."""
    ins, outs = SHAPES[launch.kernel.shapes]
    parts = ins.split(";")
    five_d = parts[0].count(",") == 4
    formats = (["NC1HWC0", "FRACTAL_Z"] if five_d else ["ND", "ND"])[: len(parts)]
    return tensor_cells(
        ins, ";".join([launch.dtype] * len(parts)), ";".join(formats), outs, launch.dtype,
        "NC1HWC0" if five_d else "ND",
    )  # fmt: skip


def _counters(launch: Launch, dur: float) -> list[Any]:
    cube = launch.core == "AI_CORE"
    ratios = (0.62, 0.05, 0.11, 0.18, 0.04) if cube else (0.55, 0.08, 0.22, 0.15)
    return pipe_utilization(dur, FREQ_MHZ, cube, ratios, 0.01, cube_util=55.0 if cube else 0)


def write_run(root: Path, launches: list[Launch], level: str, t0_us: float) -> None:
    """One `*_ascend_ms` run of len(STEP_JITTER) steps: profiler_info_0.json, kernel_details.csv and
    step_trace_time.csv (MindSpore writes its CSVs with CRLF)."""
    info = ms_profiler_info(
        rank=0,
        level=level,
        aic_metrics="PipeUtilization",
        jit_level="O0",
        profile_memory=False,
        output_path="/home/user/prof",
        active_steps=len(STEP_JITTER),
        collection_begin="1764583200000000",
        analyse_cost=0.84,
    )
    write_json(root / "profiler_info_0.json", info, indent=4)
    rows, steps, clock, task = [], [], ns(t0_us), 1
    for step, jitter in enumerate(STEP_JITTER, start=1):
        step_start, busy, prev_end = clock, 0, None
        clock += ns(20.0)  # the host launches the first kernel of the step
        first = clock
        for launch in launches:
            dur_ns = ns(round(launch.kernel.dur * jitter, 3))
            wait = 0.0 if prev_end is None else (clock - prev_end) / 1000
            rows.append(_row(step, task, launch, clock, dur_ns, wait))
            prev_end, busy, task = clock + dur_ns, busy + dur_ns, task + 1
            clock = prev_end + ns(launch.kernel.gap)
        free = (prev_end - first - busy) / 1000
        steps.append(step_trace_row(step, busy / 1000, 0, round(free, 3), (first - step_start) / 1000))
        clock = prev_end + ns(STEP_GAP_US)
    write_csv(root / APO / "kernel_details.csv", HEADER, rows, CRLF)
    write_csv(root / APO / "step_trace_time.csv", STEP_TRACE_HEADER, steps, CRLF)


def _row(step: int, task: int, launch: Launch, start_ns: int, dur_ns: int, wait: float) -> list[Any]:
    k = launch.kernel
    dur = dur_ns / 1000
    block = 32 if launch.core == "AI_CORE" else 8
    return [
        step,
        MODEL_ID,
        task,
        2,
        f"{k.op}/{k.name}",
        k.type,
        "static",
        launch.core,
        us(start_ns) + "\t",
        dur,
        round(wait, 3),
        block,
        0,
        "NO",
        *_tensors(launch),
        "N/A",
        *_counters(launch, dur),
    ]


def main(argv: list[str] | None = None) -> int:
    """Write the example (into the folder given as the only argument, else its place in assets/)."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else OUT
    kernels = forward_kernels()
    if out.exists():
        shutil.rmtree(out)
    write_run(out / "baseline" / BASELINE_ROOT, baseline_side(kernels), "Level1", T0_US)
    write_run(out / "target" / TARGET_ROOT, target_side(kernels), "Level2", T0_US + 1.8e9)
    print(f"{NAME}: {len(kernels)} forward kernels of the real step -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Generate large, realistic MindSpore 2.5+ Ascend profiler folders for the reader benchmark.

A ResNet-50-like network (53 convolutions with BatchNorm and ReLU, residual adds, a Dense head) is "run"
step after step: the training folder launches forward, backward (`Gradients/` scopes) and optimizer
kernels in FP16 (AMP), the inference folder a BN-folded FP32 forward. Each folder is what MindSpore 2.10
writes at Level1 with PipeUtilization counters:

    <host>_<pid>_<ts>_ascend_ms/
        profiler_info_0.json
        ASCEND_PROFILER_OUTPUT/kernel_details.csv    (Level1 columns, CRLF, Start Time quoted with a TAB)
        ASCEND_PROFILER_OUTPUT/step_trace_time.csv
        ASCEND_PROFILER_OUTPUT/trace_view.json       (ProfilerStep#, host launch ops, HostToDevice flows,
                                                      Ascend Hardware kernels, Overlap Analysis, AI Core Freq)

Rows are formatted column-wise with pyarrow compute and written from the string buffers in chunks, so
3 million rows take seconds and bounded memory. Output goes under bench/data/ (git-ignored):

    python bench/gen_ascend.py --rows 100000 1000000          # a train/infer pair per size
    python bench/gen_ascend.py --rows 3000000 --kinds train   # one folder
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fixtures"))
from ascend_schema import KERNEL_DETAILS_LEVEL1, PIPE_COLUMNS, ms_profiler_info  # the documented layout

DATA = Path(__file__).resolve().parent / "data"
CHUNK = 200_000
FREQ_MHZ = 1800
# The documented Level1 kernel_details header with the PipeUtilization counters, shared with the test
# fixtures' generators (written from ../shared/reference/profiler-formats.md, never from our readers).
KD_HEADER = (*KERNEL_DETAILS_LEVEL1, *PIPE_COLUMNS)


# ---------------------------------------------------------------------------------------------- network


@dataclass(frozen=True)
class Kernel:
    """One kernel launched once per step."""

    name: str  # `<launch op>/<kernel>`
    type: str
    core: str
    dur_ns: int
    shapes: tuple[str, str]  # input, output
    dtypes: tuple[str, str]
    formats: tuple[str, str]
    block: int


@dataclass(frozen=True)
class Variant:
    """How an inference run departs from the plain FP32, BN-folded, split-kernel forward.

    `amp`: compute in FP16 like the training run, except the Conv2D/MatMul positions (0-based, in
    launch order) in `fp32_positions`, which fall back to FP32 at the FP32 cost (a partial fallback);
    `fused`: each Conv2D and its ReLU run as one `Conv2D_BNInfer_Relu` kernel that also lists the BN
    scale, offset, mean and variance among its inputs (what UB fusion launches).
    """

    amp: bool = False
    fp32_positions: frozenset[int] = frozenset()
    fused: bool = False


PLAIN = Variant()


class Net:
    """Builds the per-step kernel list with unique `-opN` launch-op names per scope."""

    def __init__(self, prefix: str, dtype: str, variant: Variant = PLAIN) -> None:
        self.prefix = prefix
        self.dtype = dtype
        self.variant = variant
        self.kernels: list[Kernel] = []
        self.counts: dict[tuple[str, str], int] = {}
        self.compute_index = 0  # Conv2D/MatMul positions added so far

    def compute_dtype(self) -> tuple[str, float]:
        """(dtype, time factor) of the next Conv2D/MatMul position; advances the position."""
        index, self.compute_index = self.compute_index, self.compute_index + 1
        if self.variant.amp and index in self.variant.fp32_positions:
            return "FLOAT", FP32_COST
        return self.dtype, 1.0

    def add(
        self,
        scope: str,
        op: str,
        kernel: str,
        core: str,
        us: float,
        shapes: tuple[str, str],
        dtype: str | None = None,
        fmt: str = "NC1HWC0",
        block: int = 32,
        kernel_type: str | None = None,
    ) -> None:
        key = (scope, op)
        n = self.counts.get(key, 0)
        self.counts[key] = n + 1
        name = "/".join(part for part in (self.prefix.rstrip("/"), scope, f"{op}-op{n}", kernel) if part)
        dt = dtype or self.dtype
        in_dt = ";".join([dt] * (shapes[0].count(";") + 1))
        in_fmt = ";".join([fmt] * (shapes[0].count(";") + 1))
        self.kernels.append(
            Kernel(
                name, kernel_type or kernel, core, int(us * 1000), shapes, (in_dt, dt), (in_fmt, fmt), block
            )
        )


FP32_COST = 2.1  # an FP32 Conv2D/MatMul takes 2.1x its FP16 time on the Cube units


def resnet_blocks() -> Iterator[tuple[str, int, int, int]]:
    """(scope, channels, spatial size, batch) of each of the 16 bottleneck blocks."""
    for layer, (blocks, channels, size) in enumerate(((3, 64, 56), (4, 128, 28), (6, 256, 14), (3, 512, 7))):
        for b in range(blocks):
            yield f"layer{layer + 1}-SequentialCell/{b}-ResidualBlock", channels, size, 32


def forward(net: Net, train: bool) -> None:
    """Stem, 16 bottleneck blocks (3 convs each + downsample), pool and Dense head."""
    net.add(
        "", "Cast", "Cast", "AI_VECTOR_CORE", 11.0, ("32,3,224,224", "32,3,224,224"), fmt="NCHW", block=40
    )
    net.add(
        "conv1-Conv2d", "TransData", "TransData", "AI_VECTOR_CORE", 35.0, ("32,3,224,224", "32,1,224,224,16")
    )
    _conv_bn_relu(net, "conv1-Conv2d", "bn1-BatchNorm2d", 64, 112, train, 180.0)
    for scope, ch, size, _ in resnet_blocks():
        for i, (c, scale) in enumerate(((ch, 1.0), (ch, 2.2), (ch * 4, 1.3))):
            _conv_bn_relu(
                net,
                f"{scope}/conv{i + 1}-Conv2d",
                f"{scope}/bn{i + 1}-BatchNorm2d",
                c,
                size,
                train,
                40.0 * scale * (56 / size) ** 0.3,
            )
        if scope.endswith("/0-ResidualBlock"):
            _conv_bn_relu(
                net,
                f"{scope}/down_sample-Conv2d",
                f"{scope}/down_bn-BatchNorm2d",
                ch * 4,
                size,
                train,
                35.0,
                relu=False,
            )
        shape = f"32,{ch * 4 // 16},{size},{size},16"
        net.add(scope, "Add", "Add", "AI_VECTOR_CORE", 9.0, (f"{shape};{shape}", shape))
        net.add(scope, "ReLU", "Relu", "AI_VECTOR_CORE", 6.0, (shape, shape))
    net.add(
        "avgpool-AvgPool2d", "ReduceMean", "ReduceMean", "AI_VECTOR_CORE", 8.0, ("32,128,7,7,16", "32,2048")
    )
    if train:
        net.add(
            "fc-Dense",
            "MatMul",
            "MatMulV2_BiasAdd_fusion",
            "AI_CORE",
            14.0,
            ("32,2048;1000,2048;1000", "32,1000"),
            fmt="ND",
            block=16,
        )
    else:
        dtype, factor = net.compute_dtype()
        us = 22.0 * factor / (FP32_COST if net.variant.amp else 1.0)
        net.add(
            "fc-Dense", "MatMul", "MatMulV2", "AI_CORE", us, ("32,2048;1000,2048", "32,1000"), dtype, "ND"
        )
        net.add(
            "fc-Dense", "BiasAdd", "BiasAdd", "AI_VECTOR_CORE", 4.0, ("32,1000;1000", "32,1000"), fmt="ND"
        )


def _conv_bn_relu(
    net: Net, conv: str, bn: str, ch: int, size: int, train: bool, us: float, relu: bool = True
) -> None:
    act = f"32,{max(ch // 16, 1)},{size},{size},16"
    weights = f"{ch},{max(ch // 16, 1)},3,3,16"
    dtype, factor = net.compute_dtype()
    cost = us * (factor if train or net.variant.amp else FP32_COST)
    if net.variant.fused and relu:
        bn_params = ";".join([f"1,{max(ch // 16, 1)},1,1,16"] * 4)
        shapes = (f"{act};{weights};{bn_params}", act)
        net.add(conv, "Conv2D", "Conv2D_BNInfer_Relu", "AI_CORE", cost, shapes, dtype, kernel_type="Conv2D")
        return
    net.add(conv, "Conv2D", "Conv2D", "AI_CORE", cost, (f"{act};{weights}", act), dtype)
    if train:
        net.add(bn, "BatchNorm", "BNTrainingReduce", "AI_VECTOR_CORE", us * 0.25, (act, "1,1,1,1,16"))
        net.add(bn, "BatchNorm", "BNTrainingUpdate", "AI_VECTOR_CORE", us * 0.3, (f"{act};1,1,1,1,16", act))
    if relu:
        net.add(
            conv.replace("-Conv2d", "_relu-ReLU"), "ReLU", "Relu", "AI_VECTOR_CORE", us * 0.12, (act, act)
        )


def backward_and_optimizer(net: Net) -> None:
    """`Gradients/` kernels mirroring the forward convs and BNs, then one ApplyMomentum per weight."""
    forward_kernels = list(net.kernels)
    grads = Net("Gradients/Default/network-WithLossCell/_backbone-ResNet/", net.dtype)
    for k in reversed(forward_kernels):
        scope = k.name.split("_backbone-ResNet/", 1)[-1].rsplit("/", 2)[0]
        if k.type == "Conv2D":
            grads.add(
                f"{scope}/Grad_Conv2D",
                "Conv2DBackpropInput",
                "Conv2DBackpropInput",
                "AI_CORE",
                k.dur_ns / 1000 * 1.1,
                (k.shapes[1], k.shapes[0].split(";")[0]),
            )
            grads.add(
                f"{scope}/Grad_Conv2D",
                "Conv2DBackpropFilter",
                "Conv2DBackpropFilter",
                "AI_CORE",
                k.dur_ns / 1000 * 1.2,
                (k.shapes[0], k.shapes[0].split(";")[1]),
            )
        elif k.type == "BNTrainingUpdate":
            grads.add(
                f"{scope}/Grad_BatchNorm",
                "BNTrainingUpdateGrad",
                "BNTrainingUpdateGrad",
                "AI_VECTOR_CORE",
                k.dur_ns / 1000,
                k.shapes,
            )
            grads.add(
                f"{scope}/Grad_BatchNorm",
                "BNTrainingReduceGrad",
                "BNTrainingReduceGrad",
                "AI_VECTOR_CORE",
                k.dur_ns / 1000 * 0.9,
                k.shapes,
            )
        elif k.type == "Relu":
            grads.add(
                f"{scope}/Grad_ReLU",
                "ReluGrad",
                "ReluGrad",
                "AI_VECTOR_CORE",
                k.dur_ns / 1000 * 1.2,
                (f"{k.shapes[0]};{k.shapes[0]}", k.shapes[0]),
            )
    net.kernels += grads.kernels
    opt = Net("Default/optimizer-Momentum/", "FLOAT")
    for i, k in enumerate(x for x in forward_kernels if x.type in ("Conv2D", "MatMulV2_BiasAdd_fusion")):
        opt.add(
            "",
            "ApplyMomentum",
            "ApplyMomentum",
            "AI_VECTOR_CORE",
            3.0 + (i % 5) * 0.4,
            (f"{k.shapes[0].split(';')[-1]};{k.shapes[0].split(';')[-1]}", k.shapes[0].split(";")[-1]),
            fmt="FRACTAL_Z",
        )
    opt.add(
        "",
        "DropOutGenMask",
        "DropOutGenMask",
        "AI_CPU",
        24.0,
        ("4;", "4096"),
        dtype="UINT8",
        fmt="ND",
        block=1,
    )
    net.kernels += opt.kernels


def build(kind: str, variant: Variant = PLAIN) -> list[Kernel]:
    """Kernels of one training (FP16) or inference (FP32, or FP16 with `variant.amp`) step."""
    train = kind == "train"
    prefix = "Default/network-WithLossCell/_backbone-ResNet/" if train else "Default/"
    net = Net(prefix, "FLOAT16" if train or variant.amp else "FLOAT", PLAIN if train else variant)
    forward(net, train)
    if train:
        backward_and_optimizer(net)
    return net.kernels


# --------------------------------------------------------------------------------------- formatting


def fixed3(values: np.ndarray) -> pa.Array:
    """Non-negative integer thousandths -> "123.456" strings (column-wise, no Python per row)."""
    arr = pa.array(values.astype(np.int64))
    whole = pc.cast(pc.divide(arr, 1000), pa.string())
    frac = pc.utf8_lpad(
        pc.cast(pc.subtract(arr, pc.multiply(pc.divide(arr, 1000), 1000)), pa.string()), 3, "0"
    )
    return pc.binary_join_element_wise(whole, frac, ".")


def csv_quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\t') else text


def text_buffer(lines: pa.Array) -> memoryview:
    """The concatenated UTF-8 bytes of a (possibly sliced) string array: one contiguous buffer."""
    count = lines.offset + len(lines) + 1
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=count)[lines.offset :]
    return memoryview(lines.buffers()[2])[offsets[0] : offsets[-1]]


@dataclass
class Timeline:
    """Per-row clock of a run: step ids, kernel index, start and duration in ns."""

    step: np.ndarray
    index: np.ndarray
    start: np.ndarray
    dur: np.ndarray
    step_bounds: list[tuple[int, int, int, int, int]]  # step, host start, host end, first row, end row


def timeline(kernels: list[Kernel], rows: int, t0: int, host_gap_ns: int) -> Timeline:
    """Kernels back to back (2.5 µs apart) step after step; each step runs 0-3% slower than nominal."""
    per_step = len(kernels)
    steps = -(-rows // per_step)
    dur = np.array([k.dur_ns for k in kernels], dtype=np.int64)
    slot = dur + 2500
    offsets = np.concatenate([[0], np.cumsum(slot)[:-1]])
    factor = 1.0 + 0.03 * ((np.arange(steps) * 7919) % 13) / 13
    period = (slot.sum() * factor).astype(np.int64) + host_gap_ns
    step_start = t0 + np.concatenate([[0], np.cumsum(period)[:-1]])
    row = np.arange(rows)
    step_idx, index = row // per_step, row % per_step
    start = step_start[step_idx] + (offsets[index] * factor[step_idx]).astype(np.int64)
    durations = (dur[index] * factor[step_idx]).astype(np.int64)
    bounds = []
    for s in range(steps):
        first, end = s * per_step, min((s + 1) * per_step, rows)
        host_end = (
            int(step_start[s + 1] - 45_000) if s + 1 < steps else int(start[end - 1] + durations[end - 1])
        )
        bounds.append((s + 1, int(step_start[s] - 45_000), host_end, first, end))
    return Timeline(step_idx + 1, index, start, durations, bounds)


def kd_lines(kernels: list[Kernel], tl: Timeline, lo: int, hi: int) -> pa.Array:
    """kernel_details.csv lines for rows [lo, hi), CRLF-terminated."""
    idx = tl.index[lo:hi]
    take = pa.array(idx)

    def per_kernel(values: list[str]) -> pa.Array:
        return pa.array(values, pa.string()).take(take)

    dur = tl.dur[lo:hi]
    start = tl.start[lo:hi]
    wait = np.empty_like(dur)
    wait[0] = 2500 if lo else 0
    wait[1:] = start[1:] - (start[:-1] + dur[:-1])
    cube = np.array([k.core == "AI_CORE" for k in kernels])[idx]
    cpu = np.array([k.core == "AI_CPU" for k in kernels])[idx]
    cols = [
        pc.cast(pa.array(tl.step[lo:hi]), pa.string()),
        pa.array(np.full(hi - lo, "4294967295", dtype=object), pa.string()),
        pc.cast(pa.array(np.arange(lo, hi) % 65000 + 1), pa.string()),
        per_kernel(["2"] * len(kernels)),
        per_kernel([csv_quote(k.name) for k in kernels]),
        per_kernel([k.type for k in kernels]),
        per_kernel(["static"] * len(kernels)),
        per_kernel([k.core for k in kernels]),
        pc.binary_join_element_wise(pa.scalar('"'), fixed3(start), pa.scalar('\t"'), ""),
        fixed3(dur),
        fixed3(np.maximum(wait, 0)),
        per_kernel([str(k.block) for k in kernels]),
        per_kernel(["0"] * len(kernels)),
        per_kernel(["NO"] * len(kernels)),
        per_kernel([csv_quote(f'"{k.shapes[0]}"') for k in kernels]),
        per_kernel([k.dtypes[0] for k in kernels]),
        per_kernel([k.formats[0] for k in kernels]),
        per_kernel([csv_quote(f'"{k.shapes[1]}"') for k in kernels]),
        per_kernel([k.dtypes[1] for k in kernels]),
        per_kernel([k.formats[1] for k in kernels]),
        per_kernel(["N/A"] * len(kernels)),
        *pipe_columns(dur, cube, cpu),
    ]
    return pc.binary_join_element_wise(pc.binary_join_element_wise(*cols, ","), pa.scalar("\r\n"), "")


def pipe_columns(dur: np.ndarray, cube: np.ndarray, cpu: np.ndarray) -> list[pa.Array]:
    """The 25 PipeUtilization counters: aic_* on cube kernels, aiv_* on vector kernels, N/A on AI CPU."""
    busy = (dur * 0.96).astype(np.int64)
    na = pa.array(np.full(len(dur), "N/A", dtype=object), pa.string())
    zero = pa.array(np.full(len(dur), "0", dtype=object), pa.string())

    def side(mask: np.ndarray, ratios: tuple[float, ...], cycles: bool = True) -> list[pa.Array]:
        out = [fixed3(busy), pc.cast(pa.array(busy * FREQ_MHZ // 1000), pa.string())]
        for r in ratios:
            out += [fixed3((busy * r).astype(np.int64)), fixed3(np.full(len(dur), int(r * 1000)))]
        return [pc.if_else(pa.array(cpu), na, pc.if_else(pa.array(mask), col, zero)) for col in out]

    icache_c = pc.if_else(pa.array(cube), fixed3(np.full(len(dur), 1)), zero)
    icache_v = pc.if_else(pa.array(~cube), fixed3(np.full(len(dur), 2)), zero)
    aic = [*side(cube, (0.7, 0.2, 0.4, 0.8, 0.05)), icache_c]
    aiv = [*side(~cube, (0.6, 0.3, 0.5, 0.4)), icache_v]
    util = pc.if_else(pa.array(cpu), na, pc.if_else(pa.array(cube), fixed3(np.full(len(dur), 70000)), zero))
    return [*aic, *aiv, util]


def trace_lines(kernels: list[Kernel], tl: Timeline, lo: int, hi: int) -> pa.Array:
    """Per kernel: a host launch op, a HostToDevice flow pair, the Ascend Hardware event, an Overlap span."""
    take = pa.array(tl.index[lo:hi])
    short = pa.array([json.dumps(k.name.rsplit("/", 1)[-1]) for k in kernels]).take(take)
    launch = pa.array([json.dumps(k.name.rsplit("/", 1)[0]) for k in kernels]).take(take)
    core = pa.array([k.core for k in kernels]).take(take)
    ts = fixed3(tl.start[lo:hi])
    host_ts = fixed3(tl.start[lo:hi] - 30_000)
    dur = fixed3(tl.dur[lo:hi])
    flow_id = pc.cast(pa.array(np.arange(lo, hi)), pa.string())
    parts = [
        '{"name": ',
        launch,
        ', "pid": 2, "tid": 3, "ts": "',
        host_ts,
        '", "dur": "12.000", "ph": "X", "cat": "", '
        '"args": {"type": "KernelLaunch"}}, {"name": "HostToDevice", "pid": 2, "tid": 3, "ts": "',
        host_ts,
        '", "ph": "s", "cat": "HostToDevice", "id": "',
        flow_id,
        '"}, {"name": ',
        short,
        ', "pid": 800, "tid": 2, "ts": "',
        ts,
        '", "dur": "',
        dur,
        '", "ph": "X", "args": {"Model Id": 4294967295, "Task Type": "',
        core,
        '", "Stream Id": 2, "Task Id": ',
        flow_id,
        '}}, {"name": "HostToDevice", "pid": 800, "tid": 2, "ts": "',
        ts,
        '", "ph": "f", "cat": "HostToDevice", "id": "',
        flow_id,
        '", "bp": "e"}, {"name": "Computing", "pid": 900, "tid": 0, "ts": "',
        ts,
        '", "dur": "',
        dur,
        '", "ph": "X"}',
    ]
    return pc.binary_join_element_wise(*[pa.scalar(p) if isinstance(p, str) else p for p in parts], "")


def head_events(tl: Timeline) -> list[dict]:
    events = []
    for pid, name in (
        (1, "MindSpore"),
        (2, "CPU OP"),
        (3, "Scope Layer"),
        (800, "Ascend Hardware"),
        (900, "Overlap Analysis"),
        (1000, "AI Core Freq"),
    ):
        events.append({"name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}, "ph": "M"})
    for step, start, end, _, _ in tl.step_bounds:
        events.append(
            {
                "ph": "X",
                "name": f"ProfilerStep#{step}",
                "pid": 1,
                "tid": 1,
                "ts": f"{start / 1000:.3f}",
                "dur": f"{(end - start) / 1000:.3f}",
                "cat": "",
                "args": {},
            }
        )
        events.append(
            {
                "name": "AI Core Freq",
                "ts": f"{start / 1000:.3f}",
                "pid": 1000,
                "tid": 0,
                "args": {"MHz": FREQ_MHZ if step % 50 else 1650},
                "ph": "C",
            }
        )
    return events


# ------------------------------------------------------------------------------------------ writing


def write_run(root: Path, kind: str, rows: int, variant: Variant = PLAIN) -> None:
    """Write one run folder of `rows` kernel rows (whole steps of `build(kind, variant)`)."""
    kernels = build(kind, variant)
    t0 = 1_764_489_600_000_000_000 if kind == "train" else 1_764_576_000_000_000_000
    tl = timeline(kernels, rows, t0, 40_000 if kind == "train" else 450_000)
    out = root / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True, exist_ok=True)
    (root / "profiler_info_0.json").write_text(json.dumps(profiler_info(), indent=4), encoding="utf-8")
    with open(out / "kernel_details.csv", "wb") as fh:
        fh.write((",".join(csv_quote(h) for h in KD_HEADER) + "\r\n").encode())
        for lo in range(0, rows, CHUNK):
            fh.write(text_buffer(kd_lines(kernels, tl, lo, min(lo + CHUNK, rows))))
    write_step_trace(out / "step_trace_time.csv", tl)
    with open(out / "trace_view.json", "wb") as fh:
        fh.write(("[" + ", ".join(json.dumps(e) for e in head_events(tl))).encode())
        for lo in range(0, rows, CHUNK):
            fh.write(b", ")
            lines = trace_lines(kernels, tl, lo, min(lo + CHUNK, rows))
            fh.write(text_buffer(pc.binary_join_element_wise(lines, pa.scalar(", "), "")[:-1]))
            fh.write(text_buffer(lines[-1:]))
        fh.write(b"]\n")


def write_step_trace(path: Path, tl: Timeline) -> None:
    header = (
        "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
        "Communication(Not Overlapped and Exclude Receive),Preparing"
    )
    lines = [header]
    for step, _, end, first, last in tl.step_bounds:
        busy = int(tl.dur[first:last].sum())
        free = end - int(tl.start[first]) - busy
        lines.append(f"{step},{busy / 1000:.3f},0,0,0,{free / 1000:.3f},0,0,0,45.000")
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())


def profiler_info() -> dict:
    """profiler_info_0.json of a Level1 run with PipeUtilization counters (the documented template)."""
    return ms_profiler_info(
        rank=0,
        level="Level1",
        aic_metrics="PipeUtilization",
        jit_level="O0",
        profile_memory=False,
        output_path="./data",
        active_steps=1000,
        collection_begin="1764489600000000",
        analyse_cost=0.0,
    )


def run_dir(rows: int, kind: str) -> Path:
    """Where the folder for `rows` kernel rows of `kind` (train/infer) is written."""
    pid = 7000 + rows // 1000 % 1000 + (0 if kind == "train" else 1)
    return DATA / f"ascend_{rows}" / kind / f"benchhost_{pid}_20251130120000000_ascend_ms"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--kinds", nargs="+", choices=("train", "infer"), default=["train", "infer"])
    args = parser.parse_args()
    for rows in args.rows:
        for kind in args.kinds:
            root = run_dir(rows, kind)
            began = time.perf_counter()
            write_run(root, kind, rows)
            size = (root / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").stat().st_size / 2**20
            print(f"{root}: {rows} rows, kernel_details {size:.0f} MB, {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()

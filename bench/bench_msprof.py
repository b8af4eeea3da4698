"""Benchmark the CANN msprof reader against its floor: a bare `pyarrow.csv.read_csv` of its op_summary.

The op_summary is the generated Level1 kernel_details.csv of bench/gen_ascend.py under CANN's column names
(`Device_id` first, no `Step ID`; `Name` -> `Op Name`, `Type` -> `OP Type`, `Accelerator Core` ->
`Task Type`, `Start Time(us)` -> `Task Start Time(us)` ...), with a step_trace of one iteration per step,
in `PROF_<n>_<ts>_<id>/mindstudio_profiler_output/`. Our side is the whole
`diagnosis.readers.cann_msprof.read()` (op_summary, step_trace, sample.json, steps onto kernels,
normalisation and run traits); both sides run in fresh processes, alternately, best of `--repeat`, with the
same warm page cache (see bench_read.py, whose measuring helpers this reuses). The goal: within 2x.

    python bench/bench_msprof.py --rows 1000000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

import sys  # noqa: E402

sys.path.insert(0, str(HERE))

from bench_read import FLOOR, READ_SCRIPT, measure, warm  # noqa: E402  (bench/ is not a package)
from gen_ascend import DATA, run_dir, write_run  # noqa: E402

GOAL = 2.0
RENAMES = {
    "Name": "Op Name",
    "Type": "OP Type",
    "Accelerator Core": "Task Type",
    "Start Time(us)": "Task Start Time(us)",
    "Duration(us)": "Task Duration(us)",
    "Wait Time(us)": "Task Wait Time(us)",
    "Block Num": "Block Dim",
    "Mix Block Num": "Mix Block Dim",
}

# Steps come from step_trace: every kernel has one.
STEPS_CHECK = 'assert run.kernels["step"].notna().all() and len(run.steps) > 1'


def prof_dir(rows: int) -> Path:
    return DATA / f"msprof_{rows}" / "PROF_000001_20251130120000000_BENCHBENCHBENCHB"


def write_prof(rows: int) -> Path:
    """The PROF folder of `rows` op_summary rows (from the generated inference kernel_details.csv)."""
    prof = prof_dir(rows)
    out = prof / "mindstudio_profiler_output"
    summary = out / "op_summary_20251130120000000.csv"
    if summary.is_file():
        return prof
    source = run_dir(rows, "infer")
    kd = source / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    if not kd.is_file():
        write_run(source, "infer", rows)
    table = pacsv.read_csv(kd, convert_options=pacsv.ConvertOptions(strings_can_be_null=False))
    steps = table.column("Step ID")
    table = table.drop_columns(["Step ID"])
    table = table.rename_columns([RENAMES.get(c, c) for c in table.column_names])
    table = table.add_column(0, "Device_id", pa.array([0] * table.num_rows, pa.int64()))
    out.mkdir(parents=True, exist_ok=True)
    pacsv.write_csv(table, summary)
    write_step_trace(out / "step_trace_20251130120000000.csv", table, steps)
    device = prof / "device_0"
    device.mkdir(exist_ok=True)
    sample = {
        "prof_level": "l1",
        "taskTime": "l1",
        "ai_core_profiling": "on",
        "ai_core_metrics": "PipeUtilization",
    }
    (device / "sample.json").write_text(json.dumps(sample), encoding="utf-8")
    return prof


def write_step_trace(path: Path, table: pa.Table, steps: pa.ChunkedArray) -> None:
    """One iteration per step: from its first kernel start to its last kernel end (µs)."""
    start = pc.cast(table.column("Task Start Time(us)"), pa.float64()).to_numpy()
    end = start + pc.cast(table.column("Task Duration(us)"), pa.float64()).to_numpy()
    ids = steps.to_numpy()
    lines = [
        "Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),Iteration Time(us),"
        "FP to BP Time(us),Iteration Refresh(us),Data Aug Bound(us),Model ID"
    ]
    for step in sorted(set(ids.tolist())):
        mask = ids == step
        first, last = float(start[mask].min()), float(end[mask].max())
        lines.append(f"0,{step},N/A,N/A,{last:.3f},{last - first:.3f},N/A,N/A,N/A,1")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def bench(rows: int, repeat: int) -> dict[str, float]:
    """Best time and max peak RSS of ours and the floor on `rows` op_summary rows."""
    prof = write_prof(rows)
    summary = next((prof / "mindstudio_profiler_output").glob("op_summary_*.csv"))
    warm(prof)
    ours, floor = [], []
    for _ in range(repeat):  # interleaved, so both sides see the same background load
        script = READ_SCRIPT.format(
            repo=str(REPO), reader="cann_msprof", root=str(prof), rows=rows, check=STEPS_CHECK
        )
        ours.append(measure(script))
        floor.append(measure(FLOOR.format(path=str(summary), rows=rows)))
    return {
        "rows": rows,
        "mb": summary.stat().st_size / 2**20,
        "ours_s": min(m["s"] for m in ours),
        "ours_cpu": min(m["cpu"] for m in ours),
        "ours_mb": max(m["rss_kb"] for m in ours) / 1024,
        "floor_s": min(m["s"] for m in floor),
        "floor_cpu": min(m["cpu"] for m in floor),
        "floor_mb": max(m["rss_kb"] for m in floor) / 1024,
        "load": os.getloadavg()[0],
    }


def table(results: list[dict[str, float]]) -> str:
    """A Markdown table of the measurements, with the goal marked."""
    head = (
        "rows",
        "op_summary MB",
        "ours s",
        "ours CPU s",
        "ours RSS MB",
        "floor s",
        "floor CPU s",
        "floor RSS MB",
        "time ratio",
        f"goal <= {GOAL:g}x",
        "load (1 min)",
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        ratio = r["ours_s"] / r["floor_s"]
        cells = (
            f"{r['rows']:,}",
            f"{r['mb']:.0f}",
            f"{r['ours_s']:.2f}",
            f"{r['ours_cpu']:.2f}",
            f"{r['ours_mb']:.0f}",
            f"{r['floor_s']:.2f}",
            f"{r['floor_cpu']:.2f}",
            f"{r['floor_mb']:.0f}",
            f"{ratio:.2f}",
            "met" if ratio <= GOAL else "not met",
            f"{r['load']:.2f}",
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(table([bench(rows, args.repeat) for rows in args.rows]))


if __name__ == "__main__":
    main()

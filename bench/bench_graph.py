"""Benchmark the graph package: parse, build and walk a real ResNet-50 MINDIR and synthetic graphs.

    .venv/bin/python bench/bench_graph.py [--sizes 100000 300000 1000000] [--repeat 3]

Inputs are made once and cached under bench/data/ (git-ignored):
* resnet50.mindir: the ResNet-50 layout with its real ~100 MB of weights, exported by MindSpore in
  a subprocess (tests/fixtures/mindir/generate.py);
* synthetic_<N>.mindir: N NodeProtos of repeated Conv-BN-ReLU blocks
  (tests/fixtures/mindir/mindir_synthetic.py).

Each measurement runs in a fresh subprocess (so peak RSS is per file) and reports: file size, parse
(read + protobuf decode), build (checks, parameter summary, collapsed networkx graph), walk
(find_chains), total, peak RSS, and microseconds per node to show linear scaling.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data"
FIXTURES = ROOT / "tests" / "fixtures" / "mindir"
DEFAULT_SIZES = (100_000, 300_000, 1_000_000)


def measure(path: Path) -> dict[str, float]:
    """Time one load in this process (called in a child process)."""
    sys.path.insert(0, str(ROOT))
    import graph
    from graph.loader import decode, model_from_proto

    size = path.stat().st_size
    t0 = time.perf_counter()
    proto = decode(path.read_bytes(), path)
    nodes = len(proto.graph.node) + sum(len(f.node) for f in proto.functions)
    t1 = time.perf_counter()
    model = model_from_proto(proto, path, size)
    del proto
    t2 = time.perf_counter()
    chains = graph.find_chains(model)
    t3 = time.perf_counter()
    return {
        "bytes": size,
        "nodes": nodes,
        "graph_nodes": model.graph.number_of_nodes(),
        "chains": len(chains),
        "parse_s": t1 - t0,
        "build_s": t2 - t1,
        "walk_s": t3 - t2,
        "total_s": t3 - t0,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def ensure_resnet50() -> Path:
    """bench/data/resnet50.mindir, exported with MindSpore in a subprocess when missing."""
    target = DATA / "resnet50.mindir"
    if not target.exists():
        spec = importlib.util.spec_from_file_location("mindir_fixture_generate", FIXTURES / "generate.py")
        generate = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(generate)
        print("exporting ResNet-50 with MindSpore (subprocess) ...", flush=True)
        generate.export_one("resnet50", DATA)
    return target


def ensure_synthetic(nodes: int) -> Path:
    """bench/data/synthetic_<nodes>.mindir, written in a subprocess when missing."""
    target = DATA / f"synthetic_{nodes}.mindir"
    if not target.exists():
        print(f"writing synthetic graph of {nodes:,} nodes ...", flush=True)
        code = (
            f"import sys; sys.path.insert(0, {str(FIXTURES)!r}); from pathlib import Path; "
            "import mindir_synthetic as s; "
            f"s.write_synthetic(Path({str(target)!r}), s.blocks_for_nodes({nodes}))"
        )
        subprocess.run([sys.executable, "-c", code], check=True)
    return target


def run_child(path: Path) -> dict[str, float]:
    """Measure `path` in a fresh interpreter and return its numbers."""
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--measure", str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def best_of(path: Path, repeat: int) -> dict[str, float]:
    """Median-total run of `repeat` child measurements (peak RSS is the largest seen)."""
    runs = [run_child(path) for _ in range(repeat)]
    median_total = statistics.median(r["total_s"] for r in runs)
    chosen = min(runs, key=lambda r: abs(r["total_s"] - median_total))
    return {**chosen, "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)}


def table(rows: list[tuple[str, dict[str, float]]]) -> str:
    """Markdown table of the measurements."""
    header = (
        "| case | nodes | file MB | parse s | build s | walk s | total s | µs/node | peak RSS MB | chains |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    lines = [header]
    for name, r in rows:
        lines.append(
            f"| {name} | {r['nodes']:,} | {r['bytes'] / 1e6:.1f} | {r['parse_s']:.3f} | {r['build_s']:.3f} | "
            f"{r['walk_s']:.3f} | {r['total_s']:.3f} | {r['total_s'] / r['nodes'] * 1e6:.2f} | "
            f"{r['peak_rss_mb']:.0f} | {r['chains']:,} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Make the inputs if needed, measure each in a subprocess and print the table."""
    parser = argparse.ArgumentParser(description="graph package benchmark")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(DEFAULT_SIZES))
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (median reported)")
    parser.add_argument("--skip-resnet", action="store_true", help="do not export/measure ResNet-50")
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return 0
    DATA.mkdir(parents=True, exist_ok=True)
    rows = []
    if not args.skip_resnet:
        rows.append(("ResNet-50 (real weights)", best_of(ensure_resnet50(), args.repeat)))
        stripped = FIXTURES / "resnet50_noweights.mindir"
        rows.append(("ResNet-50 (weights stripped)", best_of(stripped, args.repeat)))
    for nodes in args.sizes:
        rows.append((f"synthetic {nodes:,}", best_of(ensure_synthetic(nodes), args.repeat)))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

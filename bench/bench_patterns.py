"""Side by side: the graph walk (find_chains) of two checkouts on 1M-node graphs, runs interleaved.

    .venv/bin/python bench/bench_patterns.py --base /tmp/pd-main [--runs 5]

`--base` is another checkout of the project (e.g. `git worktree add --detach /tmp/pd-main main`); this
checkout is the other side. Two inputs, each measured in a fresh subprocess per run, base and this
checkout alternating so a machine shared with other work slows both alike:

* synthetic 1M: bench/data/synthetic_1000000.mindir of bench/bench_graph.py (Conv-BN-ReLU blocks), the
  graph benchmark's own input; walk = find_chains after the build, as bench_graph.py measures it;
* llama 1M: the 2-block LLaMA-style decoder of tests/fixtures/patterns/llama.mindir (RMSNorm, rotary,
  attention, SwiGLU written out) copied side by side until the graph has 1M nodes, so every DAG pattern
  has anchors to try: walk = find_chains on that graph.

Prints a table of the median walk time per input and side and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LLAMA = ROOT / "tests" / "fixtures" / "patterns" / "llama.mindir"
SYNTHETIC = ROOT / "bench" / "data" / "synthetic_1000000.mindir"
NODES = 1_000_000


def measure(root: Path, case: str) -> dict[str, float]:
    """Walk time of `case` with the code of `root` (called in a child process)."""
    sys.path.insert(0, str(root))
    import networkx as nx

    import graph
    from graph.loader import decode, model_from_proto

    if case == "synthetic":
        model = model_from_proto(
            decode(SYNTHETIC.read_bytes(), SYNTHETIC), SYNTHETIC, SYNTHETIC.stat().st_size
        )
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = graph.load_mindir(LLAMA)
        block = model.graph
        copies = NODES // block.number_of_nodes() + 1
        tiled = nx.disjoint_union_all([block] * copies)
        tiled.graph["outputs"] = []
        model.graph = tiled
    start = time.perf_counter()
    chains = graph.find_chains(model)
    return {
        "walk_s": time.perf_counter() - start,
        "nodes": model.graph.number_of_nodes(),
        "chains": len(chains),
        "code": graph.__file__,
    }


def child(root: Path, case: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--measure", case, "--root", str(root)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


HEADER = (
    "| input | nodes | chains main | chains this | walk s main | walk s this | ratio | runs main / this |\n"
    "|---|---|---|---|---|---|---|---|\n"
)


def _row(case: str, times: dict[str, list[float]], info: dict[str, dict[str, float]]) -> str:
    """One table row: medians, their ratio (this / main) and every run."""
    base, this = statistics.median(times["main"]), statistics.median(times["this"])
    runs = " / ".join(", ".join(f"{t:.2f}" for t in times[side]) for side in ("main", "this"))
    chains = f"{info['main']['chains']:,} | {info['this']['chains']:,}"
    walks = f"{base:.3f} | {this:.3f} | {this / base:.2f}"
    return f"| {case} | {info['this']['nodes']:,} | {chains} | {walks} | {runs} |"


def main(argv: list[str] | None = None) -> int:
    """Measure both sides `--runs` times per input, interleaved, and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="the other checkout (today's main)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.root, args.measure)))
        return 0
    sides = {"main": args.base.resolve(), "this": ROOT}
    rows = []
    for case in ("synthetic", "llama"):
        times: dict[str, list[float]] = {"main": [], "this": []}
        info: dict[str, dict[str, float]] = {}
        for run in range(args.runs):
            order = ("main", "this") if run % 2 == 0 else ("this", "main")
            for side in order:
                result = child(sides[side], case)
                assert result["code"].startswith(str(sides[side])), result["code"]  # the side's own code
                times[side].append(result["walk_s"])
                info[side] = result
        rows.append(_row(case, times, info))
    print(HEADER + "\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

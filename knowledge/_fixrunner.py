"""Execute rule fixes against real MindSpore on CPU, one fresh preamble per fix, all in this process.

Run by :mod:`knowledge.verify` in a subprocess; MindSpore is imported here only, never by the rest of the
package. The preamble each snippet sees is documented in knowledge/README.md ("Fix snippets").

* ``python -m knowledge._fixrunner <in.json> <out.json>``: run every snippet (input ``{name: code}``),
  then call ``net(x)``; output ``{name: {"ok", "error", "seconds"}}``.
* ``python -m knowledge._fixrunner --export <in.json> <out.json> <dir>``: run every snippet (input
  ``{name: {"code", "net"}}``), then ``ms.export(net, x)`` as ``<dir>/<name>.mindir``, so a test can count
  the nodes the fix leaves in the graph; output adds ``"path"``.
* ``python -m knowledge._fixrunner --profile <in.json> <out.json> <dir>``: run ONE snippet, then profile
  ``net(x)`` with the real CPU profiler into ``<dir>/<name>/`` (one process per profile: the profiler
  and the execution mode are process state); output adds ``"path"``.
"""

# MindSpore ships no type information: this runner of real MindSpore is checked in basic mode.
# pyright: basic

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Profiled calls: PROFILE_SKIP untracked calls (the first compiles), one profiler warm-up call, then
# PROFILE_STEPS recorded calls.
PROFILE_SKIP = 2
PROFILE_STEPS = 3


def make_preamble(net_class: str = "SmallNet") -> dict[str, Any]:
    """Fresh names for one snippet: a `net` (by default the small Conv-BN-ReLU-Dropout-Dense net) left in
    training mode (as a training script leaves it), a float32 input `x` of INPUT_SHAPE, and the modules
    `ms`, `nn`, `np`."""
    import mindspore as ms
    import numpy as np
    from mindspore import nn

    from knowledge._fixnet import INPUT_SHAPE, NETS

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    net = NETS[net_class]()
    net.set_train(True)
    x = ms.Tensor(np.random.default_rng(0).standard_normal(INPUT_SHAPE).astype(np.float32))
    return {"__name__": "__fix__", "net": net, "x": x, "ms": ms, "nn": nn, "np": np}


def run_one(
    rule_id: str,
    code: str,
    net_class: str = "SmallNet",
    after: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Run one snippet in a temporary working directory, then prove the fixed `net` still runs on `x`
    (and call `after` on the snippet's namespace, whose dict is merged into the result); the
    environment and working directory are restored afterwards."""
    env, cwd = dict(os.environ), os.getcwd()
    start = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix=f"fix-{rule_id}-") as work:
            os.chdir(work)
            namespace = make_preamble(net_class)
            exec(compile(code, f"<fix {rule_id}>", "exec"), namespace)
            namespace["net"](namespace["x"])
            extra = after(namespace) if after else {}
            os.chdir(cwd)
        return {"ok": True, "error": "", "seconds": round(time.perf_counter() - start, 3), **extra}
    except Exception as exc:
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-3:])
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}\n{detail}", "seconds": 0.0}
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)


def export_net(namespace: dict[str, Any], path: Path) -> dict[str, Any]:
    """Export the snippet's `net` on its `x` (after the snippet: its dtype, its mode) as a MINDIR."""
    ms = namespace["ms"]
    ms.export(namespace["net"], namespace["x"], file_name=str(path.with_suffix("")), file_format="MINDIR")
    return {"path": str(path)}


def profile_net(namespace: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Profile calls of the snippet's `net` on its `x` with the real profiler (CPU activity)."""
    from mindspore.profiler import ProfilerActivity, schedule, tensorboard_trace_handler

    ms, net, x = namespace["ms"], namespace["net"], namespace["x"]
    with ms.profiler.profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=0, warmup=1, active=PROFILE_STEPS, repeat=1, skip_first=PROFILE_SKIP),
        on_trace_ready=tensorboard_trace_handler(str(folder)),
    ) as prof:
        for _ in range(PROFILE_SKIP + 1 + PROFILE_STEPS):
            net(x).asnumpy()
            prof.step()
    return {"path": str(folder), "steps": PROFILE_STEPS}


def main(argv: list[str]) -> int:
    """Read the snippets, run each (then export or profile it), write the per-snippet results as JSON."""
    mode = argv[0] if argv and argv[0].startswith("--") else ""
    args = argv[1:] if mode else argv
    if mode not in ("", "--export", "--profile") or len(args) != (3 if mode else 2):
        print(
            "usage: python -m knowledge._fixrunner [--export|--profile] <in.json> <out.json> [<dir>]",
            file=sys.stderr,
        )
        return 2
    snippets = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    if not mode:
        results = {rule_id: run_one(rule_id, code) for rule_id, code in snippets.items()}
    else:
        out_dir = Path(args[2]).resolve()
        if mode == "--profile" and len(snippets) != 1:
            print("--profile runs exactly one snippet per process", file=sys.stderr)
            return 2
        results = {}
        for name, spec in snippets.items():
            target = out_dir / (f"{name}.mindir" if mode == "--export" else name)
            action = export_net if mode == "--export" else profile_net
            results[name] = run_one(
                name, spec["code"], spec.get("net", "SmallNet"), lambda ns, t=target, a=action: a(ns, t)
            )
    Path(args[1]).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

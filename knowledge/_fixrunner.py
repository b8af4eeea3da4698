"""Execute rule fixes against real MindSpore on CPU, one fresh preamble per fix, all in this process.

Run by :func:`knowledge.verify.run_fixes` as ``python -m knowledge._fixrunner <in.json> <out.json>``
(input: ``{rule_id: code}``; output: ``{rule_id: {"ok", "error", "seconds"}}``). MindSpore is imported
here only, never by the rest of the package. The preamble each snippet sees is documented in
knowledge/README.md ("Fix snippets").
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any


def make_preamble() -> dict[str, Any]:
    """Fresh names for one snippet: a small Conv-BN-ReLU-Dropout-Dense `net` left in training mode (as a
    training script leaves it), a float32 input `x` of INPUT_SHAPE, and the modules `ms`, `nn`, `np`."""
    import mindspore as ms
    import numpy as np
    from mindspore import nn

    from knowledge._fixnet import INPUT_SHAPE, SmallNet

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    net = SmallNet()
    net.set_train(True)
    x = ms.Tensor(np.random.default_rng(0).standard_normal(INPUT_SHAPE).astype(np.float32))
    return {"__name__": "__fix__", "net": net, "x": x, "ms": ms, "nn": nn, "np": np}


def run_one(rule_id: str, code: str) -> dict[str, Any]:
    """Run one snippet in a temporary working directory, then prove the fixed `net` still runs on `x`;
    the environment and working directory are restored afterwards."""
    env, cwd = dict(os.environ), os.getcwd()
    start = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix=f"fix-{rule_id}-") as work:
            os.chdir(work)
            namespace = make_preamble()
            exec(compile(code, f"<fix {rule_id}>", "exec"), namespace)
            namespace["net"](namespace["x"])
            os.chdir(cwd)
        return {"ok": True, "error": "", "seconds": round(time.perf_counter() - start, 3)}
    except Exception as exc:
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-3:])
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}\n{detail}", "seconds": 0.0}
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)


def main(argv: list[str]) -> int:
    """Read the snippets, run each, write the per-rule results as JSON."""
    if len(argv) != 2:
        print("usage: python -m knowledge._fixrunner <snippets.json> <results.json>", file=sys.stderr)
        return 2
    snippets = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    results = {rule_id: run_one(rule_id, code) for rule_id, code in snippets.items()}
    Path(argv[1]).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Generate the bundled app examples: pairs of real MindSpore 2.10 CPU profiles (baseline vs target).

Each side is one scenario of tests/fixtures/cpu/generate.py (same net, same profiler configuration), run
in its own process and written to ``<example>/baseline/`` or ``<example>/target/``:

    python assets/examples/generate.py            # every example, sequentially
    python assets/examples/generate.py pynative_infer
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
FIXTURE_GENERATOR = HERE.parents[1] / "tests" / "fixtures" / "cpu" / "generate.py"

# example -> (baseline scenario, target scenario)
EXAMPLES: dict[str, tuple[str, str]] = {
    "graph_train_vs_pynative_infer": ("train_fp32_graph", "infer_fp32_pynative"),
    "amp_train_vs_fp32_infer": ("train_amp_o2_graph", "infer_fp32_graph"),
    "pynative_infer": ("infer_fp32_graph", "infer_fp32_pynative"),
}


def load_fixture_generator() -> ModuleType:
    """Import the fixture generator by path (tests/ is not a package) to reuse its scenarios."""
    spec = importlib.util.spec_from_file_location("cpu_fixture_generate", FIXTURE_GENERATOR)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {FIXTURE_GENERATOR}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


def main(argv: Sequence[str] | None = None) -> int:
    """Regenerate the named examples (default: all), one scenario at a time."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("examples", nargs="*", help=f"any of {', '.join(EXAMPLES)} (default: all)")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.examples) - set(EXAMPLES))
    if unknown:
        ap.error(f"unknown example(s) {unknown}; choose from {list(EXAMPLES)}")
    gen = load_fixture_generator()
    jobs = []
    for example in args.examples or EXAMPLES:
        baseline, target = EXAMPLES[example]
        jobs += [(baseline, f"{example}/baseline"), (target, f"{example}/target")]
    gen.generate(jobs, HERE)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the golden reports: every fixture pair, single run and MINDIR, diagnosed and rendered.

A refactor must leave these bytes alone (tests/test_golden_reports.py). Run it only when a change to
what a report says is intended, and say so in the commit:

    .venv/bin/python tests/golden/generate.py
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CPU = ROOT / "tests" / "fixtures" / "cpu"
ASCEND = ROOT / "tests" / "fixtures" / "ascend"
SYMPTOMS = ROOT / "tests" / "fixtures" / "ascend_symptoms"
MINDIR = ROOT / "tests" / "fixtures" / "mindir"
EXAMPLES = ROOT / "assets" / "examples"
GOLDEN = Path(__file__).resolve().parent / "digests.json"
FORMATS = ("json", "md", "html", "csv")
# What differs between two runs of the same code: the creation time, plotly's random div ids, and the
# 4.8 MB plotly.js bundle (pinned by constraints.txt, so left out of the digest). HTML whitespace
# between tags is layout, not content.
VOLATILE = (
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "<created>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"<script[^>]*>[^<]{1000000,}</script>"), "<plotly.js>"),
)
HTML_GAPS = re.compile(r">\s+<")
HTML_SPACE = re.compile(r"\s+")

TRAIN_BASELINES = ("train_amp_o2_graph", "train_fp32_graph", "train_fp32_pynative")
CPU_TARGETS = (
    "infer_amp_o2_graph",
    "infer_fp32_graph",
    "infer_fp32_graph_batch32",
    "infer_fp32_graph_contention",
    "infer_fp32_graph_dynamic_set_inputs",
    "infer_fp32_graph_dynamic_shapes",
    "infer_fp32_graph_mstx",
    "infer_fp32_graph_nowarmup",
    "infer_fp32_graph_profile_memory",
    "infer_fp32_pynative",
    "infer_trainmode_graph",
)
SAME_RUN_PAIRS = (
    ("infer_fp32_graph", "infer_fp32_graph_repeat"),
    ("infer_fp32_graph_repeat", "infer_fp32_graph_repeat2"),
    ("infer_fp32_graph", "infer_fp32_graph"),
)
ASCEND_PAIRS = (
    ("level0/train", "level0/infer"),
    ("level1/train", "level1/infer"),
    ("level0/train", "level1/infer"),
    ("legacy_ascend", "legacy_ascend_20"),
    ("legacy_ascend", "ms23"),
    ("legacy_gpu", "legacy_cpu"),
)
ASCEND_SINGLES = ("torch_npu", "two_rank", "ms23", "legacy_gpu")


@dataclass(frozen=True)
class Case:
    """One diagnosis to pin: its inputs relative to the repository and the facade's keyword arguments."""

    name: str
    baseline: str | None = None
    target: str | None = None
    mindir: str | None = None
    npu_smi: str | None = None
    rank: int | None = None
    lang: str = "en"


def cases() -> Iterator[Case]:
    """Every fixture pair the reports are pinned on (about sixty diagnoses)."""
    cpu = "tests/fixtures/cpu"
    for base in TRAIN_BASELINES:
        for target in CPU_TARGETS:
            yield Case(f"cpu:{base}->{target}", f"{cpu}/{base}", f"{cpu}/{target}")
    for first, second in SAME_RUN_PAIRS:
        yield Case(f"cpu-same:{first}->{second}", f"{cpu}/{first}", f"{cpu}/{second}")
    for name in ("infer_fp32_graph", "train_amp_o2_graph"):
        yield Case(f"cpu-single:{name}", target=f"{cpu}/{name}")
    yield Case(
        "cpu+mindir:amp->fp32",
        f"{cpu}/train_amp_o2_graph",
        f"{cpu}/infer_fp32_graph",
        mindir=f"{cpu}/fixture_net_fp32_eval.mindir",
    )
    yield Case("cpu:zh", f"{cpu}/train_amp_o2_graph", f"{cpu}/infer_fp32_graph", lang="zh")
    asc = "tests/fixtures/ascend"
    for first, second in ASCEND_PAIRS:
        yield Case(f"ascend:{first}->{second}", f"{asc}/{first}", f"{asc}/{second}")
    for name in ASCEND_SINGLES:
        yield Case(f"ascend-single:{name}", target=f"{asc}/{name}", rank=0 if name == "two_rank" else None)
    serving = "tests/fixtures/ascend_symptoms/serving"
    yield Case("serving:steady->slow", f"{serving}/steady", f"{serving}/slow")
    yield Case(
        "serving+npu-smi",
        f"{serving}/steady",
        f"{serving}/slow",
        npu_smi="tests/fixtures/ascend_symptoms/npu_smi/common_throttled.txt",
    )
    for example in sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()):
        folder = f"assets/examples/{example}"
        runs = sorted(p.name for p in (EXAMPLES / example).iterdir() if p.is_dir())
        if len(runs) == 2:
            yield Case(f"example:{example}", f"{folder}/{runs[0]}", f"{folder}/{runs[1]}")
    for model in sorted(p.name for p in MINDIR.glob("*.mindir")):
        yield Case(f"mindir:{model}", mindir=f"tests/fixtures/mindir/{model}")


def report(case: Case) -> Any:
    """The case's diagnosis (a doctor.Report, with its translations)."""
    from doctor import facade

    def path(rel: str | None) -> Path | None:
        return None if rel is None else ROOT / rel

    return facade.diagnose(
        path(case.baseline),
        path(case.target),
        path(case.mindir),
        rank=case.rank,
        lang=case.lang,
        npu_smi=path(case.npu_smi),
        isolate=False,
    )


def render(case: Case, diagnosed: Any = None) -> dict[str, str]:
    """The case's report as JSON, Markdown and HTML text (what the CLI and the app hand out)."""
    from doctor.render import render

    diagnosed = report(case) if diagnosed is None else diagnosed
    return {fmt: normalized(render(diagnosed, fmt), fmt) for fmt in FORMATS}


def normalized(text: str, fmt: str) -> str:
    """The text with what changes from run to run replaced (VOLATILE), HTML whitespace collapsed."""
    for pattern, placeholder in VOLATILE:
        text = pattern.sub(placeholder, text)
    if fmt == "html":
        text = HTML_SPACE.sub(" ", HTML_GAPS.sub("><", text))
    return text


def digest(text: str) -> str:
    """SHA-256 of the normalized text: the golden file stays small and diffs name the case and format."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digests(case: Case, diagnosed: Any = None) -> dict[str, str]:
    """One case's digest per format (of `diagnosed`, its report, when given)."""
    return {fmt: digest(text) for fmt, text in render(case, diagnosed).items()}


def main() -> int:
    pinned = {case.name: digests(case) for case in cases()}
    GOLDEN.write_text(json.dumps(pinned, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(pinned)} cases written to {GOLDEN.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

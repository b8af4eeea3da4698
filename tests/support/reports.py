"""Reports of real fixtures, diagnosed once per session and shared by the report, case and triage tests."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import cache

from doctor import Report, diagnose, inspect_model
from tests.support.inputs import CPU, MINDIR


@cache
def amp_pair(lang: str = "en") -> Report:
    """AMP training vs FP32 inference, diagnosed once per language."""
    return diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", lang=lang)


NOW = datetime.now(timezone.utc)


@cache
def pair_report() -> Report:
    """AMP training vs FP32 inference: top cause precision-mismatch (high)."""
    return diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph")


@cache
def single_report() -> Report:
    """A single PyNative inference run."""
    return diagnose(None, CPU / "infer_fp32_pynative")


@cache
def model_report() -> Report:
    """A small MINDIR on its own (carries a chain figure)."""
    return inspect_model(MINDIR / "conv_bn_relu_eval.mindir")

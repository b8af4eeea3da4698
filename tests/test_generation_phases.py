"""Generation pairs compared phase by phase (prefill against prefill, decode against decode) and decodes
bound by the host, on the Ascend-format generations derived from the real BF16 LLM sample
(tests/fixtures/ascend_llm, generate.py beside them) and the real MindSpore 2.10 CPU generations
(tests/fixtures/transformer/profiles, generate.py --profile)."""

from __future__ import annotations

import csv
import json
import re
from functools import cache
from pathlib import Path

import pytest

from core.symptoms import Symptom
from diagnosis.analyzers.timing import DECODE_HOST_BUSY, generation_phases
from diagnosis.compare import Comparison, prepare
from doctor import diagnose
from doctor.render import render
from tests.support.runs import fixture_pair, fixture_run, kinds, one
from tests.support.scripts import load_script

FIXTURES = Path(__file__).parent / "fixtures"
LLM = FIXTURES / "ascend_llm"
PROFILES = "transformer/profiles"
generate = load_script(LLM / "generate.py", "ascend_llm_generate_phases")


def pair(baseline: str, target: str) -> tuple[Comparison, tuple[Symptom, ...]]:
    return fixture_pair(baseline, target, "first")


@cache
def report(baseline: str | None, target: str):
    first = None if baseline is None else FIXTURES / baseline
    return diagnose(first, FIXTURES / target, isolate=False, baseline_role="first")


def phases_of(path: str) -> Symptom:
    (found,) = generation_phases(prepare(fixture_run(path)), "target")
    return found


# ------------------------------------------------------------------------------- Ascend-format fixture


@pytest.mark.parametrize("folder", list(generate.GENERATION))
def test_generator_rewrites_the_generation_folders_byte_for_byte(folder: str) -> None:
    text = generate.generation(*generate.GENERATION[folder])
    assert (LLM / folder / "kernel_details.csv").read_text(encoding="utf-8") == text


def test_prefill_steps_are_the_samples_rows_and_decode_steps_one_token() -> None:
    with generate.SAMPLE.open(encoding="utf-8", newline="") as handle:
        sample = [r for r in csv.DictReader(handle) if not r["Type"].endswith("Grad")]
    with (LLM / "generate_host_bound" / "kernel_details.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    prefill = [r for r in rows if r["Step Id"] == "1"]
    assert _cells(prefill) == _cells(sample)  # every cell of the sample's rows but the step and start
    decode = [r for r in rows if r["Step Id"] == "2"]
    attention = next(r for r in decode if r["Type"] == "FlashAttentionScore")
    assert attention["Input Shapes"].startswith('"1,2,512;4096,2,512;4096,2,512')  # query of one token
    assert {r["Step Id"] for r in rows} == {str(s) for s in range(1, 1 + 1 + generate.DECODE_STEPS)}
    assert min(float(r["Duration(us)"]) for r in decode) == pytest.approx(generate.MIN_KERNEL_US)


def _cells(rows: list[dict[str, str]]) -> list[str]:
    return sorted(str({k: v for k, v in r.items() if k not in ("Step Id", "Start Time(us)")}) for r in rows)


def test_host_bound_decode_is_named_and_compiled_decode_is_not() -> None:
    host, graph = phases_of("ascend_llm/generate_host_bound"), phases_of("ascend_llm/generate_graph")
    assert host.values["decode_host_bound"] == 1 and graph.values["decode_host_bound"] == 0
    assert host.values["decode_busy_share"] < DECODE_HOST_BUSY < graph.values["decode_busy_share"]
    assert (host.values["prefill_steps"], host.values["decode_steps"]) == (1, generate.DECODE_STEPS)
    ids = [c.id for c in report(None, "ascend_llm/generate_host_bound").causes if c.significant]
    assert ids[0] == "decode-host-bound" and "host-bound" not in ids  # the generic view joins it
    quiet = {c.id for c in report(None, "ascend_llm/generate_graph").causes}
    assert "decode-host-bound" not in quiet


def test_a_prefill_step_first_is_no_warm_up_outlier() -> None:
    side = prepare(fixture_run("ascend_llm/generate_graph"))
    walls = side.run.steps["duration_us"].astype("float64").to_numpy()
    assert walls[0] > 20 * walls[1:].max()  # the prefill step against decode steps
    symptoms = report(None, "ascend_llm/generate_graph").data["symptoms"]
    assert "first-step-outlier" not in {s["kind"] for s in symptoms}


# ------------------------------------------------------------------------------------ phase by phase


def test_decode_slower_phase_by_phase_with_the_prefill_unchanged() -> None:
    _, symptoms = pair("ascend_llm/generate_graph", "ascend_llm/generate_host_bound")
    gap = one(symptoms, "phase-step-gap")
    assert "step-time-gap" not in kinds(symptoms)
    assert gap.values["slower_phases"] == "decode" and gap.values["prefill_ratio"] == pytest.approx(1.0)
    assert gap.values["decode_ratio"] == pytest.approx(1.667 / 0.275, rel=0.01)
    decode = next(r for r in gap.evidence if r["phase"] == "decode")
    lost = decode["target_steps"] * (decode["target_ms_per_step"] - decode["baseline_ms_per_step"])
    assert gap.recoverable_ms_per_step == pytest.approx(lost / 9, abs=0.002)  # over all 9 target steps
    r = report("ascend_llm/generate_graph", "ascend_llm/generate_host_bound")
    assert r.verdict.startswith(
        "The target, compared phase by phase with the baseline, takes 1.00x the time per prefill step "
        "and 6.06x the time per decode step (2.20x at its own mix of prefill and decode steps)"
    )
    assert {"generation-phase-gap", "decode-host-bound"} <= {c.id for c in r.causes if c.significant}


def test_a_decode_heavy_target_against_a_prefill_only_baseline_is_not_called_faster_or_slower() -> None:
    _, symptoms = pair("ascend_llm/prefill_only", "ascend_llm/generate_host_bound")
    assert not {"step-time-gap", "phase-step-gap"} & kinds(symptoms)
    r = report("ascend_llm/prefill_only", "ascend_llm/generate_host_bound")
    timing = json.loads(render(r, "json"))["timing"]
    assert timing["ratio"] < 0.5  # the average steps: decode steps are short
    assert timing["phase_ratio"] == pytest.approx(1.0, abs=0.01)
    assert [p["phase"] for p in timing["phases"]] == ["prefill", "decode"]
    assert timing["phases"][1]["baseline_steps"] == 0 and timing["phases"][1]["ratio"] is None
    text = r.verdict
    assert "1.00x the time per prefill step" in text and not re.search(r"x (slower|faster)", text)
    assert "its 8 decode steps have no counterpart in the baseline" in text
    assert r.document.verdict.slowdown == pytest.approx(1.0, abs=0.01)


def test_a_prefill_only_target_against_a_generation_is_not_called_slower() -> None:
    comparison, symptoms = pair("ascend_llm/generate_host_bound", "ascend_llm/prefill_only")
    assert comparison.target.ms_per_step > 3 * comparison.baseline.ms_per_step  # what the average says
    assert not {"step-time-gap", "phase-step-gap"} & kinds(symptoms)
    text = report("ascend_llm/generate_host_bound", "ascend_llm/prefill_only").verdict
    assert "1.00x the time per prefill step" in text and not re.search(r"x (slower|faster)", text)


def test_chinese_verdict_names_the_phases() -> None:
    r = diagnose(
        LLM / "generate_graph", LLM / "generate_host_bound", isolate=False, baseline_role="first", lang="zh"
    )
    assert r.verdict.startswith(
        "目标运行与基线按阶段比较：每个预填充步的时间为 1.00 倍，每个解码步的时间为 6.06 倍"
    )


def test_a_pair_without_generation_has_no_phase_timing() -> None:
    timing = json.loads(render(report("cpu/infer_fp32_graph", "cpu/infer_fp32_pynative"), "json"))["timing"]
    assert "phases" not in timing and "phase_ratio" not in timing


# ---------------------------------------------------------------------------- real CPU generations


def test_real_pynative_decode_is_host_bound() -> None:
    host = phases_of(f"{PROFILES}/llama_generate_pynative")
    assert host.values["decode_host_bound"] == 1
    assert host.values["decode_busy_share"] < DECODE_HOST_BUSY
    ids = [c.id for c in report(None, f"{PROFILES}/llama_generate_pynative").causes if c.significant]
    assert "decode-host-bound" in ids


def test_real_wide_graph_decode_is_not_host_bound() -> None:
    wide = phases_of(f"{PROFILES}/llama_generate_wide_graph")
    assert wide.values["decode_host_bound"] == 0
    assert wide.values["decode_busy_share"] > DECODE_HOST_BUSY
    assert "decode-host-bound" not in {
        c.id for c in report(None, f"{PROFILES}/llama_generate_wide_graph").causes
    }


def test_real_pynative_generation_against_graph_is_slower_in_decode() -> None:
    _, symptoms = pair(f"{PROFILES}/llama_generate_graph", f"{PROFILES}/llama_generate_pynative")
    gap = one(symptoms, "phase-step-gap")
    assert "decode" in gap.values["slower_phases"].split("+")
    assert gap.values["decode_ratio"] >= 1.5
    assert "step-time-gap" not in kinds(symptoms)

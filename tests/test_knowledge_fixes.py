"""Every fix is real MindSpore 2.10: executed on CPU (verify: execute), resolved name by name and
keyword by keyword (all fixes), and free of the APIs blog posts invent (all fixes and texts)."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge import load_rules
from knowledge.verify import (
    FORBIDDEN_APIS,
    ONE_SHOT_SETTINGS,
    forbidden_hits,
    one_shot_calls,
    resolve_problems,
    run_snippets,
    scan_texts,
)

RULES = load_rules()
EXECUTE = [r for r in RULES if r.fix.verify == "execute"]
RESOLVE = [r for r in RULES if r.fix.verify == "resolve"]
# Snippets that must fail in the runner: proves a broken fix cannot pass.
CANARIES = {
    "canary-raises": "ms.amp.auto_mixed_precision(net, 'O7')\n",
    "canary-breaks-net": "net = None\n",
    "canary-fails-assert": "net.set_train(True)\nassert not net.training\n",
}

# --- forbidden APIs ---------------------------------------------------------------------------------

BLOG_SNIPPETS = [
    "from mindspore.amp import MixedPrecisionManager",
    "import mindspore.quant",
    "from mindspore.quant import StaticQuantizer",
    'ms.set_context(precision_mode="allow_fp32_to_fp16")',
    "ms.set_context(buffer_optimize=True)",
    "mindspore.graph_kernel.set_graph_kernel_flags('--opt_level=2')",
    "Profiler(profile_level=1)",
    "profiler = ms.Profiler(output_path='./prof')",
    "cfg(sampling_interval=10)",
    "ms_analyzer --input prof",
    "open it in MindScope",
    "ms.set_context(enable_graph_kernel=True)",
    "ms.set_context(graph_kernel_flags='--opt_level=1')",
    'ms.set_context(jit_config={"jit_level": "O2"})',
    '@ms.jit(jit_level="O2")',
    'ms.set_context(device_target="Ascend")',
    "ms.set_context(mempool_block_size='2GB')",
    "nn.Conv2dBnFoldQuant(3, 8, 3)",
    "model.infer_predict_layout(x)",
]
CURRENT_SNIPPETS = [
    "ms.set_context(mode=ms.GRAPH_MODE)",
    "ms.profiler.profile(experimental_config=ms.profiler._ExperimentalConfig(profiler_level=ProfilerLevel.Level1))",
    "ds.config.set_monitor_sampling_interval(1000)",
    '@ms.jit(jit_level="O1")',
    'ms.device_context.ascend.op_precision.precision_mode("allow_fp32_to_fp16")',
    'net.set_jit_config(ms.JitConfig(jit_level="O1"))',
    'ms.set_device("Ascend", 0)',
]


@pytest.mark.parametrize("text", BLOG_SNIPPETS)
def test_forbidden_patterns_catch_blog_apis(text: str) -> None:
    assert forbidden_hits(text), text


@pytest.mark.parametrize("text", CURRENT_SNIPPETS)
def test_forbidden_patterns_accept_current_apis(text: str) -> None:
    assert forbidden_hits(text) == []


def test_every_forbidden_pattern_is_exercised() -> None:
    used = {why for text in BLOG_SNIPPETS for why, pattern in FORBIDDEN_APIS if pattern.search(text)}
    assert used == {why for why, _ in FORBIDDEN_APIS}


def test_no_fix_or_text_uses_a_forbidden_api() -> None:
    assert scan_texts(RULES) == {}


# --- one process, one-shot settings -------------------------------------------------------------------


def test_one_shot_settings_appear_in_at_most_one_executed_fix() -> None:
    owners: dict[str, list[str]] = {}
    for rule in EXECUTE:
        for setting in one_shot_calls(rule.fix.code):
            owners.setdefault(setting, []).append(rule.id)
    assert set(owners) <= set(ONE_SHOT_SETTINGS)
    assert all(len(ids) == 1 for ids in owners.values()), owners


def test_one_shot_detection_sees_aliases() -> None:
    code = (
        "import mindspore as m\nfrom mindspore import runtime\n"
        "m.set_deterministic(False)\nruntime.set_memory()\n"
    )
    assert one_shot_calls(code) == {"mindspore.set_deterministic", "mindspore.runtime.set_memory"}


# --- resolution against the installed MindSpore ------------------------------------------------------


@pytest.mark.mindspore
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_every_fix_resolves_in_installed_mindspore(rule: Any) -> None:
    assert resolve_problems(rule.fix.code) == []


@pytest.mark.mindspore
@pytest.mark.parametrize(
    ("code", "problem"),
    [
        ("from mindspore.quant import StaticQuantizer", "mindspore.quant"),
        ("ms.amp.MixedPrecisionManager(net)", "MixedPrecisionManager does not resolve"),
        ("ms.amp.auto_mixed_precision(net, amp_levl='O2')", "unexpected keyword argument 'amp_levl'"),
        ("ms.profiler.profile(sampling_rate=10)", "unexpected keyword argument 'sampling_rate'"),
        ("ms.runtime.set_memory(block='1GB')", "unexpected keyword argument 'block'"),
        ("net.set_train(False, True)", "too many positional arguments"),
        ("net.set_trian(False)", "mindspore.nn.Cell.set_trian does not resolve"),
        ("from mindspore.profiler import Level1", "mindspore.profiler.Level1 does not resolve"),
        ("ms.device_context.ascend.op_precision.precision_mod('x')", "precision_mod does not resolve"),
        ("y = undefined_name + 1", "name 'undefined_name' is not defined"),
    ],
)
def test_resolution_catches_wrong_names_and_keywords(code: str, problem: str) -> None:
    problems = resolve_problems(code)
    assert any(problem in p for p in problems), problems


@pytest.mark.mindspore
def test_resolution_accepts_instance_attributes_and_snippet_names() -> None:
    code = "import gc\nnet.set_train(False)\nassert not net.training\nout = net(x)\ngc.freeze()\n"
    assert resolve_problems(code) == []


def test_ascend_only_fixes_are_resolved_not_executed() -> None:
    """Only Ascend-only fixes are resolved instead of executed, and fixes calling a once-per-process setting
    that another executed fix already calls (outputs-nondeterministic's ms.set_deterministic(True) beside
    deterministic-mode's ms.set_deterministic(False): the shared runner process can take only one)."""
    assert {r.id for r in RESOLVE} >= {"communication-overhead", "profiler-config-mismatch"}
    executed_once = {setting for rule in EXECUTE for setting in one_shot_calls(rule.fix.code)}
    for rule in RESOLVE:
        one_shot = one_shot_calls(rule.fix.code)
        assert "Ascend" in rule.fix.code or "NPU" in rule.fix.code or (one_shot and one_shot <= executed_once)


# --- execution on CPU -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def executed() -> dict[str, dict[str, Any]]:
    """All executable fixes plus the canaries, in ONE MindSpore subprocess."""
    return run_snippets({**{r.id: r.fix.code for r in EXECUTE}, **CANARIES})


@pytest.mark.mindspore
@pytest.mark.slow
@pytest.mark.parametrize("rule", EXECUTE, ids=lambda r: r.id)
def test_fix_runs_on_cpu(rule: Any, executed: dict[str, dict[str, Any]]) -> None:
    result = executed[rule.id]
    assert result["ok"], result["error"]


@pytest.mark.mindspore
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CANARIES))
def test_broken_snippets_fail_in_the_runner(name: str, executed: dict[str, dict[str, Any]]) -> None:
    assert not executed[name]["ok"] and executed[name]["error"]

"""Guards on the real MindSpore 2.10 CPU profiler fixtures (tests/fixtures/cpu) and the app examples.

Reads the files with plain csv/json only, so a regeneration that breaks a documented fact (see
tests/fixtures/cpu/README.md) fails here before any reader or rule test gets confusing.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
import statistics
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "cpu"
EXAMPLES = Path(__file__).parents[1] / "assets" / "examples"

# Scenario names are a contract with the other packages' tests.
AMP = ("train_amp_o2_graph", "infer_amp_o2_graph")
PYNATIVE = ("train_fp32_pynative", "infer_fp32_pynative")
REPEATS = ("infer_fp32_graph", "infer_fp32_graph_repeat", "infer_fp32_graph_repeat2")
SCENARIOS = (
    "train_fp32_graph",
    *AMP,
    *PYNATIVE,
    *REPEATS,
    "infer_trainmode_graph",
    "infer_trainmode_graph_again",
    "infer_trainmode_graph_head_eval",
    "infer_fp32_graph_batch32",
    "infer_fp32_graph_nowarmup",
    "infer_fp32_graph_dynamic_shapes",
    "infer_fp32_graph_dynamic_set_inputs",
    "infer_fp32_graph_contention",
    "infer_fp32_graph_intermittent",
    "infer_fp32_graph_intermittent_heavy",
    "infer_fp32_graph_profile_memory",
    "infer_fp32_graph_mstx",
)
FP32 = tuple(s for s in SCENARIOS if s not in AMP)
GRAPH = tuple(s for s in SCENARIOS if s not in PYNATIVE)
CORE_FILES = {
    "ASCEND_PROFILER_OUTPUT/trace_view.json",
    "FRAMEWORK/cpu_op_detail_info_0.csv",
    "FRAMEWORK/cpu_op_type_info_0.csv",
    "FRAMEWORK/cpu_op_execute_timestamp_0.txt",
    "FRAMEWORK/cpu_framework_0.txt",
}
MEMORY_FILE = "FRAMEWORK/cpu_ms_memory_record_0.txt"
DETAIL_HEADER = (
    "op_side,op_type,op_name,full_op_name,op_occurrences,op_total_time(ms),op_avg_time(ms),"
    "total_proportion,subgraph,pid"
)
TYPE_HEADER = "op_type,type_occurrences,execution_frequency(per-step),total_compute_time,avg_time(ms),percent"
MEMORY_HEADER = "Timestamp(ns),Total Allocated(Byte),Total Reserved(Byte),Total Active(Byte)"
RECORDED_STEPS = 5


# --------------------------------------------------------------------------- plain readers


def _roots(folder: Path) -> list[Path]:
    return sorted(folder.glob("*_ascend_ms"))


@cache
def _root(scenario: str) -> Path:
    (root,) = _roots(FIXTURES / scenario)
    return root


@cache
def _detail(scenario: str) -> tuple[dict[str, str], ...]:
    with open(_root(scenario) / "FRAMEWORK/cpu_op_detail_info_0.csv", newline="") as f:
        return tuple(csv.DictReader(f))


@cache
def _type_info(scenario: str) -> tuple[dict[str, str], ...]:
    with open(_root(scenario) / "FRAMEWORK/cpu_op_type_info_0.csv", newline="") as f:
        return tuple(csv.DictReader(f))


@cache
def _launches(scenario: str) -> dict[str, list[tuple[int, float, str]]]:
    """full_op_name -> [(start ns, duration ms, third value)] from cpu_op_execute_timestamp_0.txt."""
    out: dict[str, list[tuple[int, float, str]]] = {}
    for line in (_root(scenario) / "FRAMEWORK/cpu_op_execute_timestamp_0.txt").read_text().splitlines():
        name, kind, rest = line.split(";")
        assert kind == "HostCpuOps"
        out[name] = [(int(a), float(d), z) for a, d, z in (item.split(",") for item in rest.split())]
    return out


@cache
def _framework(scenario: str) -> tuple[list[str], ...]:
    text = (_root(scenario) / "FRAMEWORK/cpu_framework_0.txt").read_text()
    return tuple(line.split(";") for line in text.splitlines())


@cache
def _trace(scenario: str) -> tuple[dict, ...]:
    return tuple(json.loads((_root(scenario) / "ASCEND_PROFILER_OUTPUT/trace_view.json").read_text()))


def _occurrences(scenario: str) -> dict[str, int]:
    return {r["full_op_name"]: int(r["op_occurrences"]) for r in _detail(scenario)}


def _step_busy_ms(scenario: str) -> list[float]:
    """Per-step op time of a static graph run: every op runs once per step, so launch k is in step k."""
    per_op = [sorted(v) for v in _launches(scenario).values()]
    steps = {len(v) for v in per_op}
    assert len(steps) == 1, f"{scenario}: ops do not all run once per step"
    return [sum(v[k][1] for v in per_op) for k in range(steps.pop())]


def _cast_launches(scenario: str) -> int:
    return sum(n for name, n in _occurrences(scenario).items() if name.rsplit("/", 1)[-1].startswith("Cast"))


# --------------------------------------------------------------------------- tree and formats


def test_every_contract_scenario_exists_and_nothing_else() -> None:
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders == set(SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_one_root_with_only_documented_files(scenario: str) -> None:
    folder = FIXTURES / scenario
    roots = _roots(folder)
    assert len(roots) == 1 and list(folder.iterdir()) == roots
    assert re.fullmatch(r".+_\d+_\d{17}_ascend_ms", roots[0].name)
    files = {p.relative_to(roots[0]).as_posix() for p in roots[0].rglob("*") if p.is_file()}
    expected = CORE_FILES | ({MEMORY_FILE} if scenario == "infer_fp32_graph_profile_memory" else set())
    assert files == expected  # no logs/, no profiler_info_*.json, no PROF_*, no kernel_details.csv
    assert sum((roots[0] / f).stat().st_size for f in files) < 400_000


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_csv_headers_and_host_side(scenario: str) -> None:
    root = _root(scenario)
    assert (root / "FRAMEWORK/cpu_op_detail_info_0.csv").read_text().splitlines()[0] == DETAIL_HEADER
    assert (root / "FRAMEWORK/cpu_op_type_info_0.csv").read_text().splitlines()[0] == TYPE_HEADER
    rows = _detail(scenario)
    assert {r["op_side"] for r in rows} == {"Host"} and {r["subgraph"] for r in rows} == {"Default"}
    assert sum(float(r["total_proportion"]) for r in rows) == pytest.approx(1.0, abs=1e-3)  # a fraction


def test_memory_record_header_and_order() -> None:
    lines = (_root("infer_fp32_graph_profile_memory") / MEMORY_FILE).read_text().splitlines()
    assert lines[0] == MEMORY_HEADER
    stamps = [int(line.split(",")[0]) for line in lines[1:]]
    assert len(stamps) > 10 and stamps == sorted(stamps)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_timestamp_file_has_one_entry_per_launch(scenario: str) -> None:
    launches = _launches(scenario)
    assert {k: len(v) for k, v in launches.items()} == _occurrences(scenario)
    assert {z for v in launches.values() for _, _, z in v} == {"0"}
    assert len(_framework(scenario)) == sum(_occurrences(scenario).values())  # one framework line per launch


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_trace_view_repeats_the_launches_without_step_markers(scenario: str) -> None:
    trace = _trace(scenario)
    processes = {e["pid"]: e["args"]["name"] for e in trace if e["ph"] == "M" and e["name"] == "process_name"}
    assert processes == {2: "CPU OP", 3: "Scope Layer"}
    ops = [e for e in trace if e["ph"] == "X" and e["pid"] == 2]
    assert len(ops) == sum(_occurrences(scenario).values())
    starts = {name: {a for a, _, _ in v} for name, v in _launches(scenario).items()}
    for e in ops[:20]:  # ts/dur are strings in microseconds; ts is the ns start within 1 us
        assert isinstance(e["ts"], str) and e["args"] == {"type": "HostCpuOps"}
        assert min(abs(float(e["ts"]) * 1000 - a) for a in starts[e["name"]]) < 1000
    assert not [e for e in trace if "step" in e.get("name", "").lower()]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_execution_frequency_is_type_count_over_rarest_op_of_the_type(scenario: str) -> None:
    per_type: dict[str, list[int]] = {}
    for r in _detail(scenario):
        per_type.setdefault(r["op_type"], []).append(int(r["op_occurrences"]))
    for r in _type_info(scenario):
        freq = int(r["type_occurrences"]) // min(per_type[r["op_type"]])
        assert int(r["execution_frequency(per-step)"]) == freq


def test_execution_frequency_is_not_calls_per_step_when_shapes_change() -> None:
    conv = next(r for r in _type_info("infer_fp32_graph_dynamic_shapes") if r["op_type"] == "Conv2D")
    assert int(conv["type_occurrences"]) == 3 * RECORDED_STEPS  # 3 convolutions per step
    assert int(conv["execution_frequency(per-step)"]) == 15  # not 3
    static = next(r for r in _type_info("infer_fp32_graph") if r["op_type"] == "Conv2D")
    assert int(static["execution_frequency(per-step)"]) == 3


# --------------------------------------------------------------------------- names and dtypes


@pytest.mark.parametrize("scenario", AMP)
def test_amp_runs_have_cast_ops_and_output_to16_scopes(scenario: str) -> None:
    names = _occurrences(scenario)
    assert any("bn-_OutputTo16/_backbone-BatchNorm2d/BatchNorm-op0" in n for n in names)
    expected = {"infer_amp_o2_graph": 26, "train_amp_o2_graph": 64}[scenario]
    assert _cast_launches(scenario) == expected * RECORDED_STEPS


@pytest.mark.parametrize("scenario", FP32)
def test_fp32_runs_have_no_cast(scenario: str) -> None:
    assert _cast_launches(scenario) == 0
    assert not [n for n in _occurrences(scenario) if "_OutputTo" in n]


@pytest.mark.parametrize("scenario", PYNATIVE)
def test_pynative_names_have_no_cell_scope(scenario: str) -> None:
    names = _occurrences(scenario)
    assert all(re.fullmatch(r"(Default/)?[A-Za-z0-9]+(-op\d+)?", n) for n in names), names
    assert "Default/Conv2D-op0" in names and names["ReLU"] == 3 * RECORDED_STEPS  # merged bare row
    assert sum(1 for line in _framework(scenario) if line[:2] == ["", ""]) > 0  # bare rows lack a record


@pytest.mark.parametrize("scenario", GRAPH)
def test_graph_names_carry_cell_scopes(scenario: str) -> None:
    names = _occurrences(scenario)
    assert all(n.startswith(("Default/", "Gradients/Default/")) for n in names)
    assert any(re.search(r"/block1-Block/conv-Conv2d/Conv2D-op\d+$", n) for n in names)


def test_training_names_split_forward_backward_optimizer() -> None:
    names = _occurrences("train_fp32_graph")
    assert "Default/network-WithLossCell/_backbone-Net/block1-Block/conv-Conv2d/Conv2D-op0" in names
    assert any(n.startswith("Gradients/") and "Conv2DBackpropFilter" in n for n in names)
    assert any(n.startswith("Default/optimizer-Momentum/ApplyMomentum-op") for n in names)
    assert not [n for n in _occurrences("infer_fp32_graph") if n.startswith("Gradients/") or "optimizer" in n]


def test_train_mode_at_inference_differs_from_eval() -> None:
    train_mode, eval_mode = _occurrences("infer_trainmode_graph"), _occurrences("infer_fp32_graph")
    assert set(train_mode) - set(eval_mode) == {"Default/dropout-Dropout/Dropout-op0"}
    assert set(eval_mode) <= set(train_mode)  # BatchNorm keeps its type and name in both modes

    def bn_inputs(scenario: str) -> set[int]:
        return {
            sum(f.startswith("input_") for f in line)
            for line in _framework(scenario)
            if line[0] == "BatchNorm"
        }

    assert bn_inputs("infer_trainmode_graph") == {10} and bn_inputs("infer_fp32_graph") == {9}


def test_eval_mode_on_the_head_cell_only_leaves_dropout_and_batch_statistics() -> None:
    # set_train(False) on net.fc after set_train(True): the fix that does not help (tests/test_after.py)
    for scenario in ("infer_trainmode_graph_again", "infer_trainmode_graph_head_eval"):
        assert set(_occurrences(scenario)) == set(_occurrences("infer_trainmode_graph"))
        bn = {
            sum(f.startswith("input_") for f in line)
            for line in _framework(scenario)
            if line[0] == "BatchNorm"
        }
        assert bn == {10}


# --------------------------------------------------------------------------- timing facts


def test_repeated_identical_runs_agree() -> None:
    means = [statistics.mean(_step_busy_ms(s)) for s in REPEATS]
    assert max(means) / min(means) < 1.25
    assert all(set(_occurrences(s)) == set(_occurrences(REPEATS[0])) for s in REPEATS)


def test_batch32_is_clearly_slower_than_batch8() -> None:  # the agreement check above can fail
    ratio = statistics.mean(_step_busy_ms("infer_fp32_graph_batch32")) / statistics.mean(
        _step_busy_ms("infer_fp32_graph")
    )
    assert ratio > 2


def test_contention_second_half_is_slower() -> None:
    busy = _step_busy_ms("infer_fp32_graph_contention")
    assert len(busy) == 30
    assert statistics.mean(busy[15:]) > 1.5 * statistics.mean(busy[:15])


def test_intermittent_load_slows_only_its_steps() -> None:
    """The loaded steps of both intermittent runs are slower than their calm steps; the heavy run has
    three times as many of them."""
    for scenario, loaded in (
        ("infer_fp32_graph_intermittent", (8, 9, 17, 18)),
        ("infer_fp32_graph_intermittent_heavy", (3, 4, 5, 9, 10, 11, 15, 16, 17, 21, 22, 23)),
    ):
        busy = _step_busy_ms(scenario)
        assert len(busy) == 24
        calm = [b for i, b in enumerate(busy) if i not in loaded]
        hot = [b for i, b in enumerate(busy) if i in loaded]
        assert statistics.median(hot) > 1.3 * statistics.median(calm), scenario


def test_quiet_run_has_no_drift() -> None:
    busy = _step_busy_ms("infer_fp32_graph")
    assert statistics.mean(busy[-2:]) < 1.15 * statistics.mean(busy[:2])


def test_no_warmup_first_step_is_slow() -> None:
    busy = _step_busy_ms("infer_fp32_graph_nowarmup")
    assert busy[0] > 1.5 * statistics.median(busy[1:])


def test_warmed_up_first_step_is_not_slow() -> None:
    busy = _step_busy_ms("infer_fp32_graph")
    assert busy[0] < 1.2 * statistics.median(busy[1:])


def test_new_shapes_on_a_static_net_recompile() -> None:
    conv1 = {
        name.rsplit("-op", 1)[-1]: n
        for name, n in _occurrences("infer_fp32_graph_dynamic_shapes").items()
        if "/block1-Block/conv-Conv2d/" in name
    }
    assert conv1 == {"0": 2, "1": 1, "2": 1, "3": 1}  # sizes 16, 20, 24, 16 again, 28
    first_inputs = {line[3] for line in _framework("infer_fp32_graph_dynamic_shapes") if line[0] == "Conv2D"}
    assert {f"input_1:[8, 3, {s}, {s}]" for s in (16, 20, 24, 28)} <= first_inputs
    launches = sorted(x for v in _launches("infer_fp32_graph_dynamic_shapes").values() for x in v)
    gaps_ms = [(b[0] - a[0]) / 1e6 - a[1] for a, b in itertools.pairwise(launches)]
    assert sum(g > 100 for g in gaps_ms) == 3  # one compile gap per new size


def test_dynamic_inputs_compile_once_with_unknown_dims() -> None:
    names = _occurrences("infer_fp32_graph_dynamic_set_inputs")
    assert all(n.endswith("-op0") and c == RECORDED_STEPS for n, c in names.items())
    conv_inputs = {
        line[3] for line in _framework("infer_fp32_graph_dynamic_set_inputs") if line[0] == "Conv2D"
    }
    assert "input_1:[8, 3, -1, -1]" in conv_inputs


def test_mstx_ranges_and_marks_leave_no_trace_on_cpu() -> None:
    mstx, plain = _trace("infer_fp32_graph_mstx"), _trace("infer_fp32_graph")
    assert Counter((e["ph"], e["pid"]) for e in mstx) == Counter((e["ph"], e["pid"]) for e in plain)
    assert set(_occurrences("infer_fp32_graph_mstx")) == set(_occurrences("infer_fp32_graph"))


def test_measured_summary_matches_the_folders() -> None:
    runs = json.loads((FIXTURES / "measured_steps.json").read_text())["runs"]
    assert set(runs) == set(SCENARIOS)
    assert all(runs[s]["root"] == _root(s).name and runs[s]["mindspore"] == "2.10.0" for s in SCENARIOS)


# --------------------------------------------------------------------------- bundled app examples


@pytest.mark.parametrize("side", ["amp_train_vs_fp32_infer/baseline", "amp_train_vs_fp32_infer/target"])
def test_amp_example_pairs_amp_training_with_fp32_inference(side: str) -> None:
    (root,) = _roots(EXAMPLES / side)
    with open(root / "FRAMEWORK/cpu_op_detail_info_0.csv", newline="") as f:
        names = [r["full_op_name"] for r in csv.DictReader(f)]
    is_baseline = side.endswith("baseline")
    assert any("/Cast-op" in n for n in names) is is_baseline
    assert any(n.startswith("Gradients/") for n in names) is is_baseline


@pytest.mark.parametrize("side", ["pynative_infer/baseline", "pynative_infer/target"])
def test_pynative_example_pairs_graph_with_pynative(side: str) -> None:
    (root,) = _roots(EXAMPLES / side)
    with open(root / "FRAMEWORK/cpu_op_detail_info_0.csv", newline="") as f:
        names = [r["full_op_name"] for r in csv.DictReader(f)]
    assert any("-Block/" in n for n in names) is side.endswith("baseline")

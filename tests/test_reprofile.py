"""reprofile.py: the generated re-profiling script of a diagnosis. Its settings are the baseline's
recorded profiler_info, its fixes the rules' code, and (mindspore test) it runs as is on CPU with
MindSpore 2.10 once its two stubs are filled, and Perf Doctor reads what it packs."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from functools import cache
from pathlib import Path

import pytest

from core import InputError
from diagnosis import kept_names
from doctor import Report, diagnose, reprofile_script
from doctor.reprofile import DEFAULTS
from tests.support.inputs import ASCEND, CPU

TRAIN = CPU / "train_fp32_graph"
LEVEL1 = ASCEND / "level1"
BEGIN = "# ==== your code: build_net() and batches() "
END = "# ==== end of your code "


@cache
def ascend_pair() -> Report:
    return diagnose(LEVEL1 / "train", LEVEL1 / "infer", isolate=False)


@cache
def pynative_pair() -> Report:
    return diagnose(TRAIN, CPU / "infer_fp32_pynative", isolate=False)


def constants(script: str) -> dict[str, object]:
    """The module-level constants of a generated script, as Python values or source text."""
    values: dict[str, object] = {}
    for node in ast.parse(script).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                values[node.targets[0].id] = ast.unparse(node.value)
    return values


@pytest.mark.slow
def test_settings_are_exactly_the_baselines_recorded_profiler_info():
    info = json.loads(next((LEVEL1 / "train").rglob("profiler_info_*.json")).read_text())[
        "profiler_parameters"
    ]
    script = reprofile_script(ascend_pair())
    got = constants(script)
    assert got["LEVEL"] == f"ProfilerLevel.{info['profiler_level']}"
    assert got["AIC_METRICS"] == f"AicoreMetrics.{info['aic_metrics']}"
    assert got["ACTIVITIES"] == "[" + ", ".join(f"ProfilerActivity.{a}" for a in info["activities"]) + "]"
    assert (got["WITH_STACK"], got["PROFILE_MEMORY"]) == (info["with_stack"], info["profile_memory"])
    assert got["SCHEDULE"] == info["schedule"]
    assert "recorded in its profiler_info" in script
    assert "profile(" in script and "_ExperimentalConfig(" in script and "schedule(**SCHEDULE)" in script


@pytest.mark.slow
def test_a_baseline_without_recorded_settings_gets_the_defaults_and_says_so():
    script = reprofile_script(pynative_pair())
    got = constants(script)
    assert got["SCHEDULE"] == DEFAULTS.schedule
    assert got["LEVEL"] == f"ProfilerLevel.{DEFAULTS.level}"
    assert "it recorded none, as a CPU profile never does" in script


def test_ticked_fixes_are_the_rules_code_in_rank_order():
    from knowledge import load_rules

    code = {rule.id: rule.fix.code for rule in load_rules()}
    script = reprofile_script(ascend_pair(), ["cast-overhead", "precision-mismatch"])
    blocks = re.findall(r"# ---- fix \d+: ([a-z0-9-]+)", script)
    assert blocks == ["precision-mismatch", "cast-overhead"]  # the diagnosis's order, not the ticking order
    for cause in blocks:
        for line in code[cause].strip().splitlines():
            assert (f"    {line}" if line.strip() else "") in script.splitlines()
    assert "ai-cpu-fallback" not in script


def test_the_default_is_the_ranked_causes_and_profiling_fixes_run_no_code():
    report = ascend_pair()
    script = reprofile_script(report)
    ranked = [c.id for c in report.document.causes if c.section == "ranked"]
    assert re.findall(r"# ---- fix \d+: ([a-z0-9-]+)", script) == ranked
    assert "profiler-config-mismatch" in ranked
    assert "./prof_infer" not in script  # that rule's snippet profiles into its own folder: not run
    assert "applied by this script" in script


def test_no_fix_ticked_still_profiles_the_target_again():
    script = reprofile_script(ascend_pair(), [])
    assert "# (no fix was ticked" in script
    compile(script, "reprofile.py", "exec")


def test_an_unknown_fix_is_a_clear_input_error():
    with pytest.raises(InputError, match="not causes of this report"):
        reprofile_script(ascend_pair(), ["not-a-cause"])


def test_a_single_run_report_has_no_baseline_settings():
    with pytest.raises(InputError, match="two profiles"):
        reprofile_script(diagnose(None, CPU / "infer_fp32_pynative", isolate=False))


def test_a_hostile_target_name_stays_a_string_literal(tmp_path):
    name = "x'''\"\"\"\\ import os; os.system('id') #"
    target = tmp_path / name
    shutil.copytree(CPU / "infer_fp32_pynative", target)
    script = reprofile_script(diagnose(TRAIN, target, isolate=False))
    assert constants(script)["TARGET"] == name
    assert "os.system" not in script.replace(repr(name), "")


def test_kept_names_keep_every_file_a_reader_opened_and_drop_the_rest():
    kept = re.compile(kept_names())
    for report in (ascend_pair(), pynative_pair()):
        for run in report.document.runs:
            assert run.files and all(kept.fullmatch(Path(f).name) for f in run.files)
    for dropped in (
        "ascend_mindspore_profiler_0.db",
        "profiler_20261130_123.log",
        "msprof_0.json",
    ):
        assert not kept.fullmatch(dropped)


# ------------------------------------------------------------------------ executed on CPU

STUBS = '''
class Block(nn.Cell):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=stride, pad_mode="same", has_bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block1, self.block2, self.block3 = Block(3, 8, 1), Block(8, 16, 2), Block(16, 32, 2)
        self.pool, self.flatten = nn.AdaptiveAvgPool2d(1), nn.Flatten()
        self.dropout, self.fc = nn.Dropout(p=0.5), nn.Dense(32, 10)

    def construct(self, x):
        x = self.block3(self.block2(self.block1(x)))
        return self.fc(self.dropout(self.flatten(self.pool(x))))


def build_net():
    """The tests/fixtures/cpu net as the slow target ran it: PyNative, training mode left on."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(1234)
    net = Net()
    net.set_train(True)
    return net


def batches():
    rng = np.random.default_rng(1234)
    for _ in range(2):
        yield ms.Tensor(rng.standard_normal((8, 3, 16, 16)).astype(np.float32))
'''


def filled(script: str) -> str:
    """The script with its two stubs replaced by the test net, everything else as generated."""
    start, end = script.index(BEGIN), script.index(END)
    return script[:start] + BEGIN + "\n" + STUBS + "\n" + script[end:]


@pytest.mark.mindspore
@pytest.mark.slow
def test_the_script_runs_on_cpu_and_perf_doctor_reads_and_judges_its_output(tmp_path):
    recorded = ascend_pair().document.runs[0].profiler_config  # real recorded settings (Ascend level1)
    report = pynative_pair()
    runs = [
        r.model_copy(update={"profiler_config": recorded}) if r.role == "baseline" else r
        for r in report.document.runs
    ]
    report = Report.of(report.document.model_copy(update={"runs": runs}))
    script = filled(reprofile_script(report, ["execution-mode-mismatch"]))
    path = tmp_path / "reprofile.py"
    path.write_text(script, encoding="utf-8")
    out = tmp_path / "after_run"
    env = {**os.environ, "GLOG_v": "3"}
    done = subprocess.run(
        [sys.executable, str(path), "--device", "CPU", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    archive = tmp_path / "after_run.zip"
    assert f"packed into {archive}" in done.stdout
    names = zipfile.ZipFile(archive).namelist()
    written = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.parent.name == "logs" for p in written)  # MindSpore wrote logs, which are not packed
    assert names and all(re.fullmatch(kept_names(), Path(n).name) for n in names)
    assert len(names) < len(written)
    assert any(n.endswith("FRAMEWORK/cpu_op_detail_info_0.csv") for n in names)
    looped = diagnose(TRAIN, CPU / "infer_fp32_pynative", after=archive, isolate=False)
    section = looped.data["after"]
    assert (
        section["run"]["execution_mode"] == "graph" and section["run"]["steps"] == recorded.schedule["active"]
    )
    assert [(c["id"], c["status"]) for c in section["causes"]] == [("execution-mode-mismatch", "resolved")]
    # No gain is asserted: the committed target ran on another day, in another machine state.
    assert section["run"]["layout"] == "cpu-ms" and section["step_basis"] == "wall"

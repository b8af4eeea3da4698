"""The bundled Ascend example, derived from the forward pass of a real NPU step
(assets/examples/generate_ascend.py): the committed folders are the generator's output, they follow the
documented layout, and the pair diagnoses the three injected culprits."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from doctor import diagnose
from doctor.i18n import UI_TEXT
from tests.support.inputs import ROOT
from webapp.examples import available_pairs

EXAMPLE = ROOT / "assets" / "examples" / "ascend_derived_fp32_split"
GENERATOR = ROOT / "assets" / "examples" / "generate_ascend.py"
SAMPLE = ROOT.parent / "shared" / "samples" / "ascend" / "torch_npu_cnn_train_step" / "trace_view.json"
KD = "ASCEND_PROFILER_OUTPUT/kernel_details.csv"


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _kernels(side: str) -> list[dict[str, str]]:
    [path] = (EXAMPLE / side).glob(f"*_ascend_ms/{KD}")
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_the_committed_example_is_what_the_generator_writes_from_the_real_sample(tmp_path: Path) -> None:
    assert SAMPLE.is_file(), "the real NPU step the example is derived from"
    subprocess.run([sys.executable, str(GENERATOR), str(tmp_path / "out")], check=True, capture_output=True)
    assert _files(tmp_path / "out") == _files(EXAMPLE)


def test_the_kernels_are_the_real_steps_forward_pass() -> None:
    """Every kernel name of the baseline comes from the sample's Ascend Hardware events (the fused convs
    carry the real Conv2D's number and duration); the target adds only the split BNInfer kernels."""
    events = json.loads(SAMPLE.read_text(encoding="utf-8"))
    pids = {
        e["pid"] for e in events if e.get("name") == "process_name" and e["args"]["name"] == "Ascend Hardware"
    }
    real = {e["name"]: float(e["dur"]) for e in events if e.get("ph") == "X" and e["pid"] in pids}
    base = [row for row in _kernels("baseline") if row["Step ID"] == "1"]
    names = [row["Name"].rsplit("/", 1)[1] for row in base]
    fused = [n for n in names if n.startswith("Conv2D_BNInfer_Relu_fusion")]
    assert fused == ["Conv2D_BNInfer_Relu_fusion1", "Conv2D_BNInfer_Relu_fusion3"]
    assert all(n in real for n in names if n not in fused)
    assert {row["Input Data Types"].split(";")[0] for row in base} == {"FLOAT16"}
    target = [row for row in _kernels("target") if row["Step ID"] == "1"]
    extra = [row["Name"].rsplit("/", 1)[1] for row in target]
    assert sorted(set(extra) - set(names)) == ["BNInfer", "Conv2D1", "Conv2D3"]
    assert {row["Input Data Types"].split(";")[0] for row in target} == {"FLOAT"}


def test_the_profiler_levels_differ_in_the_recorded_configuration() -> None:
    levels = {
        side: json.loads(next((EXAMPLE / side).glob("*_ascend_ms/profiler_info_0.json")).read_text())[
            "profiler_parameters"
        ]["profiler_level"]
        for side in ("baseline", "target")
    }
    assert levels == {"baseline": "Level1", "target": "Level2"}


@pytest.mark.slow
def test_the_pair_diagnoses_fp32_the_conv_bn_split_and_the_profiler_level() -> None:
    report = diagnose(EXAMPLE / "baseline", EXAMPLE / "target", isolate=False)
    assert [r.layout for r in report.document.runs] == ["ascend-ms", "ascend-ms"]
    ranked = [c.id for c in report.document.causes if c.section == "ranked"]
    assert ranked[:3] == ["precision-mismatch", "fusion-missing", "profiler-config-mismatch"]
    assert report.document.verdict.top_cause == "precision-mismatch"
    kinds = {s["kind"]: s for s in report.data["symptoms"] if s["source"] == "pair"}
    assert kinds["profiler-config-diff"]["values"]["differences"] == {"level": ["Level1", "Level2"]}
    assert "BNInfer" in kinds["fusion-split"]["summary"]
    assert kinds["precision-change"]["values"]["ops_changed"] == 5


def test_the_example_is_offered_with_one_language_per_label() -> None:
    assert "ascend_derived_fp32_split" in [p.name for p in available_pairs()]
    en, zh = UI_TEXT["en"]["ex_ascend_derived_fp32_split"], UI_TEXT["zh"]["ex_ascend_derived_fp32_split"]
    assert "derived from a real NPU step" in en and "msprof-analyze" in en
    assert "派生" in zh and not any("\u4e00" <= ch <= "\u9fff" for ch in en)

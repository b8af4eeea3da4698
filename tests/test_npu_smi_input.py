"""`npu-smi info` text given beside the profiles reaches the frequency analysis of the target run."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InputError
from diagnosis.readers.npu_smi import read_npu_smi
from doctor import diagnose

SYMPTOMS = Path(__file__).parent / "fixtures" / "ascend_symptoms"
SERVING = SYMPTOMS / "serving"
SMI = SYMPTOMS / "npu_smi"


def _kinds(report) -> set[str]:
    return {s["kind"] for s in report.data["symptoms"]}


@pytest.mark.slow
def test_throttled_npu_smi_reading_gives_a_frequency_drop():
    assert "frequency-drop" not in _kinds(diagnose(SERVING / "steady", SERVING / "slow"))
    report = diagnose(SERVING / "steady", SERVING / "slow", npu_smi=SMI / "common_throttled.txt")
    drop = next(s for s in report.data["symptoms"] if s["kind"] == "frequency-drop")
    assert drop["values"]["min_mhz"] < drop["values"]["max_mhz"]
    assert drop["values"]["temperature_c"] > 80


@pytest.mark.slow
def test_idle_chip_reading_is_not_a_frequency_drop():
    idle = diagnose(SERVING / "steady", SERVING / "slow", npu_smi=SMI / "common_idle.txt")
    assert "frequency-drop" not in _kinds(idle)


def test_text_without_readings_is_a_clear_error(tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("the device felt warm\n")
    with pytest.raises(InputError, match=r"notes\.txt: no npu-smi readings found"):
        read_npu_smi(junk)
    with pytest.raises(InputError, match="cannot be read"):
        read_npu_smi(tmp_path / "missing.txt")

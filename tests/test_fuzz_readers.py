"""Property-based fuzzing of every profile reader: a real fixture of each layout with one file damaged
(truncated, bytes flipped, a hostile token spliced in, a number replaced, emptied or removed) either
reads into a Run or fails with one InputError; never another exception.

The archive extractor and the MINDIR decoder have their own properties in test_sources.py and
test_graph_malformed.py; test_fuzz_pipeline.py drives damaged profiles through the whole diagnosis.
Longer, random runs: PERF_DOCTOR_FUZZ_EXAMPLES=2000 PERF_DOCTOR_FUZZ_RANDOM=1 (see docs/security.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import InputError
from diagnosis.ingest import read_folder
from diagnosis.readers.npu_smi import npu_smi_frame
from tests.support.damage import DAMAGE, EXAMPLES, LAYOUTS, Damage, damaged, files_below, fuzz_settings, known

FUZZ = fuzz_settings(EXAMPLES)
# Layouts whose readers fail the property with the default examples, each with the bug it finds (in code
# this suite does not own). Strict: once fixed, the test fails until the entry is removed.
KNOWN_BUGS: dict[str, str] = {}


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One private copy of every layout's fixture; each example damages a file and restores it."""
    base = tmp_path_factory.mktemp("fuzz")
    return {name: Path(shutil.copytree(source, base / name)) for name, source in LAYOUTS.items()}


def read_damaged(root: Path, path: Path, damage: Damage) -> None:
    """Read the folder with one file damaged: a run, or one single-line InputError."""
    with damaged(path, damage):
        try:
            run = read_folder(root)
        except InputError as error:
            assert error.message and "\n" not in error.message
        else:
            assert run.meta.layout and run.kernels is not None


# The fast lane fuzzes one (Ascend) layout; CI every layout.
FAST_LAYOUTS = frozenset({"ascend-ms.level1-infer"})


@pytest.mark.parametrize("layout", known(sorted(LAYOUTS), KNOWN_BUGS, FAST_LAYOUTS))
@FUZZ
@given(data=st.data())
@pytest.mark.slow
def test_a_damaged_file_reads_or_raises_one_input_error(layout: str, copies: dict[str, Path], data) -> None:
    root = copies[layout]
    path = data.draw(st.sampled_from(files_below(root)), label="file")
    damage = data.draw(DAMAGE, label="damage")
    read_damaged(root, path, damage)


@FUZZ
@given(text=st.text(max_size=3000))
def test_npu_smi_text_parses_to_a_frame(text: str) -> None:
    frame = npu_smi_frame(text)
    assert frame is not None

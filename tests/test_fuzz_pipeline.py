"""Property-based fuzzing of the whole diagnosis: a damaged target profile (any file, any damage of
test_fuzz_readers) compared with a good baseline, and a damaged model inspected on its own, end in a
report or in one InputError; never another exception. Runs in-process (isolate=False): the isolation
layer adds nothing to what the analysis does with the data.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import InputError
from doctor import diagnose, inspect_model
from tests.support.damage import DAMAGE, EXAMPLES, Damage, damaged, files_below, fuzz_settings, known
from tests.support.inputs import ASCEND, CPU, MINDIR

PAIRS = {
    "cpu": (CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph"),
    "ascend-level1": (ASCEND / "level1" / "train", ASCEND / "level1" / "infer"),
}
MODEL = MINDIR / "conv_bn_relu_eval.mindir"
FUZZ = fuzz_settings(EXAMPLES)  # about 0.4 s an example: the profile test is marked slow
KNOWN_BUGS: dict[str, str] = {}


@pytest.fixture(scope="module")
def targets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A private copy of each pair's target; each example damages a file and restores it."""
    base = tmp_path_factory.mktemp("pipeline")
    return {name: Path(shutil.copytree(target, base / name)) for name, (_, target) in PAIRS.items()}


def diagnose_damaged(baseline: Path, root: Path, path: Path, damage: Damage) -> None:
    """Diagnose with one target file damaged: a report with a verdict, or one single-line InputError."""
    with damaged(path, damage):
        try:
            report = diagnose(baseline, root, isolate=False)
        except InputError as error:
            assert error.message and "\n" not in error.message
        else:
            assert report.kind == "pair" and report.data["verdict"]["text"]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("pair", known(sorted(PAIRS), KNOWN_BUGS))
@FUZZ
@given(data=st.data())
def test_a_damaged_target_is_diagnosed_or_refused(pair: str, targets: dict[str, Path], data) -> None:
    root = targets[pair]
    path = data.draw(st.sampled_from(files_below(root)), label="file")
    diagnose_damaged(PAIRS[pair][0], root, path, data.draw(DAMAGE, label="damage"))


@FUZZ
@given(damage=DAMAGE)
def test_a_damaged_model_is_inspected_or_refused(damage: Damage, tmp_path_factory) -> None:
    damaged = damage.apply(MODEL.read_bytes())
    if damaged is None:
        return
    path = tmp_path_factory.mktemp("model") / "model.mindir"
    path.write_bytes(damaged)
    try:
        report = inspect_model(path, isolate=False)
    except InputError as error:
        assert error.message and "\n" not in error.message
    else:
        assert report.kind == "mindir"

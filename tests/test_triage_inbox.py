"""What an inbox submission is taken for: pair, single, model, pair+model, or ambiguous with a reason;
archives at any level, multi-rank runs and role names. Built from the real fixtures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.errors import InputError
from desk.triage.inbox import Ambiguous, Plan, plan_submission, role_hint, submissions
from diagnosis.workspace import Workspace
from tests.support.inbox import FORMULA_NAME, MODEL, broken_zip, build_inbox, tar_folder, zip_folder
from tests.support.inputs import ASCEND, CPU

TWO_RANK = ASCEND / "two_rank"


def plan(path: Path) -> Plan:
    with Workspace() as workspace:
        return plan_submission(path, workspace)


def test_submissions_are_the_visible_entries_in_name_order(tmp_path):
    inbox = build_inbox(tmp_path)
    names = [p.name for p in submissions(inbox)]
    assert names == [FORMULA_NAME, "broken.zip", "empty", "good_pair", "model_only.mindir",
                     "pair_and_model", "single_run.tar.gz", "three_runs"]  # fmt: skip
    with pytest.raises(InputError, match="is not a folder"):
        submissions(inbox / "model_only.mindir")


def test_two_runs_named_train_and_infer_are_a_pair_with_roles_from_the_names(tmp_path):
    for name in ("infer_fp32_graph", "train_amp_o2_graph"):
        shutil.copytree(CPU / name, tmp_path / "sub" / name)
    found = plan(tmp_path / "sub")
    assert found.kind == "pair" and found.baseline_role == "first"
    assert (found.baseline.name, found.target.name) == ("train_amp_o2_graph", "infer_fp32_graph")
    assert "roles from names" in found.message


def test_two_runs_without_role_names_leave_the_roles_to_the_training_phase(tmp_path):
    shutil.copytree(CPU / "infer_fp32_graph", tmp_path / "sub" / "run1")
    shutil.copytree(CPU / "train_fp32_graph", tmp_path / "sub" / "run2")
    found = plan(tmp_path / "sub")
    assert found.kind == "pair" and found.baseline_role is None
    assert "training run is the baseline" in found.message


@pytest.mark.slow
def test_archives_inside_a_submission_and_a_submission_archive_are_opened(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    zip_folder(CPU / "train_amp_o2_graph", sub / "training.zip")
    tar_folder(CPU / "infer_amp_o2_graph", sub / "inference.tar.gz")
    found = plan(sub)
    assert found.kind == "pair" and found.baseline_role == "first"
    assert found.message == "roles from names: baseline training.zip, target inference.tar.gz"
    packed = tmp_path / "packed"
    for name in ("train", "infer"):
        shutil.copytree(CPU / f"{name}_fp32_graph", packed / "user" / name)
    found = plan(zip_folder(packed, tmp_path / "submission.zip"))
    assert found.kind == "pair" and "baseline user/train, target user/infer" in found.message


def test_one_run_is_single_and_the_ranks_of_one_run_count_as_one(tmp_path):
    assert plan(CPU / "infer_fp32_pynative").kind == "single"
    found = plan(TWO_RANK)
    assert found.kind == "single" and found.target == TWO_RANK and found.message == "one run (ascend-ms)"


def test_models_alone_or_with_runs(tmp_path):
    assert plan(MODEL) == Plan(kind="model", mindir=MODEL)
    shutil.copy(MODEL, tmp_path / "net.mindir")
    assert plan(tmp_path).kind == "model"
    shutil.copytree(CPU / "infer_fp32_graph", tmp_path / "run")
    assert plan(tmp_path).kind == "single+model"
    shutil.copy(MODEL, tmp_path / "run" / "other.mindir")
    with pytest.raises(Ambiguous, match=r"2 \.mindir files \(net\.mindir, other\.mindir\)"):
        plan(tmp_path)


def test_three_runs_are_ambiguous_unless_names_pick_the_pair(tmp_path):
    for name in ("a", "b", "c"):
        shutil.copytree(CPU / "infer_fp32_graph", tmp_path / "three" / name)
    with pytest.raises(Ambiguous, match=r"3 runs \(a, b, c\) and their names do not say"):
        plan(tmp_path / "three")
    for name in ("train", "infer", "notes_run"):
        shutil.copytree(CPU / "infer_fp32_graph", tmp_path / "named" / name)
    found = plan(tmp_path / "named")
    assert found.kind == "pair" and found.message.endswith("ignored notes_run")


def test_nothing_to_diagnose_is_ambiguous_and_a_damaged_archive_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(Ambiguous, match=r"no profiler run and no \.mindir found"):
        plan(tmp_path / "empty")
    notes = tmp_path / "notes.txt"
    notes.write_text("hello", encoding="utf-8")
    with pytest.raises(Ambiguous, match="neither a folder, an archive"):
        plan(notes)
    with pytest.raises(InputError) as error:
        plan(broken_zip(tmp_path / "broken.zip"))
    assert not isinstance(error.value, Ambiguous) and "broken.zip" in error.value.message
    fake = tmp_path / "fake.zip"
    fake.write_bytes(b"not a zip at all")
    with pytest.raises(InputError, match="is not a zip archive"):
        plan(fake)


def test_two_run_roots_side_by_side_are_two_runs_not_two_ranks(tmp_path):
    """Two CPU run roots of rank 0 directly in one folder are two runs (ranks of one run differ)."""
    for name in ("train_amp_o2_graph", "infer_fp32_graph"):
        root = next((CPU / name).glob("*_ascend_ms"))
        shutil.copytree(root, tmp_path / "flat" / root.name)
    found = plan(tmp_path / "flat")
    assert found.kind == "pair" and found.baseline_role is None


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("train_amp_o2_graph", "baseline"),
        ("baseline", "baseline"),
        ("runs/Training.zip", "baseline"),
        ("infer_fp32_graph", "target"),
        ("target", "target"),
        ("serving-run", "target"),
        ("train_vs_infer", None),
        ("run1", None),
        ("constrained", None),  # "train" inside a word is not a role
    ],
)
def test_role_hints_come_from_whole_words(name, role):
    assert role_hint(name) == role

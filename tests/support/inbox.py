"""A triage inbox built from the real fixtures: archives, a broken zip, ambiguous and hostile names."""

from __future__ import annotations

import shutil
import tarfile
import zipfile
from pathlib import Path

from tests.support.inputs import CPU, MINDIR

MODEL = MINDIR / "conv_bn_relu_eval.mindir"
FORMULA_NAME = "=SUM(1+1)"


def zip_folder(folder: Path, target: Path, prefix: str = "") -> Path:
    """A .zip of a folder's files (paths relative to the folder, under `prefix`)."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(folder).as_posix())
    return target


def tar_folder(folder: Path, target: Path) -> Path:
    """A .tar.gz of a folder's contents."""
    with tarfile.open(target, "w:gz") as archive:
        archive.add(folder, arcname=".")
    return target


def broken_zip(target: Path) -> Path:
    """A zip cut in half: its signature is right, its contents are not readable."""
    whole = zip_folder(CPU / "infer_fp32_graph", target)
    data = whole.read_bytes()
    whole.write_bytes(data[: len(data) // 2])
    return whole


def build_inbox(root: Path) -> Path:
    """An inbox mixing good, broken and ambiguous submissions (sorted by name):

    =SUM(1+1)/          single run under a name a spreadsheet would run as a formula
    broken.zip          a damaged archive                              -> error
    empty/              no run and no model                            -> ambiguous
    good_pair/          train_amp_o2_graph/ + infer_fp32_graph/        -> pair (precision-mismatch)
    model_only.mindir                                                  -> model
    pair_and_model/     baseline/ + target/ + model.mindir             -> pair+model
    single_run.tar.gz   one inference run                              -> single
    three_runs/         a/ b/ c/                                       -> ambiguous
    """
    inbox = root / "inbox"
    inbox.mkdir()
    shutil.copytree(CPU / "infer_fp32_graph_nowarmup", inbox / FORMULA_NAME)
    broken_zip(inbox / "broken.zip")
    (inbox / "empty").mkdir()
    (inbox / "empty" / "readme.txt").write_text("the profile is attached, I hope", encoding="utf-8")
    for name in ("train_amp_o2_graph", "infer_fp32_graph"):
        shutil.copytree(CPU / name, inbox / "good_pair" / name)
    shutil.copy(MODEL, inbox / "model_only.mindir")
    shutil.copytree(CPU / "train_fp32_graph", inbox / "pair_and_model" / "baseline")
    shutil.copytree(CPU / "infer_fp32_graph", inbox / "pair_and_model" / "target")
    shutil.copy(MODEL, inbox / "pair_and_model" / "model.mindir")
    tar_folder(CPU / "infer_fp32_pynative", inbox / "single_run.tar.gz")
    for name in ("a", "b", "c"):
        shutil.copytree(CPU / "infer_fp32_graph", inbox / "three_runs" / name)
    (inbox / ".DS_Store").write_bytes(b"\x00\x01")
    return inbox

"""Input paths and small file helpers the tests share (conftest.py exposes the fixtures built on them)."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CPU = ROOT / "tests" / "fixtures" / "cpu"
ASCEND = ROOT / "tests" / "fixtures" / "ascend"
MINDIR = ROOT / "tests" / "fixtures" / "mindir"
RESNET = MINDIR / "resnet50_noweights.mindir"
EXAMPLE = ROOT / "assets" / "examples" / "amp_train_vs_fp32_infer"
XSS = "<img src=x onerror=window.__xss=1>"
RENAMED_OP = "Default/block1-Block/conv-Conv2d/Conv2D-op0"
DUMPS = ROOT / "tests" / "fixtures" / "outputs"  # real MindSpore 2.10 CPU tensor dumps (their generate.py)


def free_port() -> int:
    """A TCP port nobody listens on right now (127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def files_of(folder: Path) -> list[str]:
    """Every file below a folder, as a browser folder upload would send them."""
    return sorted(str(p) for p in folder.rglob("*") if p.is_file())


def poison_profile(source: Path, dest: Path, new_name: str = XSS, old_name: str = RENAMED_OP) -> Path:
    """Copy a real CPU profile and rename one operator consistently in every file that names it."""
    shutil.copytree(source, dest)
    renamed = 0
    for path in dest.rglob("*"):
        if path.is_file() and path.suffix in (".csv", ".txt", ".json"):
            text = path.read_text(encoding="utf-8")
            if old_name in text:
                path.write_text(text.replace(old_name, new_name), encoding="utf-8")
                renamed += 1
    assert renamed >= 3, "the operator to rename was not found: the fixture changed"
    return dest


def spoiled_dump(dest: Path, share: int, name: str = "reference") -> tuple[Path, Path]:
    """A copy at `dest` of a real tensor dump with its `share`-th tensor file (in the reader's order)
    spoiled: with the files dealt out every other one into two shares, the file is in that share.
    Returns (the folder, the spoiled file)."""
    from outputs.ms_dump import tensor_files

    folder = Path(shutil.copytree(DUMPS / name, dest))
    victim = Path(list(tensor_files(folder))[share].path)
    victim.chmod(0o600)
    victim.write_bytes(b"\x93NUMPY garbage")
    return folder, victim

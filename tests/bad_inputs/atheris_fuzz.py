"""Coverage-guided fuzzing of the untrusted-input parsers with atheris (libFuzzer), for long runs.

atheris is not a project dependency; docs/security.md shows the separate virtual environment. Usage:

    PYTHONPATH=.:.venv/lib/python3.11/site-packages /tmp/atheris-venv/bin/python \\
        tests/bad_inputs/atheris_fuzz.py seeds TARGET DIR      # real inputs to start from
    PYTHONPATH=... python tests/bad_inputs/atheris_fuzz.py TARGET [libFuzzer options] DIR

TARGET is ``mindir`` (graph.load_mindir), ``mindir-calls`` (call graphs that
tests/support/mindir_calls.call_graph_model builds from the bytes: self-calls, cycles, nested tuples and
partials, call explosions), ``archive`` (diagnosis.sources.materialize) or ``profile-<layout>``
with a fuzzed run of tests/support/layouts.py (e.g. profile-cpu-ms): the first input byte picks a file
of that real fixture and the rest replaces its content before diagnosis.ingest.read_folder reads it.
InputError is the expected refusal; any other exception is a crash that libFuzzer reports and saves.
libFuzzer ends the process with exit(), so Python cleanup does not run: the scratch folder
($TMPDIR/perf-doctor-fuzz-*) stays; point TMPDIR at a folder made for the run and remove it afterwards.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["graph", "diagnosis"]):
    import graph
    from core.errors import InputError
    from diagnosis.ingest import read_folder  # imports every reader module (ingest.READERS)
    from diagnosis.sources import materialize
    from diagnosis.workspace import Workspace

from tests.bad_inputs.generate import CORPUS, MINDIR
from tests.support.damage import LAYOUTS
from tests.support.mindir_calls import SEEDS, call_graph_model

Target = Callable[[bytes], None]


def mindir_target(scratch: Path) -> Target:
    """Decode and walk the bytes as a .mindir file."""
    path = scratch / "model.mindir"

    def fuzz(data: bytes) -> None:
        path.write_bytes(data)
        graph.load_mindir(path)

    return fuzz


def call_graph_target(scratch: Path) -> Target:
    """Build a call-graph MINDIR from the bytes and load it (graph.load_mindir, under the node budget)."""
    path = scratch / "calls.mindir"

    def fuzz(data: bytes) -> None:
        path.write_bytes(call_graph_model(data))
        graph.load_mindir(path)

    return fuzz


def archive_target(scratch: Path) -> Target:
    """Extract the bytes as an uploaded archive into a fresh workspace."""
    path = scratch / "upload.bin"

    def fuzz(data: bytes) -> None:
        path.write_bytes(data)
        with Workspace(base=scratch) as workspace:
            materialize(path, workspace)

    return fuzz


def profile_target(scratch: Path, layout: str) -> Target:
    """Replace one file of a private copy of the layout's fixture, read the folder, restore the file."""
    root = Path(shutil.copytree(LAYOUTS[layout], scratch / layout))
    files = sorted(path for path in root.rglob("*") if path.is_file())
    originals = {path: path.read_bytes() for path in files}

    def fuzz(data: bytes) -> None:
        if not data:
            return
        path = files[data[0] % len(files)]
        path.write_bytes(data[1:])
        try:
            read_folder(root)
        finally:
            path.write_bytes(originals[path])

    return fuzz


def expecting_input_errors(target: Target) -> Target:
    """The target with InputError (a clear refusal) treated as success."""

    def run(data: bytes) -> None:
        with contextlib.suppress(InputError):
            target(data)

    return run


def seeds(name: str) -> list[bytes]:
    """Real inputs for a target: the MINDIR fixtures, the corpus archives, or each fixture file."""
    if name == "mindir":
        return [path.read_bytes() for path in sorted(MINDIR.glob("*.mindir"))]
    if name == "mindir-calls":
        return list(SEEDS)
    if name == "archive":
        return [path.read_bytes() for path in sorted(CORPUS.glob("*.*")) if path.suffix != ".mindir"]
    files = sorted(path for path in LAYOUTS[name.removeprefix("profile-")].rglob("*") if path.is_file())
    return [bytes([index]) + path.read_bytes() for index, path in enumerate(files)]


def target_of(name: str) -> Target:
    """The fuzz function a target name stands for, working in a new scratch folder."""
    layout = name.removeprefix("profile-")
    if name not in ("mindir", "mindir-calls", "archive") and not (
        name.startswith("profile-") and layout in LAYOUTS
    ):
        raise SystemExit(f"unknown target {name!r}; see the module docstring")
    scratch = Path(tempfile.mkdtemp(prefix="perf-doctor-fuzz-"))
    if name == "mindir":
        return mindir_target(scratch)
    if name == "mindir-calls":
        return call_graph_target(scratch)
    return archive_target(scratch) if name == "archive" else profile_target(scratch, layout)


def main(argv: list[str]) -> None:
    """`seeds TARGET DIR` writes starting inputs; `TARGET [libFuzzer args]` fuzzes."""
    if len(argv) < 2:
        raise SystemExit(__doc__)
    if argv[1] == "seeds" and len(argv) == 4:
        folder = Path(argv[3])
        folder.mkdir(parents=True, exist_ok=True)
        for index, data in enumerate(seeds(argv[2])):
            (folder / f"seed-{index:03d}").write_bytes(data)
        return
    atheris.Setup([argv[0], *argv[2:]], expecting_input_errors(target_of(argv[1])))
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)

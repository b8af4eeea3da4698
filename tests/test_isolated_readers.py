"""Profile readers run in the isolated child (issue 33): a CSV or JSON that needs more memory than the
child may use is refused with one line naming the file, and nothing the read wrote is left behind."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest

from core.errors import InputError
from diagnosis.workspace import Workspace
from doctor import diagnose
from sandbox import isolation
from tests.bad_inputs import generate
from tests.support.isolated import MEMORY_MB, OUT_OF_MEMORY, cancel_while_running

ASCEND = generate.ASCEND / "level1"

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("kind", "mib", "file"),
    [("csv", 60, "kernel_details.csv"), ("json", 40, "profiler_info_0.json")],
)
def test_a_profile_over_the_childs_memory_is_refused_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, mib: int, file: str
) -> None:
    hostile = generate.write_oversized_profile(tmp_path / "input", kind, mib)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("PERF_DOCTOR_ISOLATION_MEMORY_MB", str(MEMORY_MB))
    with pytest.raises(InputError) as caught:
        diagnose(ASCEND / "infer", hostile, translate=False)
    line = str(caught.value)
    assert re.search(rf"{re.escape(file)}: the profile could not be read{OUT_OF_MEMORY}", line), line
    assert "PERF_DOCTOR_ISOLATION_MEMORY_MB" in line
    assert list(scratch.iterdir()) == []  # the workspace and the child's temporary folder are gone


def test_the_isolated_read_gives_the_same_run_as_the_one_in_process() -> None:
    """Tables come back through Arrow IPC, the rest as data classes: the report is the same."""
    isolated = diagnose(ASCEND / "train", ASCEND / "infer", translate=False).to_dict()
    here = diagnose(ASCEND / "train", ASCEND / "infer", translate=False, isolate=False).to_dict()
    for document in (isolated, here):
        document.pop("created_utc")
    assert json.dumps(isolated, sort_keys=True) == json.dumps(here, sort_keys=True)


def test_the_run_crosses_the_wire_unchanged() -> None:
    from diagnosis import read_folder

    run = read_folder(ASCEND / "train")
    back = isolation._run_from_wire(isolation._run_to_wire(run))
    assert back.meta == run.meta and back.limitations == run.limitations
    for name in ("kernels", "steps", "memory", "dataset_stages", "pipeline", "frequency", "api_calls"):
        assert getattr(back, name).equals(getattr(run, name)), name
        assert list(getattr(back, name).dtypes) == list(getattr(run, name).dtypes), name
    assert back.extras.keys() == run.extras.keys()
    assert all(back.extras[key].equals(run.extras[key]) for key in run.extras)


def test_repeated_strings_cross_the_wire_compact_and_unchanged() -> None:
    """Kernel names repeat: a long table's string columns travel dictionary-encoded (a fraction of the
    bytes) and come back as the same strings and dtypes; a categorical column stays categorical."""
    import pandas as pd
    import pyarrow as pa

    from diagnosis import read_folder

    kernels = read_folder(ASCEND / "train").kernels
    long = pd.concat([kernels] * (4096 // len(kernels) + 1), ignore_index=True)
    long["kind"] = pd.Categorical(long["name"].astype(str))
    plain = pa.BufferOutputStream()
    with pa.ipc.new_stream(plain, pa.Table.from_pandas(long).schema) as writer:
        writer.write_table(pa.Table.from_pandas(long))
    wire = isolation._ipc(long)
    back = isolation._frame(wire)
    assert len(wire) < plain.getvalue().size / 2
    assert back.equals(long) and list(back.dtypes) == list(long.dtypes)


def test_cancelling_a_request_kills_its_profile_reader(tmp_path: Path) -> None:
    """A cancelled web request kills the fork reading its profile at once (not after the read), and the
    request's workspace, with the child's temporary folder, is removed. The fork is frozen as soon as it
    starts, so only the cancel can end it (an idle machine read the 60 MiB file within the old 0.5 s)."""
    hostile = generate.write_oversized_profile(tmp_path / "input", "csv", 60)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    token = isolation.Cancellation()
    outcome: list[BaseException] = []
    pids: list[int] = []

    def work() -> None:
        try:
            with Workspace(scratch) as space:
                isolation.read_profile(hostile, rank=None, source="train", scheduler=None, workspace=space)
        except InputError as error:
            outcome.append(error)

    assert cancel_while_running(work, token, 0.5, pids, freeze=True) < 3
    assert [str(error) for error in outcome] == ["train: the request was cancelled"]
    assert pids and not any(Path(f"/proc/{pid}").exists() for pid in pids)
    assert list(scratch.iterdir()) == []


def test_a_dead_warm_reader_is_started_again() -> None:
    """The zygote killed from outside (an operator, the OOM killer): the next read starts a new one."""
    diagnose(ASCEND / "train", ASCEND / "infer", translate=False)
    first = isolation._ZYGOTE[0].process
    first.kill()
    first.wait()
    report = diagnose(ASCEND / "train", ASCEND / "infer", translate=False)
    assert report.document.kind == "pair"
    assert isolation._ZYGOTE[0].process is not first and isolation._ZYGOTE[0].process.poll() is None

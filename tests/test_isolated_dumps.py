"""The outputs comparison's dumps and layer mapping are parsed in the isolated child (issue 33): the real
msprobe sample gives the same section there as in this process, and a hostile dump or mapping that needs
more memory or CPU than the child may use is refused with one line naming the user's file, leaving
nothing on disk."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from cli.main import main
from core.errors import InputError
from doctor.outputs_report import compare_outputs
from tests.support.inputs import ROOT, spoiled_dump
from tests.support.isolated import MEMORY_MB, OUT_OF_MEMORY, cancel_while_running

MSPROBE = ROOT.parent / "shared" / "samples" / "msprobe_dump"
DUMPS = ROOT / "tests" / "fixtures" / "outputs"

pytestmark = pytest.mark.slow


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary folder of this test's workspaces: empty again after each comparison."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _msprobe_copy(tmp_path: Path, name: str) -> Path:
    """A copy of the real MindSpore msprobe dump (dump.json, construct.json, stack.json) to spoil."""
    return Path(shutil.copytree(MSPROBE / "mindspore_data", tmp_path / name))


def _one_line_json(path: Path, mib: int) -> Path:
    """A one-line dump.json of `mib` MiB that parses into about twenty times its size: a "data" object
    holding one list of empty lists (each a Python object of 56 bytes for 3 bytes of text)."""
    count = mib * (1 << 20) // 3
    path.write_text('{"data": {"x": [' + "[]," * (count - 1) + "[]]}}", encoding="utf-8")
    return path


@pytest.mark.parametrize("mapping", [True, False])
def test_the_real_msprobe_pair_gives_the_same_section_isolated_and_here(mapping: bool) -> None:
    """The Dump crosses the reply's allow-list unchanged: the section is identical, field for field;
    the mapping is the one given, or the one msprobe leaves beside the two dumps (found, then parsed)."""
    given = MSPROBE / "layer_mapping.yaml" if mapping else None
    sides = (MSPROBE / "mindspore_data", MSPROBE / "pytorch_data")
    isolated = compare_outputs(*sides, mapping=given).section
    here = compare_outputs(*sides, mapping=given, isolate=False).section
    assert isolated == here
    assert json.loads(isolated.model_dump_json()) == json.loads(here.model_dump_json())
    assert isolated.first_divergence is not None
    assert isolated.first_divergence.layer == "Tensor.__add__.0.forward"
    assert isolated.first_divergence.call_site  # stack.json was read in the child too
    assert isolated.baseline.source == "mindspore_data/dump.json" and isolated.target.framework == "pytorch"


def test_lone_dump_files_and_zipped_tensors_give_the_same_section_isolated_and_here(tmp_path: Path) -> None:
    """A lone dump.json (read where it is) and zipped .npy dumps (unpacked by one child, read by another)."""
    lone = MSPROBE / "mindspore_data" / "dump.json"
    assert compare_outputs(lone, lone).section == compare_outputs(lone, lone, isolate=False).section
    archives = [shutil.make_archive(str(tmp_path / n), "zip", DUMPS, n) for n in ("reference", "bn_train")]
    isolated = compare_outputs(*archives).section
    assert isolated == compare_outputs(*archives, isolate=False).section
    assert isolated.baseline.source == "reference.zip" and isolated.first_divergence is not None


def test_the_isolated_reader_summarises_a_large_dump_in_two_processes(tmp_path: Path) -> None:
    """doctor's isolated reader (a fork of the warm reader: no other thread, no file may be written)
    chooses two processes for a dump of FORK_BYTES; made to use them on a real dump, it gives the Dump
    one process gives here, and a damaged file in the forked worker's share is one InputError naming it."""
    from outputs.ms_dump import FORK_BYTES, processes_for, read_npy_dump
    from sandbox.isolation import decode_dump

    assert decode_dump("dump", processes_for, FORK_BYTES) == min(2, len(os.sched_getaffinity(0)))
    here = read_npy_dump(DUMPS / "bn_train", "bn_train", processes=1)
    assert decode_dump("bn_train", read_npy_dump, DUMPS / "bn_train", "bn_train", processes=2) == here
    folder, victim = spoiled_dump(tmp_path / "run", 1)
    with pytest.raises(InputError) as caught:
        decode_dump("run", read_npy_dump, folder, "run", processes=2)
    assert caught.value.path == victim.name and "not a readable .npy" in caught.value.problem


@pytest.mark.parametrize("given", ["folder", "file"])
def test_a_one_line_dump_over_the_childs_memory_is_refused_naming_it(
    tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    hostile = _msprobe_copy(tmp_path, "hostile")
    _one_line_json(hostile / "dump.json", 40)
    monkeypatch.setenv("PERF_DOCTOR_ISOLATION_MEMORY_MB", str(MEMORY_MB))
    source, name = (
        (hostile, "hostile/dump.json") if given == "folder" else (hostile / "dump.json", "dump.json")
    )
    with pytest.raises(InputError) as caught:
        compare_outputs(MSPROBE / "pytorch_data", source)
    line = str(caught.value)
    assert "\n" not in line
    assert re.fullmatch(
        rf"{re.escape(name)}: the dump could not be read{OUT_OF_MEMORY}; expected a smaller input .*", line
    ), line
    assert "PERF_DOCTOR_ISOLATION_MEMORY_MB" in line
    assert list(scratch.iterdir()) == []


def test_the_limit_names_the_side_file_that_needed_the_memory(
    tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real dump.json beside a 40 MiB stack.json: the message names stack.json, the largest file the
    child said it parsed."""
    hostile = _msprobe_copy(tmp_path, "run")
    _one_line_json(hostile / "stack.json", 40)
    monkeypatch.setenv("PERF_DOCTOR_ISOLATION_MEMORY_MB", str(MEMORY_MB))
    with pytest.raises(InputError) as caught:
        compare_outputs(hostile, MSPROBE / "pytorch_data")
    assert re.match(rf"run/stack\.json: the dump could not be read{OUT_OF_MEMORY}", str(caught.value))
    assert list(scratch.iterdir()) == []


def test_a_deeply_nested_dump_is_refused_in_one_line(tmp_path: Path, scratch: Path) -> None:
    """JSON nested 100,000 deep: the decoder's recursion limit, said as an input error, in the child and
    here alike (never an internal error)."""
    hostile = _msprobe_copy(tmp_path, "deep")
    (hostile / "dump.json").write_text('{"data": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    for isolate in (True, False):
        with pytest.raises(InputError) as caught:
            compare_outputs(hostile, MSPROBE / "pytorch_data", isolate=isolate)
        assert str(caught.value).startswith("deep/dump.json: JSON nested too deeply; expected an msprobe")
    assert list(scratch.iterdir()) == []


def test_a_mapping_over_the_childs_cpu_time_is_refused_naming_it(
    tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """layer_mapping.yaml is parsed by PyYAML in pure Python: 6 MiB of entries take several CPU seconds,
    which a 1 s limit stops, naming the mapping."""
    mapping = tmp_path / "layer_mapping.yaml"
    entries = "".join(f"  ms_name_{i}: pt_name_{i}\n" for i in range(240_000))
    mapping.write_text("Section:\n" + entries, encoding="utf-8")
    monkeypatch.setenv("PERF_DOCTOR_ISOLATION_CPU_S", "1")
    with pytest.raises(InputError) as caught:
        compare_outputs(MSPROBE / "mindspore_data", MSPROBE / "pytorch_data", mapping=mapping)
    line = str(caught.value)
    assert line.startswith("layer_mapping.yaml: the layer mapping could not be read within 1 s of CPU time")
    assert "PERF_DOCTOR_ISOLATION_CPU_S" in line and "\n" not in line
    assert list(scratch.iterdir()) == []


def test_the_cli_says_a_hostile_dump_in_one_line_and_exits_2(
    tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = _msprobe_copy(tmp_path, "hostile")
    _one_line_json(hostile / "dump.json", 40)
    monkeypatch.setenv("PERF_DOCTOR_ISOLATION_MEMORY_MB", str(MEMORY_MB))
    assert main(["outputs", str(MSPROBE / "pytorch_data"), str(hostile)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1 and "hostile/dump.json" in captured.err
    assert list(scratch.iterdir()) == []


STATISTIC_HEADER = (
    "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value"
)


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        (
            "Conv2D,a,1,1,1,input,0,4,float32,(" + "9" * 5000 + "),1,0",
            "line 2 cannot be read (Exceeds the limit",
        ),
        (
            "Conv2D,a,1,1,1,input,0,4,float32,(" + "x" * 200_000 + "),1,0",
            "line 2 cannot be read (field larger",
        ),
        (
            "Conv2D,a,1,1,1,input,1e999,4,float32,(1),1,0",
            "line 2 cannot be read (cannot convert float infinity",
        ),
    ],
    ids=["5000-digit-size", "cell-over-csv-limit", "infinite-slot"],
)
def test_a_malformed_statistic_csv_is_one_line_naming_it_never_an_internal_error(
    tmp_path: Path, row: str, problem: str
) -> None:
    """Found by probing: these were tracebacks (in-process) or internal errors (isolated)."""
    bad = tmp_path / "run"
    bad.mkdir()
    (bad / "statistic.csv").write_text(f"{STATISTIC_HEADER}\n{row}\n", encoding="utf-8")
    for isolate in (True, False):
        with pytest.raises(InputError) as caught:
            compare_outputs(bad, bad, isolate=isolate)
        assert str(caught.value).startswith(f"run/statistic.csv: {problem}"), str(caught.value)


def test_the_cell_limit_holds_after_mindspore_raised_the_process_wide_one(tmp_path: Path) -> None:
    """Importing MindSpore sets csv.field_size_limit(10 MiB) for the whole process; the in-process read
    of an oversized cell is still refused with csv's own limit (a test file that imported MindSpore
    earlier in the same worker made the malformed-CSV test pass the cell through)."""
    import csv

    bad = tmp_path / "run"
    bad.mkdir()
    row = "Conv2D,a,1,1,1,input,0,4,float32,(" + "x" * 200_000 + "),1,0"
    (bad / "statistic.csv").write_text(f"{STATISTIC_HEADER}\n{row}\n", encoding="utf-8")
    previous = csv.field_size_limit(
        1024 * 1024 * 10
    )  # what mindspore/utils/runtime_execution_order_check does
    try:
        with pytest.raises(InputError, match="field larger"):
            compare_outputs(bad, bad, isolate=False)
        assert csv.field_size_limit() == 1024 * 1024 * 10  # the process's own setting is given back
    finally:
        csv.field_size_limit(previous)


def test_short_rows_and_malformed_msprobe_shapes_are_read_not_crashed_on(tmp_path: Path) -> None:
    """A statistic.csv row missing its cells, an msprobe tensor whose shape is text: read the same in the
    child and here (the tensor with a shape that is no list of sizes is not a tensor)."""
    short = tmp_path / "short"
    short.mkdir()
    row = "Conv2D,a,1,1,1,input,0,4,float32,(1;2),1,0"
    (short / "statistic.csv").write_text(f"{STATISTIC_HEADER}\n{row}\nConv2D,b\n", encoding="utf-8")
    assert compare_outputs(short, short).section == compare_outputs(short, short, isolate=False).section
    spoiled = _msprobe_copy(tmp_path, "spoiled")
    dump = json.loads((spoiled / "dump.json").read_text(encoding="utf-8"))
    entry = next(iter(dump["data"].values()))
    entry["input_args"][0]["shape"] = ["abc", 2]
    (spoiled / "dump.json").write_text(json.dumps(dump), encoding="utf-8")
    pair = (spoiled, MSPROBE / "pytorch_data")
    isolated = compare_outputs(*pair).section
    assert isolated == compare_outputs(*pair, isolate=False).section and isolated.baseline.layers == 13


def test_cancelling_a_comparison_kills_the_child_parsing_its_mapping(tmp_path: Path, scratch: Path) -> None:
    """A cancelled web request (the app's tab and `/compare_outputs` run through run_cancellable) kills
    the fork parsing a slow layer_mapping.yaml at once, and its workspace is removed."""

    from sandbox import Cancellation

    mapping = tmp_path / "layer_mapping.yaml"
    mapping.write_text(
        "Section:\n" + "".join(f"  ms_{i}: pt_{i}\n" for i in range(400_000)), encoding="utf-8"
    )
    token = Cancellation()
    outcome: list[BaseException] = []
    pids: list[int] = []

    def work() -> None:
        try:
            compare_outputs(MSPROBE / "mindspore_data", MSPROBE / "pytorch_data", mapping=mapping)
        except InputError as error:
            outcome.append(error)

    assert cancel_while_running(work, token, 0.5, pids) < 3
    assert [str(error) for error in outcome] == ["layer_mapping.yaml: the request was cancelled"]
    assert pids and not any(Path(f"/proc/{pid}").exists() for pid in pids)
    assert list(scratch.iterdir()) == []


def test_the_tabs_compare_button_runs_cancellable_and_gives_the_report(tmp_path: Path) -> None:
    """The tab's click handler is a coroutine awaiting run_cancellable (Gradio cancels it when the page
    closes), and it still returns the report and the plot."""
    import asyncio
    import inspect
    from concurrent.futures import ThreadPoolExecutor

    import gradio as gr

    from webapp.outputs_tab import outputs_tab

    with gr.Blocks() as demo:
        outputs_tab(lambda key: key)
    clicks = [d.fn for d in demo.fns.values() if any(t[1] == "click" for t in d.targets)]
    assert len(clicks) == 1 and inspect.iscoroutinefunction(clicks[0])
    archives = [shutil.make_archive(str(tmp_path / n), "zip", DUMPS, n) for n in ("reference", "bn_train")]
    request = type("Request", (), {"session_hash": None})()
    # A thread of its own: after the Playwright tests in the same process, this thread may hold their event
    # loop as running, and asyncio.run refuses to start inside it.
    with ThreadPoolExecutor(1) as pool:
        markdown, plot = pool.submit(asyncio.run, clicks[0](request, *archives, None, "English")).result()
    assert "BatchNorm" in markdown.value and plot.visible

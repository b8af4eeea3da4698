"""`perf-doctor pack` and big inputs: raw profiler data is skipped unread, the archive of the files read
diagnoses exactly like the folder, and a run folder with 25,000 raw files beside its exports diagnoses
as a zip."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

import cli.main as cli
from core import InputError
from diagnosis import Workspace, materialize, read_folder
from diagnosis.ingest import list_ranks
from diagnosis.readers.catalog import SKIP_RECORD, unread_member
from doctor import diagnose
from doctor.render import render
from tests.support.inputs import ASCEND
from tests.support.layouts import PACK, runs_for
from tests.support.runs import FIXTURES

LEVEL1 = ASCEND / "level1" / "train"
RUN = "ubuntu_2201_20251130080000123_ascend_ms"
PACKED_RUNS = runs_for(PACK)  # a selection of tests/support/layouts.py
RAW_FILES = 25_000


def report_of(source: Path | str) -> dict:
    """The JSON report of one profile, without the parts that name the input or the clock."""
    report = json.loads(render(diagnose(None, source, isolate=False), "json"))
    report.pop("created_utc")
    for entry in report["inputs"]:
        entry.pop("name")
    for entry in report["runs"]:
        entry.pop("source")
    return report


def pack(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["pack", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("layout", sorted(PACKED_RUNS))
@pytest.mark.slow
def test_the_packed_archive_diagnoses_like_the_folder(layout, capsys, tmp_path) -> None:
    folder = PACKED_RUNS[layout]
    out = tmp_path / "packed.zip"
    code, text, err = pack(capsys, str(folder), "-o", str(out))
    assert (code, err) == (0, "")
    names = zipfile.ZipFile(out).namelist()
    ranks = list_ranks(folder) or [None]
    assert len(names) == sum(len(read_folder(folder, rank=r).meta.files) for r in ranks)
    assert f"wrote {out}" in text
    assert all(name.startswith(f"{folder.name}/") for name in names)
    assert report_of(out) == report_of(folder)


def raw_run(tmp_path: Path) -> Path:
    """A copy of a Level1 run folder with CANN raw data, logs and FRAMEWORK binaries beside its exports."""
    folder = tmp_path / "train"
    shutil.copytree(LEVEL1, folder)
    root = folder / RUN
    data = root / "PROF_000001_20251130080000123_ABCDEFGH" / "device_0" / "data"
    data.mkdir(parents=True)
    for i in range(40):
        (data / f"aicore.data.0.slice_{i}").write_bytes(b"\x00" * 512)
    (root / "PROF_000001_20251130080000123_ABCDEFGH" / "host" / "data").mkdir(parents=True)
    (
        root / "PROF_000001_20251130080000123_ABCDEFGH" / "host" / "data" / "api_event.data.slice_0"
    ).write_bytes(b"\x01" * 100)
    (root / "FRAMEWORK").mkdir()
    (root / "FRAMEWORK" / "torch.op_range").write_bytes(b"\x02" * 300)
    (root / "logs").mkdir()
    (root / "logs" / "profiler_20251130_1.log").write_text("started\n")
    return folder


@pytest.mark.slow
def test_pack_keeps_the_files_read_and_says_what_it_left_out(capsys, tmp_path) -> None:
    folder = raw_run(tmp_path)
    out = tmp_path / "small.zip"
    code, text, _ = pack(capsys, str(folder), "-o", str(out), "--rank", "0")
    assert code == 0
    kept = sorted(zipfile.ZipFile(out).namelist())
    assert kept == sorted(f"train/{RUN}/{name}" for name in read_folder(folder).meta.files)
    assert "skipped 43 other files (20.4 KiB): not read by Perf Doctor" in text
    assert all(not unread_member(name) for name in kept)
    assert report_of(out) == report_of(folder)


def test_pack_keeps_msprof_analyze_cluster_output(capsys, tmp_path) -> None:
    """A job packed whole keeps the cluster analysis beside its ranks (the real cluster_analysis_output);
    one rank packed alone leaves it out, as its diagnosis does not read it."""
    from tests.fixtures.cluster.generate import samples_root

    job = shutil.copytree(FIXTURES / "cluster" / "healthy_a", tmp_path / "job")
    shutil.copytree(samples_root() / "ascend" / "cluster_analysis_output", job / "cluster_analysis_output")
    whole, one = tmp_path / "whole.zip", tmp_path / "one.zip"
    assert pack(capsys, str(job), "-o", str(whole))[0] == 0
    assert pack(capsys, str(job), "--rank", "1", "-o", str(one))[0] == 0
    cluster = {
        f"job/cluster_analysis_output/{n}"
        for n in ("cluster_step_trace_time.csv", "cluster_communication.json")
    }
    assert cluster <= set(zipfile.ZipFile(whole).namelist())
    assert not cluster & set(zipfile.ZipFile(one).namelist())
    with (
        Workspace() as ws
    ):  # the archive gives the ranks the folder gives: 4 uploaded, 4 more from the analysis
        packed = read_folder(materialize(whole, ws)).ranks
    assert [s.rank for s in packed.summaries] == [s.rank for s in read_folder(job).ranks.summaries]
    assert len(packed.summaries) == 8


def test_pack_refuses_a_folder_without_profiler_output_like_compare(capsys, tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("nothing here", encoding="utf-8")
    code, out, err = pack(capsys, str(tmp_path), "-o", str(tmp_path.parent / "x.zip"))
    _, _, compare_err = (cli.main(["compare", str(tmp_path), str(tmp_path)]), *capsys.readouterr())
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "not profiler output (found: notes.txt)" in err
    assert err.split(": ", 2)[2].replace(f"{tmp_path.name}: ", "") in compare_err.replace(
        f"baseline {tmp_path.name}: ", ""
    )
    assert not (tmp_path.parent / "x.zip").exists()


def test_pack_refuses_an_archive_inside_the_folder_it_packs(capsys, tmp_path) -> None:
    folder = raw_run(tmp_path)
    code, _, err = pack(capsys, str(folder), "-o", str(folder / "inside.zip"))
    assert code == 2 and "inside the run folder" in err


def big_zip(tmp_path: Path, raw: int = RAW_FILES) -> Path:
    """The Level1 run zipped with `raw` CANN raw-data slices beside ASCEND_PROFILER_OUTPUT/."""
    path = tmp_path / "big_run.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(LEVEL1.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(LEVEL1).as_posix())
        prof = f"{RUN}/PROF_000001_20251130080000123_ABCDEFGH"
        for i in range(raw):
            archive.writestr(f"{prof}/device_{i % 2}/data/aicore.data.{i % 2}.slice_{i}", b"\x00" * 64)
        archive.writestr(f"{prof}/host/data/api_event.data.slice_0", b"\x01" * 64)
        archive.writestr(f"{RUN}/FRAMEWORK/mindspore.op_range", b"\x02" * 64)
        archive.writestr(f"{RUN}/logs/profiler_1.log", b"log\n")
        archive.writestr(f"{RUN}/ASCEND_PROFILER_OUTPUT/msprof.log", b"log\n")
    return path


@pytest.mark.slow
def test_a_run_with_25000_raw_files_diagnoses_as_a_zip_and_says_what_was_skipped(tmp_path) -> None:
    archive = big_zip(tmp_path)
    assert len(zipfile.ZipFile(archive).namelist()) > 20_000  # over the default member limit
    report = report_of(archive)
    skipped = [w for w in report["warnings"] if w["topic"] == "skipped"]
    assert [w["text"][:44] for w in skipped] == ["25004 files (1.5 MiB) no reader uses were sk"]
    report["warnings"].remove(skipped[0])
    assert report == report_of(LEVEL1)


def test_skipped_members_are_not_extracted_and_not_budgeted(tmp_path) -> None:
    from diagnosis import Limits

    archive = big_zip(tmp_path, raw=30)
    with Workspace() as ws:
        folder = materialize(archive, ws, budget=Limits(max_members=20))
        written = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        assert written == sorted(
            [
                f"{RUN}/{p.relative_to(LEVEL1 / RUN).as_posix()}"
                for p in (LEVEL1 / RUN).rglob("*")
                if p.is_file()
            ]
        )
        assert json.loads((folder.with_name(folder.name + SKIP_RECORD)).read_text()) == {
            "files": 34,  # 30 slices, host data, a FRAMEWORK binary, two logs
            "bytes": 30 * 64 + 2 * 64 + 2 * len("log\n"),
        }


def test_a_tar_skips_raw_data_too_and_the_member_limit_counts_only_what_is_extracted(tmp_path) -> None:
    from diagnosis import Limits

    path = tmp_path / "run.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        archive.add(LEVEL1 / RUN, arcname=RUN)
        for i in range(30):
            data = b"\x00" * 64
            info = tarfile.TarInfo(f"{RUN}/PROF_1/device_0/data/aicore.data.0.slice_{i}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    with Workspace() as ws:
        folder = materialize(path, ws, budget=Limits(max_members=20))
        assert not list(folder.rglob("aicore.data*"))
        assert json.loads((folder.with_name(folder.name + SKIP_RECORD)).read_text()) == {
            "files": 30,
            "bytes": 30 * 64,
        }
        assert read_folder(folder).limitations[-1].topic == "skipped"


def test_a_folder_upload_skips_files_no_reader_opens(tmp_path) -> None:
    """A browser folder upload hands over every file of the folder, raw slices included."""
    folder = raw_run(tmp_path)
    files = [p for p in folder.rglob("*") if p.is_file()]
    with Workspace() as ws:
        placed = materialize([str(p) for p in files], ws)
        run = read_folder(placed)
    assert run.limitations[-1].topic == "skipped" and run.limitations[-1].reason.startswith("43 files")


def test_too_many_files_besides_raw_data_still_hit_the_limit_and_point_to_pack(tmp_path) -> None:
    from diagnosis import Limits

    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for i in range(12):
            archive.writestr(f"run/f{i}.csv", "a,b\n1,2\n")
    with Workspace() as ws, pytest.raises(InputError, match="over the limit of 10") as caught:
        materialize(path, ws, budget=Limits(max_members=10))
    assert "perf-doctor pack RUN_FOLDER" in str(caught.value)


@pytest.mark.parametrize(
    ("member", "unread"),
    [
        ("x_ascend_ms/PROF_1_2_A/device_3/data/aicore.data.3.slice_0", True),
        ("PROF_1_2_A/host/data/api_event.data.slice_0", True),
        ("x_ascend_ms/logs/profiler_1.log", True),
        ("x_ascend_ms/FRAMEWORK/mindspore.op_range", True),
        ("./x_ascend_ms/ASCEND_PROFILER_OUTPUT/msprof.log", True),
        ("x_ascend_ms/FRAMEWORK/cpu_op_detail_info_0.csv", False),
        ("x_ascend_ms/ASCEND_PROFILER_OUTPUT/kernel_details.csv", False),
        ("x_ascend_ms/PROF_1_2_A/device_0/info.json.0", False),
        ("x_ascend_ms/PROF_1_2_A/mindstudio_profiler_output/op_summary_20250101.csv", False),
        ("profiler/framework_raw_0.csv", False),
    ],
)
def test_which_members_no_reader_opens(member: str, unread: bool) -> None:
    assert unread_member(member) is unread


@pytest.mark.parametrize("data", [b"\x1f\x8b\x08", b"\x1f\x8b\x08\x04"])
def test_a_gzip_cut_inside_its_header_is_an_input_error(tmp_path, data: bytes) -> None:
    """Found by the random-bytes property of test_sources: gzip's header parser fails with a TypeError."""
    path = tmp_path / "cut.tar.gz"
    path.write_bytes(data)
    with Workspace() as ws, pytest.raises(InputError, match=r"cut\.tar\.gz: is not a readable tar archive"):
        materialize(path, ws)

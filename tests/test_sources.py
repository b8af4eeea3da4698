"""Tests for diagnosis.sources and diagnosis.limits: every archive is built here, in a temporary folder."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import stat
import struct
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import InputError
from diagnosis.archives import CHUNK, Meter
from diagnosis.ingest import find_runs
from diagnosis.limits import GIB, Limits, LineCounter
from diagnosis.readers.discover import discover
from diagnosis.sources import describe, materialize
from diagnosis.upload_tree import NEW_ROOT_NAME, placement
from diagnosis.workspace import Workspace

CSV = b"op_side,op_type,op_name\nHost,Conv2D,Default/conv\n"


# ------------------------------------------------------------ helpers


def make_zip(path: Path, members: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> Path:
    """A zip with the given (name, data) members; names are written exactly as given."""
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in members:
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return path


def make_tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]], mode: str = "w:gz") -> Path:
    """A tar (mode w / w:gz) holding plain (name, data) files and ready-made TarInfo entries."""
    with tarfile.open(path, mode, format=tarfile.PAX_FORMAT) as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                archive.addfile(info, io.BytesIO(member[1]))
    return path


def snapshot(root: Path) -> set[str]:
    """Every path below root, relative, so two listings can be compared."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def files_below(root: Path) -> dict[str, bytes]:
    """Relative path -> content of every regular file below root."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def upload(tmp_path: Path, name: str, data: bytes) -> Path:
    """A file stored the way a browser folder upload stores it: <tmp>/<sha256 of content>/<basename>."""
    folder = tmp_path / "uploads" / hashlib.sha256(data + name.encode()).hexdigest()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    return folder / name


def profile_tree(root: Path) -> Path:
    """A small 2.5+ CPU profiler folder."""
    run = root / "vm_1_20260101000000000_ascend_ms"
    (run / "FRAMEWORK").mkdir(parents=True)
    (run / "ASCEND_PROFILER_OUTPUT").mkdir()
    (run / "FRAMEWORK" / "cpu_op_detail_info_0.csv").write_bytes(CSV)
    (run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_bytes(b"[]")
    return root


def patch_zip_sizes(data: bytes, uncompressed: int) -> bytes:
    """Rewrite the uncompressed size of the (single) member in both its local and central header."""
    buffer = bytearray(data)
    local = buffer.index(b"PK\x03\x04")
    struct.pack_into("<I", buffer, local + 22, uncompressed)
    central = buffer.index(b"PK\x01\x02")
    struct.pack_into("<I", buffer, central + 24, uncompressed)
    return bytes(buffer)


@pytest.fixture
def ws(tmp_path: Path):
    with Workspace(base=tmp_path) as workspace:
        yield workspace


# ------------------------------------------------------------ workspace


def test_workspace_is_private_and_removed_on_success(tmp_path: Path) -> None:
    with Workspace(base=tmp_path) as workspace:
        path = workspace.path
        assert path.parent == tmp_path and path.name.startswith("perf-doctor-")
        assert stat.S_IMODE(path.stat().st_mode) == 0o700
        (workspace.new_folder("x-") / "file").write_text("data")
    assert not path.exists()
    with pytest.raises(RuntimeError):
        _ = workspace.path


def test_workspace_removed_on_exception(tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "p.zip", [("run/a.csv", CSV)])
    with pytest.raises(ZeroDivisionError), Workspace(base=tmp_path) as workspace:
        path = workspace.path
        materialize(archive, workspace)
        _ = 1 / 0
    assert not path.exists()
    assert snapshot(tmp_path) == {"p.zip"}


def test_workspace_default_base_is_system_temp_and_never_a_forbidden_folder(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with Workspace() as workspace:
        assert workspace.path.parent == tmp_path
    with Workspace(forbidden={"the cache": tmp_path / "elsewhere"}) as workspace:
        assert workspace.path.parent == tmp_path
    with (
        pytest.raises(ValueError, match="inside the public cache"),
        Workspace(forbidden={"the public cache": tmp_path}),
    ):
        pass
    assert snapshot(tmp_path) == set()


def test_failed_extraction_leaves_no_partial_folder(ws: Workspace, tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "p.zip", [("a.csv", CSV), ("../../evil", b"x")])
    with pytest.raises(InputError):
        materialize(archive, ws)
    assert list(ws.path.iterdir()) == []


# ------------------------------------------------------------ folders and archives


def test_folder_is_passed_through_untouched(ws: Workspace, tmp_path: Path) -> None:
    folder = profile_tree(tmp_path / "profile")
    before = snapshot(tmp_path)
    assert materialize(str(folder), ws) == folder
    assert materialize([folder], ws) == folder
    assert snapshot(tmp_path) == before and list(ws.path.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "maker"),
    [
        ("p.zip", lambda p, m: make_zip(p, m)),
        ("p.zip", lambda p, m: make_zip(p, m, zipfile.ZIP_STORED)),
        ("p.tar.gz", lambda p, m: make_tar(p, m)),
        ("p.tgz", lambda p, m: make_tar(p, m)),
        ("p.tar", lambda p, m: make_tar(p, m, "w")),
        ("p.tar.gz", lambda p, m: make_zip(p, m)),  # wrong suffix, zip bytes
        ("p.zip", lambda p, m: make_tar(p, m)),  # wrong suffix, gzip bytes
        ("upload.bin", lambda p, m: make_tar(p, m, "w")),  # no archive suffix at all
    ],
)
def test_archives_are_extracted_by_magic_bytes(ws: Workspace, tmp_path: Path, name: str, maker) -> None:
    members = [("run/FRAMEWORK/cpu_op_detail_info_0.csv", CSV), ("run/trace_view.json", b"[]")]
    root = materialize(maker(tmp_path / name, members), ws)
    assert root.parent == ws.path
    assert files_below(root) == dict(members)
    for path in root.rglob("*"):
        assert stat.S_IMODE(path.stat().st_mode) == (0o700 if path.is_dir() else 0o600)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("p.zip", "not a zip archive"),
        ("p.tar.gz", "not a tar.gz archive"),
        ("p.tgz", "not a tar.gz archive"),
        ("p.tar", "not a tar archive"),
        ("p.tar.bz2", "unsupported format"),
    ],
)
def test_archive_name_with_other_bytes_is_refused(
    ws: Workspace, tmp_path: Path, name: str, message: str
) -> None:
    (tmp_path / name).write_bytes(b"this is a text file, not an archive\n" * 20)
    with pytest.raises(InputError, match=message) as caught:
        materialize(tmp_path / name, ws)
    assert caught.value.path == name


def test_gzip_that_is_not_a_tar_is_refused(ws: Workspace, tmp_path: Path) -> None:
    import gzip

    (tmp_path / "p.tar.gz").write_bytes(gzip.compress(CSV * 100))
    with pytest.raises(InputError, match="not a readable tar archive"):
        materialize(tmp_path / "p.tar.gz", ws)


@pytest.mark.parametrize("maker", [make_zip, make_tar])
def test_empty_archive_is_refused(ws: Workspace, tmp_path: Path, maker) -> None:
    with pytest.raises(InputError, match=r"holds no files|not a readable"):
        materialize(maker(tmp_path / "empty.bin", []), ws)


def test_truncated_archive_is_an_input_error(ws: Workspace, tmp_path: Path) -> None:
    data = make_tar(tmp_path / "p.tgz", [("a.csv", os.urandom(50_000))]).read_bytes()
    (tmp_path / "cut.tgz").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"damaged|not a readable"):
        materialize(tmp_path / "cut.tgz", ws)


# ------------------------------------------------------------ hostile members


@pytest.mark.parametrize(
    ("member", "message"),
    [
        ("../../x", r"outside the archive \('\.\.'\)"),
        ("a/../../x", r"outside the archive"),
        ("..\\..\\x", r"outside the archive"),
        ("/etc/x", "absolute path"),
        ("C:/Windows/x", "drive letter"),
        ("C:x", "drive letter"),
    ],
)
@pytest.mark.parametrize("maker", [make_zip, make_tar])
def test_escaping_member_names_are_refused(
    tmp_path: Path, member: str, message: str, maker, monkeypatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "systmp"))
    (tmp_path / "systmp").mkdir()
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    archive = maker(tmp_path / "evil.bin", [("ok.csv", CSV), (member, b"owned")])
    before = snapshot(tmp_path)
    with pytest.raises(InputError, match=message) as caught, Workspace(base=deep) as workspace:
        materialize(archive, workspace)
    assert caught.value.path == "evil.bin" and repr(member) in caught.value.problem
    assert snapshot(tmp_path) == before


def test_zip_symlink_member_is_refused(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "link.zip"
    with zipfile.ZipFile(path, "w") as archive:
        info = zipfile.ZipInfo("run/passwd")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, "/etc/passwd")
    with pytest.raises(InputError, match="symbolic link"):
        materialize(path, ws)


def test_zip_device_member_is_refused(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "dev.zip"
    with zipfile.ZipFile(path, "w") as archive:
        info = zipfile.ZipInfo("run/null")
        info.external_attr = (stat.S_IFCHR | 0o666) << 16
        archive.writestr(info, b"")
    with pytest.raises(InputError, match="device or special"):
        materialize(path, ws)


@pytest.mark.parametrize(
    ("kind", "linkname", "message"),
    [
        (tarfile.SYMTYPE, "/etc/passwd", "symbolic link"),
        (tarfile.SYMTYPE, "ok.csv", "symbolic link"),
        (tarfile.LNKTYPE, "ok.csv", "hard link"),
        (tarfile.CHRTYPE, "", "device or special"),
        (tarfile.FIFOTYPE, "", "device or special"),
    ],
)
def test_tar_links_and_devices_are_refused(
    ws: Workspace, tmp_path: Path, kind: bytes, linkname: str, message: str
) -> None:
    info = tarfile.TarInfo("run/special")
    info.type, info.linkname = kind, linkname
    archive = make_tar(tmp_path / "t.tgz", [("ok.csv", CSV), info])
    with pytest.raises(InputError, match=message):
        materialize(archive, ws)


@pytest.mark.parametrize("maker", [make_zip, make_tar])
def test_duplicate_member_names_are_refused(ws: Workspace, tmp_path: Path, maker) -> None:
    archive = maker(tmp_path / "dup.bin", [("run/a.csv", CSV), ("run/./a.csv", b"other")])
    with pytest.raises(InputError, match="more than once"):
        materialize(archive, ws)


def test_file_and_folder_with_one_name_are_refused(ws: Workspace, tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "clash.zip", [("run/a", CSV), ("run/a/b.csv", CSV)])
    with pytest.raises(InputError, match="both a file and a folder"):
        materialize(archive, ws)


def test_too_deep_member_is_refused(ws: Workspace, tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "deep.zip", [("a/b/c/d/e.csv", CSV)])
    with pytest.raises(InputError, match="nested 5 levels deep"):
        materialize(archive, ws, budget=Limits(max_depth=4))
    assert files_below(materialize(archive, ws, budget=Limits(max_depth=5))) == {"a/b/c/d/e.csv": CSV}


@pytest.mark.parametrize("maker", [make_zip, make_tar])
def test_too_many_members_are_refused(ws: Workspace, tmp_path: Path, maker) -> None:
    archive = maker(tmp_path / "many.bin", [(f"f{i}.csv", CSV) for i in range(12)])
    with pytest.raises(InputError, match=r"over the limit of 10|more than 10 files") as caught:
        materialize(archive, ws, budget=Limits(max_members=10))
    assert "PERF_DOCTOR_MAX_MEMBERS" in str(caught.value)
    assert len(files_below(materialize(archive, ws, budget=Limits(max_members=12)))) == 12


def test_zip_bomb_is_stopped_by_ratio(ws: Workspace, tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "bomb.zip", [("zeros.bin", bytes(50 * 1024 * 1024))])
    assert archive.stat().st_size < 100_000
    with pytest.raises(InputError, match="expands more than 200:1") as caught:
        materialize(archive, ws)
    assert "'zeros.bin'" in caught.value.problem and caught.value.path == "bomb.zip"


def test_zip_bomb_is_stopped_by_total_bytes_while_streaming(ws: Workspace, tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "bomb.zip", [("zeros.bin", bytes(50 * 1024 * 1024))])
    budget = Limits(max_total_bytes=4 * 1024 * 1024, max_ratio=float("inf"))
    with pytest.raises(InputError, match=r"over the limit of 4\.0 MiB"):
        materialize(archive, ws, budget=budget)


@pytest.mark.slow
def test_tar_bomb_is_stopped(ws: Workspace, tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "bomb.tar.gz", [("zeros.bin", bytes(50 * 1024 * 1024))])
    assert archive.stat().st_size < 200_000
    with pytest.raises(InputError, match="expands more than 200:1"):
        materialize(archive, ws)
    with pytest.raises(InputError, match=r"over the limit of 2\.0 MiB"):
        materialize(archive, ws, budget=Limits(max_total_bytes=2 * 1024 * 1024, max_ratio=float("inf")))


def test_compressible_but_honest_data_passes_the_ratio_check(ws: Workspace, tmp_path: Path) -> None:
    rows = b"".join(
        b"Default/network/conv%d-Conv2d/Conv2D-op%d,Conv2D,%d.%03d\n" % (i % 7, i, i, i)
        for i in range(60_000)
    )
    archive = make_tar(tmp_path / "csv.tgz", [("kernel_details.csv", rows)])
    assert len(rows) > 2 * 1024 * 1024
    assert files_below(materialize(archive, ws)) == {"kernel_details.csv": rows}


def test_zip_header_claiming_a_small_size_cannot_smuggle_data(ws: Workspace, tmp_path: Path) -> None:
    honest = make_zip(tmp_path / "h.zip", [("a.bin", bytes(5 * 1024 * 1024))]).read_bytes()
    (tmp_path / "lie.zip").write_bytes(patch_zip_sizes(honest, 100))
    with pytest.raises(InputError, match="damaged"):
        materialize(tmp_path / "lie.zip", ws)
    assert list(ws.path.iterdir()) == []


def test_zip_header_sizes_are_not_what_is_counted(ws: Workspace, tmp_path: Path) -> None:
    data = os.urandom(300_000)
    honest = make_zip(tmp_path / "h.zip", [("a.bin", data)]).read_bytes()
    (tmp_path / "big.zip").write_bytes(patch_zip_sizes(honest, 100 * 2**20))
    # A header claiming 100 MiB (under the per-file budget) is not refused up front by the total budget:
    # only the bytes that really stream are counted.
    assert files_below(materialize(tmp_path / "big.zip", ws, budget=Limits(max_total_bytes=400_000))) == {
        "a.bin": data
    }


def test_a_header_claiming_more_than_the_per_file_budget_is_refused_up_front(
    ws: Workspace, tmp_path: Path
) -> None:
    honest = make_zip(tmp_path / "h.zip", [("a.bin", os.urandom(1000))]).read_bytes()
    (tmp_path / "big.zip").write_bytes(patch_zip_sizes(honest, 3 * GIB))
    with pytest.raises(InputError, match="as its header says"):
        materialize(tmp_path / "big.zip", ws)


def test_meter_stops_an_endless_stream_at_the_limit() -> None:
    class Endless(io.RawIOBase):
        def readinto(self, buffer) -> int:
            buffer[:] = bytes(len(buffer))
            return len(buffer)

    out = io.BytesIO()
    with pytest.raises(InputError, match="over the limit"):
        Meter(Limits(max_total_bytes=1_000_000)).pump(Endless(), out, source="s", label="m")
    assert 1_000_000 - 16_384 <= len(out.getvalue()) <= 1_000_000


def test_oversized_tar_extended_header_is_refused(ws: Workspace, tmp_path: Path) -> None:
    info = tarfile.TarInfo("a.csv")
    info.size = len(CSV)
    info.pax_headers = {"comment": "x" * 200_000}
    path = tmp_path / "pax.tgz"
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        archive.addfile(info, io.BytesIO(CSV))
    with pytest.raises(InputError, match="extended header of"):
        materialize(path, ws)
    assert files_below(materialize(path, ws, budget=Limits(max_header_bytes=300_000))) == {"a.csv": CSV}


@pytest.mark.parametrize(
    "headers",
    [
        {
            "GNU.sparse.major": "1",
            "GNU.sparse.minor": "0",
            "GNU.sparse.name": "s",
            "GNU.sparse.realsize": "5",
        },
        {"GNU.sparse.map": "0,5", "GNU.sparse.name": "s", "GNU.sparse.size": "5"},
    ],
)
def test_sparse_tar_members_are_refused(ws: Workspace, tmp_path: Path, headers: dict[str, str]) -> None:
    data = b"1\n0\n5\n".ljust(512, b"\0") + b"hello"
    info = tarfile.TarInfo("s")
    info.size, info.pax_headers = len(data), headers
    path = tmp_path / "sparse.tgz"
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        archive.addfile(info, io.BytesIO(data))
    with pytest.raises(InputError, match="sparse"):
        materialize(path, ws)


def test_many_nested_global_headers_do_not_crash(ws: Workspace, tmp_path: Path) -> None:
    block = bytearray()
    payload = b"13 comment=x\n"
    for _ in range(3000):
        header = tarfile.TarInfo("g")
        header.type, header.size = tarfile.XGLTYPE, len(payload)
        block += header.tobuf(format=tarfile.USTAR_FORMAT) + payload.ljust(512, b"\0")
    (tmp_path / "g.tar").write_bytes(bytes(block) + bytes(1024))
    with pytest.raises(InputError):
        materialize(tmp_path / "g.tar", ws)


def test_non_utf8_tar_names_are_replaced_not_crashing(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "latin.tar"
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT, encoding="latin-1") as archive:
        info = tarfile.TarInfo("run/caf\u00e9.csv")
        info.size = len(CSV)
        archive.addfile(info, io.BytesIO(CSV))
    assert files_below(materialize(path, ws)) == {"run/caf\ufffd.csv": CSV}


def test_zip_names_flagged_utf8_that_are_not_are_an_input_error(ws: Workspace, tmp_path: Path) -> None:
    data = make_zip(tmp_path / "u.zip", [("caf\u00e9.csv", CSV)]).read_bytes()
    (tmp_path / "bad.zip").write_bytes(data.replace("caf\u00e9".encode(), b"caf\xff\xfe"))
    with pytest.raises(InputError, match="UTF-8"):
        materialize(tmp_path / "bad.zip", ws)


def test_encrypted_and_exotic_zip_members_are_refused(ws: Workspace, tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "bz.zip", [("a.csv", CSV)], zipfile.ZIP_BZIP2)
    with pytest.raises(InputError, match="compression method 12"):
        materialize(archive, ws)
    data = bytearray(make_zip(tmp_path / "e.zip", [("a.csv", CSV)]).read_bytes())
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        position = data.index(signature) + offset
        data[position] |= 0x1
    (tmp_path / "enc.zip").write_bytes(bytes(data))
    with pytest.raises(InputError, match="encrypted"):
        materialize(tmp_path / "enc.zip", ws)


# ------------------------------------------------------------ file lists


def test_flat_cpu_upload_is_rebuilt_as_a_25_run(ws: Workspace, tmp_path: Path) -> None:
    names = ["cpu_op_detail_info_0.csv", "cpu_op_type_info_0.csv", "cpu_op_execute_timestamp_0.txt"]
    names += ["cpu_framework_0.txt", "trace_view.json", "profiler_20260101_1.log"]
    paths = [upload(tmp_path, name, name.encode()) for name in names]
    root = materialize([str(p) for p in paths], ws)
    assert files_below(root) == {
        f"{NEW_ROOT_NAME}/FRAMEWORK/cpu_op_detail_info_0.csv": b"cpu_op_detail_info_0.csv",
        f"{NEW_ROOT_NAME}/FRAMEWORK/cpu_op_type_info_0.csv": b"cpu_op_type_info_0.csv",
        f"{NEW_ROOT_NAME}/FRAMEWORK/cpu_op_execute_timestamp_0.txt": b"cpu_op_execute_timestamp_0.txt",
        f"{NEW_ROOT_NAME}/FRAMEWORK/cpu_framework_0.txt": b"cpu_framework_0.txt",
        f"{NEW_ROOT_NAME}/ASCEND_PROFILER_OUTPUT/trace_view.json": b"trace_view.json",
    }


def test_flat_ascend_upload_is_rebuilt(ws: Workspace, tmp_path: Path) -> None:
    names = ["kernel_details.csv", "op_statistic.csv", "step_trace_time.csv", "communication.json"]
    names += ["minddata_pipeline_raw_0.csv", "profiler_info_0.json", "profiler_metadata.json"]
    root = materialize([upload(tmp_path, name, b"x") for name in names], ws)
    out = f"{NEW_ROOT_NAME}/ASCEND_PROFILER_OUTPUT"
    assert set(files_below(root)) == {
        f"{out}/kernel_details.csv",
        f"{out}/op_statistic.csv",
        f"{out}/step_trace_time.csv",
        f"{out}/communication.json",
        f"{out}/minddata_pipeline_raw_0.csv",
        f"{NEW_ROOT_NAME}/profiler_info_0.json",
        f"{NEW_ROOT_NAME}/profiler_metadata.json",
    }


@pytest.mark.parametrize(
    "names",
    [
        ["aicore_intermediate_0_detail.csv", "framework_raw_0.csv", "profiler_info_0.json"],
        ["cpu_op_detail_info_0.csv", "cpu_op_type_info_0.csv", "cpu_timeline_display_0.json"],
        ["cpu_op_detail_info_1.csv", "cpu_framework_1.txt", "profiler_info_1.json"],
        ["gpu_op_detail_info_0.csv", "gpu_activity_data_0.csv", "step_trace_raw_0_detail_time.csv"],
        ["output_timeline_data_0.txt", "minddata_pipeline_raw_0.csv", "hccl_raw_0.csv"],
    ],
)
def test_flat_legacy_upload_goes_to_a_profiler_folder(
    ws: Workspace, tmp_path: Path, names: list[str]
) -> None:
    root = materialize([upload(tmp_path, name, b"x") for name in names], ws)
    assert set(files_below(root)) == {f"upload/profiler/{name}" for name in names}


def test_flat_23_upload_nests_the_ascend_ms_part_in_profiler(ws: Workspace, tmp_path: Path) -> None:
    names = ["aicore_intermediate_3_detail.csv", "profiler_info_3.json", "kernel_details.csv"]
    root = materialize([upload(tmp_path, name, b"x") for name in names], ws)
    assert set(files_below(root)) == {
        "upload/profiler/aicore_intermediate_3_detail.csv",
        "upload/profiler/profiler_info_3.json",
        f"upload/profiler/rank-3_{NEW_ROOT_NAME}/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
    }


@pytest.mark.parametrize(
    ("names", "layout", "where"),
    [
        (["kernel_details.csv", "trace_view.json", "profiler_info_0.json"], "ascend-ms", NEW_ROOT_NAME),
        (["aicore_intermediate_0_detail.csv", "framework_raw_0.csv"], "legacy-ascend", "upload/profiler"),
        (["gpu_op_detail_info_0.csv", "profiler_info_0.json"], "legacy-gpu", "upload/profiler"),
        (["cpu_op_detail_info_0.csv", "cpu_timeline_display_0.json"], "legacy-cpu", "upload/profiler"),
        (
            ["aicore_intermediate_0_detail.csv", "profiler_info_0.json", "kernel_details.csv"],
            "ascend-ms-2.3",
            f"upload/profiler/rank-0_{NEW_ROOT_NAME}",
        ),
    ],
)
def test_rebuilt_trees_are_recognised_by_layout_detection(
    ws: Workspace, tmp_path: Path, names: list[str], layout: str, where: str
) -> None:
    content = {".json": b"{}", ".csv": b"a,b\n1,2\n"}
    root = materialize([upload(tmp_path, name, content[Path(name).suffix]) for name in names], ws)
    assert [(c.layout, str(c.root.relative_to(root))) for c in discover(root)] == [(layout, where)]


def test_flat_upload_of_a_real_cpu_profile_is_found_by_ingest(ws: Workspace) -> None:
    fixture = Path(__file__).parent / "fixtures" / "cpu" / "infer_fp32_graph"
    root = materialize(sorted(str(p) for p in fixture.rglob("*") if p.is_file()), ws)
    assert [(c.layout, c.root.name) for c in find_runs(root)] == [("cpu-ms", NEW_ROOT_NAME)]


def test_placement_ignores_unknown_names() -> None:
    assert placement(["notes.txt", "PROF_000001", "kernel_details.csv.bak"]) == {}


def test_ambiguous_duplicate_basenames_ask_for_an_archive(ws: Workspace, tmp_path: Path) -> None:
    first = upload(tmp_path, "kernel_details.csv", b"rank 0")
    second = upload(tmp_path, "kernel_details.csv", b"rank 1")
    with pytest.raises(InputError, match="cannot be told apart") as caught:
        materialize([first, second, upload(tmp_path, "trace_view.json", b"[]")], ws)
    assert caught.value.path == "kernel_details.csv" and "archive" in (caught.value.expected or "")


def test_identical_duplicates_are_kept_once(ws: Workspace, tmp_path: Path) -> None:
    first = upload(tmp_path, "kernel_details.csv", b"same")
    copy = tmp_path / "elsewhere" / "kernel_details.csv"
    copy.parent.mkdir()
    copy.write_bytes(b"same")
    root = materialize([first, str(first), copy], ws)
    assert files_below(root) == {f"{NEW_ROOT_NAME}/ASCEND_PROFILER_OUTPUT/kernel_details.csv": b"same"}


def test_unknown_files_only_are_refused_with_their_names(ws: Workspace, tmp_path: Path) -> None:
    paths = [upload(tmp_path, name, b"x") for name in ("notes.txt", "photo.png")]
    with pytest.raises(InputError, match=r"none of the 2 files .*notes\.txt, photo\.png"):
        materialize(paths, ws)


def test_a_list_with_one_archive_is_the_archive(ws: Workspace, tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "p.zip", [("run/trace_view.json", b"[]")])
    assert files_below(materialize([str(archive)], ws)) == {"run/trace_view.json": b"[]"}
    assert files_below(materialize([archive, archive], ws)) == {"run/trace_view.json": b"[]"}


def test_several_archives_get_one_folder_each(ws: Workspace, tmp_path: Path) -> None:
    first = make_zip(tmp_path / "rank0.zip", [("trace_view.json", b"0")])
    (tmp_path / "other").mkdir()
    second = make_tar(tmp_path / "other" / "rank0.zip", [("trace_view.json", b"1")])
    upload_ = make_tar(tmp_path / "upload.tgz", [("trace_view.json", b"2")])
    loose = upload(tmp_path, "kernel_details.csv", b"k")
    root = materialize([first, second, upload_, loose], ws)
    assert files_below(root) == {
        "rank0/trace_view.json": b"0",
        "rank0-2/trace_view.json": b"1",
        "upload-2/trace_view.json": b"2",
        f"{NEW_ROOT_NAME}/ASCEND_PROFILER_OUTPUT/kernel_details.csv": b"k",
    }


def test_single_plain_file_is_rebuilt(ws: Workspace, tmp_path: Path) -> None:
    path = upload(tmp_path, "kernel_details.csv", CSV)
    assert files_below(materialize(str(path), ws)) == {
        f"{NEW_ROOT_NAME}/ASCEND_PROFILER_OUTPUT/kernel_details.csv": CSV
    }


def test_flat_upload_respects_the_byte_budget(ws: Workspace, tmp_path: Path) -> None:
    paths = [upload(tmp_path, name, bytes(600_000)) for name in ("kernel_details.csv", "op_statistic.csv")]
    with pytest.raises(InputError, match="over the limit"):
        materialize(paths, ws, budget=Limits(max_total_bytes=1_000_000))


@pytest.mark.parametrize(
    ("source", "message"),
    [(None, "nothing was given"), ("", "nothing was given"), ([], "empty"), ([3], "not a path")],
)
def test_empty_or_odd_sources_are_input_errors(ws: Workspace, source, message: str) -> None:
    with pytest.raises(InputError, match=message):
        materialize(source, ws)


def test_missing_paths_and_folders_in_lists_are_input_errors(ws: Workspace, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="was not found") as caught:
        materialize(tmp_path / "missing.zip", ws)
    assert caught.value.path == "missing.zip"
    (tmp_path / "dir").mkdir()
    with pytest.raises(InputError, match="folder inside a list"):
        materialize([tmp_path / "dir", upload(tmp_path, "trace_view.json", b"[]")], ws)


def test_nothing_is_written_outside_the_workspace(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "systmp"))
    (tmp_path / "systmp").mkdir()
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    archives = [
        make_zip(inputs / "ok.zip", [("run/a.csv", CSV)]),
        make_tar(inputs / "ok.tgz", [("run/a.csv", CSV)]),
        make_zip(inputs / "slip.zip", [("../../../../x", b"owned")]),
        make_tar(inputs / "slip.tgz", [("../../../../x", b"owned")]),
        upload(inputs, "kernel_details.csv", CSV),
    ]
    before = snapshot(tmp_path)
    with Workspace() as workspace:
        for archive in archives:
            with contextlib.suppress(InputError):
                materialize(archive, workspace)
        assert all(p.resolve().is_relative_to(workspace.path) for p in workspace.path.rglob("*"))
        during = snapshot(tmp_path) - before
        assert during and all(name.startswith(f"systmp/{workspace.path.name}") for name in during)
    assert snapshot(tmp_path) == before


# ------------------------------------------------------------ describe


def test_describe_lists_top_level_names_with_counts(tmp_path: Path) -> None:
    folder = profile_tree(tmp_path / "p")
    (folder / "notes.txt").write_text("x")
    assert describe(folder) == "vm_1_20260101000000000_ascend_ms/ (2 files), notes.txt"
    assert describe(folder / "vm_1_20260101000000000_ascend_ms") == (
        "ASCEND_PROFILER_OUTPUT/ (1 file), FRAMEWORK/ (1 file)"
    )


def test_describe_caps_the_list_and_handles_odd_paths(tmp_path: Path) -> None:
    for i in range(13):
        (tmp_path / f"f{i:02d}.csv").write_text("x")
    text = describe(tmp_path)
    assert text.startswith("f00.csv, f01.csv") and text.endswith("f09.csv, and 3 more")
    assert describe(tmp_path / "f00.csv") == "a single file 'f00.csv'"
    assert describe(tmp_path / "nope") == "nothing (the path does not exist)"
    (tmp_path / "empty").mkdir()
    assert describe(tmp_path / "empty") == "an empty folder"


# ------------------------------------------------------------ limits


def test_limits_from_env_overrides_and_validates() -> None:
    limits = Limits.from_env({"PERF_DOCTOR_MAX_MEMBERS": "7", "PERF_DOCTOR_MAX_RATIO": "50.5", "OTHER": "x"})
    assert (limits.max_members, limits.max_ratio, limits.max_total_bytes) == (7, 50.5, 2 * GIB)
    assert Limits.from_env({}) == Limits()
    with pytest.raises(InputError, match=r"PERF_DOCTOR_MAX_TOTAL_BYTES.*not a number"):
        Limits.from_env({"PERF_DOCTOR_MAX_TOTAL_BYTES": "2GB"})
    with pytest.raises(InputError, match="not positive"):
        Limits.from_env({"PERF_DOCTOR_MAX_DEPTH": "0"})
    with pytest.raises(ValueError, match="max_members"):
        Limits(max_members=0)


def test_materialize_reads_limits_from_env_by_default(ws: Workspace, tmp_path: Path, monkeypatch) -> None:
    archive = make_zip(tmp_path / "many.zip", [(f"f{i}.csv", CSV) for i in range(3)])
    monkeypatch.setenv("PERF_DOCTOR_MAX_MEMBERS", "2")
    with pytest.raises(InputError, match="over the limit of 2"):
        materialize(archive, ws)


# ------------------------------------------------------------ properties

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PREFIXES = [b"", b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b\x08\x00", b"\x1f\x8b"]


@pytest.mark.slow
@PROPERTY
@given(
    prefix=st.sampled_from(PREFIXES),
    body=st.binary(max_size=1500),
    suffix=st.sampled_from([".zip", ".tar.gz", ".tgz", ".tar", ".bin"]),
    ustar=st.booleans(),
)
def test_random_bytes_raise_only_input_errors(prefix: bytes, body: bytes, suffix: str, ustar: bool) -> None:
    data = prefix + body
    if ustar:
        data = data.ljust(512, b"\0")
        data = data[:257] + b"ustar" + data[262:]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / f"upload{suffix}"
        path.write_bytes(data)
        with Workspace(base=scratch) as workspace:
            try:
                root = materialize(path, workspace)
            except InputError:
                return
            assert root.resolve().is_relative_to(workspace.path.resolve())


def _valid_archive(kind: str) -> bytes:
    members = [("run/a.csv", CSV), ("run/sub/b.json", b'{"k": [1, 2, 3]}' * 20)]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "a"
        make_zip(path, members) if kind == "zip" else make_tar(path, members)
        return path.read_bytes()


VALID = {kind: _valid_archive(kind) for kind in ("zip", "tgz")}


@pytest.mark.slow
@PROPERTY
@given(
    kind=st.sampled_from(sorted(VALID)), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)))
)
def test_corrupted_archives_raise_only_input_errors(kind: str, flips: list[tuple[int, int]]) -> None:
    data = bytearray(VALID[kind])
    for position, mask in flips:
        data[position % len(data)] ^= mask
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "upload.bin"
        path.write_bytes(bytes(data))
        with Workspace(base=Path(scratch)) as workspace:
            with contextlib.suppress(InputError):
                materialize(path, workspace)
            assert {p.name for p in Path(scratch).iterdir()} == {"upload.bin", workspace.path.name}


NAME_PART = st.one_of(
    st.just(".."),
    st.sampled_from([".", "", "C:", "c:\\", "~", "...", " ", "\\..\\", "/"]),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=8),
)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("kind", ["zip", "tgz"])
@PROPERTY
@given(names=st.lists(st.lists(NAME_PART, min_size=1, max_size=5).map("/".join), min_size=1, max_size=4))
def test_random_member_names_never_escape(kind: str, names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "a" / "b"
        base.mkdir(parents=True)
        path = Path(scratch) / "in.bin"
        members = [(name, b"data") for name in names]
        try:
            make_zip(path, members) if kind == "zip" else make_tar(path, members)
        except (ValueError, UnicodeEncodeError):
            return  # the standard library cannot even write this name
        with Workspace(base=base) as workspace:
            with contextlib.suppress(InputError):
                materialize(path, workspace)
            outside = {
                p
                for p in Path(scratch).rglob("*")
                if not p.resolve().is_relative_to(workspace.path.resolve())
            } - {base, base.parent, path}
            assert outside == set()
            for written in workspace.path.rglob("*"):
                assert not written.is_symlink()
                assert written.is_dir() or written.read_bytes() == b"data"


# ------------------------------------------------------------ per-file budget

ONE_FILE = Limits(max_profile_file_bytes=1024 * 1024)
BIG_TABLE = b"op_type,op_name\n" + b"Conv2D,conv\n" * 200_000  # 2.4 MB (the ratio budget is raised)


def test_a_zip_member_declared_over_the_per_file_budget_is_refused_before_unpacking(ws, tmp_path) -> None:
    archive = make_zip(tmp_path / "big.zip", [("run/kernel_details.csv", BIG_TABLE)])
    with pytest.raises(InputError) as caught:
        materialize(archive, ws, budget=Limits(max_profile_file_bytes=1024 * 1024, max_ratio=1e6))
    assert caught.value.problem == (
        "member 'run/kernel_details.csv' unpacks to more than 1.0 MiB, the limit for one profile file "
        "(as its header says)"
    )
    assert not list(ws.path.rglob("kernel_details.csv"))


def test_a_tar_member_over_the_per_file_budget_is_refused_before_unpacking(ws, tmp_path) -> None:
    archive = make_tar(tmp_path / "big.tar.gz", [("run/kernel_details.csv", BIG_TABLE)])
    with pytest.raises(InputError, match=r"unpacks to more than 1\.0 MiB.*\(as its header says\)"):
        materialize(archive, ws, budget=Limits(max_profile_file_bytes=1024 * 1024, max_ratio=1e6))


def test_a_loose_upload_over_the_per_file_budget_is_stopped_while_copying(ws, tmp_path) -> None:
    table = tmp_path / "kernel_details.csv"
    table.write_bytes(BIG_TABLE)
    with pytest.raises(InputError, match=r"'kernel_details.csv' unpacks to more than 1\.0 MiB"):
        materialize([table], ws, budget=ONE_FILE)


# ------------------------------------------------------------ per-table row budget

ROWS = Limits(max_profile_rows=1000, max_ratio=1e6)


def table_of(rows: int, ending: bytes = b"\n") -> bytes:
    """A CSV table with a header line and `rows` short rows (12 bytes each)."""
    return b"op_type,op_name" + ending + (b"Conv2D,conv" + ending) * rows


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
def test_a_zip_member_over_the_row_budget_is_stopped_while_streaming(ws, tmp_path, ending) -> None:
    archive = make_zip(tmp_path / "rows.zip", [("run/kernel_details.csv", table_of(1001, ending))])
    with pytest.raises(InputError) as caught:
        materialize(archive, ws, budget=ROWS)
    assert caught.value.message == (
        "rows.zip: member 'run/kernel_details.csv' has more than 1,000 rows, the limit for one profile "
        "table (stopped while streaming); expected a smaller upload (the operator can raise "
        "PERF_DOCTOR_MAX_PROFILE_ROWS)"
    )


def test_a_tar_member_and_a_loose_table_over_the_row_budget_are_refused(ws, tmp_path) -> None:
    archive = make_tar(tmp_path / "rows.tar.gz", [("run/cpu_op_execute_timestamp_0.txt", table_of(1001))])
    with pytest.raises(InputError, match=r"'run/cpu_op_execute_timestamp_0.txt' has more than 1,000 rows"):
        materialize(archive, ws, budget=ROWS)
    table = tmp_path / "op_statistic.csv"
    table.write_bytes(table_of(5000))
    with pytest.raises(InputError, match=r"member 'op_statistic.csv' has more than 1,000 rows"):
        materialize([table], ws, budget=ROWS)


def test_tables_at_the_row_budget_and_long_json_files_are_unpacked(ws, tmp_path) -> None:
    events = b"[\n" + b'{"ph": "X"},\n' * 5000 + b"{}]\n"  # lines of JSON are not rows: not counted
    members = [
        ("run/kernel_details.csv", table_of(1000)),  # exactly at the budget
        ("run/step_trace_time.csv", table_of(1000, b"\r\n")),
        ("run/trace_view.json", events),
    ]
    folder = materialize(make_zip(tmp_path / "ok.zip", members), ws, budget=ROWS)
    assert sorted(p.name for p in folder.rglob("*") if p.is_file()) == [
        "kernel_details.csv",
        "step_trace_time.csv",
        "trace_view.json",
    ]
    assert (folder / "run" / "kernel_details.csv").read_bytes() == table_of(1000)


@pytest.mark.parametrize("text", [b"a\r\nb\r\nc\r\n", b"a\rb\rc", b"a\nb\n\nc", b"a\r\n\rb\n\r\n"])
def test_line_breaks_count_once_wherever_a_chunk_ends(text) -> None:
    expected = len(text.splitlines(keepends=True)) - (not text.endswith((b"\n", b"\r")))
    for cut in range(len(text) + 1):
        for second in range(cut, len(text) + 1):
            counter = LineCounter()
            for chunk in (text[:cut], text[cut:second], text[second:]):
                counter.add(chunk)
            assert counter.breaks == expected, (text, cut, second)


def test_a_crlf_table_split_between_cr_and_lf_at_a_chunk_end_is_within_its_budget(ws, tmp_path) -> None:
    header = b"op_type,op_name\r\n"  # 17 bytes; 16-byte rows put a row's \r at the chunk's last byte
    rows = 2000
    assert (CHUNK + 1 - len(header)) % 16 == 0  # the \r of row (CHUNK + 1 - 17) / 16 is byte CHUNK - 1
    table = tmp_path / "kernel_details.csv"
    table.write_bytes(header + b"Conv2D,convolu\r\n" * rows)
    folder = materialize([table], ws, budget=Limits(max_profile_rows=rows, max_ratio=1e6))
    assert len(next(folder.rglob("kernel_details.csv")).read_bytes().splitlines()) == rows + 1
    with pytest.raises(InputError, match=r"has more than 1,999 rows"):
        materialize([table], ws, budget=Limits(max_profile_rows=rows - 1, max_ratio=1e6))

"""Write the bad-input corpus (``corpus/``) and its manifest (``manifest.json``) from damaged real fixtures.

Run from the repository root:  .venv/bin/python tests/bad_inputs/generate.py

Every case starts from a real fixture (MindSpore 2.10 CPU profiles, the Ascend fixtures, the exported
MINDIR files) and damages one thing. The output is deterministic (fixed archive timestamps, gzip mtime 0),
so regenerating leaves git clean. Cases that git cannot hold or that are too large to commit (an empty
folder, 100,000 archive members, a sparse MINDIR over 2 GiB) are marked ``"runtime": true`` and built at
test time by :func:`build` into a temporary folder.

Each manifest entry: ``name``, ``kind`` (folder / archive / mindir), ``call`` (``compare``: the input is
the target, ``baseline`` is a good fixture; ``inspect``: a model on its own), ``input`` (relative to
corpus/), ``outcome`` (``error`` with ``match``, a regex of the one-line message; ``partial``: a report
whose warnings match every regex of ``warnings``; ``report``: a report), optional ``payload`` (text that
must never appear unescaped in HTML or Markdown output), ``formula`` (operator names that a spreadsheet
would run), ``renders`` (the CLI writes every format too, for the output checks), ``app`` (overrides
for the web app, whose folder upload loses sub-folders; ``"outcome": "not_applicable"`` for an input no
browser can upload, such as a named pipe) and ``known_bug`` (the expected outcome is not met yet; the
test fails if it suddenly is, so the note gets removed).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import shutil
import sqlite3
import stat
import sys
import tarfile
import warnings
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:  # run as a script: make the project and tests importable
    sys.path.insert(0, str(ROOT))

from graph import schema  # noqa: E402
from tests.support.inputs import XSS, poison_profile  # noqa: E402
from tests.support.mindir_wire import nested  # noqa: E402 - the hand-written deep-nesting MINDIR

CORPUS = HERE / "corpus"
MANIFEST = HERE / "manifest.json"
CPU = ROOT / "tests" / "fixtures" / "cpu"
ASCEND = ROOT / "tests" / "fixtures" / "ascend"
MINDIR = ROOT / "tests" / "fixtures" / "mindir"
CPU_TARGET = CPU / "infer_fp32_graph"
CPU_BASELINE = "tests/fixtures/cpu/train_amp_o2_graph"
ASCEND_TARGET = ASCEND / "level1" / "infer"
ASCEND_BASELINE = "tests/fixtures/ascend/level1/train"
MODEL = MINDIR / "conv_bn_relu_eval.mindir"
ESCAPE = "PERF_DOCTOR_ESCAPE_MARKER"  # the name every escaping member tries to write
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
BOMB_BYTES = 64 * 1024 * 1024  # zeros: about 64 KiB compressed, over 1000:1
MARKDOWN = "**bold**_em_[link](http://example.invalid)|pipe|`tick`#h ~~s~~ $x$"
FORMULAS = ("=HYPERLINK(1+2)", "+SUM(1+1)", "@SUM(1)", "-2+3")
MODEL_PAYLOAD = f"Default/{XSS}/{MARKDOWN}/=HYPERLINK(1)/Conv2D-op0"


@dataclass
class Case:
    """One kind of bad input and what every entry point must make of it."""

    name: str
    kind: str  # folder | archive | mindir
    call: str  # compare | inspect
    outcome: str  # error | partial | report
    match: str = ""
    warnings: list[str] = field(default_factory=list)
    baseline: str | None = None
    input: str | None = None
    runtime: bool = False
    payload: str | None = None
    formula: bool = False
    renders: bool = False  # the CLI also writes Markdown, HTML and CSV for the output checks
    app: dict[str, str | None] = field(default_factory=dict)
    known_bug: str | None = None
    note: str = ""


Builder = Callable[[Path], Path]
CASES: list[tuple[Case, Builder]] = []


def case(**spec: Any) -> Callable[[Builder], Builder]:
    """Register a builder: it writes the damaged input below the folder it is given and returns it."""

    def register(build: Builder) -> Builder:
        CASES.append((Case(**spec), build))
        return build

    return register


# --------------------------------------------------------------------------------------------------
# Helpers


def cpu_copy(dest: Path, source: Path = CPU_TARGET) -> Path:
    """A copy of a real CPU profile; returns the copy's root folder."""
    shutil.copytree(source, dest)
    return dest


def framework(folder: Path, name: str) -> Path:
    """A file of the FRAMEWORK folder of the (only) run root below `folder`."""
    return next(folder.glob("*_ascend_ms")) / "FRAMEWORK" / name


def rewrite(path: Path, edit: Callable[[str], str]) -> None:
    """Replace a text file's content by edit(content)."""
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")


def durations(count: int | None, value: Callable[[str], str]) -> Callable[[str], str]:
    """An edit of cpu_op_execute_timestamp text that replaces the first `count` launch durations."""
    launch = re.compile(r"(\d{19}),([0-9.]+),0")
    return lambda text: launch.sub(lambda m: f"{m.group(1)},{value(m.group(2))},0", text, count=count or 0)


def truncate(path: Path, keep: float = 0.5) -> None:
    """Cut a file at `keep` of its length (mid-row for any real table)."""
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def drop_column(path: Path, column: str) -> None:
    """Remove one column of a simple CSV (no quoted commas)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    index = lines[0].split(",").index(column)
    kept = [",".join(part for i, part in enumerate(line.split(",")) if i != index) for line in lines]
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")


def write_zip(path: Path, members: list[tuple[str, bytes, int]], method: int = zipfile.ZIP_DEFLATED) -> Path:
    """A deterministic zip of (name, data, unix mode) members; names are written exactly as given."""
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.create_system, info.external_attr = 3, mode << 16
            archive.writestr(info, data, compress_type=method, compresslevel=9)
    return path


def tar_info(name: str, size: int = 0, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    """A tar header with fixed owner and time."""
    info = tarfile.TarInfo(name)
    info.size, info.type, info.linkname, info.mtime, info.mode = size, kind, link, 0, 0o644
    return info


def write_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]], compressed: bool = True) -> Path:
    """A deterministic tar or tar.gz (gzip mtime 0) of (header, data) members."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
    raw = buffer.getvalue()
    if compressed:
        with path.open("wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
            gz.write(raw)
    else:
        path.write_bytes(raw)
    return path


def folder_members(folder: Path, prefix: str) -> list[tuple[str, bytes, int]]:
    """Every file below a folder as zip members under `prefix`/."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return [(f"{prefix}/{p.relative_to(folder).as_posix()}", p.read_bytes(), 0o100644) for p in files]


def good_members() -> list[tuple[str, bytes, int]]:
    """The real infer_fp32_graph profile as archive members."""
    return folder_members(CPU_TARGET, CPU_TARGET.name)


def model_proto() -> Any:
    """The real conv-bn-relu export, decoded with the project's own schema."""
    return schema.model_class().FromString(MODEL.read_bytes())


# --------------------------------------------------------------------------------------------------
# Profile folders: CPU (compared with a good CPU baseline)

CPU_PAIR = {"kind": "folder", "call": "compare", "baseline": CPU_BASELINE}
NOT_PROFILE = r"not profiler output|none of the \d+ files is a known profiler file"


@case(
    name="folder_empty",
    outcome="error",
    match=NOT_PROFILE,
    runtime=True,
    **CPU_PAIR,
    app={"outcome": "report", "note": "an empty folder uploads nothing: the baseline is diagnosed alone"},
)
def _folder_empty(dest: Path) -> Path:
    dest.mkdir()
    return dest


@case(name="folder_wrong_layout", outcome="error", match=NOT_PROFILE, **CPU_PAIR)
def _wrong_layout(dest: Path) -> Path:
    dest.mkdir()
    for path in sorted(CPU_TARGET.rglob("*.*")):
        shutil.copy(path, dest / f"export_{path.stem}.dat")
    return dest


@case(name="csv_truncated", outcome="error", match=r"cpu_op_detail_info_0\.csv: unreadable CSV", **CPU_PAIR)
def _csv_truncated(dest: Path) -> Path:
    truncate(framework(cpu_copy(dest), "cpu_op_detail_info_0.csv"))
    return dest


@case(
    name="txt_truncated",
    outcome="error",
    match="cpu_op_execute_timestamp_0.txt: malformed launch",
    **CPU_PAIR,
)
def _txt_truncated(dest: Path) -> Path:
    truncate(framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt"))
    return dest


@case(
    name="legacy_txt_cut_after_first_start",
    outcome="error",
    match="cpu_op_execute_timestamp_0.txt: launch entry .* has no duration",
    kind="folder",
    call="compare",
    baseline="tests/fixtures/ascend/legacy_cpu",
    note="MindSpore 2.0-2.2 CPU profile whose launch file ends right after the first start time",
)
def _legacy_txt_cut_after_start(dest: Path) -> Path:
    shutil.copytree(ASCEND / "legacy_cpu", dest)
    path = dest / "profiler" / "cpu_op_execute_timestamp_0.txt"
    first = path.read_bytes().split(b"\n", 1)[0]
    path.write_bytes(first[: first.index(b",")])  # `<name>;<type>;<start_ns>` and nothing more
    return dest


@case(
    name="json_truncated_trace_view",
    outcome="report",
    **CPU_PAIR,
    note="the CPU reader takes launches from the timestamp file; trace_view.json is not read",
)
def _json_truncated(dest: Path) -> Path:
    truncate(next(cpu_copy(dest).rglob("trace_view.json")))
    return dest


@case(
    name="framework_truncated",
    outcome="report",
    **CPU_PAIR,
    note="only input shapes come from cpu_framework_0.txt; the cut-off launches have none",
)
def _framework_truncated(dest: Path) -> Path:
    truncate(framework(cpu_copy(dest), "cpu_framework_0.txt"))
    return dest


@case(name="csv_utf16", outcome="error", match=r"cpu_op_detail_info_0\.csv: unreadable CSV", **CPU_PAIR)
def _csv_utf16(dest: Path) -> Path:
    path = framework(cpu_copy(dest), "cpu_op_detail_info_0.csv")
    path.write_bytes(path.read_text(encoding="utf-8").encode("utf-16"))
    return dest


@case(name="txt_utf16", outcome="error", match="not UTF-8 text", **CPU_PAIR)
def _txt_utf16(dest: Path) -> Path:
    path = framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt")
    path.write_bytes(path.read_text(encoding="utf-8").encode("utf-16"))
    return dest


@case(name="txt_latin1_names", outcome="error", match="not UTF-8 text", **CPU_PAIR)
def _txt_latin1(dest: Path) -> Path:
    path = framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt")
    path.write_bytes(path.read_bytes().replace(b"Default/block1", "Défault/block1".encode("latin-1")))
    return dest


@case(
    name="csv_latin1_names",
    outcome="error",
    match=r"cpu_op_detail_info_0\.csv: .*UTF-8",
    **CPU_PAIR,
)
def _csv_latin1(dest: Path) -> Path:
    path = framework(cpu_copy(dest), "cpu_op_detail_info_0.csv")
    path.write_bytes(path.read_bytes().replace(b"Default/block1", "Défault/block1".encode("latin-1")))
    return dest


@case(name="csv_missing_column", outcome="error", match=r"missing columns \['full_op_name'\]", **CPU_PAIR)
def _missing_column(dest: Path) -> Path:
    drop_column(framework(cpu_copy(dest), "cpu_op_detail_info_0.csv"), "full_op_name")
    return dest


@case(name="csv_renamed_column", outcome="error", match=r"missing columns \['op_type'\]", **CPU_PAIR)
def _renamed_column(dest: Path) -> Path:
    rewrite(
        framework(cpu_copy(dest), "cpu_op_detail_info_0.csv"), lambda t: t.replace("op_type,", "OpType,", 1)
    )
    return dest


@case(
    name="csv_header_only",
    outcome="error",
    match=r"cpu_op_detail_info_0\.csv",
    **CPU_PAIR,
)
def _header_only(dest: Path) -> Path:
    rewrite(framework(cpu_copy(dest), "cpu_op_detail_info_0.csv"), lambda t: t.splitlines()[0] + "\n")
    return dest


@case(
    name="csv_empty", outcome="error", match=r"cpu_op_detail_info_0\.csv: unreadable CSV \(Empty", **CPU_PAIR
)
def _csv_empty(dest: Path) -> Path:
    framework(cpu_copy(dest), "cpu_op_detail_info_0.csv").write_bytes(b"")
    return dest


@case(name="file_missing", outcome="error", match="cpu_op_execute_timestamp_0.txt: file missing", **CPU_PAIR)
def _file_missing(dest: Path) -> Path:
    framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt").unlink()
    return dest


@case(name="txt_binary_garbage", outcome="error", match="not UTF-8 text", **CPU_PAIR)
def _binary_garbage(dest: Path) -> Path:
    framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt").write_bytes(bytes(range(256)) * 16)
    return dest


@case(
    name="durations_nan_some",
    outcome="partial",
    warnings=[r"(?i)\bNaN\b|not a number|invalid duration"],
    **CPU_PAIR,
)
def _nan_some(dest: Path) -> Path:
    rewrite(framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt"), durations(5, lambda _: "nan"))
    return dest


@case(
    name="durations_nan_all",
    outcome="error",
    match=r"cpu_op_execute_timestamp_0\.txt",
    **CPU_PAIR,
)
def _nan_all(dest: Path) -> Path:
    rewrite(framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt"), durations(None, lambda _: "nan"))
    return dest


@case(
    name="durations_negative",
    outcome="partial",
    warnings=[r"(?i)negative"],
    **CPU_PAIR,
)
def _negative(dest: Path) -> Path:
    rewrite(framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt"), durations(7, lambda v: f"-{v}"))
    return dest


@case(
    name="durations_huge",
    outcome="partial",
    warnings=[r"(?i)implausible|too large|huge"],
    **CPU_PAIR,
)
def _huge(dest: Path) -> Path:
    rewrite(framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt"), durations(3, lambda _: "1e300"))
    return dest


@case(
    name="durations_infinite",
    outcome="partial",
    warnings=[r"(?i)infinite|\binf\b"],
    **CPU_PAIR,
)
def _infinite(dest: Path) -> Path:
    rewrite(framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt"), durations(3, lambda _: "inf"))
    return dest


@case(name="start_overflow", outcome="error", match="malformed launch entry", **CPU_PAIR)
def _start_overflow(dest: Path) -> Path:
    rewrite(
        framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt"),
        lambda t: re.sub(r";(\d{19}),", ";99999999999999999999,", t, count=1),
    )
    return dest


@case(
    name="duplicated_ranks",
    outcome="error",
    match=r"(?i)rank 0 .*(twice|more than once|several)",
    **CPU_PAIR,
    app={"outcome": "report", "known_bug": None, "note": "identical files of the two roots upload once"},
)
def _duplicated_ranks(dest: Path) -> Path:
    root = next(cpu_copy(dest).glob("*_ascend_ms"))
    shutil.copytree(root, dest / root.name.replace("vm_", "vm2_"))
    return dest


@case(
    name="mixed_versions",
    outcome="error",
    match="several different profiler outputs",
    **CPU_PAIR,
    app={"match": "cannot be told apart"},
)
def _mixed_versions(dest: Path) -> Path:
    shutil.copytree(ASCEND / "legacy_cpu" / "profiler", cpu_copy(dest) / "profiler")
    return dest


@case(name="ops_html", outcome="report", payload=XSS, **CPU_PAIR)
def _ops_html(dest: Path) -> Path:
    return poison_profile(CPU_TARGET, dest)


@case(name="ops_markdown", outcome="report", payload=MARKDOWN, **CPU_PAIR)
def _ops_markdown(dest: Path) -> Path:
    return poison_profile(CPU_TARGET, dest, new_name=f"Default/{MARKDOWN}/Conv2D-op0")


@case(name="ops_formula", outcome="report", formula=True, **CPU_PAIR)
def _ops_formula(dest: Path) -> Path:
    """Four operators renamed to formulas; each rename is one poison_profile step on the previous copy."""
    source = CPU_TARGET
    olds = [
        "Default/block1-Block/conv-Conv2d/Conv2D-op0",
        "Default/block2-Block/conv-Conv2d/Conv2D-op0",
        "Default/block3-Block/conv-Conv2d/Conv2D-op0",
        "Default/fc-Dense/MatMul-op0",
    ]
    for step, (old, new) in enumerate(zip(olds, FORMULAS, strict=True)):
        target = dest if step == len(olds) - 1 else dest.with_name(f"{dest.name}.step{step}")
        poison_profile(source, target, new_name=new, old_name=old)
        if source != CPU_TARGET:
            shutil.rmtree(source)
        source = target
    return dest


# --------------------------------------------------------------------------------------------------
# Profile folders: Ascend (compared with a good Ascend baseline)

ASCEND_PAIR = {"kind": "folder", "call": "compare", "baseline": ASCEND_BASELINE}


def ascend_copy(dest: Path) -> Path:
    """A copy of the real Level1 Ascend inference profile."""
    shutil.copytree(ASCEND_TARGET, dest)
    return dest


def ascend_output(folder: Path, name: str) -> Path:
    """A file of the ASCEND_PROFILER_OUTPUT folder below `folder`."""
    return next(folder.rglob(f"ASCEND_PROFILER_OUTPUT/{name}"))


@case(
    name="ascend_kernel_details_truncated",
    outcome="error",
    match=r"kernel_details\.csv: .*truncated",
    **ASCEND_PAIR,
)
def _kd_truncated(dest: Path) -> Path:
    truncate(ascend_output(ascend_copy(dest), "kernel_details.csv"))
    return dest


@case(
    name="ascend_durations_na",
    outcome="error",
    match=r"kernel_details\.csv",
    **ASCEND_PAIR,
)
def _kd_na(dest: Path) -> Path:
    path = ascend_output(ascend_copy(dest), "kernel_details.csv")
    lines = path.read_bytes().decode("utf-8").split("\r\n")
    column = lines[0].split(",").index("Duration(us)")
    out = [lines[0]] + [_set_field(line, column, "N/A") for line in lines[1:]]
    path.write_bytes("\r\n".join(out).encode("utf-8"))
    return dest


def _set_field(line: str, column: int, value: str) -> str:
    """Replace one field of a CSV line whose quoted fields may hold commas."""
    if not line:
        return line
    fields = next(csv.reader([line]))
    fields[column] = value
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(fields)
    return buffer.getvalue()


@case(
    name="ascend_profiler_info_bad_json",
    outcome="error",
    match=r"profiler_info_0\.json: invalid or truncated JSON",
    **ASCEND_PAIR,
)
def _info_json(dest: Path) -> Path:
    next(ascend_copy(dest).rglob("profiler_info_0.json")).write_bytes(b'{"profiler_parameters": {"level":')
    return dest


@case(
    name="ascend_optional_table_truncated", outcome="partial", warnings=[r"op_statistic\.csv"], **ASCEND_PAIR
)
def _optional_truncated(dest: Path) -> Path:
    path = ascend_output(ascend_copy(dest), "op_statistic.csv")
    path.write_bytes(path.read_bytes()[:-40])
    return dest


@case(
    name="ascend_header_lone_cr",
    outcome="error",
    match=r"kernel_details\.csv: missing column",
    note="a bare carriage return inside the header line ends the header there",
    **ASCEND_PAIR,
)
def _header_lone_cr(dest: Path) -> Path:
    path = ascend_output(ascend_copy(dest), "kernel_details.csv")
    path.write_bytes(path.read_bytes().replace(b",", b"\r,", 1))
    return dest


@case(
    name="ascend_old_mac_line_endings",
    outcome="report",
    note="every line ends in a bare carriage return: still read as CSV",
    **ASCEND_PAIR,
)
def _old_mac_line_endings(dest: Path) -> Path:
    path = ascend_output(ascend_copy(dest), "kernel_details.csv")
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\r").replace(b"\n", b"\r"))
    return dest


# Round 2 (issue 20): structural JSON limits, special files, degenerate values

DEEP = 100_000  # nesting levels of the deep JSON probes (json's C decoder recurses once per level)


def deep_json(levels: int = DEEP) -> str:
    """A JSON list nested `levels` deep."""
    return "[" * levels + "]" * levels


def info_file(folder: Path) -> Path:
    """The profiler_info JSON of the (only) Ascend run below `folder`."""
    return next(folder.rglob("profiler_info_*.json"))


@case(
    name="ascend_info_deeply_nested",
    outcome="error",
    match=r"profiler_info_0\.json: JSON nested more than 200 levels",
    **ASCEND_PAIR,
)
def _info_deep(dest: Path) -> Path:
    info_file(ascend_copy(dest)).write_text('{"profiler_parameters": ' + deep_json() + "}", encoding="utf-8")
    return dest


@case(
    name="ascend_metadata_deeply_nested",
    outcome="partial",
    warnings=[r"profiler_metadata\.json: JSON nested more than 200 levels"],
    note="profiler_metadata.json is optional: ignored with a warning",
    **ASCEND_PAIR,
)
def _metadata_deep(dest: Path) -> Path:
    next(ascend_copy(dest).rglob("profiler_metadata.json")).write_text(deep_json(), encoding="utf-8")
    return dest


@case(
    name="ascend_trace_deeply_nested",
    outcome="error",
    match=r"trace_view\.json: JSON event nested too deeply",
    **ASCEND_PAIR,
    note="a ProfilerStep event whose args nest 100,000 lists deep, in a trace that is the only kernel source",
)
def _trace_deep(dest: Path) -> Path:
    ascend_output(ascend_copy(dest), "kernel_details.csv").unlink()
    trace = ascend_output(dest, "trace_view.json")
    text = trace.read_text(encoding="utf-8")
    event = (
        '{"name": "ProfilerStep#1", "ph": "X", "pid": 1, "tid": 1, "ts": "1", "dur": 1, "args": '
        + deep_json()
    )
    trace.write_text("[" + event + "}, " + text.lstrip()[1:], encoding="utf-8")
    return dest


@case(
    name="ascend_info_huge_number",
    outcome="error",
    match=r"profiler_info_0\.json: JSON holds a number with 100,000 digits",
    **ASCEND_PAIR,
)
def _info_digits(dest: Path) -> Path:
    path = info_file(ascend_copy(dest))
    rewrite(path, lambda t: t.replace("{", '{"rank_id": ' + "9" * 100_000 + ",", 1))
    return dest


@case(
    name="ascend_info_duplicate_keys",
    outcome="partial",
    warnings=[r"profiler_info_0\.json: .*'profiler_level' given twice"],
    **ASCEND_PAIR,
)
def _info_duplicates(dest: Path) -> Path:
    rewrite(
        info_file(ascend_copy(dest)),
        lambda t: t.replace('"profiler_level"', '"profiler_level": "Level0", "profiler_level"', 1),
    )
    return dest


@case(name="durations_zero_all", outcome="error", match="every launch lasts 0 µs", **CPU_PAIR)
def _zero_all(dest: Path) -> Path:
    rewrite(framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt"), durations(None, lambda _: "0"))
    return dest


@case(name="durations_minus_zero_all", outcome="error", match="every launch lasts 0 µs", **CPU_PAIR)
def _minus_zero_all(dest: Path) -> Path:
    rewrite(framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt"), durations(None, lambda _: "-0"))
    return dest


def _edit_kernel_column(dest: Path, column_name: str, value: str, rows: int = 1) -> Path:
    """Set one column of the first `rows` rows of kernel_details.csv to `value`."""
    path = ascend_output(ascend_copy(dest), "kernel_details.csv")
    lines = path.read_bytes().decode("utf-8").split("\r\n")
    column = lines[0].split(",").index(column_name)
    edited = [_set_field(line, column, value) for line in lines[1 : rows + 1]]
    path.write_bytes("\r\n".join([lines[0], *edited, *lines[rows + 1 :]]).encode("utf-8"))
    return dest


@case(
    name="ascend_start_infinite",
    outcome="partial",
    warnings=[r"1 launches with a non-finite start time \(inf\) were dropped from kernel_details\.csv"],
    **ASCEND_PAIR,
)
def _start_infinite(dest: Path) -> Path:
    return _edit_kernel_column(dest, "Start Time(us)", "1e999")


@case(
    name="ascend_durations_tenth_of_ns",
    outcome="report",
    **ASCEND_PAIR,
    note="every launch lasts 0.0001 us: the per-step ratio rounds to 0 (was a ZeroDivisionError)",
)
def _durations_tenth_ns(dest: Path) -> Path:
    return _edit_kernel_column(dest, "Duration(us)", "0.0001", rows=10**6)


@case(
    name="ascend_step_negative",
    outcome="partial",
    warnings=[r"launches with a negative step id were dropped"],
    **ASCEND_PAIR,
)
def _step_negative(dest: Path) -> Path:
    return _edit_kernel_column(dest, "Step ID", "-3", rows=5)


@case(
    name="folder_symlink_loop",
    outcome="error",
    match=r"loop: cannot be followed \(Too many levels of symbolic links\)",
    runtime=True,
    **CPU_PAIR,
    app={
        "outcome": "report",
        "note": "a browser uploads files, never a link: the rest of the folder is read",
    },
)
def _symlink_loop(dest: Path) -> Path:
    (cpu_copy(dest) / "loop").symlink_to("loop")
    return dest


@case(
    name="folder_fifo_as_profile_file",
    outcome="error",
    match=r"cpu_op_execute_timestamp_0\.txt: (file missing|is not a regular file)",
    runtime=True,
    **CPU_PAIR,
    app={
        "outcome": "error",
        "match": "file missing",
        "note": "a browser uploads no named pipe: the file is missing",
    },
)
def _fifo_in_folder(dest: Path) -> Path:
    path = framework(cpu_copy(dest), "cpu_op_execute_timestamp_0.txt")
    path.unlink()
    os.mkfifo(path)
    return dest


# ESC, BEL, DEL and the C1 CSI (no NUL: a CSV with NUL is refused as binary)
CONTROL_NAME = "Default/\x1b[31mred\x07bell\x7fdel\x9bcsi/Conv2D-op0"


@case(
    name="ops_control_characters",
    outcome="report",
    renders=True,
    **CPU_PAIR,
    note="an operator name with an escape sequence, BEL, DEL and a C1 control: none may reach any output",
)
def _ops_control(dest: Path) -> Path:
    return poison_profile(CPU_TARGET, dest, new_name=CONTROL_NAME)


# Bidirectional controls (U+202E right-to-left override and the others) could reorder a name on screen.
BIDI_NAME = "Default/\u202egpj.exe\u202c/\u2066iso\u2069/\u200fConv2D-op0"


@case(
    name="ops_bidi_controls",
    outcome="report",
    renders=True,
    **CPU_PAIR,
    note="an operator name with U+202E (right-to-left override) and other bidi controls: stripped everywhere",
)
def _ops_bidi(dest: Path) -> Path:
    return poison_profile(CPU_TARGET, dest, new_name=BIDI_NAME)


@case(
    name="csv_row_over_block",
    outcome="error",
    match=r"cpu_op_detail_info_0\.csv: a row is longer than the CSV reader's 1 MiB block",
    runtime=True,
    **CPU_PAIR,
)
def _row_over_block(dest: Path) -> Path:
    path = framework(cpu_copy(dest), "cpu_op_detail_info_0.csv")
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace("Default/", "Default/" + "x" * 3_000_000, 1)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


@case(
    name="ascend_header_over_block",
    outcome="error",
    match=r"kernel_details\.csv: the header line is longer than the CSV reader's 1 MiB block",
    runtime=True,
    **ASCEND_PAIR,
)
def _header_over_block(dest: Path) -> Path:
    path = ascend_output(ascend_copy(dest), "kernel_details.csv")
    lines = path.read_bytes().split(b"\r\n")
    lines[0] += b",Pad" + b"P" * 2_000_000
    path.write_bytes(b"\r\n".join([lines[0], *(line + b",1" if line else line for line in lines[1:])]))
    return dest


# --------------------------------------------------------------------------------------------------
# Archives (the target of a compare, next to a good CPU baseline folder)

ARCHIVE = {"kind": "archive", "call": "compare", "baseline": CPU_BASELINE}


@case(name="archive_good_zip", outcome="report", **ARCHIVE, note="control: the real profile, zipped")
def _good_zip(dest: Path) -> Path:
    return write_zip(dest.with_suffix(".zip"), good_members())


@case(name="archive_empty_zip", outcome="error", match="holds no files", **ARCHIVE)
def _empty_zip(dest: Path) -> Path:
    return write_zip(dest.with_suffix(".zip"), [])


@case(name="archive_zero_bytes", outcome="error", match="is not a zip archive", **ARCHIVE)
def _zero_bytes(dest: Path) -> Path:
    path = dest.with_suffix(".zip")
    path.write_bytes(b"")
    return path


@case(name="archive_truncated_zip", outcome="error", match="not a readable zip archive|damaged", **ARCHIVE)
def _truncated_zip(dest: Path) -> Path:
    path = write_zip(dest.with_suffix(".zip"), good_members())
    truncate(path, 0.6)
    return path


@case(name="archive_truncated_tgz", outcome="error", match="not a readable tar archive|damaged", **ARCHIVE)
def _truncated_tgz(dest: Path) -> Path:
    members = [(tar_info(name, len(data)), data) for name, data, _ in good_members()]
    path = write_tar(dest.with_suffix(".tar.gz"), members)
    truncate(path, 0.6)
    return path


@case(name="archive_text_named_tgz", outcome="error", match="is not a tar.gz archive", **ARCHIVE)
def _text_tgz(dest: Path) -> Path:
    path = dest.with_suffix(".tar.gz")
    path.write_text("op_type,op_name\nConv2D,conv\n" * 40, encoding="utf-8")
    return path


@case(name="archive_bzip2", outcome="error", match="unsupported format", **ARCHIVE)
def _bzip2(dest: Path) -> Path:
    path = dest.with_suffix(".tar.bz2")
    path.write_bytes(b"BZh91AY&SY" + bytes(200))
    return path


@case(name="zip_slip", outcome="error", match=r"outside the archive", **ARCHIVE)
def _zip_slip(dest: Path) -> Path:
    return write_zip(
        dest.with_suffix(".zip"), [*good_members(), (f"../../../../{ESCAPE}", b"owned", 0o100644)]
    )


@case(name="tar_slip", outcome="error", match=r"outside the archive", **ARCHIVE)
def _tar_slip(dest: Path) -> Path:
    return write_tar(dest.with_suffix(".tar.gz"), [(tar_info(f"run/../../../{ESCAPE}", 5), b"owned")])


@case(name="zip_absolute_path", outcome="error", match="absolute path", **ARCHIVE)
def _zip_absolute(dest: Path) -> Path:
    return write_zip(dest.with_suffix(".zip"), [*good_members(), (f"/tmp/{ESCAPE}", b"owned", 0o100644)])


@case(name="tar_absolute_path", outcome="error", match="absolute path", **ARCHIVE)
def _tar_absolute(dest: Path) -> Path:
    return write_tar(dest.with_suffix(".tar"), [(tar_info(f"/tmp/{ESCAPE}", 5), b"owned")], compressed=False)


@case(name="zip_symlink", outcome="error", match="symbolic link", **ARCHIVE)
def _zip_symlink(dest: Path) -> Path:
    link = ("infer_fp32_graph/passwd", b"/etc/passwd", stat.S_IFLNK | 0o777)
    return write_zip(dest.with_suffix(".zip"), [*good_members(), link])


@case(name="tar_symlink", outcome="error", match="symbolic link", **ARCHIVE)
def _tar_symlink(dest: Path) -> Path:
    members = [(tar_info("run/passwd", kind=tarfile.SYMTYPE, link="/etc/passwd"), b"")]
    members.append((tar_info(f"run/passwd/{ESCAPE}", 5), b"owned"))
    return write_tar(dest.with_suffix(".tar.gz"), members)


@case(name="tar_hardlink", outcome="error", match="hard link", **ARCHIVE)
def _tar_hardlink(dest: Path) -> Path:
    members = [(tar_info("run/shadow", kind=tarfile.LNKTYPE, link="/etc/shadow"), b"")]
    return write_tar(dest.with_suffix(".tar.gz"), members)


@case(name="zip_bomb", outcome="error", match=r"expands more than 200:1", **ARCHIVE)
def _zip_bomb(dest: Path) -> Path:
    bomb = ("infer_fp32_graph/FRAMEWORK/cpu_op_execute_timestamp_0.txt", bytes(BOMB_BYTES), 0o100644)
    return write_zip(dest.with_suffix(".zip"), [bomb])


@case(name="tar_bomb", outcome="error", match=r"expands more than 200:1", **ARCHIVE)
def _tar_bomb(dest: Path) -> Path:
    info = tar_info("run/FRAMEWORK/cpu_op_detail_info_0.csv", BOMB_BYTES)
    return write_tar(dest.with_suffix(".tar.gz"), [(info, bytes(BOMB_BYTES))])


@case(
    name="zip_100k_members",
    outcome="error",
    match=r"100000 members, over the limit of 20000",
    runtime=True,
    **ARCHIVE,
)
def _zip_100k(dest: Path) -> Path:
    path = dest.with_suffix(".zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for index in range(100_000):
            archive.writestr(zipfile.ZipInfo(f"run/{index:06d}.csv", date_time=ZIP_TIME), b"")
    return path


HUGE_MEMBER_BYTES = 420 * 1024 * 1024  # over the 160 MiB default for one profile file


def _repeated_rows(header: bytes, rows: bytes, size: int) -> Iterator[bytes]:
    """The header, then `rows` repeated until `size` bytes (about 8 MiB a chunk)."""
    yield header
    chunk = rows * max(1, (8 << 20) // len(rows))
    written = len(header)
    while written < size:
        yield chunk
        written += len(chunk)


@case(
    name="zip_member_over_file_budget",
    outcome="error",
    match=r"member '[^']*/FRAMEWORK/cpu_op_detail_info_0\.csv' unpacks to more than 160\.0 MiB",
    runtime=True,
    **ARCHIVE,
    note="a 420 MiB table of real rows that compresses about 180:1, under the ratio and total budgets",
)
def _zip_member_over_budget(dest: Path) -> Path:
    path = dest.with_suffix(".zip")
    detail = framework(CPU_TARGET, "cpu_op_detail_info_0.csv").read_bytes()
    header, rows = detail.split(b"\n", 1)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, data, _mode in good_members():
            if name.endswith("cpu_op_detail_info_0.csv"):
                info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                with archive.open(info, "w", force_zip64=True) as out:
                    for chunk in _repeated_rows(header + b"\n", rows, HUGE_MEMBER_BYTES):
                        out.write(chunk)
                continue
            archive.writestr(zipfile.ZipInfo(name, date_time=ZIP_TIME), data)
    return path


ROW_BUDGET = 400_000  # the default rows of one profile table (diagnosis.limits)


def _numbered_rows(header: bytes, rows: list[bytes], count: int) -> Iterator[bytes]:
    """The header, then `count` of the real `rows` in turn, each with its own pid (so the member
    compresses about 35:1, far under the ratio budget), in chunks of 10,000 rows."""
    yield header
    for start in range(0, count, 10_000):
        yield b"".join(
            rows[index % len(rows)].rsplit(b",", 1)[0] + b",%d\n" % index
            for index in range(start, min(count, start + 10_000))
        )


@case(
    name="zip_table_over_row_budget",
    outcome="error",
    match=r"member '[^']*/FRAMEWORK/cpu_op_detail_info_0\.csv' has more than 400,000 rows, the limit for "
    r"one profile table \(stopped while streaming\)",
    runtime=True,
    **ARCHIVE,
    note="500,000 real rows (54 MiB, under the byte budget; 35:1): memory grows with rows, however short",
)
def _zip_table_over_rows(dest: Path) -> Path:
    path = dest.with_suffix(".zip")
    detail = framework(CPU_TARGET, "cpu_op_detail_info_0.csv").read_bytes()
    header, *rows = detail.splitlines(keepends=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, data, _mode in good_members():
            if name.endswith("cpu_op_detail_info_0.csv"):
                info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                with archive.open(info, "w") as out:
                    for chunk in _numbered_rows(header, rows, ROW_BUDGET + 100_000):
                        out.write(chunk)
                continue
            archive.writestr(zipfile.ZipInfo(name, date_time=ZIP_TIME), data)
    return path


@case(name="zip_duplicate_members", outcome="error", match="appears more than once", **ARCHIVE)
def _zip_duplicates(dest: Path) -> Path:
    first = good_members()[0]
    with warnings.catch_warnings():  # zipfile warns about the duplicate it is asked to write
        warnings.simplefilter("ignore", UserWarning)
        return write_zip(dest.with_suffix(".zip"), [*good_members(), (first[0], b"other", 0o100644)])


# --------------------------------------------------------------------------------------------------
# SQLite exports (the real db-only MindSpore export, damaged, zipped: a folder upload loses sub-folders)

DB_RUN = ASCEND / "db" / "ms_infer"
DB_ARCHIVE = {"kind": "archive", "call": "compare", "baseline": ASCEND_BASELINE}
DB_FILE = r"ascend_mindspore_profiler\.db"
DB_TABLES = ("TASK", "COMPUTE_TASK_INFO", "STRING_IDS")


def db_archive(dest: Path, edit: Callable[[sqlite3.Connection], None], stored: bool = False) -> Path:
    """The real db-only export with `edit` applied to its database, as a deterministic zip."""
    folder = dest.with_name(dest.name + ".build")
    shutil.copytree(DB_RUN, folder)
    database = next(folder.rglob("ascend_mindspore_profiler.db"))
    connection = sqlite3.connect(database)
    edit(connection)
    connection.commit()
    connection.execute("VACUUM")
    connection.close()
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    path = write_zip(dest.with_suffix(".zip"), folder_members(folder, DB_RUN.name), method)
    shutil.rmtree(folder)
    return path


def drop_key(connection: sqlite3.Connection, table: str) -> None:
    """Rebuild `table` with the same columns but no PRIMARY KEY (a hand-made or damaged export)."""
    columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
    connection.execute(f"ALTER TABLE {table} RENAME TO old_{table}")
    connection.execute(f"CREATE TABLE {table} ({', '.join(columns)})")
    connection.execute(f"INSERT INTO {table} SELECT * FROM old_{table}")
    connection.execute(f"DROP TABLE old_{table}")


def _repeat_string_ids(connection: sqlite3.Connection) -> None:
    drop_key(connection, "STRING_IDS")
    for _ in range(9):  # every string 10 times: each of the 10 string joins would multiply rows by 10
        connection.execute("INSERT INTO STRING_IDS SELECT id, value FROM STRING_IDS WHERE rowid <= 36")


@case(
    name="sqlite_string_ids_repeated",
    outcome="error",
    match=DB_FILE + r": table STRING_IDS repeats id, which the schema makes unique \(324 repeated rows\)",
    **DB_ARCHIVE,
    note="join bomb: 24 tasks x 10 string columns joined with ids repeated 10 times = 2.4e11 rows",
)
def _string_ids_repeated(dest: Path) -> Path:
    return db_archive(dest, _repeat_string_ids)


def _share_task_id(connection: sqlite3.Connection) -> None:
    drop_key(connection, "COMPUTE_TASK_INFO")
    for _ in range(7):  # 128 copies of every compute task, all with one globalTaskId
        connection.execute("INSERT INTO COMPUTE_TASK_INFO SELECT * FROM COMPUTE_TASK_INFO")
    connection.execute("UPDATE COMPUTE_TASK_INFO SET globalTaskId = 0")
    connection.execute("UPDATE TASK SET globalTaskId = 0")


@case(
    name="sqlite_tasks_share_global_task_id",
    outcome="error",
    match=DB_FILE + r": table COMPUTE_TASK_INFO repeats globalTaskId, which the schema makes unique",
    **DB_ARCHIVE,
    note="join bomb: 24 tasks and 3,072 compute-task rows share one globalTaskId (73,728 joined rows)",
)
def _tasks_share_global_task_id(dest: Path) -> Path:
    return db_archive(dest, _share_task_id)


def _text_in_numbers(connection: sqlite3.Connection) -> None:
    connection.execute("UPDATE TASK SET startNs = 'soon' WHERE globalTaskId = 0")
    connection.execute("UPDATE TASK SET endNs = 1.5e400 WHERE globalTaskId = 1")
    connection.execute("UPDATE COMPUTE_TASK_INFO SET blockNum = 'many' WHERE globalTaskId = 2")
    connection.execute("UPDATE COMPUTE_TASK_INFO SET name = 'text id' WHERE globalTaskId = 3")


@case(
    name="sqlite_text_in_number_columns",
    outcome="report",
    **DB_ARCHIVE,
    note="text and an overflowing real in number columns (was ArrowInvalid): those values go missing",
)
def _sqlite_text_in_numbers(dest: Path) -> Path:
    return db_archive(dest, _text_in_numbers)


def pseudo_text(size: int) -> str:
    """`size` letters that do not compress (an archive's ratio check would refuse zeros first)."""
    state, letters = 12345, []
    for _ in range(size // 8):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        letters.append(format(state, "016x")[:8])
    return "".join(letters)


def _shared_big_string(connection: sqlite3.Connection) -> None:
    connection.execute("INSERT INTO STRING_IDS VALUES (9999, ?)", (pseudo_text(8 * 1024 * 1024),))
    for copy in range(1, 13):  # 24 * 13 = 312 tasks, each named by the one 8 MiB string
        connection.execute(
            "INSERT INTO TASK SELECT startNs + ?1, endNs + ?1, deviceId, connectionId, globalTaskId + ?2, "
            "globalPid, taskType, contextId, streamId, taskId, modelId FROM TASK WHERE globalTaskId < 24",
            (copy * 10**9, copy * 100),
        )
        connection.execute(
            "INSERT INTO COMPUTE_TASK_INFO SELECT name, globalTaskId + ?1, blockNum, mixBlockNum, taskType, "
            "opType, inputFormats, inputDataTypes, inputShapes, outputFormats, outputDataTypes, "
            "outputShapes, attrInfo, opState, hf32Eligible FROM COMPUTE_TASK_INFO WHERE globalTaskId < 24",
            (copy * 100,),
        )
    connection.execute("UPDATE COMPUTE_TASK_INFO SET name = 9999")


@case(
    name="sqlite_shared_8mb_string",
    outcome="error",
    match=DB_FILE + r": holds a text or blob value over 1 MiB",
    runtime=True,
    **DB_ARCHIVE,
    note="one 8 MiB name referenced by 312 tasks: 2.5 GB once copied per task",
)
def _shared_8mb_string(dest: Path) -> Path:
    return db_archive(dest, _shared_big_string, stored=True)


def _many_tasks(connection: sqlite3.Connection) -> None:
    connection.execute(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1999999) "
        "INSERT INTO TASK SELECT 1764493300000000000 + i * 1000, 1764493300000000500 + i * 1000, 0, 0, "
        "1000 + i, 4101, 0, 0, 2, 1000, 1 FROM n"
    )


@case(
    name="sqlite_tasks_over_row_budget",
    outcome="error",
    match=DB_FILE + r": table TASK has 2,000,024 rows, more than the 400,000 allowed for one profile table",
    runtime=True,
    **DB_ARCHIVE,
    note="2,000,024 tasks (an 85 MB database, stored): counted before a row is read",
)
def _tasks_over_row_budget(dest: Path) -> Path:
    return db_archive(dest, _many_tasks, stored=True)


# --------------------------------------------------------------------------------------------------
# MINDIR files (inspected on their own)

MODEL_CASE = {"kind": "mindir", "call": "inspect"}


@case(name="mindir_random_bytes", outcome="error", match="not a MINDIR file", **MODEL_CASE)
def _random_bytes(dest: Path) -> Path:
    path = dest.with_suffix(".mindir")
    path.write_bytes(bytes((index * 7919 + 13) % 251 for index in range(8192)))
    return path


@case(name="mindir_empty", outcome="error", match="has no producer name", **MODEL_CASE)
def _mindir_empty(dest: Path) -> Path:
    path = dest.with_suffix(".mindir")
    path.write_bytes(b"")
    return path


@case(name="mindir_truncated", outcome="error", match="protobuf decoding failed", **MODEL_CASE)
def _mindir_truncated(dest: Path) -> Path:
    path = dest.with_suffix(".mindir")
    path.write_bytes(MODEL.read_bytes()[: MODEL.stat().st_size // 2])
    return path


@case(name="mindir_deeply_nested", outcome="error", match="protobuf decoding failed", **MODEL_CASE)
def _mindirnested(dest: Path) -> Path:
    path = dest.with_suffix(".mindir")
    path.write_bytes(nested(1000))
    return path


@case(
    name="mindir_wrong_producer", outcome="error", match="produced by 'PyTorch', not MindSpore", **MODEL_CASE
)
def _wrong_producer(dest: Path) -> Path:
    model = model_proto()
    model.producer_name = "PyTorch"
    path = dest.with_suffix(".mindir")
    path.write_bytes(model.SerializeToString())
    return path


@case(name="mindir_no_graph", outcome="error", match="no graph nodes", **MODEL_CASE)
def _no_graph(dest: Path) -> Path:
    model = model_proto()
    model.ClearField("graph")
    path = dest.with_suffix(".mindir")
    path.write_bytes(model.SerializeToString())
    return path


@case(name="mindir_csv_text", outcome="error", match="not a MINDIR file", **MODEL_CASE)
def _csv_text(dest: Path) -> Path:
    path = dest.with_suffix(".mindir")
    shutil.copy(framework(CPU_TARGET, "cpu_op_detail_info_0.csv"), path)
    return path


@case(name="mindir_zip_inside", outcome="error", match="not a MINDIR file", **MODEL_CASE)
def _zip_inside(dest: Path) -> Path:
    return write_zip(dest.with_suffix(".mindir"), [("model.mindir", MODEL.read_bytes(), 0o100644)])


@case(
    name="mindir_over_2gib_sparse",
    outcome="error",
    match=r"over the 2,147,483,648-byte limit",
    runtime=True,
    app={"outcome": "refused_upload", "note": "larger than the app's max_file_size: refused before upload"},
    **MODEL_CASE,
)
def _over_2gib(dest: Path) -> Path:
    path = dest.with_suffix(".mindir")
    with path.open("wb") as handle:  # sparse: no data blocks are written
        handle.truncate(2 * 1024**3 + 1)
    return path


@case(
    name="mindir_hostile_names",
    outcome="report",
    payload=XSS,
    **MODEL_CASE,
    note="scopes carry HTML, Markdown and a formula; the graph input is renamed too",
)
def _hostile_names(dest: Path) -> Path:
    model = model_proto()
    for node in model.graph.node:
        if node.domain:
            node.domain = MODEL_PAYLOAD
    path = dest.with_suffix(".mindir")
    path.write_bytes(model.SerializeToString())
    return path


@case(
    name="mindir_control_characters",
    outcome="report",
    renders=True,
    **MODEL_CASE,
    note="scopes with NUL, an escape sequence and DEL (protobuf strings may hold any character)",
)
def _mindir_control(dest: Path) -> Path:
    model = model_proto()
    for node in model.graph.node:
        if node.domain:
            node.domain = "Default/\x00nul\x1b[2Jclear\x7f/Conv2D-op0"
    path = dest.with_suffix(".mindir")
    path.write_bytes(model.SerializeToString())
    return path


def _bare_model() -> tuple[Any, Any]:
    """An empty MindSpore ModelProto with a main graph of one float input `main:x`."""
    model = schema.model_class()(producer_name="MindSpore", model_version="2.10.0", mind_ir_version=3)
    model.graph.name = "main"
    tensor = model.graph.input.add(name="main:x").tensor.add()
    tensor.data_type, tensor.dims[:] = 1, [1]
    return model, model.graph


def write_call_explosion(path: Path, levels: int) -> Path:
    """Functions f0..f<levels-1>, each calling the next one twice in a row; the last adds. About 90 bytes
    a level on disk, but 2**levels calls once every call site is expanded."""
    model, main = _bare_model()
    main.node.add(name="main:call", op_type="REF::f0", input=["main:x"], output=["main:call"])
    main.output.add(name="main:call")
    for level in range(levels):
        fn, name = model.functions.add(name=f"f{level}"), f"f{level}"
        fn.input.add(name=f"{name}:x")
        if level == levels - 1:
            fn.node.add(name=f"{name}:add", op_type="Add", input=[f"{name}:x"] * 2, output=[f"{name}:add"])
            fn.output.add(name=f"{name}:add")
            continue
        callee = f"REF::f{level + 1}"
        fn.node.add(name=f"{name}:a", op_type=callee, input=[f"{name}:x"], output=[f"{name}:a"])
        fn.node.add(name=f"{name}:b", op_type=callee, input=[f"{name}:a"], output=[f"{name}:b"])
        fn.output.add(name=f"{name}:b")
    path.write_bytes(model.SerializeToString())
    return path


def write_nested_values(path: Path, op: str, depth: int) -> Path:
    """A main graph of `depth` MakeTuple (or Partial) nodes each taking the previous one, then a use."""
    model, main = _bare_model()
    if op == "Partial":
        leaf = model.functions.add(name="leaf")
        leaf.input.add(name="leaf:x")
        leaf.node.add(name="leaf:add", op_type="Add", input=["leaf:x"] * 2, output=["leaf:add"])
        leaf.output.add(name="leaf:add")
    previous = "leaf" if op == "Partial" else "main:x"
    for index in range(depth):
        main.node.add(name=f"v{index}", op_type=op, input=[previous], output=[f"v{index}"])
        previous = f"v{index}"
    use = f"REF::{previous}" if op == "Partial" else "Add"
    main.node.add(
        name="use", op_type=use, input=["main:x"] if op == "Partial" else [previous], output=["use"]
    )
    main.output.add(name="use")
    path.write_bytes(model.SerializeToString())
    return path


BUDGET = r"over 500,000 nodes and calls, the decoder's budget.*PERF_DOCTOR_MAX_GRAPH_NODES"
NESTED = r"cannot be analysed: tuples, partial applications or branch results nested more than 256 deep"


@case(
    name="mindir_call_explosion",
    outcome="error",
    match=BUDGET,
    **MODEL_CASE,
    note="20 levels of functions that each call the next twice: 2 KB on disk, 2 million calls expanded",
)
def _call_explosion(dest: Path) -> Path:
    return write_call_explosion(dest.with_suffix(".mindir"), 20)


@case(name="mindir_nested_make_tuple", outcome="error", match=NESTED, runtime=True, **MODEL_CASE)
def _nested_tuples(dest: Path) -> Path:
    return write_nested_values(dest.with_suffix(".mindir"), "MakeTuple", 200_000)


@case(name="mindir_nested_partial", outcome="error", match=NESTED, runtime=True, **MODEL_CASE)
def _nested_partials(dest: Path) -> Path:
    return write_nested_values(dest.with_suffix(".mindir"), "Partial", 100_000)


@case(
    name="mindir_fifo",
    outcome="error",
    match=r"is not a regular file \(a named pipe\)",
    runtime=True,
    **MODEL_CASE,
    app={"outcome": "not_applicable", "note": "a browser cannot upload a named pipe"},
)
def _mindir_fifo(dest: Path) -> Path:
    path = dest.with_suffix(".mindir")
    os.mkfifo(path)
    return path


LEGACY_MS_PAIR = {"kind": "folder", "call": "compare", "baseline": "tests/fixtures/ascend/legacy_ascend_1x"}


def _legacy_ms_starts(dest: Path, starts: list[str]) -> Path:
    """The MindSpore 1.x profile (timeline in ms) with launch starts cycling through `starts`."""
    shutil.copytree(ASCEND / "legacy_ascend_1x", dest)
    path = dest / "profiler" / "output_timeline_data_0.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [line.split(",") for line in lines[1:]]
    for index, row in enumerate(rows):
        row[2] = starts[index % len(starts)]
    path.write_text("\n".join([lines[0], *(",".join(row) for row in rows)]) + "\n", encoding="utf-8")
    return dest


@case(
    name="legacy_ms_starts_beyond_microseconds",
    outcome="error",
    match=r"output_timeline_data_0\.txt: every launch start time \(1e\+308 ms or more\) is too large",
    runtime=True,
    **LEGACY_MS_PAIR,
    note="issue 33 item 12: every start 1e308 ms, finite as written, overflows once in us",
)
def _legacy_ms_starts_beyond_us(dest: Path) -> Path:
    return _legacy_ms_starts(dest, ["1e308"])


@case(
    name="legacy_ms_starts_extreme_finite",
    outcome="partial",
    warnings=[
        r"12 launches with a non-finite start time \(inf\) were dropped from output_timeline_data_0\.txt"
    ],
    runtime=True,
    **LEGACY_MS_PAIR,
    note="issue 33 item 12: starts 1e308, -0 and 1e-320 ms: the -0 and subnormal launches are kept",
)
def _legacy_ms_starts_extreme(dest: Path) -> Path:
    return _legacy_ms_starts(dest, ["1e308", "-0", "1e-320"])


def write_huge_model(path: Path, nodes: int = 100_000) -> Path:
    """A valid MINDIR of one long chain of Add nodes: about 48 bytes a node on disk, but about 3 KB a node
    in memory once decoded and walked (100,000 nodes: a 5 MB file that needs about 300 MB). Not part of
    the corpus: whether it is too big depends on the configured memory limit."""
    model = schema.model_class()(producer_name="MindSpore", model_version="2.10.0", mind_ir_version=3)
    model.graph.name = "huge"
    tensor = model.graph.input.add(name="huge:x").tensor.add()
    tensor.data_type, tensor.dims[:] = 1, [1]
    previous = "huge:x"
    for index in range(nodes):
        name = f"huge:add{index}"
        model.graph.node.add(name=name, op_type="Add", input=[previous, previous], output=[name])
        previous = name
    path.write_bytes(model.SerializeToString())
    return path


def write_oversized_profile(folder: Path, kind: str, mib: int) -> Path:
    """A copy of the real Ascend Level1 training run (tests/fixtures/ascend/level1/train) with one file
    blown up to about `mib` MiB, valid and under the per-file budgets a local folder has (none), to be
    stopped by the isolated reader's memory limit: `csv`, its kernel_details.csv rows repeated (a CSV
    bomb of real rows); `json`, its profiler_info_0.json replaced by one line holding a list of about
    `mib` * 200,000 distinct floats (a huge-line JSON: each 5-byte number becomes a 32-byte object).
    Not part of the corpus: whether it is too big depends on the configured memory limit."""
    run = folder / "train"
    shutil.copytree(ASCEND / "level1" / "train", run)
    if kind == "csv":
        table = next(run.rglob("kernel_details.csv"))
        lines = table.read_bytes().splitlines(keepends=True)
        with table.open("wb") as out:
            for chunk in _repeated_rows(lines[0], b"".join(lines[1:]), mib << 20):
                out.write(chunk)
    elif kind == "json":
        info = next(run.rglob("profiler_info_*.json"))
        numbers = ",".join(f"{i % 1000}.5" for i in range(100_000)).encode()
        with info.open("wb") as out:
            out.write(b"[")
            for index in range(max(1, (mib << 20) // len(numbers))):
                out.write(b"," if index else b"")
                out.write(numbers)
            out.write(b"]")
    else:
        raise ValueError(kind)
    return run


# --------------------------------------------------------------------------------------------------
# Entry points


def build(name: str, folder: Path) -> Path:
    """Build one case below `folder` (named after the case, plus the builder's suffix) and return its
    path; the tests build the runtime-only cases with it."""
    for spec, builder in CASES:
        if spec.name == name:
            return builder(folder / name)
    raise KeyError(name)


def manifest_entries() -> list[dict[str, Any]]:
    """The manifest as written: every case with its input path relative to the corpus."""
    return [asdict(spec) for spec, _ in CASES]


def main() -> int:
    """Rewrite the corpus and the manifest."""
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    CORPUS.mkdir()
    for spec, builder in CASES:
        if not spec.runtime:
            spec.input = builder(CORPUS / spec.name).relative_to(CORPUS).as_posix()
    MANIFEST.write_text(json.dumps({"cases": manifest_entries()}, indent=1) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    print(f"{len(CASES)} cases, corpus {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

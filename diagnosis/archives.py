"""Untrusted archives: every member checked and every byte counted while it streams, never trusting the
archive's own headers, written through a tree writer that refuses anything that could escape its root.

Member names that are not valid text: tar names are decoded as UTF-8 with undecodable bytes replaced by
U+FFFD (two names that then collide are refused as duplicates); zip names follow the zip rules (cp437
unless flagged UTF-8) and a zip whose UTF-8-flagged names are not UTF-8 is refused with an InputError.

Accepted archives: zip (stored or deflated members), tar and tar.gz. bzip2/xz (in tar or zip) are refused:
the standard library inflates them without an output bound, so a few KiB could fill memory before a
single byte could be counted.
"""

from __future__ import annotations

import os
import re
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, BinaryIO, Literal, cast

from core.errors import InputError
from core.text import Text, say
from diagnosis.limits import Limits, LineCounter, env_name, is_table
from diagnosis.readers.catalog import unread_member

CHUNK = 16 * 1024  # bytes per streamed read; also the slack allowed for read-ahead in the ratio check
ARCHIVE_EXPECTED = say("archive.expected")
PACK_HINT = say("archive.pack-hint")
SKIP_BUDGET = 8  # a tar's skipped raw data is still decompressed: at most this many total budgets of it

# Exceptions the standard library raises on damaged or hostile archive data (never our own InputError).
_READ_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    tarfile.TarError,
    zlib.error,
    EOFError,
    OSError,
    ValueError,
    OverflowError,
    struct.error,
    NotImplementedError,
    RecursionError,
    TypeError,  # gzip's header parser on a stream cut inside the header: ord() of an empty read
)


# --------------------------------------------------------------------------------------------------
# Streaming budget


class Meter:
    """Counts members and bytes of one upload against the limits while data streams."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.members = 0
        self.total_bytes = 0
        self.skipped = 0  # members no reader opens (raw data, logs), neither written nor budgeted
        self.skipped_bytes = 0  # their sizes as the archive declares them (for the report only)

    def skips(self, name: str, size: int, *, force: bool = False) -> bool:
        """True (and counted) when member `name` is raw data no reader opens (or `force`): not extracted."""
        if not (force or unread_member(name)):
            return False
        self.skipped += 1
        self.skipped_bytes += max(size, 0)
        return True

    def count_member(self, source: str, label: str) -> None:
        """One more archive member or listed file; refuses the upload past the member limit."""
        self.members += 1
        if self.members > self.limits.max_members:
            raise InputError(
                say("archive.members-over", limit=self.limits.max_members, label=label),
                path=source,
                expected=limit_hint("max_members"),
            )

    def pump(
        self,
        stream: IO[bytes],
        out: BinaryIO,
        *,
        source: str,
        label: str,
        consumed: Callable[[], int] | None = None,
    ) -> int:
        """Copy `stream` to `out` in chunks, stopping at the total budget or, when `consumed` gives the
        compressed bytes read so far, at a suspicious decompression ratio. Returns the bytes copied."""
        start = consumed() if consumed is not None else 0
        produced = 0
        lines = LineCounter() if is_table(label) else None  # for a table's row budget
        while True:
            try:
                chunk = stream.read(CHUNK)
            except _READ_ERRORS as error:
                raise InputError(say("archive.damaged", label=label, error=str(error)), path=source) from None
            if not chunk:
                return produced
            produced += len(chunk)
            self._add_bytes(len(chunk), source, label)
            self._check_file_size(produced, source, label)
            if lines is not None:
                self._check_rows(lines.add(chunk), source, label)
            if consumed is not None:
                self._check_ratio(produced, consumed() - start, source, label)
            try:
                out.write(chunk)
            except OSError as error:
                raise InputError(
                    say("archive.cannot-write", label=label, why=error.strerror), path=source
                ) from None

    def _add_bytes(self, size: int, source: str, label: str) -> None:
        self.total_bytes += size
        if self.total_bytes > self.limits.max_total_bytes:
            raise InputError(
                say("archive.total-over", label=label, size=_size(self.limits.max_total_bytes)),
                path=source,
                expected=limit_hint("max_total_bytes"),
            )

    def _check_file_size(self, produced: int, source: str, label: str, how: Text | None = None) -> None:
        """One member may not unpack to more than the per-file budget (the readers refuse larger files
        anyway; stopping here also spares the disk)."""
        if produced > self.limits.max_profile_file_bytes:
            raise InputError(
                say(
                    "archive.file-over",
                    label=label,
                    size=_size(self.limits.max_profile_file_bytes),
                    how=how or say("archive.how-streaming"),
                ),
                path=source,
                expected=limit_hint("max_profile_file_bytes"),
            )

    def _check_rows(self, breaks: int, source: str, label: str) -> None:
        """One table may not hold more than the row budget (line breaks after the header line): memory
        grows with rows, however short each one is."""
        if breaks - 1 > self.limits.max_profile_rows:
            raise InputError(
                say("archive.rows-over", label=label, rows=self.limits.max_profile_rows),
                path=source,
                expected=limit_hint("max_profile_rows"),
            )

    def check_declared_size(self, declared: int, source: str, label: str) -> None:
        """Refuse at once a member whose header already says it is over the per-file budget."""
        self._check_file_size(declared, source, label, say("archive.how-header"))

    def _check_ratio(self, produced: int, compressed: int, source: str, label: str) -> None:
        """Judge decompressed/compressed once past the grace size; one read of slack covers read-ahead."""
        if produced <= self.limits.ratio_grace_bytes:
            return
        ratio = produced / (compressed + CHUNK)
        if ratio > self.limits.max_ratio:
            raise InputError(
                say("archive.ratio-over", label=label, ratio=self.limits.max_ratio),
                path=source,
                expected=limit_hint("max_ratio"),
            )


def limit_hint(field: str) -> Text:
    """What to do about a limit: a smaller input (`perf-doctor pack` for a big run folder), or an override."""
    if field in ("max_members", "max_total_bytes"):
        return say("archive.pack-override", pack=PACK_HINT, variable=env_name(field))
    return say("archive.smaller-override", variable=env_name(field))


def _size(n: int) -> str:
    """Bytes as a short human string."""
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} bytes"


class _CountingReader:
    """A seekable binary file that counts the bytes read through it (compressed input per member)."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self.consumed = 0

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self.consumed += len(data)
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def seekable(self) -> bool:
        return True

    def close(self) -> None:
        """The underlying file is closed by its owner."""


# --------------------------------------------------------------------------------------------------
# Safe tree writer


_DRIVE = re.compile(r"^[A-Za-z]:")


class SafeTree:
    """Creates validated folders and new regular files under one root, refusing duplicates and clashes."""

    def __init__(self, root: Path, source: str, limits: Limits) -> None:
        self.root = root
        self.source = source
        self.limits = limits
        self._real_root = os.path.realpath(root)
        self._files: set[tuple[str, ...]] = set()
        self._dirs: set[tuple[str, ...]] = {()}

    @property
    def file_count(self) -> int:
        return len(self._files)

    def parts(self, name: str) -> tuple[str, ...]:
        """The safe relative path components of a member name; refuses anything that could escape."""
        text = name.replace("\\", "/")
        if "\x00" in text:
            raise self.refuse(name, say("archive.nul"), say("archive.ordinary-names"))
        if text.startswith("/"):
            raise self.refuse(name, say("archive.absolute"), say("archive.relative-paths"))
        if _DRIVE.match(text):
            raise self.refuse(name, say("archive.drive"), say("archive.relative-paths"))
        parts = tuple(part for part in text.split("/") if part not in ("", "."))
        if ".." in parts:
            raise self.refuse(name, say("archive.dotdot"), say("archive.no-dotdot"))
        if len(parts) > self.limits.max_depth:
            raise self.refuse(name, say("archive.deep", levels=len(parts)), limit_hint("max_depth"))
        if any(len(part.encode("utf-8", "surrogateescape")) > 255 for part in parts):
            raise self.refuse(name, say("archive.long-name"), say("archive.ordinary-names"))
        return parts

    def make_dir(self, parts: tuple[str, ...], label: str) -> None:
        """Create a folder (and its parents) with mode 0700."""
        for depth in range(1, len(parts) + 1):
            prefix = parts[:depth]
            if prefix in self._files:
                raise self.refuse(label, say("archive.file-and-folder"), say("archive.distinct-names"))
            if prefix in self._dirs:
                continue
            path = self._checked(prefix, label)
            try:
                os.mkdir(path, 0o700)
            except OSError as error:
                raise self.refuse(
                    label, say("archive.cannot-create", why=error.strerror), say("archive.ordinary-names")
                ) from None
            self._dirs.add(prefix)

    def create(self, parts: tuple[str, ...], label: str) -> BinaryIO:
        """A new, exclusively created regular file (mode 0600) opened for writing."""
        if not parts:
            raise self.refuse(label, say("archive.empty-name"), say("archive.a-file-name"))
        if parts in self._files:
            raise self.refuse(label, say("archive.twice"), say("archive.each-once"))
        if parts in self._dirs:
            raise self.refuse(label, say("archive.file-and-folder"), say("archive.distinct-names"))
        self.make_dir(parts[:-1], label)
        path = self._checked(parts, label)
        flags = (
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        )
        try:
            handle = os.fdopen(os.open(path, flags, 0o600), "wb")
        except OSError as error:
            raise self.refuse(
                label, say("archive.cannot-create", why=error.strerror), say("archive.ordinary-names")
            ) from None
        self._files.add(parts)
        return handle

    def _checked(self, parts: tuple[str, ...], label: str) -> str:
        """The path for `parts`, after confirming it resolves inside the root (belt and braces)."""
        path = os.path.join(self._real_root, *parts)
        if os.path.commonpath([self._real_root, os.path.realpath(path)]) != self._real_root:
            raise self.refuse(label, say("archive.resolves-outside"), say("archive.inside-paths"))
        return path

    def refuse(self, label: str, problem: Text, expected: Text) -> InputError:
        """An InputError naming the archive, the member and what was expected."""
        return InputError(
            say("archive.member", label=label, problem=problem), path=self.source, expected=expected
        )


# --------------------------------------------------------------------------------------------------
# Archives


ARCHIVE_SUFFIXES = (
    (".tar.gz", "tar.gz"),
    (".tgz", "tar.gz"),
    (".gz", "tar.gz"),
    (".tar", "tar"),
    (".zip", "zip"),
)
_UNSUPPORTED = (".tar.bz2", ".tbz2", ".tbz", ".bz2", ".tar.xz", ".txz", ".xz", ".zst", ".7z", ".rar")


def archive_kind(path: Path) -> str | None:
    """'zip', 'tar' or 'tar.gz' judged by magic bytes; None for a plain file. A name that claims an
    archive the bytes do not confirm is an InputError."""
    kind = _sniff(path)
    if kind is not None:
        return kind
    lower = path.name.lower()
    if lower.endswith(_UNSUPPORTED):
        raise InputError(say("archive.unsupported"), path=path.name, expected=ARCHIVE_EXPECTED)
    for suffix, claimed in ARCHIVE_SUFFIXES:
        if lower.endswith(suffix):
            raise InputError(
                say("archive.not-claimed", claimed=claimed),
                path=path.name,
                expected=ARCHIVE_EXPECTED,
            )
    return None


def _sniff(path: Path) -> str | None:
    """Archive type from the first bytes: zip local/empty signature, gzip, or a POSIX tar header."""
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except OSError as error:
        raise InputError(say("archive.cannot-read", why=error.strerror), path=path.name) from None
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if head[257:262] == b"ustar":
        return "tar"
    return None


def extract(archive: Path, kind: str, dest: Path, meter: Meter) -> int:
    """Extract a zip or tar(.gz) archive into `dest` under the meter's limits; returns the file count."""
    tree = SafeTree(dest, archive.name, meter.limits)
    with archive.open("rb") as raw:
        counter = _CountingReader(raw)
        if kind == "zip":
            _unzip(counter, tree, meter)
        else:
            _untar(counter, kind, tree, meter)
    if tree.file_count == 0:
        raise InputError(say("archive.no-files"), path=archive.name, expected=ARCHIVE_EXPECTED)
    return tree.file_count


def _unzip(counter: _CountingReader, tree: SafeTree, meter: Meter) -> None:
    """Walk the central directory and stream each member out through the meter."""
    try:
        archive = zipfile.ZipFile(cast("IO[bytes]", counter))  # seek, tell and read are all it uses
    except UnicodeDecodeError:
        raise InputError(
            say("archive.bad-utf8-names"),
            path=tree.source,
            expected=ARCHIVE_EXPECTED,
        ) from None
    except _READ_ERRORS as error:
        raise InputError(say("archive.bad-zip", error=str(error)), path=tree.source) from None
    with archive:
        every = archive.infolist()
        if len(every) > SKIP_BUDGET * meter.limits.max_members:  # even raw data costs a look at each name
            raise InputError(
                say(
                    "archive.members-way-over",
                    n=len(every),
                    times=SKIP_BUDGET,
                    limit=meter.limits.max_members,
                ),
                path=tree.source,
                expected=limit_hint("max_members"),
            )
        infos = [info for info in every if not meter.skips(info.filename, info.file_size)]
        if len(infos) > meter.limits.max_members:
            raise InputError(
                say(
                    "archive.members-over-skipped" if meter.skipped else "archive.members-count-over",
                    n=len(infos),
                    limit=meter.limits.max_members,
                    skipped=meter.skipped,
                ),
                path=tree.source,
                expected=limit_hint("max_members"),
            )
        for info in infos:
            meter.count_member(tree.source, info.filename)
            _unzip_member(archive, info, counter, tree, meter)


def _unzip_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, counter: _CountingReader, tree: SafeTree, meter: Meter
) -> None:
    """One zip member: folders and regular files only, stored or deflated, streamed and counted."""
    label = info.filename
    file_type = stat.S_IFMT(info.external_attr >> 16)
    if file_type == stat.S_IFLNK:
        raise tree.refuse(label, say("archive.symlink"), say("archive.regular-only"))
    if file_type not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise tree.refuse(label, say("archive.device"), say("archive.regular-only"))
    parts = tree.parts(label)
    if label.endswith("/") or file_type == stat.S_IFDIR or info.external_attr & 0x10:  # is_dir() fails on ''
        tree.make_dir(parts, label)
        return
    if info.flag_bits & 0x1:
        raise tree.refuse(label, say("archive.encrypted"), say("archive.no-password"))
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise tree.refuse(
            label, say("archive.method", method=info.compress_type), say("archive.stored-deflated")
        )
    meter.check_declared_size(info.file_size, tree.source, label)  # a lying header is caught while pumping
    try:
        stream = archive.open(info)
    except _READ_ERRORS as error:
        raise tree.refuse(
            label, say("archive.member-unreadable", error=str(error)), ARCHIVE_EXPECTED
        ) from None
    with stream, tree.create(parts, label) as out:
        meter.pump(stream, out, source=tree.source, label=label, consumed=lambda: counter.consumed)


_TAR_META_TYPES = (
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
)


def _guarded_tarinfo(source: str, limits: Limits) -> type[tarfile.TarInfo]:
    """A TarInfo that refuses oversized extended headers and sparse members before tarfile reads them
    into memory (tarfile reads a header's whole declared size at once, which a .tar.gz can inflate)."""

    def refuse(problem: Text, expected: Text) -> InputError:
        return InputError(problem, path=source, expected=expected)

    class GuardedTarInfo(tarfile.TarInfo):
        def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
            # tarfile documents _proc_member as the hook subclasses override.
            if self.type in _TAR_META_TYPES and self.size > limits.max_header_bytes:
                raise refuse(say("archive.big-header", size=self.size), limit_hint("max_header_bytes"))
            if self.type == tarfile.GNUTYPE_SPARSE:
                raise refuse(say("archive.sparse", label=self.name), say("archive.regular-only"))
            # typeshed declares no TarInfo._proc_member: a library gap, the one ignore here
            return super()._proc_member(tar)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]

        def _proc_gnusparse_10(self, *args: object) -> None:
            raise refuse(say("archive.gnu-sparse"), say("archive.regular-only"))

    return GuardedTarInfo


def _untar(counter: _CountingReader, kind: str, tree: SafeTree, meter: Meter) -> None:
    """Stream a tar or tar.gz member by member; bzip2/xz are refused because tarfile would inflate them
    without an output bound."""
    mode: Literal["r|gz", "r|"] = "r|gz" if kind == "tar.gz" else "r|"
    guarded = _guarded_tarinfo(tree.source, meter.limits)
    try:
        with tarfile.open(
            fileobj=cast("IO[bytes]", counter),  # a stream read needs only read(); the stub wants a file
            mode=mode,
            bufsize=CHUNK,
            tarinfo=guarded,
            encoding="utf-8",
            errors="replace",
        ) as archive:
            for member in archive:
                _untar_member(archive, member, counter, tree, meter)
    except _READ_ERRORS as error:
        raise InputError(say("archive.bad-tar", error=str(error)), path=tree.source) from None


def _untar_member(
    archive: tarfile.TarFile, member: tarfile.TarInfo, counter: _CountingReader, tree: SafeTree, meter: Meter
) -> None:
    """One tar member: our own checks, then tarfile's "data" filter, then a counted stream."""
    label = member.name
    if meter.skips(label, member.size if member.isreg() else 0):
        if meter.skipped_bytes > SKIP_BUDGET * meter.limits.max_total_bytes:
            raise InputError(
                say("archive.raw-over", times=SKIP_BUDGET, size=_size(meter.limits.max_total_bytes)),
                path=tree.source,
                expected=PACK_HINT,
            )
        return
    meter.count_member(tree.source, label)
    if member.issym():
        raise tree.refuse(label, say("archive.symlink"), say("archive.regular-only"))
    if member.islnk():
        raise tree.refuse(label, say("archive.hard-link"), say("archive.regular-only"))
    if member.ischr() or member.isblk() or member.isfifo():
        raise tree.refuse(label, say("archive.device"), say("archive.regular-only"))
    if member.sparse is not None:
        raise tree.refuse(label, say("archive.sparse-member"), say("archive.regular-only"))
    if not (member.isreg() or member.isdir()):
        raise tree.refuse(label, "has an unsupported member type", "only regular files and folders")  # pyright: ignore[reportArgumentType]  # untranslated: to messages
    parts = tree.parts(label)
    try:
        tarfile.data_filter(member, str(tree.root))
    except tarfile.FilterError as error:
        raise tree.refuse(
            label, say("archive.filtered", error=str(error)), say("archive.plain-files")
        ) from None
    if member.isdir():
        tree.make_dir(parts, label)
        return
    meter.check_declared_size(member.size, tree.source, label)
    stream = archive.extractfile(member)
    if stream is None:
        raise tree.refuse(label, "has no data", "regular files")  # pyright: ignore[reportArgumentType]  # untranslated: to messages
    with stream, tree.create(parts, label) as out:
        meter.pump(stream, out, source=tree.source, label=label, consumed=lambda: counter.consumed)

"""Per-tensor statistics (max, min, mean, L2 norm, inf/nan counts), read from a dump or computed in streaming.

A MindSpore CPU dump holds whole tensors (``.npy``); statistics dumps (msprobe, Ascend ``statistic.csv``)
hold these numbers only. Both become one :class:`TensorStats`, so the comparison never sees a vendor format.
"""

from __future__ import annotations

import functools
import io
import math
import os
import re
import threading
import zlib
from dataclasses import dataclass

import numpy as np

CHUNK_ELEMENTS = 1 << 20  # elements reduced at a time: memory stays flat whatever the tensor's size
FLOAT16_MAX = 65504.0
MAGIC_PREFIX = b"\x93NUMPY"


@dataclass(frozen=True)
class TensorStats:
    """The statistics of one tensor, the numbers every dump format can give."""

    dtype: str  # canonical lower-case: float32, float16, bfloat16, int64, bool ...
    shape: tuple[int, ...]
    max: float | None
    min: float | None
    mean: float | None
    norm: float | None
    nan: int | None = None  # None: the dump does not say
    inf: int | None = None
    crc: int | None = None  # CRC-32 of the raw bytes (whole tensors only): equal stats, other content

    @property
    def count(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def non_finite(self) -> int:
        """inf + nan elements, or, when the dump has no counts, 1 if an extreme is not finite."""
        if self.nan is not None or self.inf is not None:
            return (self.nan or 0) + (self.inf or 0)
        extremes = [v for v in (self.max, self.min) if v is not None]
        return int(any(not math.isfinite(v) for v in extremes))


DTYPE_ALIASES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "bf16": "bfloat16",
    "fp16": "float16",
    "fp32": "float32",
}


def canonical_dtype(name: str) -> str:
    """`Float32`, `torch.bfloat16`, `DT_FLOAT16`, `float16` -> one lower-case spelling."""
    text = name.strip().lower().removeprefix("torch.").removeprefix("mindspore.").removeprefix("dt_")
    return DTYPE_ALIASES.get(text, text)


def npy_stats(path: str | os.PathLike[str], *, checksum: bool = False) -> TensorStats:
    """The statistics of one ``.npy`` file, streamed through this thread's reused buffer in chunks of at
    most CHUNK_BYTES (never all in memory, no page faults of a memory map, one read for a small file);
    `checksum` adds the CRC-32 of the file (network inputs and weights, compared byte for byte)."""
    handle = os.open(path, os.O_RDONLY)
    try:
        shape, dtype, offset, read = _header(handle)
        if dtype.hasobject:
            raise ValueError(f"{os.path.basename(path)}: object arrays are not tensors")
        count = math.prod(shape)
        acc = _Accumulator()
        left = _stream(handle, dtype, count, offset, read, acc)
    finally:
        os.close(handle)
    if left > 0:
        raise ValueError(f"the file ends {left} elements before its header's shape {shape}")
    crc = _crc(path) if checksum else None
    name = _dtype_name(dtype)
    if count == 0:
        return TensorStats(name, shape, None, None, None, None, 0, 0, crc)
    return acc.stats(name, shape, crc)


@functools.cache
def _dtype_name(dtype: np.dtype) -> str:
    """The canonical name of a numpy dtype (cached: numpy's dtype.name costs 10 us a file)."""
    return canonical_dtype(dtype.name)


CHUNK_BYTES = CHUNK_ELEMENTS * 4  # bytes read at a time (4 MiB)
_SCRATCH = threading.local()  # each reading thread's buffers, made once and reused for every file


def _scratch() -> memoryview:
    """This thread's read buffer (CHUNK_BYTES plus room for a header and a partial element)."""
    buffer = getattr(_SCRATCH, "buffer", None)
    if buffer is None or len(buffer) < CHUNK_BYTES + HEADER_ROOM:
        buffer = _SCRATCH.buffer = memoryview(bytearray(CHUNK_BYTES + HEADER_ROOM))
    return buffer


def _read(handle: int, view: memoryview) -> int:
    """Bytes read from an open file descriptor into `view` (one readv call; 0 at the end of the file)."""
    return os.readv(handle, [view]) if len(view) else 0


def _stream(handle: int, dtype: np.dtype, count: int, start: int, end: int, acc: _Accumulator) -> int:
    """Fold the `count` elements after the header into `acc`; buffer[start:end] already holds file data
    (read with the header). Returns the elements the file was short of (0: complete)."""
    buffer, size, left = _scratch(), dtype.itemsize, count
    while left > 0:
        want = min(left * size - (end - start), CHUNK_BYTES - end)
        end += _read(handle, buffer[end : end + want]) if want > 0 else 0
        whole = min((end - start) // size, left)
        if whole == 0:
            break  # the file ended (or holds less than one more element)
        acc.add(np.frombuffer(buffer, dtype=dtype, count=whole, offset=start))
        left -= whole
        tail = end - start - whole * size  # part of an element: moved to the front, read on after it
        if tail:
            buffer[:tail] = bytes(buffer[end - tail : end])
        start, end = 0, tail
    return left


# The header numpy writes: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, padded with spaces.
_HEADER = re.compile(
    rb"^\{'descr': '(?P<descr>[<>|=]?[a-zA-Z]\d*)', 'fortran_order': (?:True|False), "
    rb"'shape': \((?P<shape>[\d, ]*)\), \}\s*$"
)


HEADER_ROOM = 1 << 16  # numpy's headers are padded to 64 bytes; a longer one goes to numpy's parser
_PARSED: dict[bytes, tuple[tuple[int, ...], np.dtype]] = {}  # header -> (shape, dtype): dumps repeat them
PARSED_MAX = 4096


def _header(handle: int) -> tuple[tuple[int, ...], np.dtype, int, int]:
    """(shape, dtype, where the data starts in this thread's buffer, bytes in it) of an open .npy file
    descriptor: up to CHUNK_BYTES are read into the buffer by one call (_stream reads what a short read
    left), so a small file costs one read and its data is used where it lies. The plain header numpy
    writes is parsed by one regular expression, once per distinct header (numpy's parser, literal_eval,
    costs about 0.2 ms a file: 0.8 s for the 4000 files of a 1 GB dump); any other header goes through
    numpy's."""
    buffer = _scratch()
    got = _read(handle, buffer[:CHUNK_BYTES])  # one read of a regular file gives all it asks
    head = bytes(buffer[:12])
    if not head.startswith(MAGIC_PREFIX) or len(head) < 10 or got < 10:
        raise ValueError("not a .npy file (no numpy magic string)")
    major = head[6]
    prefix = 10 if major == 1 else 12
    end = prefix + int.from_bytes(head[8:prefix], "little")
    text = bytes(buffer[prefix:end]) if end <= got else b""
    parsed = _PARSED.get(text) or _parse_header(text)
    if parsed is None:
        shape, dtype, end = _numpy_header(handle, major)
    else:
        shape, dtype = parsed
    return shape, dtype, min(end, got), got


def _parse_header(text: bytes) -> tuple[tuple[int, ...], np.dtype] | None:
    """(shape, dtype) of the header numpy writes, remembered for the next file; None for any other."""
    match = _HEADER.match(text)
    if not match:
        return None
    shape = tuple(int(n) for n in match["shape"].replace(b" ", b"").split(b",") if n)
    if len(_PARSED) >= PARSED_MAX:  # a long-lived app process reads many dumps: memory stays bounded
        _PARSED.clear()
    parsed = _PARSED[text] = (shape, np.dtype(match["descr"].decode()))
    return parsed


def _numpy_header(handle: int, major: int) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, header length) by numpy's own parser, for headers the regular expression refuses."""
    position = os.lseek(handle, 0, os.SEEK_CUR)
    os.lseek(handle, 0, os.SEEK_SET)
    reader = io.BufferedReader(io.FileIO(handle, closefd=False))
    np.lib.format.read_magic(reader)
    read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read(reader)
    end = reader.tell()
    reader.detach()
    os.lseek(handle, max(position, end), os.SEEK_SET)
    del fortran  # statistics do not depend on the element order
    return tuple(int(n) for n in shape), dtype, end


def _crc(path: str | os.PathLike[str]) -> int:
    """CRC-32 of the file's bytes, read in 1 MiB blocks."""
    crc = 0
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            crc = zlib.crc32(block, crc)
    return crc


BLOCK = 1 << 16  # rows of BLOCK to 2 x BLOCK elements are summed in float32, their totals in float64
FLOAT32 = np.dtype(np.float32)
FAST = (FLOAT32, np.dtype(np.float16))  # reduced in float32 (float16 widened piece by piece)
_ONES = np.ones(2 * BLOCK, np.float32)
_ONES.flags.writeable = False
SAFE = 1e16  # below it no float32 sum of 2 x BLOCK values or of their squares overflows (3.4e38)


def _widened(chunk: np.ndarray) -> np.ndarray:
    """A float16 chunk copied into this thread's float32 scratch (grown once), a float32 chunk as it is."""
    if chunk.dtype == np.float32:
        return chunk
    wide = getattr(_SCRATCH, "wide", None)
    if wide is None or wide.size < chunk.size:
        wide = _SCRATCH.wide = np.empty(max(chunk.size, CHUNK_ELEMENTS), np.float32)
    np.copyto(wide[: chunk.size], chunk)
    return wide[: chunk.size]


class _Accumulator:
    """Running max/min, sum and sum of squares over chunks, with inf/nan counted only when the extremes say
    there are any (max and min propagate nan and show inf).

    A float32 chunk (float16 widened) is reduced by calls that numpy and BLAS run without the GIL and
    without a temporary: max and min over the whole chunk, then, cut in rows of BLOCK to 2 x BLOCK
    elements, one BLAS matrix-vector product for the rows' float32 sums and one BLAS dot per row for the
    squares (a chunk of one row: two dots, four calls in all); the row totals are added in float64, which
    keeps the sum and norm within about 1e-7 relative of a float64 reduction (tests/test_outputs.py).
    Other dtypes are widened to float64 per block."""

    def __init__(self) -> None:
        self.high = -math.inf
        self.low = math.inf
        self.total = 0.0
        self.squares = 0.0
        self.n = 0
        self.nan = 0
        self.inf = 0

    def add(self, chunk: np.ndarray) -> None:
        """Fold one chunk in."""
        self.n += chunk.size
        if chunk.dtype == FLOAT32 and chunk.size <= CHUNK_ELEMENTS:
            self._add_float(chunk)  # the common case: no slicing, no copy
            return
        if chunk.dtype in FAST:
            for start in range(0, chunk.size, CHUNK_ELEMENTS):
                self._add_float(_widened(chunk[start : start + CHUNK_ELEMENTS]))
            return
        if chunk.dtype == np.bool_:
            chunk = chunk.view(np.uint8)
        high, low = float(chunk.max()), float(chunk.min())
        if chunk.dtype.kind == "f" and not (math.isfinite(high) and math.isfinite(low)):
            self._add_non_finite(chunk)
            return
        self.high, self.low = max(self.high, high), min(self.low, low)
        for start in range(0, chunk.size, BLOCK):
            wide = chunk[start : start + BLOCK].astype(np.float64)
            self.total += float(wide.sum())
            self.squares += float(np.einsum("i,i->", wide, wide))  # no BLAS: its threads spin on busy cores

    def _add_float(self, values: np.ndarray) -> None:
        """A float32 chunk; one with inf/nan, or with values so large that a float32 row sum could
        overflow, goes the float64 way (so no floating-point error state to silence: numpy's errstate
        costs 8 us a call, a third of the work a small file takes)."""
        high, low = float(np.maximum.reduce(values)), float(np.minimum.reduce(values))
        if not (low > -SAFE and high < SAFE):  # nan compares false: it goes the float64 way too
            self._add_non_finite(values)
            return
        rows = max(1, values.size // BLOCK)  # rows of BLOCK to 2 x BLOCK elements, a tail under `rows`
        width = values.size // rows
        if rows == 1:  # up to 2 x BLOCK elements: two dots, nothing to add up
            total, squares = float(np.dot(values, _ONES[: values.size])), float(np.dot(values, values))
            self._fold(high, low, total, squares)
            return
        body = values[: rows * width].reshape(rows, width)
        total = float(np.add.reduce(np.dot(body, _ONES[:width]), dtype=np.float64))
        squares = 0.0
        for row in body:
            squares += float(np.dot(row, row))
        if values.size > rows * width:
            tail = values[rows * width :]
            total += float(np.dot(tail, _ONES[: tail.size]))
            squares += float(np.dot(tail, tail))
        self._fold(high, low, total, squares)

    def _fold(self, high: float, low: float, total: float, squares: float) -> None:
        """One finite chunk's extremes, sum and sum of squares into the running totals."""
        self.high, self.low = max(self.high, high), min(self.low, low)
        self.total += total
        self.squares += squares

    def _add_non_finite(self, chunk: np.ndarray) -> None:
        """The slow path: count nan and inf, reduce over the rest (extremes keep +-inf); also taken by
        finite values too large for float32 sums."""
        with np.errstate(invalid="ignore"):  # a signalling nan (FP32 bytes dumped as FP16) is still nan
            values = chunk.astype(np.float64)
        nan = np.isnan(values)
        self.nan += int(nan.sum())
        values = values[~nan]
        if not values.size:
            return
        self.high = max(self.high, float(values.max()))
        self.low = min(self.low, float(values.min()))
        infinite = np.isinf(values)
        self.inf += int(infinite.sum())
        finite = values[~infinite]
        self.total += float(finite.sum())
        self.squares += float(np.dot(finite, finite))

    def stats(self, dtype: str, shape: tuple[int, ...], crc: int | None) -> TensorStats:
        """The finished statistics (mean and norm over the finite values; extremes keep +-inf)."""
        counted = self.n - self.nan - self.inf
        mean = self.total / counted if counted else None
        high = self.high if self.n > self.nan else None
        low = self.low if self.n > self.nan else None
        return TensorStats(dtype, shape, high, low, mean, math.sqrt(self.squares), self.nan, self.inf, crc)

"""Per-tensor statistics (max, min, mean, L2 norm, inf/nan counts), read from a dump or computed in streaming.

A MindSpore CPU dump holds whole tensors (``.npy``); statistics dumps (msprobe, Ascend ``statistic.csv``)
hold these numbers only. Both become one :class:`TensorStats`, so the comparison never sees a vendor format.
"""

from __future__ import annotations

import io
import math
import re
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

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


def npy_stats(path: Path, *, checksum: bool = False) -> TensorStats:
    """The statistics of one ``.npy`` file, streamed through this thread's reused buffer in chunks of at
    most CHUNK_BYTES (never all in memory, no page faults of a memory map, one read for a small file);
    `checksum` adds the CRC-32 of the file (network inputs and weights, compared byte for byte)."""
    with path.open("rb", buffering=0) as handle:
        shape, dtype, offset, read = _header(handle)
        if dtype.hasobject:
            raise ValueError(f"{path.name}: object arrays are not tensors")
        count = math.prod(shape)
        acc = _Accumulator()
        left = _stream(handle, dtype, count, offset, read, acc)
    if left > 0:
        raise ValueError(f"the file ends {left} elements before its header's shape {shape}")
    crc = _crc(path) if checksum else None
    shape = tuple(int(n) for n in shape)
    name = canonical_dtype(dtype.name)
    if count == 0:
        return TensorStats(name, shape, None, None, None, None, 0, 0, crc)
    return acc.stats(name, shape, crc)


CHUNK_BYTES = CHUNK_ELEMENTS * 4  # bytes read at a time (4 MiB)
_SCRATCH = threading.local()  # each reading thread's buffer, grown once and reused for every file


def _scratch() -> memoryview:
    """This thread's read buffer (CHUNK_BYTES plus room for a header and a partial element)."""
    buffer = getattr(_SCRATCH, "buffer", None)
    if buffer is None or len(buffer) < CHUNK_BYTES + HEADER_ROOM:
        buffer = _SCRATCH.buffer = memoryview(bytearray(CHUNK_BYTES + HEADER_ROOM))
    return buffer


def _stream(handle: io.FileIO, dtype: np.dtype, count: int, start: int, end: int, acc: _Accumulator) -> int:
    """Fold the `count` elements after the header into `acc`; buffer[start:end] already holds file data
    (read with the header). Returns the elements the file was short of (0: complete)."""
    buffer, size, left = _scratch(), dtype.itemsize, count
    while left > 0:
        want = min(left * size - (end - start), CHUNK_BYTES - end)
        got = handle.readinto(buffer[end : end + want]) if want > 0 else 0
        end += got or 0
        whole = min((end - start) // size, left)
        if whole == 0:
            break  # the file ended (or holds less than one more element)
        acc.add(np.frombuffer(buffer, dtype=dtype, count=whole, offset=start))
        left -= whole
        tail = end - start - whole * size  # part of an element: moved to the front, read on after it
        buffer[:tail] = bytes(buffer[end - tail : end])
        start, end = 0, tail
    return left


# The header numpy writes: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, padded with spaces.
_HEADER = re.compile(
    rb"^\{'descr': '(?P<descr>[<>|=]?[a-zA-Z]\d*)', 'fortran_order': (?:True|False), "
    rb"'shape': \((?P<shape>[\d, ]*)\), \}\s*$"
)


HEADER_ROOM = 1 << 16  # numpy's headers are padded to 64 bytes; a longer one goes to numpy's parser


def _header(handle: io.FileIO) -> tuple[tuple[int, ...], np.dtype, int, int]:
    """(shape, dtype, where the data starts in this thread's buffer, bytes in it) of an open unbuffered
    .npy file: up to CHUNK_BYTES are read into the buffer by one call (_stream reads what a short read
    left), so a small file costs one read and its data is used where it lies. The
    plain header numpy writes is parsed by one regular expression (numpy's parser, literal_eval, costs about
    0.2 ms a file: 0.8 s for the 4000 files of a 1 GB dump); any other header goes through numpy's."""
    buffer = _scratch()
    got = handle.readinto(buffer[:CHUNK_BYTES]) or 0  # one read of a regular file gives all it asks
    head = bytes(buffer[:12])
    if not head.startswith(MAGIC_PREFIX) or len(head) < 10:
        raise ValueError("not a .npy file (no numpy magic string)")
    major = head[6]
    size_bytes = 2 if major == 1 else 4
    prefix = 8 + size_bytes
    end = prefix + int.from_bytes(head[8:prefix], "little")
    match = _HEADER.match(bytes(buffer[prefix:end])) if end <= got else None
    if match:
        shape = tuple(int(n) for n in match["shape"].replace(b" ", b"").split(b",") if n)
        dtype = np.dtype(match["descr"].decode())
    else:
        shape, dtype, end = _numpy_header(handle, major)
    return shape, dtype, min(end, got), got


def _numpy_header(handle: io.FileIO, major: int) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, header length) by numpy's own parser, for headers the regular expression refuses."""
    position = handle.tell()
    handle.seek(0)
    reader = io.BufferedReader(handle)  # type: ignore[arg-type]
    np.lib.format.read_magic(reader)
    read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read(reader)
    end = reader.tell()
    reader.detach()
    handle.seek(max(position, end))
    del fortran  # statistics do not depend on the element order
    return tuple(shape), dtype, end


def _crc(path: Path) -> int:
    """CRC-32 of the file's bytes, read in 1 MiB blocks."""
    crc = 0
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            crc = zlib.crc32(block, crc)
    return crc


BLOCK = 1 << 16  # elements reduced at a time: 256 KiB of float32, stays in the core's cache for every pass
FAST = (np.dtype(np.float32), np.dtype(np.float16))  # reduced in float32 blocks (float16 widened per block)


def _ones(size: int) -> np.ndarray:
    """`size` float32 ones (at most BLOCK): a sum as a BLAS dot, 2.5x faster than numpy's pairwise sum."""
    return _ONES[:size]


_ONES = np.ones(BLOCK, np.float32)
_ONES.flags.writeable = False


class _Accumulator:
    """Running max/min, sum and sum of squares over chunks, with inf/nan counted only when the extremes say
    there are any (max and min propagate nan and show inf).

    float32 and float16 are reduced block by block in float32: max, min and two BLAS dots
    (with ones: the sum; with itself: the squares), four passes over a block in cache and no copy of a
    float32 tensor; the block totals are kept in float64, which keeps the sum and norm within about 1e-7
    relative of a float64 reduction (tests/test_outputs.py). Other dtypes are widened to float64 per
    block."""

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
        if chunk.dtype in FAST:
            self._add_float(chunk)
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

    def _add_float(self, chunk: np.ndarray) -> None:
        """float32/float16 in float32 blocks; a block with inf/nan, or whose float32 sums overflow, goes
        the float64 way."""
        wide = None if chunk.dtype == np.float32 else np.empty(min(chunk.size, BLOCK), np.float32)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflowing block is redone in float64
            self._fold_blocks(chunk, wide)

    def _fold_blocks(self, chunk: np.ndarray, wide: np.ndarray | None) -> None:
        """The float32 blocks of `chunk` (float16 widened into `wide`) folded into the totals."""
        for start in range(0, chunk.size, BLOCK):
            block = chunk[start : start + BLOCK]
            if wide is not None:
                block = wide[: block.size]
                np.copyto(block, chunk[start : start + BLOCK])
            high, low = float(np.maximum.reduce(block)), float(np.minimum.reduce(block))
            total, squares = float(np.dot(block, _ones(block.size))), float(np.dot(block, block))
            if not math.isfinite(high + low + total + squares):
                self._add_non_finite(block)
                continue
            self.high, self.low = max(self.high, high), min(self.low, low)
            self.total += total
            self.squares += squares

    def _add_non_finite(self, chunk: np.ndarray) -> None:
        """The slow path: count nan and inf, reduce over the rest (extremes keep +-inf)."""
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

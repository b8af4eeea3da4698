"""Per-tensor statistics (max, min, mean, L2 norm, inf/nan counts), read from a dump or computed in streaming.

A MindSpore CPU dump holds whole tensors (``.npy``); statistics dumps (msprobe, Ascend ``statistic.csv``)
hold these numbers only. Both become one :class:`TensorStats`, so the comparison never sees a vendor format.
"""

from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

CHUNK_ELEMENTS = 1 << 20  # elements reduced at a time: memory stays flat whatever the tensor's size
FLOAT16_MAX = 65504.0


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
    """The statistics of one ``.npy`` file, read in chunks into one reused buffer (never all in memory,
    no page faults of a memory map); `checksum` adds the CRC-32 of the file (network inputs and weights,
    compared byte for byte)."""
    with path.open("rb") as handle:
        shape, dtype = _header(handle)
        if dtype.hasobject:
            raise ValueError(f"{path.name}: object arrays are not tensors")
        acc = _Accumulator()
        count = math.prod(shape)
        buffer = bytearray(min(count, CHUNK_ELEMENTS) * dtype.itemsize)  # zeroed once, reused
        left = count
        while left > 0:
            got = handle.readinto(memoryview(buffer)[: min(left, CHUNK_ELEMENTS) * dtype.itemsize])
            if not got:
                break
            chunk = np.frombuffer(buffer, dtype=dtype, count=got // dtype.itemsize)
            acc.add(chunk)
            left -= got // dtype.itemsize
    if left > 0:
        raise ValueError(f"the file ends {left} elements before its header's shape {shape}")
    crc = _crc(path) if checksum else None
    shape = tuple(int(n) for n in shape)
    name = canonical_dtype(str(dtype))
    if count == 0:
        return TensorStats(name, shape, None, None, None, None, 0, 0, crc)
    return acc.stats(name, shape, crc)


# The header numpy writes: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, padded with spaces.
_HEADER = re.compile(
    rb"^\{'descr': '(?P<descr>[<>|=]?[a-zA-Z]\d*)', 'fortran_order': (?:True|False), "
    rb"'shape': \((?P<shape>[\d, ]*)\), \}\s*$"
)


def _header(handle: BinaryIO) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of an open .npy file, leaving it at the data. The plain header numpy writes is parsed
    by one regular expression (numpy's own parser, literal_eval, costs about 0.2 ms a file: 0.8 s for the
    4000 files of a 1 GB dump); any other header goes through numpy's parser."""
    version = np.lib.format.read_magic(handle)
    start = handle.tell()
    size_bytes = 2 if version == (1, 0) else 4
    size = int.from_bytes(handle.read(size_bytes), "little")
    match = _HEADER.match(handle.read(size))
    if match:
        shape = tuple(int(n) for n in match["shape"].replace(b" ", b"").split(b",") if n)
        return shape, np.dtype(match["descr"].decode())
    handle.seek(start)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _fortran, dtype = read(handle)
    return shape, dtype


def _crc(path: Path) -> int:
    """CRC-32 of the file's bytes, read in 1 MiB blocks."""
    crc = 0
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            crc = zlib.crc32(block, crc)
    return crc


BLOCK = 1 << 16  # elements widened to float64 at a time: 512 KiB, stays in cache


class _Accumulator:
    """Running max/min (in the tensor's own dtype), sum and sum of squares (in float64) over chunks, with
    inf/nan counted only when the extremes say there are any (max and min propagate nan and show inf)."""

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

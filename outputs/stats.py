"""Per-tensor statistics (max, min, mean, L2 norm, inf/nan counts), read from a dump or computed in streaming.

A MindSpore CPU dump holds whole tensors (``.npy``); statistics dumps (msprobe, Ascend ``statistic.csv``)
hold these numbers only. Both become one :class:`TensorStats`, so the comparison never sees a vendor format.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from pathlib import Path

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
    """The statistics of one ``.npy`` file, reduced chunk by chunk over a memory map (never all in memory);
    `checksum` adds the CRC-32 of the file (network inputs and weights, compared byte for byte)."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    flat = array.reshape(-1)
    dtype = canonical_dtype(str(array.dtype))
    crc = _crc(path) if checksum else None
    shape = tuple(int(n) for n in array.shape)
    if flat.size == 0:
        return TensorStats(dtype, shape, None, None, None, None, 0, 0, crc)
    acc = _Accumulator()
    for start in range(0, flat.size, CHUNK_ELEMENTS):
        acc.add(np.asarray(flat[start : start + CHUNK_ELEMENTS]))
    return acc.stats(dtype, shape, crc)


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

"""Layout readers. Each module finds run roots of its layout and reads one into a canonical Run.

Protocol of a reader module:
    LAYOUTS: tuple[str, ...]                      # the layouts it reads, each one of catalog.LAYOUTS
    def candidates(folder: Path) -> list[Candidate]   # run roots of these layouts at or below folder
    def read(candidate: Candidate) -> Run

Registration is the catalogue entry: each `catalog.Layout` names its reader module, and
diagnosis.ingest.READERS imports those modules by name in the catalogue's (detection) order.
File names and layouts come from :mod:`diagnosis.readers.catalog`. Detection looks only at which files
exist, never at a version string.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Candidate:
    """A run root found in an input folder: its layout, where it is and which rank it holds."""

    layout: str
    root: Path
    rank: int | None = None
    note: str = ""  # e.g. "ASCEND_PROFILER_OUTPUT given directly"

"""Report files for download, written only inside one private temporary folder of this process.

Each analysis gets its own sub-folder; folders older than MAX_AGE_S are removed when the next report is
written, and the whole folder is removed when the process exits. Gradio copies a returned file into its
own cache before serving it, so removing ours later does not break a download.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from doctor.render import SUFFIXES, render
from doctor.report import Report

MAX_AGE_S = 3600
BASENAME = "perf-doctor-report"
CSV_NAME = "perf-doctor-operators.csv"
SCRIPT_NAME = "reprofile.py"


_CASE_IN_LINK = re.compile(r"[?&]case=([A-Za-z0-9_-]{1,64})(?:&|$)")


def case_id_of(link: str | None) -> str | None:
    """The case id a case link carries (None without one), for naming that case's downloads."""
    found = _CASE_IN_LINK.search(link or "")
    return found.group(1) if found else None


def download_names(report: Report, case_id: str | None) -> dict[str, str]:
    """File names of a report's downloads: `perf-doctor-<case id>.html` etc. (`-operators.csv` for the
    table), or the report's creation time without a case, so two downloads never look alike."""
    stem = case_id or re.sub(r"[^0-9TZ]", "", report.document.created_utc) or "report"
    names = {fmt: f"perf-doctor-{stem}{suffix}" for fmt, suffix in SUFFIXES.items()}
    names["csv"] = f"perf-doctor-{stem}-operators.csv"
    return names


class ReportFiles:
    """Writes the HTML, Markdown, JSON and CSV downloads of reports into a private folder (mode 0700)."""

    def __init__(self, max_age_s: float = MAX_AGE_S) -> None:
        self.max_age_s = max_age_s
        self._root: Path | None = None
        self._lock = threading.Lock()

    @property
    def root(self) -> Path:
        """The private folder, created on first use and removed at exit."""
        with self._lock:
            if self._root is None or not self._root.is_dir():
                self._root = Path(tempfile.mkdtemp(prefix="perf-doctor-reports-"))
                os.chmod(self._root, 0o700)
                atexit.register(shutil.rmtree, self._root, True)
            return self._root

    def write(self, report: Report, case_id: str | None = None) -> dict[str, Path]:
        """Render every format into a fresh sub-folder, named after the case (download_names); returns
        format -> path."""
        self.prune()
        folder = Path(tempfile.mkdtemp(prefix="report-", dir=self.root))
        paths = {}
        for fmt, name in download_names(report, case_id).items():
            path = folder / name
            path.write_text(render(report, fmt), encoding="utf-8")
            paths[fmt] = path
        return paths

    def write_script(self, report: Report, fixes: Sequence[str] | None = None) -> Path | None:
        """reprofile.py of a pair report with the ticked fixes, in a fresh sub-folder; None for a report
        of one profile or a model (the script needs the baseline's profiler settings)."""
        if report.kind != "pair":
            return None
        from doctor.reprofile import reprofile_script

        self.prune()
        script = reprofile_script(report, fixes)
        folder = Path(tempfile.mkdtemp(prefix="script-", dir=self.root))
        path = folder / SCRIPT_NAME
        path.write_text(script, encoding="utf-8")
        return path

    def write_texts(self, texts: Mapping[str, str]) -> list[Path]:
        """Texts by file name into a fresh sub-folder (the outputs report's downloads); their paths."""
        self.prune()
        folder = Path(tempfile.mkdtemp(prefix="outputs-", dir=self.root))
        for name, text in texts.items():
            (folder / name).write_text(text, encoding="utf-8")
        return [folder / name for name in texts]

    def prune(self, now: float | None = None) -> int:
        """Remove report folders older than max_age_s; returns how many were removed."""
        if self._root is None or not self._root.is_dir():
            return 0
        limit = (time.time() if now is None else now) - self.max_age_s
        removed = 0
        for folder in self._root.iterdir():
            if folder.is_dir() and folder.stat().st_mtime < limit:
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
        return removed

    def close(self) -> None:
        """Remove the private folder now."""
        with self._lock:
            if self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
                self._root = None

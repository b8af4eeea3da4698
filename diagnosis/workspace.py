"""A private temporary folder for everything one diagnosis extracts, always removed.

Which folders must never hold a workspace (a web server's public upload cache, say) is the caller's
policy, passed in as `forbidden`: this package knows no web framework.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType


class Workspace:
    """A private temporary folder (mode 0700) holding everything extracted for one diagnosis.

    Used as a context manager; the folder and all it holds are removed on exit, also on error, and at
    interpreter exit if a caller forgot to close it. `forbidden` names folders (by what they are, for
    the message) the workspace must never be inside, such as a web server's public upload cache.
    """

    def __init__(
        self,
        base: str | os.PathLike[str] | None = None,
        *,
        forbidden: Mapping[str, str | os.PathLike[str]] | None = None,
    ) -> None:
        self._base = None if base is None else Path(base)
        self._forbidden = dict(forbidden or {})
        self._path: Path | None = None
        self._finalizer: weakref.finalize[[Path], Workspace] | None = None

    def __enter__(self) -> Workspace:
        if self._path is not None:
            raise RuntimeError("a Workspace can be entered only once")
        refuse_inside(self._base or Path(tempfile.gettempdir()), self._forbidden)
        path = Path(os.path.abspath(tempfile.mkdtemp(prefix="perf-doctor-", dir=self._base)))
        os.chmod(path, 0o700)
        self._path = path
        self._finalizer = weakref.finalize(self, remove_tree, path)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Remove the folder now (idempotent)."""
        if self._finalizer is not None:
            self._finalizer()

    @property
    def path(self) -> Path:
        """The workspace folder; only valid while the workspace is open."""
        if self._path is None or self._finalizer is None or not self._finalizer.alive:
            raise RuntimeError("the Workspace is not open: use it as `with Workspace() as ws:`")
        return self._path

    def new_folder(self, prefix: str) -> Path:
        """A fresh, uniquely named private sub-folder, so several inputs can share one workspace."""
        return Path(tempfile.mkdtemp(prefix=prefix, dir=self.path))


def refuse_inside(base: Path, forbidden: Mapping[str, str | os.PathLike[str]]) -> None:
    """ValueError when `base` is one of the forbidden folders or inside one (links resolved)."""
    base_real = os.path.realpath(base)
    for what, folder in forbidden.items():
        real = os.path.realpath(folder)
        if os.path.commonpath([base_real, real]) == real:
            raise ValueError(f"refusing to create a workspace inside {what} ({os.fspath(folder)})")


def remove_tree(path: Path) -> None:
    """Delete a folder tree; if something inside was made read-only, make it writable and retry."""
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return
    except OSError:
        for folder, _dirs, _files in os.walk(path):
            os.chmod(folder, 0o700)
        shutil.rmtree(path, ignore_errors=True)

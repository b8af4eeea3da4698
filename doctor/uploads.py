"""Deleting a request's uploaded files once its analysis ends, so confidential profiles do not wait in
Gradio's upload cache (where any logged-in user who learns a path could fetch them) for `delete_cache`."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path


def discard_uploads(
    paths: Iterable[str | os.PathLike[str] | None],
    upload_root: str | os.PathLike[str],
    since: float | None = None,
) -> int:
    """Delete the given files when they lie inside `upload_root`, and their emptied `<hash>/` folders.

    Anything outside the upload folder (bundled examples, the user's own paths on the CLI) is never
    touched. Gradio stores uploads by content hash, so two requests may share a file: a file already
    gone is not an error. With `since` (a time.time() value), files older than it are kept: the app's
    bundled examples are copied into the upload folder when the app is built and must survive a click.
    Returns the number of files deleted.
    """
    root = Path(upload_root).resolve()
    deleted = 0
    for raw in paths:
        if not raw:
            continue
        path = Path(raw)
        try:
            resolved = path.resolve()
        except OSError:
            continue
        if not resolved.is_relative_to(root) or resolved == root or path.is_symlink():
            continue
        if since is not None and _older(resolved, since):
            continue
        with contextlib.suppress(FileNotFoundError):
            resolved.unlink()
            deleted += 1
        with contextlib.suppress(OSError):  # not empty (another upload), or already gone
            if resolved.parent != root:
                resolved.parent.rmdir()
    return deleted


def _older(path: Path, since: float) -> bool:
    try:
        return path.stat().st_mtime < since
    except OSError:
        return True

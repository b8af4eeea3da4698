"""Uploads are deleted after the analysis, and nothing outside Gradio's upload folder ever is."""

from __future__ import annotations

import os
import time

from doctor.uploads import discard_uploads


def test_deletes_uploads_and_their_hash_folders_only_inside_the_root(tmp_path):
    root = tmp_path / "gradio"
    one = root / "abc" / "kernel_details.csv"
    shared = root / "def" / "a.csv"
    other = root / "def" / "b.csv"
    outside = tmp_path / "assets" / "example.csv"
    for path in (one, shared, other, outside):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    link = root / "ghi" / "link.csv"
    link.parent.mkdir()
    link.symlink_to(outside)
    deleted = discard_uploads(
        [str(one), str(shared), str(outside), str(link), None, str(root / "gone")], root
    )
    assert deleted == 2
    assert not one.exists() and not one.parent.exists()  # emptied hash folder removed
    assert not shared.exists() and other.exists() and other.parent.exists()  # folder still in use
    assert outside.exists() and link.is_symlink()  # never outside the root, never through a link
    assert discard_uploads([str(one)], root) == 0  # already gone (a shared upload): not an error


def test_files_older_than_since_are_kept(tmp_path):
    root = tmp_path / "gradio"
    example = root / "ex" / "example.csv"
    upload = root / "up" / "upload.csv"
    for path in (example, upload):
        path.parent.mkdir(parents=True)
        path.write_text("x")
    os.utime(example, (time.time() - 600, time.time() - 600))  # copied when the app was built
    assert discard_uploads([str(example), str(upload)], root, since=time.time() - 60) == 1
    assert example.exists() and not upload.exists()

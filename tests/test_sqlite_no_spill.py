"""Issue 33: the two SQLite join-bomb uploads of the corpus write no byte outside the private temporary
folder. The CLI runs under strace, with TMPDIR and SQLITE_TMPDIR pointing at watched empty folders; every
file any process opens for writing or creates must lie inside the private workspace under TMPDIR."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "bad_inputs" / "corpus"
BASELINE = ROOT / "tests" / "fixtures" / "ascend" / "level1" / "train"
BOMBS = ("sqlite_string_ids_repeated.zip", "sqlite_tasks_share_global_task_id.zip")
OPEN = re.compile(r'^\d+\s+(?:openat|open|creat)\((?:AT_FDCWD, )?"([^"]+)", ([A-Z_|]+)')
WRITES = ("O_WRONLY", "O_RDWR", "O_CREAT")
DEVICES = ("/dev/null", "/dev/tty", "/dev/pts/", "/dev/shm/", "/proc/", "/sys/")

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")


def written_paths(log: Path) -> set[str]:
    """Paths opened for writing or created, from an `strace -f -e trace=openat,open,creat` log."""
    found = set()
    for line in log.read_text(errors="replace").splitlines():
        match = OPEN.match(line)
        if match and any(flag in match.group(2) for flag in WRITES) and "= -1" not in line:
            found.add(match.group(1))
    return found


def listing(folder: Path) -> dict[str, int]:
    """Every file under `folder` with its size (what a spill would leave behind)."""
    return {str(p): p.stat().st_size for p in folder.rglob("*") if p.is_file()} if folder.is_dir() else {}


@pytest.mark.parametrize("bomb", BOMBS)
def test_a_join_bomb_upload_writes_nothing_outside_the_private_folder(tmp_path: Path, bomb: str) -> None:
    private_tmp, sqlite_tmp, home = tmp_path / "tmp", tmp_path / "sqlite-tmp", tmp_path / "home"
    for folder in (private_tmp, sqlite_tmp, home):
        folder.mkdir()
    log = tmp_path / "strace.log"
    env = {**os.environ, "TMPDIR": str(private_tmp), "SQLITE_TMPDIR": str(sqlite_tmp), "HOME": str(home)}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    command = [
        sys.executable,
        "-m",
        "cli.main",
        "compare",
        str(BASELINE),
        str(CORPUS / bomb),
        "--format",
        "json",
    ]
    done = subprocess.run(
        ["strace", "-f", "-qq", "-e", "trace=openat,open,creat", "-o", str(log), *command],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-400:]
    assert "repeats" in done.stderr and "which the schema makes unique" in done.stderr
    outside = {
        p for p in written_paths(log) if not p.startswith(str(private_tmp)) and not p.startswith(DEVICES)
    }
    assert outside == set()
    assert written_paths(log), "strace saw no write at all: the check would be vacuous"
    assert listing(sqlite_tmp) == {} and listing(home) == {}
    assert listing(private_tmp) == {}, "the private workspace is removed when the command ends"


SORT = """
import sqlite3, sys
from pathlib import Path
from diagnosis.readers.sqlite_guard import guarded
def answer(db):
    rows = sum(1 for _ in db.execute("SELECT t FROM big ORDER BY t DESC"))
    return rows, db.execute("SELECT COUNT(DISTINCT t) FROM big").fetchone()[0]
if sys.argv[2] == "guarded":
    with guarded(Path(sys.argv[1])) as db:
        assert db.scalar("PRAGMA temp_store") == 2  # MEMORY
        print(answer(db))
else:
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    db.execute("PRAGMA cache_size=-2048")
    print(answer(db))
"""


def big_database(path: Path, rows: int = 200_000) -> Path:
    """A table of `rows` distinct 120-byte texts (about 25 MB): sorting it outgrows any page cache."""
    import sqlite3

    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE big (t TEXT)")
        db.executemany("INSERT INTO big VALUES (?)", ((f"{i:012d}" * 10,) for i in range(rows)))
    return path


def sort_writes(tmp_path: Path, database: Path, mode: str) -> set[str]:
    """Files a large ORDER BY and DISTINCT open for writing, with SQLITE_TMPDIR and TMPDIR watched."""
    spill = tmp_path / f"spill-{mode}"
    spill.mkdir()
    log = tmp_path / f"{mode}.log"
    env = {**os.environ, "TMPDIR": str(spill), "SQLITE_TMPDIR": str(spill), "PYTHONPATH": str(ROOT)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    command = [sys.executable, "-c", SORT, str(database), mode]
    done = subprocess.run(
        ["strace", "-f", "-qq", "-e", "trace=openat,open,creat", "-o", str(log), *command],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.strip(), done.stderr[-400:]
    return {p for p in written_paths(log) if not p.startswith(DEVICES)}


def test_the_guarded_connection_sorts_in_memory_where_sqlite_would_spill(tmp_path: Path) -> None:
    """temp_store=MEMORY: a sort and a DISTINCT far over the page cache open no temporary file, where
    SQLite's default connection spills them into SQLITE_TMPDIR (the control that makes this test fail)."""
    database = big_database(tmp_path / "big.db")
    spilled = sort_writes(tmp_path, database, "default")
    assert any(p.startswith(str(tmp_path / "spill-default")) for p in spilled), spilled
    assert sort_writes(tmp_path, database, "guarded") == set()

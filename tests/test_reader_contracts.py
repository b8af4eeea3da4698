"""Contracts of the reader package: importing it changes nothing in the process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_importing_the_readers_has_no_side_effects() -> None:
    """No environment variable and no Arrow memory pool is set by an import (the facade chooses the pool)."""
    probe = textwrap.dedent(
        """
        import importlib, os, pkgutil
        import pyarrow as pa
        before_env, before_pool = dict(os.environ), pa.default_memory_pool().backend_name
        import diagnosis.readers as readers
        for info in pkgutil.iter_modules(readers.__path__):
            importlib.import_module(f"diagnosis.readers.{info.name}")
        import diagnosis.ingest, diagnosis.analyzers
        assert dict(os.environ) == before_env, set(os.environ.items()) ^ set(before_env.items())
        assert pa.default_memory_pool().backend_name == before_pool, pa.default_memory_pool().backend_name
        """
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

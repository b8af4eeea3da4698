"""Scripts that are not packages (bench/*.py, fixture generators) loaded by path under a name of ours."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(path: Path, name: str) -> ModuleType:
    """`path` imported as module `name`: bench/ on sys.path would let bench/diagnosis.py shadow the
    diagnosis package, and several fixture folders have a generate.py. Registered in sys.modules
    because dataclasses look their module up while a class is built."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

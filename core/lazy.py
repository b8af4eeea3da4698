"""Lazy public names for a package's `__init__` (PEP 562), so importing a package stays cheap."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_getattr(
    package: str, exports: Mapping[str, str], namespace: dict[str, object]
) -> Callable[[str], object]:
    """A module `__getattr__` that imports a public name's module on first use and keeps the value in
    the package's namespace; unknown names fail as they would without it."""

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__

"""The suite's own contract: test modules share helpers through tests/support and conftest fixtures,
never by importing one another (a test module's import would run its collection twice and tie the two)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, as dotted names."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.slow
def test_no_module_of_the_suite_imports_a_test_module_or_conftest() -> None:
    offenders = {
        f"{path.relative_to(TESTS)} imports {name}"
        for path in TESTS.rglob("*.py")
        for name in imported_modules(path)
        if name.split(".")[-1].startswith("test_") or name.split(".")[-1] in ("conftest", "cpu_fixtures")
    }
    assert not offenders, sorted(offenders)

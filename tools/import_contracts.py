"""An import-linter contract for a top-level module such as app.py, which import-linter cannot take as a
root package (it accepts packages only): the module's imports are read from its source and resolved
against the import graph (`from doctor import render` is the submodule doctor.render when there is one),
and none may be a forbidden module.

Registered in pyproject.toml (`contract_types`) as `module_imports`; options: `source_module` (the
module's name, found as `<name>.py` in the working directory) and `forbidden_modules` (names, or a prefix
with `.*` for everything below a package).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def imported_modules(source: str, known: set[str]) -> list[tuple[str, int]]:
    """(module, line) of every import in `source`. `from a import b` names the submodule a.b when that
    is a module (in `known`, or an installed one) that a's __init__ does not rebind (`from a.b import b`
    exports a function, not the module), else a. Relative imports (none in a top-level module) are
    skipped."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            exported = _bound_names(node.module)
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                submodule = (name in known or _is_module(name)) and alias.name not in exported
                found.append((name if submodule else node.module, node.lineno))
    return found


def _is_module(name: str) -> bool:
    """Whether an installed package has this submodule (external packages' submodules are not in the
    graph)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _bound_names(package: str) -> set[str]:
    """The names a package's __init__ binds by import (its re-exports); empty when it has no source."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.origin or not spec.origin.endswith("__init__.py"):
        return set()
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }


def matches(module: str, expressions: set[str]) -> bool:
    """Whether a module is one of the expressions: an exact name, or below `package.*`."""
    for expression in expressions:
        if expression.endswith(".*"):
            if module.startswith(expression[:-1]):
                return True
        elif module == expression:
            return True
    return False


class ModuleImportsContract(Contract):
    """The top-level module `source_module` imports none of `forbidden_modules`."""

    type_name = "module_imports"

    source_module = fields.StringField()
    forbidden_modules = fields.SetField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        source = (Path.cwd() / f"{self.source_module}.py").read_text(encoding="utf-8")
        forbidden = set(self.forbidden_modules)  # type: ignore[arg-type]
        imports = imported_modules(source, set(graph.modules))
        illegal = [(module, line) for module, line in imports if matches(module, forbidden)]
        return ContractCheck(kept=not illegal, metadata={"illegal": illegal})

    def render_broken_contract(self, check: ContractCheck) -> None:
        output.print_error(f"{self.source_module} imports modules it must reach through their packages:")
        output.new_line()
        for module, line in check.metadata["illegal"]:
            output.print_error(f"- {self.source_module} -> {module} (l.{line})", bold=False)
        output.new_line()

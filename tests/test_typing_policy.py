"""The typing policy (issue 30): `Any` in a public signature and a silenced type check are kept only where
a library forces them, and each says why on its line (or the line above), so a reader sees the reason
and a new unexplained escape from the type checker fails here.

Public: a module-level function, class or attribute, a method or attribute of a public class, whose name
does not start with `_`, in a module whose name does not start with `_` (dunder methods such as
`__init__` are public: they are how the class is called). An `Any` counts where it appears in a
parameter or return annotation, an attribute's annotation, or the value of a public module-level
alias (`JsonObject = dict[str, Any]`), which puts `Any` into every signature that names it.

The reason is a trailing comment `# Any: <library> <why>`, e.g. `# Any: gradio event handlers return
gr.update dicts`; `pyright: ignore[...]` must be followed by a `# <why>` comment on its line.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (
    "core",
    "diagnosis",
    "graph",
    "knowledge",
    "outputs",
    "sandbox",
    "doctor",
    "desk",
    "webapp",
    "cli",
)

# the reason's fixed form: `# Any: <library> <why>` (a library word, then at least a few words of why)
ANY_REASON = re.compile(r"#\s*Any:\s*(?P<library>[\w.-]+)\s+\S.{8,}")
# `# pyright: ignore[rules]  # why`: the rules named and a reason after them
PYRIGHT_IGNORE = re.compile(r"#\s*pyright:\s*ignore(?P<rules>\[[^\]]*\])?(?P<rest>.*)")


@dataclass(frozen=True)
class AnySite:
    """One `Any` in a public signature: where it is and the reason written beside it (None if none)."""

    path: str
    line: int
    owner: str
    library: str | None


def source_files() -> list[Path]:
    """Every Python file of the packages, and app.py."""
    files = [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]
    return [*files, ROOT / "app.py"]


def is_public(name: str) -> bool:
    """Public names: not starting with `_`, except dunders (`__init__`, `__call__`), how a class is used."""
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def is_public_module(path: Path) -> bool:
    """A module whose own name (or a package on its path) starts with `_` is private, `__init__` aside."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return all(not part.startswith("_") or part == "__init__" for part in parts)


def any_lines(node: ast.AST | None) -> Iterator[int]:
    """The line of each `Any` (or `typing.Any`) in an annotation, string annotations included."""
    if node is None:
        return
    for sub in ast.walk(node):
        if (isinstance(sub, ast.Name) and sub.id == "Any") or (
            isinstance(sub, ast.Attribute) and sub.attr == "Any"
        ):
            yield sub.lineno
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            try:
                parsed = ast.parse(sub.value, mode="eval")
            except SyntaxError:
                continue
            yield from (sub.lineno for _ in any_lines(parsed))


def function_annotations(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.expr | None]:
    """Every annotation of a function: its parameters' and its return's."""
    args = node.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            yield arg.annotation
    yield node.returns


def self_attributes(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[str, ast.expr]]:
    """`self.name: T = ...` declarations in a method: instance attributes and their annotations."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Attribute):
            target = sub.target
            if isinstance(target.value, ast.Name) and target.value.id == "self":
                yield target.attr, sub.annotation


def module_body(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a module or class body, those under `if` / `try` (TYPE_CHECKING, fallbacks) too."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from module_body(stmt.body)
            yield from module_body(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from module_body(stmt.body)
            for handler in stmt.handlers:
                yield from module_body(handler.body)
            yield from module_body(stmt.orelse)
        else:
            yield stmt


def public_any(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, owner) of every `Any` in a public signature, attribute or alias of a module."""
    yield from scope_any(module_body(tree.body), "", module=True)


def scope_any(body: Iterator[ast.stmt], prefix: str, module: bool) -> Iterator[tuple[int, str]]:
    """The public `Any`s of one scope (a module or a public class)."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_public(stmt.name):
            owner = prefix + stmt.name
            for annotation in function_annotations(stmt):
                yield from ((line, owner) for line in any_lines(annotation))
            if not module:
                for name, annotation in self_attributes(stmt):
                    if is_public(name):
                        yield from ((line, f"{prefix}{name}") for line in any_lines(annotation))
        elif isinstance(stmt, ast.ClassDef) and is_public(stmt.name):
            yield from scope_any(module_body(stmt.body), f"{prefix}{stmt.name}.", module=False)
        elif (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and is_public(stmt.target.id)
        ):
            yield from ((line, prefix + stmt.target.id) for line in any_lines(stmt.annotation))
            if module and isinstance(stmt.annotation, ast.Name) and stmt.annotation.id == "TypeAlias":
                yield from ((line, prefix + stmt.target.id) for line in any_lines(stmt.value))
        elif isinstance(stmt, ast.Assign) and module:
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            if names and all(is_public(n) for n in names) and is_type_expression(stmt.value):
                yield from ((line, prefix + names[0]) for line in any_lines(stmt.value))


def is_type_expression(node: ast.expr) -> bool:
    """A module-level value that is a type alias: a subscripted generic or a `|` union (not a call)."""
    return isinstance(node, (ast.Subscript, ast.BinOp)) or (isinstance(node, ast.Name) and node.id == "Any")


def comments(source: str) -> dict[int, str]:
    """The comment on each line of a source (tokenised, so a `#` inside a string is not one)."""
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = found.get(token.start[0], "") + token.string
    return found


def reason_library(notes: dict[int, str], line: int) -> str | None:
    """The library named by the `# Any:` reason on `line` or the line above it; None without one."""
    reason = ANY_REASON.search(notes.get(line, "")) or ANY_REASON.search(notes.get(line - 1, ""))
    return reason.group("library") if reason else None


def any_sites() -> list[AnySite]:
    """Every `Any` in a public signature of the packages and app.py, with its reason if it has one."""
    sites: list[AnySite] = []
    for path in source_files():
        if not is_public_module(path):
            continue
        source = path.read_text(encoding="utf-8")
        notes = comments(source)
        for line, owner in public_any(ast.parse(source)):
            relative = str(path.relative_to(ROOT))
            sites.append(AnySite(relative, line, owner, reason_library(notes, line)))
    return sites


def test_counter_finds_any_in_each_public_place_and_skips_private_ones() -> None:
    source = (
        "from typing import Any\n"
        "X = dict[str, Any]\n"
        "y: Any = 1\n"
        "def f(a: Any, *b: 'Any', **c: Any) -> Any: ...\n"
        "class C:\n"
        "    field: Any\n"
        "    def __init__(self, v: Any) -> None:\n"
        "        self.v: Any = v\n"
        "        self._w: Any = v\n"
        "    def _hidden(self, v: Any) -> Any: ...\n"
        "    class Inner:\n"
        "        z: list[Any]\n"
        "def _private(a: Any) -> Any: ...\n"
        "class _Private:\n"
        "    field: Any\n"
        "z = cast(Any, 1)\n"
        "def g() -> None:\n"
        "    def inner(a: Any) -> Any: ...\n"
    )
    owners = Counter(owner for _, owner in public_any(ast.parse(source)))
    assert owners == {"X": 1, "y": 1, "f": 4, "C.field": 1, "C.__init__": 1, "C.v": 1, "C.Inner.z": 1}


def test_a_reason_is_read_on_the_line_or_the_line_above() -> None:
    source = (
        "def f(x: Any) -> None: ...  # Any: gradio event handlers return update dicts\n"
        "# Any: plotly figures are untyped dicts\n"
        "def g(x: Any) -> None: ...\n"
        "def h(x: Any) -> None: ...  # Any: gradio\n"  # a library with no why is no reason
        "\n"
        "def k(x: Any) -> None: ...  # a comment, not a reason\n"
    )
    notes = comments(source)
    assert [reason_library(notes, line) for line in (1, 3, 4, 6)] == ["gradio", "plotly", None, None]


def test_every_any_in_a_public_signature_carries_its_reason() -> None:
    sites = any_sites()
    unexplained = [f"{s.path}:{s.line} {s.owner}" for s in sites if s.library is None]
    kept = Counter(s.library for s in sites if s.library is not None)
    assert not unexplained, (
        f"{len(unexplained)} of {len(sites)} unexplained (kept: {dict(kept)}):\n" + "\n".join(unexplained)
    )


def test_no_type_ignore_in_the_packages() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in source_files()
        for line, note in comments(path.read_text(encoding="utf-8")).items()
        if re.search(r"#\s*type:\s*ignore", note)
    ]
    assert not found, found


def unexplained_ignores(source: str) -> list[tuple[int, str]]:
    """The `pyright: ignore` comments of a source that name no rules or give no reason: after the rules
    on the line (`# pyright: ignore[rule]  # why`) or as a comment line just above."""
    notes = comments(source)
    lines = source.splitlines()
    bare = []
    for line, note in notes.items():
        match = PYRIGHT_IGNORE.search(note)
        if not match:
            continue
        said = re.match(r"\s*#\s*\S.{4,}", match.group("rest"))
        above = line >= 2 and lines[line - 2].strip().startswith("#") and len(lines[line - 2].strip()) > 6
        if not match.group("rules") or not (said or above):
            bare.append((line, note))
    return bare


def test_an_ignore_needs_its_rules_and_a_reason_on_its_line_or_above() -> None:
    source = (
        "a = f()  # pyright: ignore[reportCallIssue]  # pandas-stubs: literal dtype names only\n"
        "# typeshed declares no TarInfo._proc_member\n"
        "b = g()  # pyright: ignore[reportAttributeAccessIssue]\n"
        "c = h()  # pyright: ignore[reportCallIssue]\n"
        "d = k()  # pyright: ignore  # no rules named\n"
    )
    assert [line for line, _ in unexplained_ignores(source)] == [4, 5]


def test_every_pyright_ignore_names_its_rules_and_says_why() -> None:
    bare = [
        f"{path.relative_to(ROOT)}:{line} {note}"
        for path in source_files()
        for line, note in unexplained_ignores(path.read_text(encoding="utf-8"))
    ]
    assert not bare, bare

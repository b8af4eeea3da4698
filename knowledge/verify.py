"""Prove that rule fixes are real MindSpore 2.10: execute them on CPU, resolve their names and keywords
against the installed package, and scan every text for APIs that blog posts invent.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypedDict, cast

from knowledge.schema import Rule

# Names every snippet may use without defining them (see knowledge/_fixrunner.py make_preamble).
PREAMBLE_MODULES = {"ms": "mindspore", "nn": "mindspore.nn", "np": "numpy"}
PREAMBLE_OBJECTS = {"net": "mindspore.nn.Cell", "x": "mindspore.Tensor"}

# APIs that do not exist, are deprecated or are invalid in MindSpore 2.10 (mindspore-api-facts.md §1-2).
FORBIDDEN_APIS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (why, re.compile(pattern))
    for why, pattern in (
        ("MixedPrecisionManager does not exist", r"MixedPrecisionManager"),
        ("mindspore.quant does not exist", r"\b(?:mindspore|ms)\.quant\b"),
        ("StaticQuantizer does not exist", r"StaticQuantizer"),
        ("set_context(precision_mode=...) raises ValueError", r"set_context\([^)]*\bprecision_mode\b"),
        ("buffer_optimize is not a context option", r"\bbuffer_optimize\b"),
        ("mindspore.graph_kernel does not exist", r"set_graph_kernel_flags"),
        ("profile_level is spelled profiler_level", r"\bprofile_level\s*="),
        ("sampling_interval is not a profiler option", r"\bsampling_interval\b"),
        ("ms_analyzer does not exist", r"\bms_analyzer\b"),
        ("MindScope does not exist", r"(?i)\bmindscope\b"),
        ("enable_graph_kernel is deprecated", r"\benable_graph_kernel\b"),
        ("graph_kernel_flags in set_context is deprecated", r"set_context\([^)]*\bgraph_kernel_flags\b"),
        ("mindspore.Profiler is deprecated", r"(?<![\w])Profiler\("),
        ("set_context(jit_config=...) is deprecated", r"set_context\([^)]*\bjit_config\b"),
        ("ms.jit accepts jit_level O0/O1 only", r"\bjit\(\s*jit_level\s*=\s*[\"']O2"),
        ("set_context(device_target=...) is replaced by set_device", r"set_context\([^)]*\bdevice_target\b"),
        ("mempool_block_size is replaced by ms.runtime.set_memory", r"\bmempool_block_size\b"),
        ("Conv2dBnFoldQuant does not exist in 2.10", r"Conv2dBnFoldQuant"),
        ("infer_predict_layout builds parallel layouts; it is no speed-up", r"infer_predict_layout"),
    )
)


# Settings MindSpore accepts once per process ("can not be set repeatedly"). All executed fixes share one
# process, so each of these may appear in at most one executed fix (a test checks it).
ONE_SHOT_SETTINGS = (
    "mindspore.runtime.set_cpu_affinity",
    "mindspore.runtime.dispatch_threads_num",
    "mindspore.runtime.set_memory",
    "mindspore.device_context.cpu.op_tuning.threads_num",
    "mindspore.set_deterministic",
)


def forbidden_hits(text: str) -> list[str]:
    """Why `text` mentions a non-existent or deprecated API (empty when it is clean)."""
    return [f"{why}: {m.group(0)!r}" for why, pattern in FORBIDDEN_APIS for m in pattern.finditer(text)]


class _Ran(TypedDict):
    ok: bool
    error: str  # the exception and its traceback when not ok
    seconds: float


class SnippetResult(_Ran, total=False):
    """What the fix runner reports for one snippet (knowledge._fixrunner)."""

    path: str  # --export: the .mindir; --profile: the profiler's output folder
    steps: int  # --profile: the calls recorded


def run_fixes(rules: Iterable[Rule], timeout: float = 900.0) -> dict[str, SnippetResult]:
    """Execute the fixes of `rules` on CPU in ONE subprocess with real MindSpore; per-rule results."""
    return run_snippets({rule.id: rule.fix.code for rule in rules}, timeout)


def run_snippets(snippets: dict[str, str], timeout: float = 900.0) -> dict[str, SnippetResult]:
    """Execute snippets (name -> code) against the preamble in one subprocess; results by name:
    {"ok": bool, "error": str, "seconds": float}."""
    return _run_runner([], snippets, timeout)


def export_snippets(
    snippets: dict[str, str], out_dir: Path, net: str = "SmallNet", timeout: float = 900.0
) -> dict[str, SnippetResult]:
    """Run each snippet against a fresh preamble (`net` names a class of knowledge._fixnet), then export
    its `net` on its `x` with real ``ms.export(..., file_format="MINDIR")``; all in one subprocess.
    Results by name add "path", the .mindir written into `out_dir` (load it with graph.load_mindir)."""
    payload = {name: {"code": code, "net": net} for name, code in snippets.items()}
    return _run_runner(["--export"], payload, timeout, out_dir)


def profile_snippet(
    name: str, code: str, out_dir: Path, net: str = "SmallNet", timeout: float = 900.0
) -> SnippetResult:
    """Run one snippet in its own subprocess, then profile calls of its `net` on its `x` with the real
    CPU profiler into `out_dir`/`name` (read it with diagnosis.ingest.read_folder). Adds "path" and
    "steps" (the recorded calls) to the result."""
    return _run_runner(["--profile"], {name: {"code": code, "net": net}}, timeout, out_dir)[name]


def _run_runner(
    mode: list[str], payload: dict[str, Any], timeout: float, out_dir: Path | None = None
) -> dict[str, SnippetResult]:
    """`python -m knowledge._fixrunner [mode] in.json out.json [out_dir]` in a fresh process."""
    repo = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="fixcheck-") as work:
        src, out = Path(work) / "snippets.json", Path(work) / "results.json"
        src.write_text(json.dumps(payload), encoding="utf-8")
        path = os.pathsep.join(p for p in (str(repo), os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": path}
        extra = [str(Path(out_dir).resolve())] if out_dir is not None else []
        proc = subprocess.run(
            [sys.executable, "-m", "knowledge._fixrunner", *mode, str(src), str(out), *extra],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"fix runner failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return cast("dict[str, SnippetResult]", json.loads(out.read_text(encoding="utf-8")))


def resolve_problems(code: str) -> list[str]:
    """Every MindSpore name the snippet uses that does not resolve in the installed package, every
    keyword or positional argument a resolved callable does not accept, and every undefined name."""
    tree = ast.parse(code)
    scope = _Scope.of(tree)
    problems = [f"name {n!r} is not defined by the snippet or the preamble" for n in scope.undefined(tree)]
    checked: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                problems += _resolve_once(f"{node.module}.{alias.name}", checked)
        elif isinstance(node, ast.Import):
            problems += [p for a in node.names for p in _resolve_once(a.name, checked)]
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            dotted = scope.qualify(node, modules_only=True)  # instance attributes are not on the class
            if dotted:
                problems += _resolve_once(dotted, checked)
        elif isinstance(node, ast.Call):
            problems += _call_problems(node, scope, checked)
    return problems


def one_shot_calls(code: str) -> set[str]:
    """The once-per-process MindSpore settings the snippet calls (see ONE_SHOT_SETTINGS)."""
    tree = ast.parse(code)
    scope = _Scope.of(tree)
    called = {scope.qualify(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {name for name in called & set(ONE_SHOT_SETTINGS) if name is not None}


class _Scope:
    """What names a snippet defines and which module or class each alias stands for."""

    def __init__(self, aliases: dict[str, str], defined: set[str]) -> None:
        self.aliases = aliases
        self.defined = defined

    @classmethod
    def of(cls, tree: ast.AST) -> _Scope:
        aliases = dict(PREAMBLE_MODULES)
        defined = set(PREAMBLE_MODULES) | set(PREAMBLE_OBJECTS) | set(dir(builtins))
        stored: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    name = a.asname or a.name.split(".")[0]
                    aliases[name] = a.name if a.asname else name
                    defined.add(name)
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                    defined.add(a.asname or a.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                stored.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                defined.add(node.name)
        # The preamble objects are typed only while the snippet keeps them as they are.
        for name, qualname in PREAMBLE_OBJECTS.items():
            if name not in stored:
                aliases[name] = qualname
        return cls(aliases, defined | stored)

    def undefined(self, tree: ast.AST) -> list[str]:
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return sorted(names - self.defined)

    def qualify(self, node: ast.expr, modules_only: bool = False) -> str | None:
        """'mindspore.amp.auto_mixed_precision' for ``ms.amp.auto_mixed_precision``; None when the chain
        does not start at a MindSpore alias (or, with `modules_only`, at a typed preamble object)."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        if modules_only and self.aliases[node.id] == PREAMBLE_OBJECTS.get(node.id):
            return None
        root = self.aliases[node.id]
        if not root.startswith("mindspore"):
            return None
        return ".".join([root, *reversed(parts)])


def _resolve_once(dotted: str, checked: set[str]) -> list[str]:
    if dotted in checked or not dotted.startswith("mindspore"):
        return []
    checked.add(dotted)
    try:
        resolve(dotted)
    except (ImportError, AttributeError) as exc:
        return [f"{dotted} does not resolve: {exc}"]
    return []


def resolve(dotted: str) -> object:
    """The object at a dotted path: import the longest importable module prefix, then getattr."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            if cut == 1:
                raise
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def _call_problems(call: ast.Call, scope: _Scope, checked: set[str]) -> list[str]:
    """A method of a typed preamble object that does not exist, or arguments a resolved MindSpore
    callable does not accept (by its signature)."""
    if isinstance(call.func, ast.Name):
        dotted = scope.aliases.get(call.func.id)
        dotted = dotted if dotted and dotted.startswith("mindspore") else None
    else:
        dotted = scope.qualify(call.func)
    if not dotted:
        return []
    missing = _resolve_once(dotted, checked)
    if missing:
        return missing
    try:
        target = resolve(dotted)
        if not callable(target):
            return []  # a constant or a module: no call to check
        signature = inspect.signature(target)
    except (ImportError, AttributeError):
        return []  # reported once already
    except (TypeError, ValueError):
        return []  # a builtin without a signature: nothing to check
    bound_method = _is_instance_method(call.func, dotted, scope)
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return []
    positional = [None] * (len(call.args) + (1 if bound_method else 0))
    try:
        signature.bind_partial(*positional, **{k.arg: None for k in call.keywords if k.arg})
    except TypeError as exc:
        return [f"{dotted}{signature}: {exc}"]
    return []


def _is_instance_method(func: ast.expr, dotted: str, scope: _Scope) -> bool:
    """A method called on a typed preamble object (``net.set_train``): its `self` is implicit."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return False
    if scope.aliases.get(func.value.id) != PREAMBLE_OBJECTS.get(func.value.id):
        return False
    method = inspect.getattr_static(resolve(dotted.rsplit(".", 1)[0]), func.attr, None)
    return not isinstance(method, (staticmethod, classmethod))


def scan_texts(rules: Sequence[Rule]) -> dict[str, list[str]]:
    """Forbidden-API hits per rule id over its fix code and every user-facing text."""
    out: dict[str, list[str]] = {}
    for rule in rules:
        hits = [hit for text in [rule.fix.code, *rule.texts()] for hit in forbidden_hits(text)]
        if hits:
            out[rule.id] = hits
    return out

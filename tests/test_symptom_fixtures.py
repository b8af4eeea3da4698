"""Symptom declarations against what is emitted: every emitter module declares its kinds (`EMITS`), and
each kind has fixture cases (tests/fixtures/symptoms/<kind>.yaml) where it must fire, where it must stay
quiet and, for a difference between two runs, where both runs share the trait and it must stay quiet.

A case names real (or schema-exact) fixtures below tests/fixtures: a pair (`baseline`, `target`), one
`run`, or a `mindir` (with an optional `profile` to join). `edit` changes one documented thing in a
copy of a run, by side (`baseline`, `target`, `run`, `profile`): see EDITS. Cached runs are never mutated.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest
import yaml

import diagnosis
import diagnosis.analyzers
import graph
import outputs
from core.model import Run
from core.symptoms import SYMPTOM_KINDS, Emits, Symptom, SymptomValues
from diagnosis import Workspace
from diagnosis.analyzers import PAIR_ANALYZERS, RUN_ANALYZERS
from diagnosis.compare import Side, compare_sides, prepare
from tests.support.inputs import ROOT
from tests.support.runs import FIXTURES, fixture_run

CASES_DIR = FIXTURES / "symptoms"
EMITTER_PACKAGES = ("core", "diagnosis", "graph", "outputs", "knowledge", "doctor")
CASE_KEYS = {"name", "baseline", "target", "run", "mindir", "profile", "edit", "dump_baseline", "dump_target"}
GROUPS = ("fires", "quiet", "shared")


# ------------------------------------------------------------------------------------------- edits


def _scale_kernels(run: Run, factor: float) -> Run:
    """Every kernel `factor` times as long, launched at the same times (the same host feeding a faster or
    slower device); the steps' busy time follows, their wall time does not."""
    kernels = run.kernels.assign(duration_us=run.kernels["duration_us"] * factor)
    steps = run.steps.assign(busy_us=run.steps["busy_us"] * factor)
    return dataclasses.replace(run, kernels=kernels, steps=steps)


def _scale_timeline(run: Run, factor: float) -> Run:
    """The whole run `factor` times slower: every duration and every time since the first launch."""
    origin = float(run.kernels["start_us"].min())

    def stretch(frame: pd.DataFrame, cols: tuple[str, ...]) -> pd.DataFrame:
        out = frame.copy()
        for col in cols:
            if col in out:
                out[col] = out[col] * factor
        if "start_us" in out:
            out["start_us"] = origin + (frame["start_us"] - origin) * factor
        return out

    kernels = stretch(run.kernels, ("duration_us", "wait_us"))
    steps = stretch(run.steps, ("duration_us", "busy_us", "free_us", "communication_us"))
    return dataclasses.replace(run, kernels=kernels, steps=steps)


EDITS: dict[str, Callable[[Run, float], Run]] = {"kernels": _scale_kernels, "timeline": _scale_timeline}


# ------------------------------------------------------------------------------------------- cases


@dataclass(frozen=True, eq=False)
class Case:
    """One fixture case of one symptom kind: the inputs, and whether the kind must fire on them (hashed
    by identity, so that each case is diagnosed once)."""

    kind: str
    group: str  # "fires" | "quiet" | "shared"
    name: str
    inputs: dict[str, str]  # side -> fixture path below tests/fixtures
    edit: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def shape(self) -> str:
        """ "pair", "run", "mindir" (a MINDIR, joined with a profile when one is given) or "dumps" (two
        runs' dumps compared layer by layer)."""
        if "dump_baseline" in self.inputs:
            return "dumps"
        return next(s for s in ("mindir", "run", "pair") if s in self.inputs or s == "pair")


def _case(kind: str, group: str, raw: dict[str, Any]) -> Case:
    assert set(raw) <= CASE_KEYS, f"{kind} {group} {raw.get('name')}: unknown keys {set(raw) - CASE_KEYS}"
    inputs = {k: v for k, v in raw.items() if k not in ("name", "edit")}
    shapes = [
        {"baseline", "target"},
        {"run"},
        {"mindir"},
        {"mindir", "profile"},
        {"dump_baseline", "dump_target"},
    ]
    assert set(inputs) in shapes, f"{kind}: {raw['name']}: inputs {sorted(inputs)}"
    edit = raw.get("edit", {})
    assert set(edit) <= set(inputs), f"{kind}: {raw['name']}: edits a side it has not"
    assert all(set(e) <= set(EDITS) for e in edit.values()), f"{kind}: {raw['name']}: unknown edit"
    for path in inputs.values():
        assert (FIXTURES / path).exists(), f"{kind}: {raw['name']}: no fixture {path}"
    return Case(kind, group, raw["name"], inputs, edit)


def load_cases(path: Path) -> dict[str, list[Case]]:
    """The cases of one fixture file by group; a shared-trait case is always a pair."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert set(raw) <= {"kind", "not_differential", *GROUPS}, f"{path.name}: unknown top-level keys"
    assert raw["kind"] == path.stem, f"{path.name}: kind {raw['kind']!r} differs from the file name"
    cases = {group: [_case(raw["kind"], group, c) for c in raw.get(group, [])] for group in GROUPS}
    assert all(c.shape in ("pair", "dumps") for c in cases["shared"]), f"{path.stem}: a shared case is a pair"
    return cases


def all_cases() -> list[Case]:
    """Every case of every fixture file."""
    return [
        case
        for path in sorted(CASES_DIR.glob("*.yaml"))
        for cases in load_cases(path).values()
        for case in cases
    ]


CASES = all_cases()


# ---------------------------------------------------------------------------------------- emitters


def emitter_modules() -> dict[str, ModuleType]:
    """Every module that declares EMITS: the analyzers (registered by their import) and the graph checks."""
    names = [f"diagnosis.analyzers.{m.name}" for m in pkgutil.iter_modules(diagnosis.analyzers.__path__)]
    modules = [
        importlib.import_module(n)
        for n in [*names, "graph.hygiene", "graph.profile_join", "outputs.symptoms"]
    ]
    return {m.__name__: m for m in modules if hasattr(m, "EMITS")}


EMITTERS = emitter_modules()


DECLARED = {
    kind.KIND.id: kind
    for stage in (diagnosis, graph, outputs)
    for declared in stage.symptom_declarations().values()
    for kind in declared
}


def assert_typed(declaration: type[SymptomValues], values: dict[str, Any]) -> None:
    """`values` are what the kind's typed declaration gives back, key for key in its order, each of its
    declared type (a float may be an int; counts by name go into their `spread` field)."""
    fields = dataclasses.fields(declaration)
    spread_into = {key: f.name for f in fields for key in f.metadata.get("spread", ())}
    names = {f.metadata.get("key", f.name): f.name for f in fields}
    given: dict[str, Any] = {}
    for key, value in values.items():
        if key in spread_into:
            given.setdefault(spread_into[key], {})[key] = value
        else:
            given[names[key]] = value
    typed = declaration(**given)
    assert list(typed.as_values().items()) == list(values.items()), declaration.KIND.id
    hints = typing.get_type_hints(declaration)
    for name, value in given.items():
        allowed = typing.get_args(hints[name]) or (hints[name],)
        origin = typing.get_origin(hints[name])
        if origin in (dict, list, tuple):  # a typed container: its own type
            allowed = (origin,)
        kinds = tuple(typing.get_origin(a) or a for a in allowed if a is not typing.Any)
        kinds += (int,) if float in kinds else ()
        assert len(kinds) < len(allowed) or isinstance(value, kinds), (
            f"{declaration.KIND.id}.{name}: {value!r}"
        )


def declared_by(kind: str) -> list[str]:
    """The emitter modules declaring `kind`."""
    return [name for name, module in EMITTERS.items() if kind in module.EMITS.kinds()]


def _side(case: Case, side: str) -> Run:
    """One input run of the case, with the case's edits of that side applied to a copy."""
    return _edited(case.inputs[side], tuple(sorted(case.edit.get(side, {}).items())))


@cache
def _edited(path: str, edits: tuple[tuple[str, float], ...]) -> Run:
    run = fixture_run(path)
    for name, factor in edits:
        run = EDITS[name](run, factor)
    return run


@cache
def _prepared(path: str, edits: tuple[tuple[str, float], ...]) -> Side:
    """A run prepared once, whichever cases and roles use it (preparation does not depend on the role)."""
    return prepare(_edited(path, edits))


def _prepared_side(case: Case, side: str) -> Side:
    """One input run of the case, edited and prepared."""
    return _prepared(case.inputs[side], tuple(sorted(case.edit.get(side, {}).items())))


def emitted(case: Case) -> tuple[tuple[str, Symptom], ...]:
    """(emitting module, symptom) for every symptom each emitter finds on the case's inputs; cases of
    different kinds naming the same inputs and edits share one diagnosis."""
    key = (
        tuple(sorted(case.inputs.items())),
        tuple(sorted((k, tuple(sorted(v.items()))) for k, v in case.edit.items())),
    )
    if key not in _EMITTED:
        _EMITTED[key] = _emit(case)
    return _EMITTED[key]


_EMITTED: dict[tuple[object, ...], tuple[tuple[str, Symptom], ...]] = {}


def _emit(case: Case) -> tuple[tuple[str, Symptom], ...]:
    """What `emitted` returns, computed."""
    out: list[tuple[str, Symptom]] = []
    if case.shape == "dumps":
        with Workspace() as ws:
            sides = [
                outputs.read_dump(FIXTURES / case.inputs[k], ws) for k in ("dump_baseline", "dump_target")
            ]
        symptoms = outputs.output_symptoms(outputs.compare_dumps(*sides))
        out += [(outputs.output_symptoms.__module__, s) for s in symptoms]
    elif case.shape == "mindir":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = graph.load_mindir(FIXTURES / case.inputs["mindir"])
        chains = graph.find_chains(model)
        out += [(graph.hygiene_symptoms.__module__, s) for s in graph.hygiene_symptoms(model, chains)]
        if "profile" in case.inputs:
            crosslink = graph.crosslink
            out += [(crosslink.__module__, s) for s in crosslink(model, chains, _side(case, "profile"))[1]]
    elif case.shape == "run":
        side = _prepared_side(case, "run")
        out += [(fn.__module__, s) for fn in RUN_ANALYZERS for s in fn(side, "target")]
    else:
        base, target = _prepared_side(case, "baseline"), _prepared_side(case, "target")
        c = compare_sides(base, target, baseline="first")
        out += [(fn.__module__, s) for fn in PAIR_ANALYZERS for s in fn(c)]
        for role, side in (("target", c.target), ("baseline", c.baseline)):
            out += [(fn.__module__, s) for fn in RUN_ANALYZERS for s in fn(side, role)]
    return tuple(out)


def sources_of(case: Case) -> set[str]:
    """The sources the case's kind was emitted with."""
    return {s.source for _, s in emitted(case) if s.kind == case.kind}


# ------------------------------------------------------------------------------------------- tests


def test_every_kind_is_declared_by_exactly_one_emitter() -> None:
    for name, module in EMITTERS.items():
        assert isinstance(module.EMITS, Emits), name
        assert module.EMITS.kinds() <= set(SYMPTOM_KINDS), (
            f"{name}: {module.EMITS.kinds() - set(SYMPTOM_KINDS)}"
        )
    for kind in SYMPTOM_KINDS:
        assert len(declared_by(kind)) == 1, f"{kind} is declared by {declared_by(kind)}"


@pytest.mark.slow
def test_every_module_that_builds_symptoms_declares_them() -> None:
    """A module constructing `Symptom(...)` or declaring a kind (`SymptomValues`) without EMITS would emit
    kinds nobody declared (core.symptoms builds the symptom of a declaration, for its emitter)."""
    builders = set()
    for package in EMITTER_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            calls = (n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
            bases = (b for n in ast.walk(tree) if isinstance(n, ast.ClassDef) for b in n.bases)
            if any(call.func.id == "Symptom" for call in calls) or any(
                isinstance(b, ast.Name) and b.id == "SymptomValues" for b in bases
            ):
                builders.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    assert builders - {"core.symptoms"} == set(EMITTERS)


def test_every_declared_kind_has_its_cases() -> None:
    files = {path.stem for path in CASES_DIR.glob("*.yaml")}
    assert files == set(SYMPTOM_KINDS), (
        f"missing: {set(SYMPTOM_KINDS) - files}; stray: {files - set(SYMPTOM_KINDS)}"
    )
    for path in sorted(CASES_DIR.glob("*.yaml")):
        cases = load_cases(path)
        assert cases["fires"] and cases["quiet"], f"{path.stem} needs a fires and a quiet case"
        (emitter,) = declared_by(path.stem)
        differential = path.stem in EMITTERS[emitter].EMITS.pair
        exempt = "not_differential" in yaml.safe_load(path.read_text(encoding="utf-8"))
        # A difference between two runs needs a shared-trait case; a kind about one run has none.
        assert bool(cases["shared"]) is (differential and not exempt), f"{path.stem}: shared cases"
        assert differential or not exempt, f"{path.stem} describes one run: not_differential is moot"


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.kind}:{c.group}:{c.name}"[:90])
@pytest.mark.slow
def test_emitted_kinds_are_declared_by_their_emitter(case: Case) -> None:
    for module, symptom in emitted(case):
        assert module in EMITTERS, f"{module} emits {symptom.kind} and declares nothing"
        declared = EMITTERS[module].EMITS.scope(symptom.source)
        assert symptom.kind in declared, f"{module} emits {symptom.kind} ({symptom.source}) undeclared"
        assert set(symptom.values) <= set(SYMPTOM_KINDS[symptom.kind].values), symptom.kind
        declaration = DECLARED[symptom.kind]
        assert getattr(symptom.summary, "key", None) in declaration.KIND.messages, symptom.kind
        assert_typed(declaration, symptom.values)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.group == "fires"], ids=lambda c: f"{c.kind}:{c.name}"[:90]
)
def test_kind_fires(case: Case) -> None:
    assert sources_of(case) - {"baseline"}, f"{case.kind} did not fire on {case.inputs} {case.edit}"


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.group == "quiet"], ids=lambda c: f"{c.kind}:{c.name}"[:90]
)
def test_kind_stays_quiet(case: Case) -> None:
    assert not sources_of(case) - {"baseline"}, f"{case.kind} fired on {case.inputs} {case.edit}"


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.group == "shared"], ids=lambda c: f"{c.kind}:{c.name}"[:90]
)
def test_a_trait_both_runs_share_is_no_difference(case: Case) -> None:
    assert "pair" not in sources_of(case), f"{case.kind} reported a difference both runs share"

"""What one inbox submission holds: a pair of runs, a single run, a MINDIR, a pair or run with a MINDIR,
or nothing that can be diagnosed without guessing ("ambiguous", with the reason).

A submission is a folder or an archive. Runs are found with diagnosis.ingest.find_runs on the folder and
on every archive inside it (extracted like an upload: sandbox.isolation.materialize, in a child process
under the same budgets and limits).
Candidates that are ranks of one run (same layout, distinct ranks) count as one run; otherwise the folder
is split by its sub-folders until each part holds one run. Two runs make a pair: folder or archive names
(train/baseline vs infer/target ...) decide the roles, else the facade takes the training run as baseline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core import InputError, say
from diagnosis import Candidate, Workspace, archive_kind, describe, find_runs
from sandbox.isolation import materialize

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")
MODEL_SUFFIX = ".mindir"
BASELINE_WORDS = frozenset({"baseline", "base", "train", "training", "fast", "reference", "ref"})
TARGET_WORDS = frozenset({"target", "infer", "inference", "eval", "serving", "serve", "predict", "slow"})
MAX_LISTED = 6


class Ambiguous(InputError):
    """The submission cannot be diagnosed without guessing what it is."""


@dataclass(frozen=True)
class RunPart:
    """One run found in a submission: its name (relative path) and the folder holding it."""

    name: str
    folder: Path
    layout: str


@dataclass(frozen=True)
class Plan:
    """How to diagnose a submission: the facade's arguments and what the submission was taken for."""

    kind: str  # pair, single, model, pair+model, single+model
    baseline: Path | None = None
    target: Path | None = None
    mindir: Path | None = None
    baseline_role: str | None = None  # "first" when names gave the roles, else None (training run)
    message: str = ""


def submissions(inbox: Path) -> list[Path]:
    """Every submission in an inbox folder: its entries, hidden ones left out, sorted by name."""
    if not inbox.is_dir():
        raise InputError(say("triage.not-folder"), path=str(inbox), expected=say("triage.inbox"))
    return sorted((p for p in inbox.iterdir() if not p.name.startswith(".")), key=lambda p: p.name)


def plan_submission(path: Path, workspace: Workspace) -> Plan:
    """Decide what a submission is; archives are extracted into `workspace`. Raises Ambiguous when it is
    unclear and InputError when it is broken (e.g. a damaged archive)."""
    if not path.exists():
        raise InputError(say("triage.not-found"), path=path.name)
    if path.is_file() and path.name.lower().endswith(MODEL_SUFFIX):
        return Plan(kind="model", mindir=path)
    root = _open(path, workspace)
    runs = _runs_below(root, "", workspace)
    models = sorted(p for p in root.rglob("*") if p.is_file() and p.name.lower().endswith(MODEL_SUFFIX))
    if len(models) > 1:
        raise Ambiguous(
            f"{len(models)} .mindir files ({_names(p.name for p in models)}): one model per submission"
        )
    mindir = models[0] if models else None
    if not runs:
        if mindir is None:
            raise Ambiguous(f"no profiler run and no .mindir found (found: {describe(root)})")
        return Plan(kind="model", mindir=mindir)
    plan = _single(runs[0]) if len(runs) == 1 else _pair(runs)
    if mindir is None:
        return plan
    return Plan(plan.kind + "+model", plan.baseline, plan.target, mindir, plan.baseline_role, plan.message)


def _open(path: Path, workspace: Workspace) -> Path:
    """The submission as a folder: a folder as is, an archive extracted."""
    if path.is_dir():
        return path
    if path.is_file() and archive_kind(path) is not None:
        return materialize(path, workspace)
    raise Ambiguous(
        "is neither a folder, an archive (.zip, .tar, .tar.gz) nor a .mindir file", path=path.name
    )


def _runs_below(root: Path, prefix: str, workspace: Workspace) -> list[RunPart]:
    """The runs in a folder and in the archives inside it (not archives inside those)."""
    runs = split_runs(root, prefix)
    for archive in sorted(_archives(root)):
        name = _join(prefix, archive.relative_to(root).as_posix())
        runs += split_runs(materialize(archive, workspace), name)
    return runs


def _archives(root: Path) -> list[Path]:
    """Archive files anywhere below `root`, judged by name and then confirmed by their first bytes."""
    named = (p for p in root.rglob("*") if p.is_file() and p.name.lower().endswith(ARCHIVE_SUFFIXES))
    return [path for path in named if archive_kind(path) is not None]


def split_runs(folder: Path, name: str = "") -> list[RunPart]:
    """The runs under `folder`: one when every candidate belongs to one run, else one list per
    sub-folder (recursively). Several runs side by side in one folder level are ambiguous."""
    candidates = find_runs(folder)
    if not candidates:
        return []
    if _one_run(candidates):
        return [RunPart(name or folder.name, folder, candidates[0].layout)]
    resolved = folder.resolve()
    children: dict[str, list[Candidate]] = {}
    for cand in candidates:
        relative = cand.root.resolve().relative_to(resolved)
        if not relative.parts:
            raise Ambiguous(f"{name or 'the submission'} holds several runs in one folder")
        children.setdefault(relative.parts[0], []).append(cand)
    runs: list[RunPart] = []
    for child in sorted(children):
        runs += split_runs(folder / child, _join(name, child))
    return runs


def _one_run(candidates: list[Candidate]) -> bool:
    """One candidate, or the distinct ranks of one layout (a multi-rank run)."""
    if len(candidates) == 1:
        return True
    ranks = [c.rank for c in candidates]
    return len({c.layout for c in candidates}) == 1 and None not in ranks and len(set(ranks)) == len(ranks)


def role_hint(name: str) -> str | None:
    """'baseline' or 'target' when the words of a name say so unambiguously, else None."""
    words = set(re.split(r"[^a-z]+", name.lower()))
    baseline, target = bool(words & BASELINE_WORDS), bool(words & TARGET_WORDS)
    if baseline == target:
        return None
    return "baseline" if baseline else "target"


def _single(run: RunPart) -> Plan:
    """One run, diagnosed on its own as the inference run."""
    return Plan(kind="single", target=run.folder, message=f"one run ({run.layout})")


def _pair(runs: list[RunPart]) -> Plan:
    """A pair from two runs (or from two runs named as baseline and target among more)."""
    hints = {run.name: role_hint(run.name) for run in runs}
    baselines = [run for run in runs if hints[run.name] == "baseline"]
    targets = [run for run in runs if hints[run.name] == "target"]
    named = len(baselines) == 1 and len(targets) == 1
    if len(runs) > 2 and not named:
        raise Ambiguous(
            f"{len(runs)} runs ({_names(run.name for run in runs)}) and their names do not say which is the "
            "baseline and which the target",
            expected="two runs, in folders named e.g. train/ and infer/ (or baseline/ and target/)",
        )
    if named:
        base, target = baselines[0], targets[0]
        ignored = [run.name for run in runs if run not in (base, target)]
        message = f"roles from names: baseline {base.name}, target {target.name}"
        if ignored:
            message += f"; ignored {_names(ignored)}"
        return Plan(
            kind="pair", baseline=base.folder, target=target.folder, baseline_role="first", message=message
        )
    first, second = runs
    message = f"runs {first.name} and {second.name}; the training run is the baseline"
    return Plan(kind="pair", baseline=first.folder, target=second.folder, message=message)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def _names(names: Iterable[str]) -> str:
    """Up to MAX_LISTED names, then how many more."""
    items = sorted(names)
    text = ", ".join(items[:MAX_LISTED])
    return text + (f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")

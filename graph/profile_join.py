"""Cross-link fusion chains with a profiled run: which chains ran fused, which as separate kernels.

Join key (profiler-formats.md §8): in GRAPH mode a kernel's name (CPU ``full_op_name``) equals the
MINDIR node's ``domain``. Both sides are normalised first: backward (``Gradients/``), optimizer and
loss ops are dropped; training and AMP wrappers are removed (``network-WithLossCell``,
``_backbone-<Net>``, ``X-_OutputTo16/_backbone-Y`` -> ``X-Y``). Ascend names ``<launch op>/<kernel>``
are also tried without their last segment. PyNative profiles carry no cell scopes: kernels are then
matched by op type and launch order, and the join is reported as approximate.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import pandas as pd

from core.model import Run
from core.symptoms import Emits, Kind, Symptom, SymptomValues
from core.text import say
from graph.model import Chain, MindirModel
from graph.patterns import FAMILY_OF


@dataclass(frozen=True, kw_only=True)
class ChainsRanSplit(SymptomValues):
    """Fusible chains ran as separate kernels in the profile; the BN/activation kernels' time is
    recoverable."""

    KIND = Kind("chains-ran-split", ("mindir_profile",), ("mindir-profile-split",))
    chains: int
    chains_split: int
    chains_partly_fused: int
    chains_fused: int
    chains_not_found: int
    separate_ms_per_step: float
    split_ms_per_step: float
    steps: int
    approximate: int
    cpu_run: int


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(ChainsRanSplit)

SOURCE = "mindir+profile"
WRAPPER_CLASSES = frozenset(
    {
        "WithLossCell",
        "WithEvalCell",
        "WithGradCell",
        "TrainOneStepCell",
        "TrainOneStepWithLossScaleCell",
        "_OutputTo16",
        "_OutputTo32",
        "_VirtualDatasetCell",
    }
)
AMP_MARKERS = ("_OutputTo16", "_OutputTo32")
EXCLUDED_SEGMENTS = ("optimizer-", "_loss_fn-")
MAX_EVIDENCE = 50
CPU_STRENGTH = 0.5  # the CPU backend never fuses Conv+BN: time is recoverable only elsewhere
APPROXIMATE_STRENGTH = 0.7

COLUMNS: dict[str, str] = {
    "chain": "int64[pyarrow]",
    "pattern": "string[pyarrow]",
    "ops": "string[pyarrow]",
    "anchor_scope": "string[pyarrow]",
    "fusible": "bool[pyarrow]",
    "blocked_reason": "string[pyarrow]",
    "status": "string[pyarrow]",  # fused | split | partly-fused | not-found
    "matched_nodes": "int64[pyarrow]",
    "separate_kernels": "int64[pyarrow]",  # chain nodes after the anchor that ran as their own kernels
    "separate_us_per_step": "double[pyarrow]",
    "recoverable_us_per_step": "double[pyarrow]",  # separate time of fusible chains
    "separate_kernel_names": "string[pyarrow]",
    "join": "string[pyarrow]",  # scope | op-type-order
}


def normalise_scope(scope: str) -> str | None:
    """Wrapper-free scope used as the join key; None for backward, optimizer and loss ops."""
    if not scope or scope.startswith("Gradients/"):
        return None
    parts = scope.split("/")
    out: list[str] = []
    i = 0
    while i < len(parts):
        segment = parts[i]
        if segment.startswith(EXCLUDED_SEGMENTS):
            return None
        attr, _, cls = segment.partition("-")
        nxt = parts[i + 1] if i + 1 < len(parts) else ""
        if cls in AMP_MARKERS and attr != "_backbone" and nxt.startswith("_backbone-"):
            out.append(f"{attr}-{nxt[len('_backbone-') :]}")
            i += 2
            continue
        if attr != "_backbone" and cls not in WRAPPER_CLASSES:
            out.append(segment)
        i += 1
    return "/".join(out)


def kernel_op_type(name: str) -> str:
    """Operator type from a kernel name: last segment without its ``-op<N>`` suffix."""
    last = name.rsplit("/", 1)[-1]
    head, sep, tail = last.rpartition("-op")
    return head if sep and tail.isdigit() else last


def crosslink(model: MindirModel, chains: list[Chain], run: Run) -> tuple[pd.DataFrame, list[Symptom]]:
    """One row per chain with its kernel status and time, plus a `chains-ran-split` symptom."""
    kernels = _forward_kernels(run.kernels)
    if not chains or kernels.empty:
        return _frame([]), []
    steps = max(run.step_count, 1)
    scope_times = _scope_times(model, chains, kernels, steps)
    unscoped = not kernels["name"].str.count("/").ge(2).any()
    matched = any(n in scope_times for c in chains for n in c.nodes)
    pynative = run.meta.execution_mode == "pynative" or (unscoped and not matched)
    times = _order_times(model, chains, kernels, steps) if pynative else scope_times
    join = "op-type-order" if pynative else "scope"
    rows = [_row(i, c, times, join) for i, c in enumerate(chains)]
    table = _frame(rows)
    symptom = _split_symptom(table, steps, run, approximate=pynative)
    return table, [symptom] if symptom else []


def _forward_kernels(kernels: pd.DataFrame) -> pd.DataFrame:
    """Kernels with a name and a duration, each with its normalised join keys and op type."""
    if kernels.empty:
        return kernels
    frame = kernels[kernels["name"].notna() & kernels["duration_us"].notna()]
    names = frame["name"].astype(str)
    scopes = frame["scope"].astype("string").fillna(names)
    unique = {s: normalise_scope(s) for s in pd.unique(scopes)}
    prefix = {n: normalise_scope(n.rsplit("/", 1)[0]) if "/" in n else None for n in pd.unique(names)}
    op_types = frame["op_type"].astype("string")
    derived = names.map(kernel_op_type)
    out = pd.DataFrame(
        {
            "name": names.to_numpy(),
            "key": scopes.map(unique).to_numpy(),
            "prefix_key": names.map(prefix).to_numpy(),
            "op": op_types.fillna(derived).to_numpy(),
            "step": frame["step"].to_numpy(),
            "start_us": frame["start_us"].to_numpy(),
            "duration_us": frame["duration_us"].astype(float).to_numpy(),
        }
    )
    excluded = names.str.startswith("Gradients/").to_numpy() | (
        out["key"].isna() & names.str.contains("/").to_numpy()
    )
    return out[~excluded].reset_index(drop=True)


def _scope_times(
    model: MindirModel, chains: list[Chain], kernels: pd.DataFrame, steps: int
) -> dict[str, tuple[float, list[str]]]:
    """Per chain node: (kernel microseconds per step, kernel names) joined by normalised scope."""
    g = model.graph
    wanted: dict[str, list[str]] = defaultdict(list)
    for chain in chains:
        for node in chain.nodes:
            key = normalise_scope(g.nodes[node].get("scope", ""))
            if key:
                wanted[key].append(node)
    sharing = Counter({key: len(set(nodes)) for key, nodes in wanted.items()})
    key = kernels["key"].where(kernels["key"].isin(wanted.keys()), kernels["prefix_key"])
    matched = kernels.assign(join_key=key)[key.isin(wanted.keys())]
    totals = matched.groupby("join_key")["duration_us"].sum()
    names = matched.groupby("join_key")["name"].agg(lambda s: sorted(set(s)))
    result: dict[str, tuple[float, list[str]]] = {}
    for join_key, nodes in wanted.items():
        if join_key in totals.index:
            per_step = float(totals[join_key]) / steps / sharing[join_key]  # lazy_inline copies share a scope
            for node in nodes:
                result[node] = (per_step, names[join_key])
    return result


def _order_times(
    model: MindirModel, chains: list[Chain], kernels: pd.DataFrame, steps: int
) -> dict[str, tuple[float, list[str]]]:
    """Per chain node, matched by op type and order: the i-th node of a type gets the i-th launch."""
    g = model.graph
    chain_nodes = {n for c in chains for n in c.nodes}
    order: dict[str, list[str]] = defaultdict(list)
    for node, data in g.nodes(data=True):
        if data.get("kind") == "op":
            order[data.get("op")].append(node)  # pyright: ignore[reportArgumentType]  # op nodes carry an op
    frame = kernels.sort_values(["step", "start_us"], na_position="first", kind="stable")
    has_step = frame["step"].notna().any()
    ordinal = frame.groupby(["step", "op"] if has_step else ["op"], dropna=False).cumcount()
    if not has_step:  # no step ids: assume every step launches each node of a type once, in order

        def launches(op: object) -> int:  # op: str or NA
            return max(len(order.get(op, ())) if isinstance(op, str) else 0, 1)

        per_type = frame["op"].map(launches)
        ordinal = ordinal % per_type
    frame = frame.assign(ordinal=ordinal.to_numpy())
    totals = frame.groupby(["op", "ordinal"])["duration_us"].sum()
    names = frame.groupby(["op", "ordinal"])["name"].agg(lambda s: sorted(set(s)))
    result: dict[str, tuple[float, list[str]]] = {}
    for op, nodes in order.items():
        for i, node in enumerate(nodes):
            if node in chain_nodes and (op, i) in totals.index:
                result[node] = (float(totals[(op, i)]) / steps, names[(op, i)])
    return result


def _row(index: int, chain: Chain, times: dict[str, tuple[float, list[str]]], join: str) -> dict[str, Any]:
    anchor_found = chain.anchor in times
    separate = [times[n] for n in chain.nodes[1:] if n in times]
    us = sum(t for t, _ in separate)
    if not separate:
        status = "fused" if anchor_found else "not-found"
    elif len(separate) == len(chain.nodes) - 1:
        status = "split"
    else:
        status = "partly-fused"
    return {
        "chain": index,
        "pattern": chain.pattern,
        "ops": ">".join(chain.ops),
        "anchor_scope": chain.scopes[0],
        "fusible": chain.fusible,
        "blocked_reason": chain.blocked_reason,
        "status": status,
        "matched_nodes": anchor_found + len(separate),
        "separate_kernels": len(separate),
        "separate_us_per_step": us,
        "recoverable_us_per_step": us if chain.fusible else 0.0,
        "separate_kernel_names": ";".join(name for _, names in separate for name in names),
        "join": join,
    }


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return frame.astype(COLUMNS)


def _split_symptom(table: pd.DataFrame, steps: int, run: Run, approximate: bool) -> Symptom | None:
    """`chains-ran-split` over the linear chains; decomposed DAG patterns (attention, norms, ...) have rows
    in the table but their own symptoms and rules (graph.hygiene), so they are left out of it."""
    table = table[~table["pattern"].isin(FAMILY_OF.keys())]
    split = table[table["separate_kernels"] > 0]
    if split.empty:
        return None
    counts = table["status"].value_counts()
    separate_ms = float(table["separate_us_per_step"].sum()) / 1000
    recoverable_ms = float(table["recoverable_us_per_step"].sum()) / 1000
    cpu = run.meta.device == "CPU"
    summary = say(
        "mindir-profile-split",
        split=len(split),
        of=len(table),
        separate_ms=separate_ms,
        recoverable_ms=recoverable_ms,
        cpu=say("mindir.cpu-never-fuses") if cpu else "",
        approximate=say("mindir.approximate") if approximate else "",
    )
    strength = (
        len(split)
        / len(table)
        * (CPU_STRENGTH if cpu else 1.0)
        * (APPROXIMATE_STRENGTH if approximate else 1.0)
    )
    top = split.sort_values("separate_us_per_step", ascending=False).head(MAX_EVIDENCE)
    evidence = tuple(
        {str(k): (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
        for row in top.to_dict("records")
    )
    return ChainsRanSplit(
        chains=len(table),
        chains_split=int(counts.get("split", 0)),
        chains_partly_fused=int(counts.get("partly-fused", 0)),
        chains_fused=int(counts.get("fused", 0)),
        chains_not_found=int(counts.get("not-found", 0)),
        separate_ms_per_step=round(separate_ms, 6),
        split_ms_per_step=round(recoverable_ms, 6),
        steps=steps,
        approximate=int(approximate),
        cpu_run=int(cpu),
    ).symptom(
        summary,
        SOURCE,
        round(strength, 4),
        evidence=evidence,
        recoverable_ms_per_step=round(recoverable_ms, 6),
    )


# ----------------------------------------------------------------------- does the model belong here?

# Below this matched share the MINDIR is not the profiled model: its cross-link is dropped.
MODEL_MATCH_MIN = 0.5
# Compute operators whose count a fusion pass does not change (one kernel each, fused or not).
ANCHOR_OPS = frozenset({"Conv2D", "Conv3D", "Conv2DFusion", "MatMul", "MatMulV2", "BatchMatMul", "Dense"})


def model_match(model: MindirModel, run: Run) -> tuple[float, str] | None:
    """How much of the model the profile ran, and how it was judged: by cell scopes when the profile's
    kernels carry them (the share of the model's cells the profile ran, or of the profile's time spent
    in the model's cells, whichever is lower), else by the count of Conv/MatMul operators per step
    (smaller over larger). None when neither can be judged."""
    kernels = _forward_kernels(run.kernels)
    if kernels.empty:
        return None
    g = model.graph
    ops = [d for _, d in g.nodes(data=True) if d.get("kind") == "op"]
    model_cells = {_cell(normalise_scope(d.get("scope", "")) or "") for d in ops} - {""}
    scoped = bool(kernels["name"].astype(str).str.count("/").ge(2).any())
    if scoped and model_cells:
        return _scope_share(model_cells, kernels), "scope"
    model_anchors = sum(1 for d in ops if d.get("op") in ANCHOR_OPS)
    profile_anchors = _anchors_per_step(kernels, max(run.step_count, 1))
    if not model_anchors and not profile_anchors:
        return None
    return min(model_anchors, profile_anchors) / max(model_anchors, profile_anchors), "op-count"


def _cell(scope: str) -> str:
    """The cell path of a scope: everything before its last segment (the op)."""
    return scope.rsplit("/", 1)[0] if "/" in scope else ""


def _scope_share(model_cells: set[str], kernels: pd.DataFrame) -> float:
    cells = kernels["key"].astype("string").fillna("").map(_cell)
    prefix = kernels["prefix_key"].astype("string").fillna("").map(_cell)
    inside = (cells.isin(model_cells) | prefix.isin(model_cells)).to_numpy()
    ran = set(cells[inside]) | set(prefix[prefix.isin(model_cells)])
    model_side = len(ran & model_cells) / len(model_cells)
    total = float(kernels["duration_us"].sum())
    profile_side = float(kernels.loc[inside, "duration_us"].sum()) / total if total > 0 else 0.0
    return min(model_side, profile_side)


def _anchors_per_step(kernels: pd.DataFrame, steps: int) -> float:
    """Conv/MatMul launches per step (a kernel's type, or its name's last part when there is none)."""
    op = kernels["op"].astype(str)
    hits = op.isin(ANCHOR_OPS) | op.str.contains(r"^(?:Conv2D|Conv3D|MatMul|BatchMatMul)", regex=True)
    return float(hits.sum()) / steps

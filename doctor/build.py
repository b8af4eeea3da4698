"""Turn analysis objects (runs, comparison, symptoms, model, diagnosis) into the report document's parts.

Each part is built as its typed report model (doctor.model) with `Record.of` (`model_construct`: the key
order is the model's, nothing is validated here, which keeps a command-line report fast). `jsonable`
converts numpy/pandas scalars and drops NaN/inf first, so the document is valid JSON everywhere; the
golden test validates every pinned case's document against the model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import pandas as pd

from core import JsonObject, JsonValue, Limitation, Run, Symptom, in_lang, say
from diagnosis import Comparison, Side, headline_timing, leaderboard, phase_timing
from doctor.model import (
    OPERATOR_COLUMNS,
    BoardRow,
    Cause,
    Chain,
    Chains,
    Evidence,
    Explanation,
    Fix,
    Graph,
    Headline,
    Input,
    Leaderboards,
    OperatorRow,
    Parameters,
    PatternCount,
    PhaseTiming,
    ProfilerConfig,
    Reference,
    ReportWarning,
    RunInfo,
    Step,
    SymptomRecord,
    Tensor,
    Timing,
)
from doctor.model.graph import CrosslinkRow
from doctor.text import is_missing

if TYPE_CHECKING:
    import knowledge
    from graph import Chain as GraphChain
    from graph import MindirModel

MAX_EVIDENCE_ROWS = 25  # rows kept per piece of evidence (the operator table has them all)
MAX_CHAIN_ITEMS = 500
LEADERBOARD_SIZE = 10


@overload
def jsonable(value: Mapping[str, object]) -> JsonObject: ...
@overload
def jsonable(value: object) -> JsonValue: ...
def jsonable(value: object) -> JsonValue:
    """`value` with numpy/pandas scalars made native, tuples made lists, NaN/inf/NA made None."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if is_missing(value):
        return None
    return str(value)


# ---------------------------------------------------------------------------------------------- runs


def run_meta(run: Run, side: Side, role: str) -> RunInfo:
    """What a run is (layout, device, mode, phase, profiler settings) and its headline numbers."""
    meta, cfg = run.meta, run.meta.config
    fields = jsonable(
        {
            "role": role,
            "source": meta.source,
            "layout": meta.layout,
            "device": meta.device,
            "framework": meta.framework,
            "framework_version": meta.framework_version,
            "rank": meta.rank,
            "ranks_available": list(meta.ranks_available),
            "execution_mode": meta.execution_mode,
            "phase": meta.phase,
            "jit_level": meta.jit_level,
            "amp": dict(meta.amp),
            "profiler_config": {
                "recorded": cfg.recorded,
                "level": cfg.level,
                "aic_metrics": cfg.aic_metrics,
                "activities": list(cfg.activities) if cfg.activities is not None else None,
                "with_stack": cfg.with_stack,
                "profile_memory": cfg.profile_memory,
                "data_process": cfg.data_process,
                "record_shapes": cfg.record_shapes,
                "schedule": cfg.schedule,
            },
            "steps": side.steps,
            "batch": side.batch,
            "ms_per_step": round(side.ms_per_step, 4),
            "kernel_launches": len(run.kernels),
            "operators": len(side.ops),
            "files": list(meta.files),
        }
    )
    return RunInfo.of(**{**fields, "profiler_config": ProfilerConfig.of(**fields["profiler_config"])})


def input_entry(role: str, name: str, kind: str, layout: str | None) -> Input:
    """One user input: its role, display name, kind (profile / mindir) and detected layout."""
    return Input.of(role=role, name=name, kind=kind, layout=layout)


def pair_timing(comparison: Comparison) -> Timing:
    """Per-step operator time of both sides, their ratio (and per sample) and how well they aligned."""
    base, target = comparison.baseline, comparison.target
    ratio = target.ms_per_step / base.ms_per_step if base.ms_per_step > 0 else None
    per_sample = None
    if comparison.per_sample and ratio is not None and base.batch and target.batch:  # per_sample: both known
        per_sample = ratio * base.batch / target.batch
    align = comparison.alignment
    phases = phase_timing(comparison)
    fields = jsonable(
        {
            "baseline_ms_per_step": round(base.ms_per_step, 4),
            "target_ms_per_step": round(target.ms_per_step, 4),
            "ratio": None if ratio is None else round(ratio, 4),
            "per_sample_ratio": None if per_sample is None else round(per_sample, 4),
            "baseline_batch": base.batch,
            "target_batch": target.batch,
            "baseline_phase": base.run.meta.phase,
            "target_phase": target.run.meta.phase,
            "alignment_method": align.method,
            "matched_share_baseline": round(align.baseline_matched_share, 4),
            "matched_share_target": round(align.target_matched_share, 4),
            "headline": headline_timing(comparison),
            **_phase_fields(phases),
        }
    )
    fields["headline"] = Headline.of(**fields["headline"])
    if "phases" in fields:
        fields["phases"] = [PhaseTiming.of(**row) for row in fields["phases"]]
    return Timing.of(**fields)


def _phase_fields(phases: tuple[Sequence[Mapping[str, object]], float | None] | None) -> dict[str, Any]:
    """The timing's phase-by-phase comparison of a generation pair; nothing for other pairs (and no
    `phase_ratio` without a phase in common: the model leaves both out when null)."""
    if phases is None:
        return {}
    rows, ratio = phases
    fields: dict[str, Any] = {"phases": rows}
    if ratio is not None:
        fields["phase_ratio"] = round(ratio, 4)
    return fields


def single_timing(side: Side) -> Timing:
    """Timing of a lone run (the target); comparison fields are null."""
    fields = jsonable(
        {
            "baseline_ms_per_step": None,
            "target_ms_per_step": round(side.ms_per_step, 4),
            "ratio": None,
            "per_sample_ratio": None,
            "baseline_batch": None,
            "target_batch": side.batch,
            "baseline_phase": None,
            "target_phase": side.run.meta.phase,
            "alignment_method": None,
            "matched_share_baseline": None,
            "matched_share_target": None,
            "headline": None,
        }
    )
    return Timing.of(**fields)


# ----------------------------------------------------------------------------------------- operators


def operator_records(table: pd.DataFrame, lang: str = "en") -> list[OperatorRow]:
    """The comparison table reduced to the report's columns, in its order (largest |delta| first), with
    the one-side reasons in `lang`."""
    if lang != "en" and "one_side_reason" in table:
        table = table.assign(one_side_reason=table["one_side_reason"].map(lambda text: in_lang(text, lang)))
    return _records(table)


def single_operator_records(side: Side) -> list[OperatorRow]:
    """A lone run's operators as target-only rows of the report table, slowest first."""
    ops = side.ops.sort_values("us_per_step", ascending=False, kind="stable")
    total = float(ops["us_per_step"].sum())
    frame = pd.DataFrame(
        {
            "operator": ops.index.astype(str),
            "op_type": ops["op_type"].astype("object"),
            "match": "single",
            "target_us_per_step": ops["us_per_step"].astype("float64"),
            "target_share": ops["us_per_step"].astype("float64") / total if total > 0 else 0.0,
            "target_rank": np.arange(1, len(ops) + 1),
            "target_launches_per_step": ops["launches_per_step"].astype("float64"),
            "target_input_shapes": ops["input_shapes"].astype("object"),
            "target_input_dtypes": ops["input_dtypes"].astype("object"),
            "target_input_formats": ops["input_formats"].astype("object"),
            "target_core": ops["core"].astype("object"),
        }
    ).reset_index(drop=True)
    return _records(frame)


def _records(frame: pd.DataFrame) -> list[OperatorRow]:
    """One row per operator with the report's columns (OperatorRow's fields), built column by column (a
    per-cell conversion of a few thousand operators costs more than the whole alignment)."""
    names = [name for name, _ in OPERATOR_COLUMNS]
    columns = [_column(frame, name, kind) for name, kind in OPERATOR_COLUMNS]
    row = OperatorRow.of_ordered
    return [row(dict(zip(names, values, strict=True))) for values in zip(*columns, strict=True)]


def _column(frame: pd.DataFrame, name: str, kind: str) -> list[Any]:
    """One report column as native values: typed, missing as None, with a neutral value when absent."""
    if name not in frame.columns:
        neutral = False if kind == "boolean" else "" if name == "one_side_reason" else None
        return [neutral] * len(frame)
    col = frame[name]
    if kind == "boolean":
        return col.astype("boolean").fillna(False).astype(bool).tolist()
    if kind in ("number", "integer"):
        values = pd.to_numeric(col, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
        native = int if kind == "integer" else float
        return [native(v) if math.isfinite(v) else None for v in values.tolist()]
    present = col.notna().to_numpy()
    return [str(v) if keep else None for v, keep in zip(col.astype(object).tolist(), present, strict=True)]


def leaderboards(
    table: pd.DataFrame | None, sides: Iterable[str], single: Side | None = None
) -> Leaderboards:
    """Top operators of each side by time per step (single-run reports fill only the target)."""
    out: dict[str, list[BoardRow]] = {"baseline": [], "target": []}
    if single is not None:
        ops = single.ops.nlargest(LEADERBOARD_SIZE, "us_per_step")
        total = float(single.ops["us_per_step"].sum()) or 1.0
        out["target"] = [
            _board_row(i, str(key), row["op_type"], row["us_per_step"], row["us_per_step"] / total)
            for i, (key, row) in enumerate(ops.iterrows(), start=1)
        ]
        return Leaderboards.of(**out)
    if table is None:  # a pair always has its table: nothing to rank without one
        return Leaderboards.of(**out)
    for side in sides:
        board = leaderboard(table, side, LEADERBOARD_SIZE)
        columns = (board[c].tolist() for c in ("operator", "op_type", f"{side}_us_per_step", f"{side}_share"))
        out[side] = [_board_row(i, *row) for i, row in enumerate(zip(*columns, strict=True), start=1)]
    return Leaderboards.of(**out)


def _board_row(rank: int, operator: str, op_type: Any, us: Any, share: Any) -> BoardRow:
    fields = {"rank": rank, "operator": str(operator), "op_type": op_type, "us_per_step": us, "share": share}
    return BoardRow.of(**jsonable(fields))


# --------------------------------------------------------------------------------------------- steps


def step_records(side: Side, role: str) -> list[Step]:
    """Per step: wall time, busy and idle time from the profile, and the compared operators' time."""
    op_ms = (side.step_samples.sum(axis=0) / 1000.0) if not side.step_samples.empty else pd.Series()
    steps = side.run.steps
    if not len(steps):
        return [
            _step(role, int(step), None, None, None, ms)
            for step, ms in zip(op_ms.index.tolist(), _ms_list(op_ms, 1.0), strict=True)
        ]
    by_step = dict(zip(op_ms.index.tolist(), _ms_list(op_ms, 1.0), strict=True))
    ids = steps["step"].astype("int64").tolist()
    wall, busy, free = (
        _ms_list(steps[name], 1000.0) if name in steps else [None] * len(ids)
        for name in ("duration_us", "busy_us", "free_us")
    )
    return [
        _step(role, step, w, b, f, by_step.get(step))
        for step, w, b, f in zip(ids, wall, busy, free, strict=True)
    ]


def _step(role: str, step: int, wall: float | None, busy: float | None, free: float | None, op: Any) -> Step:
    fields = {"role": role, "step": step, "wall_ms": wall, "busy_ms": busy, "free_ms": free, "op_ms": op}
    return Step.of_ordered(fields)


def _ms_list(values: pd.Series, divisor: float) -> list[float | None]:
    """values / divisor rounded to 4 places, missing and non-finite values as None."""
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype="float64", na_value=np.nan) / divisor
    return [round(v, 4) if math.isfinite(v) else None for v in numbers.tolist()]


# -------------------------------------------------------------------------------------------- causes


def cause_records(causes: Sequence[knowledge.Cause], lang: str) -> list[Cause]:
    """Ranked causes in `lang`, numbered from 1, with evidence rows capped."""
    out = []
    for rank, cause in enumerate(causes, start=1):
        item = cause.to_dict(lang)
        del item["default_severity"]  # the rule's own severity: the knowledge base's, not the report's
        evidence = [_capped(_said_piece(piece, lang), "rows", "rows_total") for piece in item["evidence"]]
        section = "ranked" if item["significant"] else "below-threshold"
        fields = jsonable({**item, "rank": rank, "section": section, "evidence": evidence})
        out.append(
            Cause.of(
                **{
                    **fields,
                    "evidence": [Evidence.of(**piece) for piece in fields["evidence"]],
                    "fix": Fix.of(**fields["fix"]),
                    "explanation": Explanation.of(**fields["explanation"]),
                    "references": [Reference.of(**ref) for ref in fields["references"]],
                }
            )
        )
    return out


def _said_piece(piece: dict[str, Any], lang: str) -> dict[str, Any]:
    """An evidence document with the symptom's summaries in `lang`."""
    return {
        **piece,
        "summary": in_lang(piece["summary"], lang),
        "baseline_summary": in_lang(piece.get("baseline_summary"), lang),
    }


def symptom_records(symptoms: Sequence[Symptom], lang: str = "en") -> list[SymptomRecord]:
    """Every symptom found, its summary in `lang`, evidence rows capped."""
    return [
        SymptomRecord.of(
            **jsonable(
                _capped({**s.to_dict(), "summary": in_lang(s.summary, lang)}, "evidence", "evidence_total")
            )
        )
        for s in symptoms
    ]


def _capped(item: dict[str, Any], rows: str, total: str) -> dict[str, Any]:
    """`item` with its list `rows` cut to MAX_EVIDENCE_ROWS and the full count under `total`."""
    full = list(item.get(rows, []))
    return {**item, rows: full[:MAX_EVIDENCE_ROWS], total: len(full)}


# ------------------------------------------------------------------------------------------ warnings


def warning_records(
    undecided: Sequence[knowledge.Undecided],
    limitations: Sequence[tuple[str, Limitation]],
    notes: Sequence[str],
    model_warnings: Sequence[str],
    lang: str,
    mindir_given: bool = False,
) -> list[ReportWarning]:
    """'Cannot decide' questions first, then input limitations (merged across runs), notes, model notes.

    With `mindir_given` (a MINDIR that matches the profiles), a reader's remedy that asks for the MINDIR
    is replaced by what is still missing: advice never asks for an input that was given."""
    out: list[dict[str, Any]] = []
    for item in undecided:
        data = item.to_dict(lang)
        out.append(_warning("undecided", data["text"], data["remedy"], None, data["id"], []))
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for role, lim in limitations:
        key = (lim.topic, lim.reason)
        if key in merged:
            merged[key]["roles"].append(role)
        else:
            remedy = in_lang(_remedy(lim.remedy, mindir_given), lang) or None
            merged[key] = _warning("limitation", in_lang(lim.reason, lang), remedy, lim.topic, None, [role])
    out.extend(merged.values())
    out.extend(_warning("note", in_lang(note, lang), None, None, None, []) for note in notes)
    out.extend(
        _warning("model", in_lang(text, lang), None, None, None, ["mindir"]) for text in model_warnings
    )
    return [ReportWarning.of(**jsonable(w)) for w in out]


# Reader remedies that ask for the MINDIR, and what to say instead when one was given (None: nothing).
_WITH_MINDIR = {"remedy.mindir-or-level1": "remedy.level1-with-mindir", "remedy.mindir": None}


def _remedy(remedy: Any, mindir_given: bool) -> Any:
    """A limitation's remedy, without the request for a MINDIR that was given."""
    key = getattr(remedy, "key", None)
    if not mindir_given or key not in _WITH_MINDIR:
        return remedy
    other = _WITH_MINDIR[key]
    return say(other) if other else ""


def _warning(
    kind: str, text: str, remedy: str | None, topic: str | None, rule: str | None, roles: list[str]
) -> dict[str, Any]:
    return {"kind": kind, "text": text, "remedy": remedy, "topic": topic, "rule": rule, "roles": roles}


# --------------------------------------------------------------------------------------------- graph


def graph_section(
    model: MindirModel, chains: Sequence[GraphChain], name: str, links: pd.DataFrame | None, lang: str = "en"
) -> Graph:
    """What the MINDIR is, its fusion chains by pattern (why one is blocked said in `lang`), and (with a
    profile) how each chain ran."""
    by_pattern: dict[str, dict[str, Any]] = {}
    for chain in chains:
        row = by_pattern.setdefault(chain.pattern, {"pattern": chain.pattern, "count": 0, "fusible": 0})
        row["count"] += 1
        row["fusible"] += int(chain.fusible)
    patterns = sorted(by_pattern.values(), key=lambda r: (-r["count"], r["pattern"]))
    for row in patterns:
        row["blocked"] = row["count"] - row["fusible"]
        fused = sorted({c.replaced_by for c in chains if c.pattern == row["pattern"] and c.replaced_by})
        if fused:
            row["replaced_by"] = ", ".join(fused)
    fusible = sum(int(c.fusible) for c in chains)
    ops = model.op_nodes()
    fields = jsonable(
        {
            "file": name,
            "producer": model.producer,
            "model_version": model.model_version,
            "mind_ir_version": model.mind_ir_version,
            "training": model.training,
            "inputs": [_tensor(t) for t in model.inputs],
            "outputs": [_tensor(t) for t in model.outputs],
            "op_nodes": len(ops),
            "op_counts": dict(sorted(model.op_counts.items(), key=lambda kv: (-kv[1], kv[0]))),
            "parameters": {
                "count": model.parameters.count,
                "total_bytes": model.parameters.total_bytes,
                "absent": model.parameters.absent,
            },
            "chains": {
                "total": len(chains),
                "fusible": fusible,
                "blocked": len(chains) - fusible,
                "by_pattern": patterns,
                "items": [_chain_item(c, lang) for c in list(chains)[:MAX_CHAIN_ITEMS]],
            },
            "crosslink": None if links is None else links.to_dict("records"),
        }
    )
    chains_found = fields["chains"]
    return Graph.of(
        **{
            **fields,
            "inputs": [Tensor.of(**t) for t in fields["inputs"]],
            "outputs": [Tensor.of(**t) for t in fields["outputs"]],
            "parameters": Parameters.of(**fields["parameters"]),
            "chains": Chains.of(
                **{
                    **chains_found,
                    "by_pattern": [PatternCount.of(**row) for row in chains_found["by_pattern"]],
                    "items": [Chain.of(**item) for item in chains_found["items"]],
                }
            ),
            "crosslink": None
            if fields["crosslink"] is None
            else [CrosslinkRow.of(**r) for r in fields["crosslink"]],
        }
    )


def _chain_item(chain: Any, lang: str) -> dict[str, Any]:
    """One chain of the graph section, why it is blocked said in `lang`."""
    return {**chain.to_dict(), "blocked_reason": in_lang(chain.blocked_reason, lang)}


def _tensor(info: Any) -> dict[str, Any]:
    return {"name": info.name, "dtype": info.dtype, "shape": list(info.shape)}

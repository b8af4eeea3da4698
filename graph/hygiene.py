"""Export-hygiene checks on a MINDIR graph, each a Symptom (source "mindir") with node evidence.

Kinds: mindir-train-mode, mindir-fp32-compute / mindir-low-precision, mindir-dynamic-input,
mindir-float64-input, mindir-cast-ops, mindir-aicpu-risk, mindir-fusible-chains (linear chains)
and, from the DAG patterns, mindir-unfused-attention, mindir-unfused-norm,
mindir-decomposed-activation. Values are plain
numbers so knowledge rules can threshold on them; evidence lists at most MAX_EVIDENCE items.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from core.symptoms import Emits, Kind, Symptom, SymptomValues, spread
from core.text import join, say
from graph.aicpu import matching_rules
from graph.chains import OP_GROUPS, PATTERNS, chain_counts
from graph.dtypes import LOW_PRECISION
from graph.model import Chain, MindirModel, OpGraph, TensorInfo, node_args
from graph.patterns import FAMILY_OF


def _pattern_names(*families: str) -> tuple[str, ...]:
    """The DAG patterns' names of `families` (graph.patterns), each once: the keys a count may have."""
    return tuple(dict.fromkeys(name for name, family in FAMILY_OF.items() if family in families))


@dataclass(frozen=True, kw_only=True)
class MindirTrainMode(SymptomValues):
    """Exported in training mode: BatchNorm is_training=True or Dropout nodes."""

    KIND = Kind("mindir-train-mode", ("mindir",), ("mindir-train-mode",))
    bn_training: int
    bn_total: int
    dropout_ops: int
    graph_training_flag: int


@dataclass(frozen=True, kw_only=True)
class MindirFp32Compute(SymptomValues):
    """Compute ops output FP32 and there is no Cast: exported without mixed precision."""

    KIND = Kind("mindir-fp32-compute", ("mindir",), ("mindir-fp32-compute",))
    compute_ops: int
    fp32_compute_ops: int
    casts: int
    fp32_parameters: int


@dataclass(frozen=True, kw_only=True)
class MindirLowPrecision(SymptomValues):
    """Compute ops run in FP16/BF16."""

    KIND = Kind("mindir-low-precision", ("mindir",), ("mindir-low-precision",))
    compute_ops: int
    low_precision_compute_ops: int
    float16_compute_ops: int
    bfloat16_compute_ops: int
    casts_to_low_precision: int
    low_precision_parameters: int


@dataclass(frozen=True, kw_only=True)
class MindirDynamicInput(SymptomValues):
    """Graph inputs have dynamic (-1) dimensions."""

    KIND = Kind("mindir-dynamic-input", ("mindir",), ("mindir-dynamic-input",))
    dynamic_inputs: int
    dynamic_dims: int
    inputs: int


@dataclass(frozen=True, kw_only=True)
class MindirFloat64Input(SymptomValues):
    """A graph input is float64."""

    KIND = Kind("mindir-float64-input", ("mindir",), ("mindir-float64-input",))
    float64_inputs: int
    inputs: int


@dataclass(frozen=True, kw_only=True)
class MindirCastOps(SymptomValues):
    """Many Cast nodes relative to compute ops."""

    KIND = Kind("mindir-cast-ops", ("mindir",), ("mindir-cast-ops",))
    casts: int
    compute_ops: int
    casts_per_compute_op: float


@dataclass(frozen=True, kw_only=True)
class MindirAicpuRisk(SymptomValues):
    """Ops that fall back to AI CPU on Ascend for the dtypes used."""

    KIND = Kind("mindir-aicpu-risk", ("mindir",), ("mindir-aicpu-risk",))
    aicpu_risk_ops: int
    documented: int
    heuristic: int


@dataclass(frozen=True, kw_only=True)
class MindirFusibleChains(SymptomValues):
    """Conv/BN/activation (and MatMul) chains that an inference compiler should fuse."""

    KIND = Kind("mindir-fusible-chains", ("mindir",), ("mindir-fusible-chains",))
    counts: dict[str, int] = field(
        default_factory=dict[str, int], metadata=spread(tuple(p.name for p in PATTERNS))
    )  # chains by pattern
    chains: int
    fusible: int
    blocked: int
    depthwise: int
    casts_in_chains: int


@dataclass(frozen=True, kw_only=True)
class MindirUnfusedAttention(SymptomValues):
    """Attention written as MatMul -> (scale) -> (mask) -> Softmax -> (Dropout) -> MatMul instead of
    one FlashAttentionScore / PromptFlashAttention / IncreFlashAttention."""

    KIND = Kind("mindir-unfused-attention", ("mindir",), ("mindir-decomposed",))
    patterns: int
    decode: int
    blocked: int
    casts_in_patterns: int


@dataclass(frozen=True, kw_only=True)
class MindirUnfusedNorm(SymptomValues):
    """LayerNorm or RMSNorm written out as ReduceMean/Pow/Sqrt|Rsqrt/Div|Mul/Add instead of one
    LayerNorm / RmsNorm op."""

    KIND = Kind("mindir-unfused-norm", ("mindir",), ("mindir-decomposed",))
    patterns: int
    counts: dict[str, int] = field(
        default_factory=dict[str, int], metadata=spread(_pattern_names("norm"))
    )  # patterns by name
    blocked: int


@dataclass(frozen=True, kw_only=True)
class MindirDecomposedActivation(SymptomValues):
    """GeLU (erf or tanh form), FastGelu, SiLU/Swish, a softmax outside attention or a rotary
    embedding written out as elementwise ops instead of one GeLU / FastGelu / SiLU / Softmax /
    RotaryPositionEmbedding op."""

    KIND = Kind("mindir-decomposed-activation", ("mindir",), ("mindir-decomposed",))
    patterns: int
    counts: dict[str, int] = field(
        default_factory=dict[str, int], metadata=spread(_pattern_names("activation", "rotary"))
    )  # patterns by name
    blocked: int


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(
    MindirTrainMode,
    MindirFp32Compute,
    MindirLowPrecision,
    MindirDynamicInput,
    MindirFloat64Input,
    MindirCastOps,
    MindirAicpuRisk,
    MindirFusibleChains,
    MindirUnfusedAttention,
    MindirUnfusedNorm,
    MindirDecomposedActivation,
)

SOURCE = "mindir"
MAX_EVIDENCE = 200
# Same ratio as the knowledge base's cast-overhead rule (Cast count > 2 x (#Conv + #MatMul)).
CASTS_PER_COMPUTE_OP = 2.0
DROPOUT_OPS = frozenset(
    {"Dropout", "DropoutExt", "DropoutGenMask", "DropoutDoMask", "StatelessDropOutGenMask"}
)
COMPUTE_OPS = OP_GROUPS["conv"] | OP_GROUPS["matmul"]
# pattern family -> (symptom kind, families counted in it, what the fused op is)
DECOMPOSED: dict[str, tuple[type[SymptomValues], tuple[str, ...], str]] = {
    "attention": (MindirUnfusedAttention, ("attention",), "one fused attention op"),
    "norm": (MindirUnfusedNorm, ("norm",), "one LayerNorm / RmsNorm op"),
    "activation": (MindirDecomposedActivation, ("activation", "rotary"), "one fused op"),
}


def hygiene_symptoms(model: MindirModel, chains: list[Chain]) -> list[Symptom]:
    """Every hygiene check that fires on this model, in a stable order."""
    checks: list[Callable[[], Symptom | None]] = [
        lambda: train_mode(model),
        lambda: precision(model),
        lambda: dynamic_input(model),
        lambda: float64_input(model),
        lambda: cast_ops(model),
        lambda: aicpu_risk(model),
        lambda: fusible_chains([c for c in chains if not c.replaced_by]),
        *(lambda family=family: decomposed(chains, family) for family in DECOMPOSED),
    ]
    return [s for s in (check() for check in checks) if s is not None]


def node_evidence(g: OpGraph, node: str, **extra: object) -> dict[str, object]:
    """JSON-able description of one graph node (id, op, scope, dtype, shape)."""
    data = g.nodes[node]
    shape = data.get("shape")
    return {
        "node": node,
        "op": data.get("op"),
        "scope": data.get("scope", ""),
        "dtype": data.get("dtype"),
        "shape": list(shape) if shape is not None else None,
        **extra,
    }


def _nodes(model: MindirModel, ops: frozenset[str]) -> list[str]:
    return [n for n, d in model.graph.nodes(data=True) if d.get("kind") == "op" and d.get("op") in ops]


def train_mode(model: MindirModel) -> Symptom | None:
    """BatchNorm with is_training=True or a Dropout node: the graph was exported in training mode."""
    g = model.graph
    bns = _nodes(model, OP_GROUPS["bn"])
    training = [n for n in bns if _is_training(g.nodes[n])]
    dropouts = _nodes(model, DROPOUT_OPS)
    if not training and not dropouts:
        return None
    parts = [say("mindir.training-bn", n=len(training), of=len(bns))] if training else []
    parts += [say("mindir.dropout", n=len(dropouts))] if dropouts else []
    evidence = [node_evidence(g, n, is_training=True) for n in training] + [
        node_evidence(g, n) for n in dropouts
    ]
    effect = say("mindir.effect-bn" if training else "mindir.effect-dropout")
    return MindirTrainMode(
        bn_training=len(training),
        bn_total=len(bns),
        dropout_ops=len(dropouts),
        graph_training_flag=int(bool(model.training)),
    ).symptom(
        say("mindir-train-mode", parts=join(parts, "sep.comma"), effect=effect),
        SOURCE,
        evidence=tuple(evidence[:MAX_EVIDENCE]),
    )


def _is_training(data: dict[str, Any]) -> bool:
    args = node_args(data)
    return bool(args.get("is_training", args.get("training", False)))


def precision(model: MindirModel) -> Symptom | None:
    """FP32 compute (no casts to fp16/bf16 anywhere) versus low-precision compute (AMP, to_float)."""
    g = model.graph
    compute = _nodes(model, COMPUTE_OPS)
    casts = _nodes(model, frozenset({"Cast"}))
    low_casts = [n for n in casts if node_args(g.nodes[n]).get("dst_dtype") in LOW_PRECISION]
    by_dtype = Counter(g.nodes[n].get("dtype") for n in compute)
    low_compute = [n for n in compute if g.nodes[n].get("dtype") in LOW_PRECISION]
    low_params = sum(count for dtype, count in model.parameters.dtypes.items() if dtype in LOW_PRECISION)
    if low_compute or low_casts or low_params:
        dtypes = sorted({str(g.nodes[n].get("dtype")) for n in low_compute} | _cast_targets(g, low_casts))
        return MindirLowPrecision(
            compute_ops=len(compute),
            low_precision_compute_ops=len(low_compute),
            float16_compute_ops=by_dtype.get("float16", 0),
            bfloat16_compute_ops=by_dtype.get("bfloat16", 0),
            casts_to_low_precision=len(low_casts),
            low_precision_parameters=low_params,
        ).symptom(
            say(
                "mindir-low-precision",
                dtypes=", ".join(dtypes) or say("mindir.low-params"),
                low=len(low_compute),
                of=len(compute),
                casts=len(low_casts),
                params=low_params,
            ),
            SOURCE,
            evidence=tuple(node_evidence(g, n) for n in [*low_compute, *low_casts][:MAX_EVIDENCE]),
        )
    if compute and by_dtype.get("float32", 0) == len(compute):
        return MindirFp32Compute(
            compute_ops=len(compute),
            fp32_compute_ops=len(compute),
            casts=len(casts),
            fp32_parameters=model.parameters.dtypes.get("float32", 0),
        ).symptom(
            say("mindir-fp32-compute", n=len(compute)),
            SOURCE,
            evidence=tuple(node_evidence(g, n) for n in compute[:MAX_EVIDENCE]),
        )
    return None


def _cast_targets(g: OpGraph, casts: list[str]) -> set[str]:
    return cast("set[str]", {node_args(g.nodes[n]).get("dst_dtype", "?") for n in casts})  # dtype names


def _input_evidence(info: TensorInfo) -> dict[str, Any]:
    return {"input": info.name, "dtype": info.dtype, "shape": list(info.shape)}


def dynamic_input(model: MindirModel) -> Symptom | None:
    """Graph inputs with -1 dims: the model will run dynamic-shape kernels."""
    dynamic = [i for i in model.inputs if i.dynamic]
    if not dynamic:
        return None
    dims = sum(1 for i in dynamic for d in i.shape if d < 0)
    names = ", ".join(f"{i.name}{list(i.shape)}" for i in dynamic)
    return MindirDynamicInput(
        dynamic_inputs=len(dynamic), dynamic_dims=dims, inputs=len(model.inputs)
    ).symptom(
        say("mindir-dynamic-input", names=names), SOURCE, evidence=tuple(_input_evidence(i) for i in dynamic)
    )


def float64_input(model: MindirModel) -> Symptom | None:
    """float64 graph inputs: numpy float64 fed in, cast on every call (or computed in double)."""
    doubles = [i for i in model.inputs if i.dtype == "float64"]
    if not doubles:
        return None
    return MindirFloat64Input(float64_inputs=len(doubles), inputs=len(model.inputs)).symptom(
        say("mindir-float64-input", names=", ".join(i.name for i in doubles)),
        SOURCE,
        evidence=tuple(_input_evidence(i) for i in doubles),
    )


def cast_ops(model: MindirModel) -> Symptom | None:
    """Many Cast nodes relative to Conv/MatMul ops (more than CASTS_PER_COMPUTE_OP per op)."""
    g = model.graph
    casts = _nodes(model, frozenset({"Cast"}))
    compute = len(_nodes(model, COMPUTE_OPS))
    ratio = len(casts) / max(compute, 1)
    if not casts or ratio <= CASTS_PER_COMPUTE_OP:
        return None
    targets = Counter(node_args(g.nodes[n]).get("dst_dtype", "?") for n in casts)
    return MindirCastOps(casts=len(casts), compute_ops=compute, casts_per_compute_op=round(ratio, 3)).symptom(
        say(
            "mindir-cast-ops",
            casts=len(casts),
            compute=compute,
            ratio=ratio,
            targets=", ".join(f"{k} x{v}" for k, v in targets.most_common()),
        ),
        SOURCE,
        min(1.0, ratio / (2 * CASTS_PER_COMPUTE_OP)),
        evidence=tuple(node_evidence(g, n, dst_dtype=node_args(g.nodes[n]).get("dst_dtype")) for n in casts)[
            :MAX_EVIDENCE
        ],
    )


def io_dtypes(g: OpGraph, node: str) -> tuple[list[str], list[str]]:
    """Dtypes of a node's tensor inputs (from their producers) and of its outputs."""
    inputs: list[str | None] = []
    for pred, edge in g.pred[node].items():
        inputs.append(_output_dtype(g.nodes[pred], edge.get("out_index")))
    data = g.nodes[node]
    outputs: list[str | None] = (
        [t[0] for t in data["out_types"]] if data.get("out_types") else [data.get("dtype")]
    )
    return [d for d in inputs if d], [d for d in outputs if d]


def _output_dtype(data: dict[str, Any], index: int | None) -> str | None:
    types = data.get("out_types")
    if index is not None and types and 0 <= index < len(types):
        return types[index][0]
    return data.get("dtype")


def aicpu_risk(model: MindirModel) -> Symptom | None:
    """Ops that the AI CPU fallback table (graph.aicpu) flags for the dtypes they use."""
    g = model.graph
    evidence: list[dict[str, Any]] = []
    confidences: Counter[str] = Counter()
    for node, data in g.nodes(data=True):
        if data.get("kind") != "op":
            continue
        inputs, outputs = io_dtypes(g, node)
        rules = matching_rules(data.get("op", ""), inputs, outputs)
        if rules:
            confidences[rules[0].confidence] += 1
            evidence.append(
                node_evidence(
                    g,
                    node,
                    input_dtypes=inputs,
                    output_dtypes=outputs,
                    rule=rules[0].source,
                    confidence=rules[0].confidence,
                )
            )
    if not evidence:
        return None
    ops = Counter(e["op"] for e in evidence)
    return MindirAicpuRisk(
        aicpu_risk_ops=len(evidence), documented=confidences["documented"], heuristic=confidences["heuristic"]
    ).symptom(
        say(
            "mindir-aicpu-risk",
            n=len(evidence),
            documented=confidences["documented"],
            heuristic=confidences["heuristic"],
            ops=", ".join(f"{op} x{n}" for op, n in ops.most_common()),
        ),
        SOURCE,
        0.8 if confidences["documented"] else 0.4,
        evidence=tuple(evidence[:MAX_EVIDENCE]),
    )


def fusible_chains(chains: list[Chain]) -> Symptom | None:
    """The fusion chains found: counts by pattern, how many are fusible, and why others are blocked."""
    if not chains:
        return None
    counts = chain_counts(chains)
    fusible = sum(c.fusible for c in chains)
    listed = ", ".join(f"{n} {p}" for p, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    values = MindirFusibleChains(
        counts=counts,
        chains=len(chains),
        fusible=fusible,
        blocked=len(chains) - fusible,
        depthwise=sum(c.depthwise for c in chains),
        casts_in_chains=sum(len(c.casts) for c in chains),
    )
    return values.symptom(
        say(
            "mindir-fusible-chains",
            n=len(chains),
            listed=listed,
            fusible=fusible,
            blocked=len(chains) - fusible,
        ),
        SOURCE,
        evidence=tuple(c.to_dict() for c in chains[:MAX_EVIDENCE]),
    )


def decomposed(chains: list[Chain], family: str) -> Symptom | None:
    """The DAG patterns of one family (graph.patterns): counts by pattern and the fused op of each."""
    declared, families, fused = DECOMPOSED[family]
    found = [c for c in chains if c.replaced_by and FAMILY_OF.get(c.pattern) in families]
    if not found:
        return None
    counts = chain_counts(found)
    by_op = Counter(c.replaced_by for c in found)
    blocked = sum(not c.fusible for c in found)
    listed = ", ".join(f"{n} {p}" for p, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    ops = ", ".join(f"{op} x{n}" for op, n in sorted(by_op.items(), key=lambda kv: (-kv[1], kv[0])))
    if declared is MindirUnfusedAttention:
        values: SymptomValues = MindirUnfusedAttention(
            patterns=len(found),
            decode=by_op.get("IncreFlashAttention", 0),
            blocked=blocked,
            casts_in_patterns=sum(len(c.casts) for c in found),
        )
    else:
        counted = MindirUnfusedNorm if declared is MindirUnfusedNorm else MindirDecomposedActivation
        values = counted(patterns=len(found), counts=counts, blocked=blocked)
    return values.symptom(
        say("mindir-decomposed", n=len(found), listed=listed, fused=fused, ops=ops),
        SOURCE,
        0.8 if family == "attention" else 0.6,
        evidence=tuple(c.to_dict() for c in found[:MAX_EVIDENCE]),
    )

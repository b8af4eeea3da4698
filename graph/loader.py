"""Load a .mindir file into a MindirModel with protobuf alone (MindSpore is never imported).

The file is read once, decoded with the project's own message description (graph.schema), checked
(MindSpore producer, a graph with nodes), summarised (inputs, outputs, parameters without their
bytes) and walked into the collapsed compute graph (graph.build). The decoded message and the file
bytes are dropped before returning, so weights are never kept.
"""

from __future__ import annotations

import gc
import logging
import os
import stat
from collections import Counter
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError

from core.errors import InputError
from core.text import say
from graph import schema
from graph.build import MAX_GRAPH_NODES, GraphBudgetError, GraphBuilder, function_role
from graph.dtypes import itemsize, tensor_dtype
from graph.model import FunctionInfo, MindirModel, OpGraph, ParameterSummary, TensorInfo
from graph.values import IOMONAD, MONAD, UMONAD, text

MAX_FILE_BYTES = 2 * 1024**3  # a protobuf message cannot be larger (format guide §1, §9)
TESTED_MIND_IR_VERSIONS = (1, 2, 3)
EXPECTED = say("mindir.expected")
LOG = logging.getLogger("perf_doctor.graph")
NODE_BUDGET_ENV = "PERF_DOCTOR_MAX_GRAPH_NODES"


def node_budget(environ: dict[str, str] | None = None) -> int:
    """The decoded-graph node budget: PERF_DOCTOR_MAX_GRAPH_NODES when set to a positive integer (read
    on every load, so in the isolated decoder too), else MAX_GRAPH_NODES."""
    raw = (os.environ if environ is None else environ).get(NODE_BUDGET_ENV, "").replace("_", "").strip()
    if not raw:
        return MAX_GRAPH_NODES
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{NODE_BUDGET_ENV} must be a positive integer, not {raw!r}")
    return int(raw)


def load_mindir(path: str | os.PathLike[str], *, max_bytes: int = MAX_FILE_BYTES) -> MindirModel:
    """Read, decode and walk one MINDIR file; bad input raises InputError naming the file."""
    file = Path(path)
    size = _check_file(file, max_bytes)
    return model_from_proto(decode(_read(file), file), file, size)


# Any: protobuf the MINDIR messages are built at run time from a descriptor (graph.schema): untyped
def model_from_proto(proto: Any, file: Path, size: int = 0) -> MindirModel:
    """Check a decoded ModelProto and turn it into a MindirModel (drops parameter bytes from `proto`)."""
    validate(proto, file)
    warnings = _format_warnings(proto)
    builder = GraphBuilder(proto, max_nodes=node_budget())
    with _no_gc():  # millions of small dicts: cyclic GC passes would make the build superlinear
        parameters, env = _parameters(proto, file, warnings, builder)
        inputs = _inputs(proto.graph, env, builder)
        graph = _build(builder, env, proto, file)
    warnings.extend(builder.warnings)
    main_name = text(proto.graph.name)
    return MindirModel(
        path=str(file),
        graph=graph,
        inputs=inputs,
        outputs=tuple(
            _tensor_info(v.tensor[0], _short(text(v.name), main_name)) for v in proto.graph.output if v.tensor
        ),
        parameters=parameters,
        producer=text(proto.producer_name),
        model_version=text(proto.model_version),
        ir_version=text(proto.ir_version),
        mind_ir_version=int(proto.mind_ir_version),
        functions=_functions(proto, builder.instances),
        training=_training_flag(proto.graph),
        op_counts=dict(builder.op_counts),
        warnings=warnings,
        file_bytes=size,
    )


def _build(builder: GraphBuilder, env: dict[str, Any], proto: Any, file: Path) -> OpGraph:
    """Run the graph builder; text fields that are not UTF-8 end in InputError."""
    try:
        return builder.build(env)
    except GraphBudgetError as err:
        hint = say("mindir.smaller", variable=NODE_BUDGET_ENV) if err.node_budget else EXPECTED
        raise InputError(
            say("mindir.cannot-analyse", error=err.problem), path=str(file), expected=hint
        ) from None
    except TypeError:
        field = _undecodable_text(proto)
        if field:
            raise InputError(say("mindir.bad-utf8", field=field), path=str(file), expected=EXPECTED) from None
        raise


@contextmanager
def _no_gc() -> Generator[None]:
    """Pause the cyclic garbage collector (the graph holds no reference cycles to collect)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _check_file(file: Path, max_bytes: int) -> int:
    try:
        info = file.stat()
    except FileNotFoundError:
        raise InputError(say("mindir.not-found"), path=str(file), expected=EXPECTED) from None
    except OSError as err:
        raise InputError(
            say("mindir.cannot-read", why=err.strerror), path=str(file), expected=EXPECTED
        ) from None
    if file.is_dir():
        raise InputError(say("mindir.folder"), path=str(file), expected=EXPECTED)
    if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end: never opened
        raise InputError(
            say("mindir.not-regular", kind=_file_kind(info.st_mode)), path=str(file), expected=EXPECTED
        )
    if info.st_size > max_bytes:
        raise InputError(
            say("mindir.too-big", size=info.st_size, limit=max_bytes),
            path=str(file),
            expected=say("mindir.under-2gib"),
        )
    return info.st_size


def _file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    kinds = (
        (stat.S_ISFIFO, "named pipe"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    )
    return next((word for test, word in kinds if test(mode)), "special file")


def _read(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except OSError as err:
        raise InputError(
            say("mindir.cannot-read", why=err.strerror), path=str(file), expected=EXPECTED
        ) from None


# Any: protobuf the MINDIR messages are built at run time from a descriptor (graph.schema): untyped
def decode(data: bytes, file: Path | str = "<bytes>") -> Any:
    """Decode MINDIR bytes into a ModelProto message; garbage raises InputError."""
    try:
        return schema.model_class().FromString(data)
    except (DecodeError, RecursionError, ValueError) as err:
        # The decoder's own text (English, naming our internal message type) stays in the log.
        LOG.info("MINDIR %s not decoded: %s", file, err)
        deep = isinstance(err, RecursionError) or "depth" in str(err).lower()
        reason = say("mindir.too-deep" if deep else "mindir.bytes-corrupt")
        raise InputError(
            say("mindir.undecodable", reason=reason), path=str(file), expected=EXPECTED
        ) from None


# Any: protobuf the MINDIR messages are built at run time from a descriptor (graph.schema): untyped
def validate(proto: Any, file: Path | str) -> None:
    """Refuse messages that decode but are not MindSpore graphs (wrong producer, no graph)."""
    producer = text(proto.producer_name)
    if producer != "MindSpore":
        problem = say("mindir.producer", producer=producer) if producer else say("mindir.no-producer")
        raise InputError(say("mindir.not-mindir", problem=problem), path=str(file), expected=EXPECTED)
    if not proto.HasField("graph") or not len(proto.graph.node):
        raise InputError(say("mindir.no-nodes"), path=str(file), expected=EXPECTED)


def _format_warnings(proto: Any) -> list[str]:
    warnings: list[str] = []
    if schema.backend() != "upb":
        warnings.append(say("mindir.slow-backend", backend=schema.backend()))
    version = int(proto.mind_ir_version)
    if version == 1:
        warnings.append(say("mindir.version-1"))
    elif version not in TESTED_MIND_IR_VERSIONS:
        warnings.append(say("mindir.untested-version", version=version))
    if proto.HasField("little_endian") and not proto.little_endian:
        warnings.append(say("mindir.big-endian"))
    return warnings


# ---------------------------------------------------------------- parameters and inputs


def _unfound(folder: Path, locations: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(locations inside the model's folder that are not files there, locations outside it)."""
    resolved = {loc: _inside(folder, loc) for loc in locations}
    outside = tuple(loc for loc, path in resolved.items() if path is None)
    missing = tuple(loc for loc, path in resolved.items() if path is not None and not path.is_file())
    return missing, outside


def _inside(folder: Path, location: str) -> Path | None:
    """The external data file `location` names, when it lies inside the model's own folder (relative,
    no climbing out with ``..``, no link leading out); None for anything else, which is never looked
    up: an uploaded model must not learn which files exist on the server."""
    if not location or "\x00" in location or os.path.isabs(location) or Path(location).anchor:
        return None
    base = folder.resolve()
    try:
        target = (base / location).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return target if target != base and target.is_relative_to(base) else None


def _parameters(
    proto: Any, file: Path, warnings: list[str], builder: GraphBuilder
) -> tuple[ParameterSummary, dict[str, Any]]:
    """Summarise every parameter, drop its raw bytes, and add it as a `parameter` node."""
    env: dict[str, Any] = {}
    items: list[TensorInfo] = []
    inline_bytes = external_bytes = absent = 0
    locations: dict[str, None] = {}
    for owner in [proto.graph, *proto.functions]:
        prefix = text(owner.name)
        for param in owner.parameter:
            full = text(param.name)
            short = text(param.ref_key) or _short(full, prefix)
            if param.HasField("raw_data"):
                inline_bytes += len(param.raw_data)
                param.ClearField("raw_data")
                storage = "inline"
            elif param.HasField("external_data"):
                external_bytes += param.external_data.length
                locations[text(param.external_data.location)] = None
                storage = "external"
            else:
                absent += 1
                storage = "absent"
            info = _tensor_info(param, short, storage)
            items.append(info)
            builder.add_source(
                full,
                kind="parameter",
                op="Parameter",
                name=short,
                scope="",
                dtype=info.dtype,
                shape=info.shape,
                storage=storage,
                nbytes=info.nbytes,
            )
            env[full] = full
            env.setdefault(f"{prefix}:{short}", full)
    missing, outside = _unfound(file.parent, locations)
    if missing:
        warnings.append(say("mindir.external-missing", missing=", ".join(missing)))
    if outside:  # never looked up, never named: a server path must not be probed through a model
        warnings.append(say("mindir.external-outside", n=len(outside)))
    if absent:
        warnings.append(say("mindir.stripped", n=absent))
    summary = ParameterSummary(
        count=len(items),
        total_bytes=sum(i.nbytes for i in items),
        inline_bytes=inline_bytes,
        external_bytes=external_bytes,
        dtypes=dict(Counter(i.dtype for i in items)),
        external_files=tuple(locations),
        missing_external=missing + outside,
        absent=absent,
        items=tuple(items),
    )
    return summary, env


def _tensor_info(tensor: Any, name: str, storage: str = "") -> TensorInfo:
    shape = tuple(tensor.dims)
    count = 1
    for dim in shape:
        count *= dim
    nbytes = count * itemsize(tensor.data_type) if count >= 0 and all(d >= 0 for d in shape) else 0
    return TensorInfo(name, tensor_dtype(tensor.data_type), shape, nbytes, storage)


def _inputs(main: Any, env: dict[str, Any], builder: GraphBuilder) -> tuple[TensorInfo, ...]:
    """Graph inputs with dtype and dims as `input` nodes; monad inputs are bound to MONAD, not listed."""
    prefix = text(main.name)
    inputs: list[TensorInfo] = []
    for value in main.input:
        full = text(value.name)
        if value.attr_info.type in (UMONAD, IOMONAD) or not value.tensor:
            env[full] = MONAD
            continue
        info = _tensor_info(value.tensor[0], _short(full, prefix))
        inputs.append(info)
        builder.add_source(
            full, kind="input", op="Input", name=info.name, scope="", dtype=info.dtype, shape=info.shape
        )
        env[full] = full
    return tuple(inputs)


def _short(full: str, prefix: str) -> str:
    return full[len(prefix) + 1 :] if prefix and full.startswith(prefix + ":") else full


def _training_flag(graph: Any) -> bool | None:
    for attr in graph.attribute:
        if attr.name == "training":
            return bool(attr.i)
    return None


def _functions(proto: Any, instances: Counter[str]) -> tuple[FunctionInfo, ...]:
    return tuple(
        FunctionInfo(
            name=text(fn.name),
            role=function_role(text(fn.name)),
            nodes=len(fn.node),
            call_sites=instances.get(text(fn.name), 0),
        )
        for fn in proto.functions
    )


def _undecodable_text(message: Any, depth: int = 0) -> str | None:
    """Name of a text field that came back as bytes (upb does that for invalid UTF-8 in proto2 strings)."""
    if depth > 128:
        return None
    for field, value in message.ListFields():
        if field.type == field.TYPE_STRING:
            values = value if field.is_repeated else [value]
            if any(isinstance(v, bytes) for v in values):
                return f"{message.DESCRIPTOR.name}.{field.name}"
        elif field.type == field.TYPE_MESSAGE:
            for item in value if field.is_repeated else [value]:
                found = _undecodable_text(item, depth + 1)
                if found:
                    return found
    return None

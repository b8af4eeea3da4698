"""msprobe statistics dumps (``dump.json`` beside ``construct.json`` and ``stack.json``), MindSpore/PyTorch.

Each ``data`` entry is one API or module call named ``<Prefix>.<api>.<n>.<forward|backward>`` or
``<Cell|Module>.<path>.<Class>.<forward|backward>.<n>``, holding dtype, shape, Max, Min, Mean and Norm of
its input and output tensors. The layer key drops the call number and the framework prefix; names of one
framework are mapped onto the other's with a ``layer_mapping.yaml`` (msprobe's cross-framework mapping).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from core.errors import InputError
from core.text import say
from outputs.layers import Dump, Layer
from outputs.stats import TensorStats, canonical_dtype

MODULE_NAME = re.compile(
    r"^(Cell|Module)\.(?P<path>.+)\.(?P<cls>[^.]+)\.(?P<dir>forward|backward)\.(?P<n>\d+)$"
)
API_NAME = re.compile(r"^(?P<prefix>[A-Za-z_]+)\.(?P<api>.+)\.(?P<n>\d+)\.(?P<dir>forward|backward)$")


def read_msprobe(path: Path, label: str, mapping: Mapping[str, str] | None = None) -> Dump:
    """One msprobe ``dump.json`` as a Dump; `mapping` renames MindSpore names to PyTorch ones."""
    raw = _load(path, label)
    data = raw.get("data")
    if not isinstance(data, dict):
        raise InputError(say("outputs.msprobe-no-data"), path=label, expected=say("outputs.msprobe-expected"))
    framework = str(raw.get("framework") or "unknown").lower()
    names: Mapping[str, str] = mapping if (mapping and framework == "mindspore") else {}
    parents = _construct(path.with_name("construct.json"))
    sites = call_sites(path.with_name("stack.json"))
    layers = [
        _layer(name, entry, order, names, _scope(parents.get(name), names), sites.get(name, ""))
        for order, (name, entry) in enumerate(cast("dict[str, Any]", data).items())
    ]
    return Dump(label, "msprobe", framework, tuple(layers), files=1, bytes_read=path.stat().st_size)


def _load(path: Path, label: str) -> dict[str, Any]:
    """The parsed dump.json; an InputError naming it when it is not JSON or not an object."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        expected = say("outputs.msprobe-expected")
        raise InputError(say("io.json-too-deep"), path=label, expected=expected) from None
    except (UnicodeDecodeError, ValueError) as error:  # ValueError: not JSON, or an integer of 4300+ digits
        raise InputError(
            say("outputs.not-json", reason=str(error)[:120]),
            path=label,
            expected=say("outputs.msprobe-expected"),
        ) from None
    if not isinstance(raw, dict):
        raise InputError(say("outputs.msprobe-no-data"), path=label, expected=say("outputs.msprobe-expected"))
    return cast("dict[str, Any]", raw)


def _construct(path: Path) -> dict[str, str]:
    """construct.json beside dump.json: entry name -> the module that called it ({} when absent or bad;
    the scope only breaks ties between calls of the same name)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):  # too deep or 4300+ digits too
        return {}
    items = cast("dict[Any, Any]", raw).items() if isinstance(raw, dict) else ()
    return {str(k): str(v) for k, v in items if isinstance(v, str)}


# One frame of a Python traceback as msprobe stores it: "File <path>, line <n>, in <function>, \n <code>".
FRAME = re.compile(
    r"^File (?P<file>.+?), line (?P<line>\d+), in (?P<func>[^,\n]+),?\s*(?P<code>.*)$", re.DOTALL
)
# Frames that are not the user's code: installed packages (frameworks) and msprobe's own hooks.
NOT_USER_CODE = re.compile(r"site-packages|dist-packages|/msprobe/|/mstt/|<frozen |^<")


def call_sites(path: Path) -> dict[str, str]:
    """stack.json beside dump.json: entry name -> the first frame of the user's code that made the call
    ("file:line in function: code"); {} when the file is absent or not understood. Both of msprobe's
    layouts are read: {name: [frames]} and {id: [[names], [frames]]}."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):  # too deep or 4300+ digits too
        return {}
    sites: dict[str, str] = {}
    for key, value in cast("dict[str, Any]", raw).items() if isinstance(raw, dict) else ():
        seq = cast("list[Any]", value) if isinstance(value, list) else []
        grouped = len(seq) == 2 and all(isinstance(v, list) for v in seq)
        names, frames = (seq[0], seq[1]) if grouped else ([key], cast(Any, value))
        site = _user_frame(cast("list[Any]", frames) if isinstance(frames, list) else [])
        if site:
            sites.update({str(name): site for name in names})
    return sites


def _user_frame(frames: list[Any]) -> str:
    """The first frame outside installed packages and msprobe, as "file:line in function: code"."""
    for frame in frames:
        match = FRAME.match(str(frame).strip())
        if match and not NOT_USER_CODE.search(match["file"]):
            code = " ".join(match["code"].split())
            return f"{match['file']}:{match['line']} in {match['func'].strip()}" + (
                f": {code}" if code else ""
            )
    return ""


def _scope(parent: str | None, names: Mapping[str, str]) -> str:
    """The calling module's path without its class and call number, names mapped ("" when unknown)."""
    module = MODULE_NAME.match(parent or "")
    return ".".join(names.get(part, part) for part in module["path"].split(".")) if module else ""


def _layer(
    name: str, entry: Any, order: int, names: Mapping[str, str], scope: str = "", call_site: str = ""
) -> Layer:
    """One data entry as a Layer keyed for alignment."""
    entry = cast("dict[str, Any]", entry) if isinstance(entry, dict) else {}
    inputs = _tensors(entry.get("input_args", [])) + _tensors(entry.get("input_kwargs", {}))
    inputs += _tensors(entry.get("input", []))
    outputs = _tensors(entry.get("output", []))
    key, op_type, direction = layer_key(name, names)
    return Layer(
        name, key, op_type, order, "layer", direction, tuple(inputs), tuple(outputs), scope, call_site
    )


def layer_key(name: str, names: Mapping[str, str]) -> tuple[str, str, str]:
    """(alignment key, op type, direction) of an msprobe entry name."""
    module = MODULE_NAME.match(name)
    if module:
        path = ".".join(names.get(part, part) for part in module["path"].split("."))
        return f"module:{path}:{module['dir']}", module["cls"], module["dir"]
    api = API_NAME.match(name)
    if api:
        last = api["api"].rsplit(".", 1)[-1]
        mapped = names.get(last, last)
        return f"api:{mapped}:{api['dir']}", mapped, api["dir"]
    return f"other:{name}", name, "forward"


def _tensors(value: Any) -> list[TensorStats | None]:
    """Tensor statistics found in an args list, a kwargs mapping or one value (other values are None)."""
    if isinstance(value, dict) and "dtype" not in value and "type" not in value:
        return [item for v in cast("dict[str, Any]", value).values() for item in _tensors(v)]
    if isinstance(value, list):
        return [_tensor(v) for v in cast("list[Any]", value)]
    return [_tensor(value)]


def _tensor(value: Any) -> TensorStats | None:
    """One tensor entry (has dtype and shape) as TensorStats; anything else (ints, strings, None) is None."""
    if not isinstance(value, dict) or "dtype" not in value or "shape" not in value:
        return None
    value = cast("dict[str, Any]", value)
    shape = _shape(value.get("shape"))
    if shape is None:
        return None
    return TensorStats(
        canonical_dtype(str(value["dtype"])),
        shape,
        _number(value.get("Max")),
        _number(value.get("Min")),
        _number(value.get("Mean")),
        _number(value.get("Norm")),
    )


def _shape(value: Any) -> tuple[int, ...] | None:
    """A tensor's shape as sizes; None (not a tensor) when it is not a list of non-negative integers."""
    items = cast("list[Any]", value) if isinstance(value, list) else None if value else []
    if items is None:
        return None
    try:
        shape = tuple(int(n) for n in items)
    except (TypeError, ValueError, OverflowError):  # text, lists, nan or inf sizes
        return None
    return shape if all(n >= 0 for n in shape) else None


def _number(value: Any) -> float | None:
    """A statistic as a float: booleans as 0/1, "inf"/"nan" strings as floats, null as None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def load_mapping(path: Path, label: str) -> dict[str, str]:
    """A ``layer_mapping.yaml`` (class -> {MindSpore name: PyTorch name}) flattened to name -> name; the
    last dotted part of each side is what an API key holds, whole dotless names rename module path parts."""
    import yaml

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise InputError(say("outputs.bad-mapping", reason=str(error)[:120]), path=label) from None
    if not isinstance(raw, dict):
        raise InputError(say("outputs.bad-mapping", reason="not a mapping"), path=label)
    raw = cast("dict[Any, Any]", raw)
    names: dict[str, str] = {}
    for section in raw.values():
        for ms_name, pt_name in cast("dict[Any, Any]", section).items() if isinstance(section, dict) else ():
            names[str(ms_name).rsplit(".", 1)[-1]] = str(pt_name).rsplit(".", 1)[-1]
    return names

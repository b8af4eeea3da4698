"""Match the layers of two dumps: by key (op or API name and scope, call numbers dropped, names mapped
across frameworks), then by call order, preferring a candidate whose output shapes agree and, among
those, one called from the same module (msprobe's construct.json)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from outputs.layers import Dump, Layer


@dataclass(frozen=True)
class Alignment:
    """Matched pairs in the baseline's execution order and the layers of one side only."""

    pairs: tuple[tuple[Layer, Layer], ...]
    only_baseline: tuple[Layer, ...]
    only_target: tuple[Layer, ...]


def align(baseline: Dump, target: Dump) -> Alignment:
    """Pair each baseline layer with the first unused target layer of the same key and role."""
    pool: dict[tuple[str, str], list[Layer]] = defaultdict(list)
    for layer in target.layers:
        pool[(layer.key, layer.role)].append(layer)
    pairs: list[tuple[Layer, Layer]] = []
    unmatched: list[Layer] = []
    used: set[int] = set()
    for layer in sorted(baseline.layers, key=lambda item: item.order):
        candidates = [c for c in pool.get(_base_key(layer), []) if id(c) not in used]
        same_shape = [c for c in candidates if _shapes(c) == _shapes(layer)]
        same_scope = [c for c in same_shape if layer.scope and c.scope == layer.scope]
        match = next(iter(same_scope or same_shape or candidates), None)
        if match is None:
            unmatched.append(layer)
            continue
        used.add(id(match))
        pairs.append((layer, match))
    rest = tuple(layer for layer in target.layers if id(layer) not in used)
    return Alignment(tuple(pairs), tuple(unmatched), rest)


def _base_key(layer: Layer) -> tuple[str, str]:
    return (layer.key, layer.role)


def _shapes(layer: Layer) -> tuple[tuple[int, ...] | None, ...]:
    return tuple(t.shape if t is not None else None for t in layer.outputs)

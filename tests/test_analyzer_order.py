"""Reports list symptoms in one fixed order of analyzer modules, whatever imported which module first."""

from __future__ import annotations

import pkgutil

import diagnosis.analyzers as analyzers
from diagnosis.analyzers import MODULE_ORDER, PAIR_ANALYZERS, RUN_ANALYZERS, _load_all, _ordered


def test_every_analyzer_module_has_a_place_in_the_order() -> None:
    _load_all()
    registering = {fn.__module__.rsplit(".", 1)[-1] for fn in PAIR_ANALYZERS + RUN_ANALYZERS}
    modules = {info.name for info in pkgutil.iter_modules(analyzers.__path__)} - {"common"}
    assert registering == set(MODULE_ORDER) == modules  # a module left out would never be loaded


def test_analyzers_run_in_module_order_then_definition_order() -> None:
    _load_all()
    for registered in (PAIR_ANALYZERS, RUN_ANALYZERS):
        ordered = _ordered(list(reversed(registered)))  # registration order must not matter across modules
        ranks = [MODULE_ORDER.index(fn.__module__.rsplit(".", 1)[-1]) for fn in ordered]
        assert ranks == sorted(ranks)

"""The packages' public APIs: every exported name resolves, and the lazy ones stay lazy.

doctor imports only these names (an import-linter contract); the lazy exports keep the isolated
MINDIR child, which imports graph and core under a 300 MB address-space limit, free of pandas.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from tests.support.inputs import ROOT

PACKAGES = ("core", "diagnosis", "graph", "knowledge")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert not missing
    assert len(module.__all__) == len(set(module.__all__))


@pytest.mark.parametrize("package", ("core", "diagnosis"))
def test_lazy_table_matches_all(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(module._EXPORTS) == sorted(module.__all__)
    with pytest.raises(AttributeError):
        module.not_a_public_name  # noqa: B018


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(done.stdout.split())


def test_parsing_a_model_loads_neither_pandas_nor_pydantic() -> None:
    loaded = _modules_after("import graph; from core import InputError, Symptom")
    assert "graph.loader" in loaded
    assert not {"pandas", "pydantic", "mindspore"} & loaded


@pytest.mark.slow
def test_the_run_model_is_loaded_when_asked_for() -> None:
    loaded = _modules_after("from core import Run")
    assert "pandas" in loaded


@pytest.mark.slow
def test_the_cli_starts_without_the_report_model() -> None:
    """pydantic and the report model load in a thread while the profiles are read (doctor.facade)."""
    loaded = _modules_after("import cli.main, doctor")
    assert "doctor.facade" in loaded
    assert not {"pydantic", "doctor.model", "doctor.build"} & loaded


@pytest.mark.slow
def test_a_diagnosis_loads_the_report_model_it_needs() -> None:
    statement = (
        "from doctor import diagnose; from tests.support.inputs import CPU; "
        "r = diagnose(CPU / 'train_amp_o2_graph', CPU / 'infer_fp32_graph', isolate=False); "
        "assert r.document.kind == 'pair'"
    )
    assert {"pydantic", "doctor.model", "doctor.build"} <= _modules_after(statement)


def test_the_app_contract_resolves_submodules_and_re_exports() -> None:
    """tools/import_contracts (the lint-imports contract on app.py): `from p import m` is the submodule
    p.m unless p's __init__ re-exports a name m (webapp's outputs_tab function), and an installed
    package's submodules count as modules too."""
    from tools.import_contracts import imported_modules, matches

    source = (
        "import os\nfrom doctor.config import AppConfig\nfrom webapp import outputs_tab, present\n"
        "from desk import cases\nfrom gradio import route_utils\nfrom doctor import Report\n"
    )
    found = imported_modules(
        source, {"doctor", "doctor.config", "webapp", "webapp.outputs_tab", "desk.cases"}
    )
    assert [module for module, _ in found] == [
        "os", "doctor.config", "webapp", "webapp", "desk.cases", "gradio.route_utils", "doctor",
    ]  # fmt: skip
    forbidden = {"doctor.*", "desk.*", "gradio.*", "gradio_client"}
    assert [m for m, _ in found if matches(m, forbidden)] == [
        "doctor.config",
        "desk.cases",
        "gradio.route_utils",
    ]
    assert not matches("gradio_client_extra", forbidden) and matches("gradio_client", forbidden)


def test_app_py_imports_only_public_apis() -> None:
    """The same check lint-imports runs, on the real app.py."""
    from tools.import_contracts import imported_modules, matches

    source = (ROOT / "app.py").read_text(encoding="utf-8")
    packages = (
        "cli",
        "webapp",
        "desk",
        "doctor",
        "sandbox",
        "outputs",
        "knowledge",
        "graph",
        "diagnosis",
        "core",
    )
    forbidden = {f"{p}.*" for p in packages} | {"gradio.*", "gradio_client", "gradio_client.*"}
    found = imported_modules(source, set())
    assert not [m for m, _ in found if matches(m, forbidden)]
    assert {"webapp", "doctor", "desk", "sandbox", "gradio"} <= {m for m, _ in found}


@pytest.mark.parametrize("package", ("doctor", "desk", "sandbox", "webapp"))
def test_every_name_the_app_imports_resolves(package: str) -> None:
    """The upper packages' public APIs (app.py imports only these): every exported name resolves."""
    module = importlib.import_module(package)
    assert [name for name in module.__all__ if getattr(module, name, None) is None] == []
    assert len(module.__all__) == len(set(module.__all__))

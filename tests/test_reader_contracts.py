"""Contracts of the reader package: importing it changes nothing in the process, every reader is
registered, the catalogue knows every file a reader opens, and every canonical table has its schema."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from core.model import (
    API_SCHEMA,
    DATASET_STAGE_SCHEMA,
    FREQUENCY_SCHEMA,
    KERNEL_SCHEMA,
    MEMORY_SCHEMA,
    NPU_SMI_SCHEMA,
    PIPELINE_SCHEMA,
    STEP_SCHEMA,
    Run,
)
from diagnosis import ingest
from diagnosis.readers import catalog
from diagnosis.readers.npu_smi import npu_smi_frame
from tests.support.layouts import CONTRACTS, RUNS, runs_for

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
# One run of every layout with a fixture, and the runs with optional tables (memory, dataset, pipeline, API,
# frequency): the contracts' selection of the one registry, tests/support/layouts.py.
FIXTURE_RUNS = runs_for(CONTRACTS)


@pytest.fixture(scope="module", params=sorted(FIXTURE_RUNS))
def fixture_run(request: pytest.FixtureRequest) -> Run:
    return ingest.read_folder(FIXTURE_RUNS[request.param])


@pytest.mark.slow
def test_importing_the_readers_has_no_side_effects() -> None:
    """No environment variable and no Arrow memory pool is set by an import (the facade chooses the pool)."""
    probe = textwrap.dedent(
        """
        import importlib, os, pkgutil
        import pyarrow as pa
        before_env, before_pool = dict(os.environ), pa.default_memory_pool().backend_name
        import diagnosis.readers as readers
        for info in pkgutil.iter_modules(readers.__path__):
            importlib.import_module(f"diagnosis.readers.{info.name}")
        import diagnosis.ingest, diagnosis.analyzers
        assert dict(os.environ) == before_env, set(os.environ.items()) ^ set(before_env.items())
        assert pa.default_memory_pool().backend_name == before_pool, pa.default_memory_pool().backend_name
        """
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_reader_module_is_registered_and_every_layout_has_one_reader() -> None:
    """ingest.READERS (the readers the catalogue names) lists each module of diagnosis.readers that reads
    runs; the catalogue's layouts are exactly the layouts they read, each by the reader its entry names."""
    readers_package = importlib.import_module("diagnosis.readers")
    modules = [
        importlib.import_module(f"diagnosis.readers.{info.name}")
        for info in pkgutil.iter_modules(readers_package.__path__)
    ]
    reading = {m.__name__ for m in modules if callable(getattr(m, "read", None)) and hasattr(m, "candidates")}
    assert {m.__name__ for m in ingest.READERS} == reading
    read = [name for reader in ingest.READERS for name in reader.LAYOUTS]
    assert sorted(read) == sorted(catalog.BY_NAME) and len(read) == len(set(read))
    assert all(ingest.reader_of(name).LAYOUTS.count(name) == 1 for name in catalog.BY_NAME)
    for layout in catalog.LAYOUTS:
        assert ingest.reader_of(layout.name).__name__ == f"diagnosis.readers.{layout.reader}", layout.name


def test_a_layout_name_is_written_once_in_the_catalogue() -> None:
    """A reader (and discovery) takes a layout's name from its catalogue entry, so a renamed or new layout
    is written in catalog.py alone: no other module of the package has the name as a string literal
    (docstrings, which describe the layouts, aside)."""

    names = set(catalog.BY_NAME)
    written = []
    for path in sorted(Path(catalog.__file__).parent.glob("*.py")):
        if path.name == "catalog.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        written += [
            f"{path.name}:{node.lineno} {node.value}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in docstrings
        ]
    assert not written, written


@pytest.mark.parametrize("template", ["framework_raw_{r}.csv", "aicore_intermediate_{r}_type.csv"])
def test_a_template_names_and_matches_per_rank_files(template: str) -> None:
    name = catalog.of_rank(template, 3)
    assert "{" not in name and re.fullmatch(catalog.pattern(template), name)
    assert catalog.rank_regex(template).match(name).group(1) == "3"


@pytest.mark.slow
def test_every_file_a_reader_opens_has_an_upload_place(fixture_run: Run) -> None:
    """A folder upload keeps every file the readers read (the catalogue is the one list of names)."""
    unplaced = [f for f in fixture_run.meta.files if catalog.place_of(Path(f).name) is None]
    assert not unplaced


CANONICAL_TABLES = {
    "kernels": KERNEL_SCHEMA,
    "steps": STEP_SCHEMA,
    "memory": MEMORY_SCHEMA,
    "dataset_stages": DATASET_STAGE_SCHEMA,
    "pipeline": PIPELINE_SCHEMA,
    "frequency": FREQUENCY_SCHEMA,
    "api_calls": API_SCHEMA,
    "npu_smi": NPU_SMI_SCHEMA,
}


def test_every_canonical_table_has_its_schema(fixture_run: Run) -> None:
    for field, schema in CANONICAL_TABLES.items():
        table = getattr(fixture_run, field)
        assert table.columns.tolist()[: len(schema)] == list(schema), field
        assert [str(table[c].dtype) for c in schema] == [
            str(pd.Series([], dtype=d).dtype) for d in schema.values()
        ]


@pytest.mark.slow
def test_the_fixtures_fill_every_optional_table() -> None:
    """The canonical tables are not only empty defaults: real fixture runs fill each of them."""
    runs = [ingest.read_folder(path) for path in FIXTURE_RUNS.values()]
    for field in ("memory", "dataset_stages", "pipeline", "frequency", "api_calls"):
        assert any(len(getattr(run, field)) for run in runs), field
    smi = npu_smi_frame((FIXTURES / "ascend_symptoms/npu_smi/common_throttled.txt").read_text())
    assert smi.columns.tolist() == list(NPU_SMI_SCHEMA) and len(smi)


def test_no_analyzer_reads_extras_or_a_vendor_column() -> None:
    """Analyzers read the canonical tables only: no Run.extras, no header spelled as a profiler writes it."""
    vendor = ("extras", "Timestamp(us)", "Total Allocated", "Avg. time (us)", '"Stage"', "API Name")
    for path in (ROOT / "diagnosis" / "analyzers").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not [word for word in vendor if word in text], path.name


def test_every_catalogued_layout_has_a_run_in_the_registry() -> None:
    """tests/support/layouts.py names a run of each layout of the catalogue, and no other layout."""
    assert {run.layout for run in RUNS} == set(catalog.BY_NAME)
    assert len({run.name for run in RUNS}) == len(RUNS)


def test_every_catalogued_layout_says_what_it_looks_like_in_both_languages() -> None:
    """Each layout's `layout.<name>` message exists in English and Chinese, and the known-layouts text an
    unreadable upload is given lists every one of them, in both languages."""
    from core.messages import MESSAGES

    for entry in catalog.LAYOUTS:
        assert set(MESSAGES[entry.message]) == {"en", "zh"}, entry.name
        for lang in ("en", "zh"):
            assert MESSAGES[entry.message][lang] in catalog.KNOWN_LAYOUTS_TEXT.said(lang), (entry.name, lang)
    assert {key for key in MESSAGES if key.startswith("layout.")} == {e.message for e in catalog.LAYOUTS}


@pytest.mark.parametrize("run", RUNS, ids=lambda run: run.name)
def test_each_registered_run_is_found_as_its_layout(run) -> None:
    if not run.path.is_dir():
        pytest.skip(f"{run.path} is not here (a real sample beside the repository)")
    assert {candidate.layout for candidate in ingest.find_runs(run.path)} == {run.layout}

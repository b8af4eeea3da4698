"""Profile reading, alignment and symptom analysis: every profiler layout into one run model.

Public API (what the doctor facade may use; everything else is internal):

- sources: Source, materialize, describe; Workspace (workspace), archive_kind (archives)
- reading: read_folder, find_runs, Candidate, attach_npu_smi (npu-smi readings given beside a profile),
  kept_names (the basenames some reader opens, for packing a profile)
- errors: in_user_terms (a reader's error named relative to the upload, with the known file versions)
- packing: pack_run, Packed (a small archive of the files a diagnosis reads, `perf-doctor pack`)
- comparing: Side, Comparison, prepare, compare_sides, leaderboard
- symptoms: analyze_pair, analyze_run, symptom_declarations (the kinds each analyzer declares); phase_timing
  (a generation pair compared phase by phase)
- input limits: Limits, MIB, check_positive, env_name, settings_from_env
- process setup: prefer_jemalloc (the Arrow memory pool; called by the facade, never at import),
  release_memory (freed memory back to the system after an analysis) and hold_to_budgets (every profile
  file read is held to the per-file byte and row budgets: the web app's server; budgets_held says whether
  it was called); watch_reads (each profile file's name before it is opened, so that an
  isolated reader stopped by a limit can name the file)

Names are imported on first use (PEP 562), so a child process that only unpacks an archive does not
load pandas. A regular package (not a namespace one), so that no stray `diagnosis.py` on the import
path, such as the benchmark script bench/diagnosis.py, can shadow it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.lazy import lazy_getattr

_EXPORTS: dict[str, str] = {
    "Source": "diagnosis.sources",
    "Workspace": "diagnosis.workspace",
    "materialize": "diagnosis.sources",
    "archive_kind": "diagnosis.archives",
    "describe": "diagnosis.sources",
    "read_folder": "diagnosis.ingest",
    "attach_npu_smi": "diagnosis.readers.npu_smi",
    "read_npu_smi": "diagnosis.readers.npu_smi",
    "find_runs": "diagnosis.ingest",
    "pack_run": "diagnosis.pack",
    "in_user_terms": "diagnosis.explain",
    "Packed": "diagnosis.pack",
    "Candidate": "diagnosis.readers",
    "Side": "diagnosis.compare",
    "Comparison": "diagnosis.compare",
    "prepare": "diagnosis.compare",
    "compare_sides": "diagnosis.compare",
    "leaderboard": "diagnosis.compare",
    "analyze_pair": "diagnosis.analyzers",
    "analyze_run": "diagnosis.analyzers",
    "symptom_declarations": "diagnosis.analyzers",
    "phase_timing": "diagnosis.analyzers.timing",
    "headline_timing": "diagnosis.analyzers.timing",
    "Limits": "diagnosis.limits",
    "MIB": "diagnosis.limits",
    "check_positive": "diagnosis.limits",
    "env_name": "diagnosis.limits",
    "settings_from_env": "diagnosis.limits",
    "prefer_jemalloc": "diagnosis.readers.io",
    "release_memory": "diagnosis.readers.io",
    "hold_to_budgets": "diagnosis.readers.io",
    "budgets_held": "diagnosis.readers.io",
    "watch_reads": "diagnosis.readers.io",
    "kept_names": "diagnosis.readers.catalog",
}

if TYPE_CHECKING:
    from diagnosis.analyzers import analyze_pair, analyze_run, symptom_declarations
    from diagnosis.analyzers.timing import headline_timing, phase_timing
    from diagnosis.archives import archive_kind
    from diagnosis.compare import Comparison, Side, compare_sides, leaderboard, prepare
    from diagnosis.explain import in_user_terms
    from diagnosis.ingest import find_runs, read_folder
    from diagnosis.limits import MIB, Limits, check_positive, env_name, settings_from_env
    from diagnosis.pack import Packed, pack_run
    from diagnosis.readers import Candidate
    from diagnosis.readers.catalog import kept_names
    from diagnosis.readers.io import (
        budgets_held,
        hold_to_budgets,
        prefer_jemalloc,
        release_memory,
        watch_reads,
    )
    from diagnosis.readers.npu_smi import attach_npu_smi, read_npu_smi
    from diagnosis.sources import Source, describe, materialize
    from diagnosis.workspace import Workspace


__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())


__all__ = [
    "MIB",
    "Candidate",
    "Comparison",
    "Limits",
    "Packed",
    "Side",
    "Source",
    "Workspace",
    "analyze_pair",
    "analyze_run",
    "archive_kind",
    "attach_npu_smi",
    "budgets_held",
    "check_positive",
    "compare_sides",
    "describe",
    "env_name",
    "find_runs",
    "headline_timing",
    "hold_to_budgets",
    "in_user_terms",
    "kept_names",
    "leaderboard",
    "materialize",
    "pack_run",
    "phase_timing",
    "prefer_jemalloc",
    "prepare",
    "read_folder",
    "read_npu_smi",
    "release_memory",
    "settings_from_env",
    "symptom_declarations",
    "watch_reads",
]

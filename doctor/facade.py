"""The one entry point the app and the CLI call: inputs in, a finished Report out.

`diagnose` materialises every input inside one private Workspace (archives and uploads are extracted
there and deleted when the analysis ends), reads and compares the runs, looks for symptoms, checks the
MINDIR graph, asks the knowledge base for ranked causes and assembles the report document.
"""

from __future__ import annotations

import gc
import math
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from core import InputError, Limitation, Symptom, say
from diagnosis import (
    Comparison,
    Side,
    Source,
    Workspace,
    analyze_pair,
    analyze_run,
    attach_npu_smi,
    compare_sides,
    find_runs,
    hold_to_budgets,
    in_user_terms,
    materialize,
    prefer_jemalloc,
    prepare,
    read_folder,
    release_memory,
)
from doctor.config import public_folders
from doctor.i18n import LANGS, check_lang, t
from doctor.problems import InputProblems, SideError, user_file
from doctor.report import Report
from doctor.version import VERSION
from knowledge import evaluate
from sandbox import isolation

if TYPE_CHECKING:
    from doctor.model import (
        After,
        Cause,
        Graph,
        Input,
        Leaderboards,
        OperatorRow,
        Ranks,
        ReportDocument,
        RunInfo,
        Step,
        Timing,
    )

Progress = Callable[[float, str], None]  # (fraction done, what is happening)
_Step = Callable[[float, str], None]  # (fraction done, REPORT_TEXT key)
BASELINE_CHOICES = (None, "first", "second")
MAX_RANK = 65_535  # device ranks of one job are far fewer
READ_PROGRESS = {"baseline": 0.05, "target": 0.25, "after": 0.3}
NOTHING_GIVEN = say("facade.nothing-given")
AFTER_NEEDS = say("facade.after-needs")


@dataclass
class _Model:
    """A loaded MINDIR with its chains, symptoms and display name."""

    model: Any
    chains: list[Any]
    name: str
    symptoms: list[Symptom]


@dataclass
class _Analysis:
    """Everything computed before the report is assembled."""

    kind: str
    lang: str
    inputs: list[Input] = field(default_factory=list)
    runs: list[RunInfo] = field(default_factory=list)
    timing: Timing | None = None
    symptoms: list[Symptom] = field(default_factory=list)
    limitations: list[tuple[str, Limitation]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    operators: list[OperatorRow] = field(default_factory=list)
    boards: Leaderboards | None = None
    steps: list[Step] = field(default_factory=list)
    target: Side | None = None  # the run a MINDIR is cross-linked with
    baseline: Side | None = None  # a pair's baseline (the after run is compared with it)
    after: _Analysis | None = None  # baseline vs the run after the fixes
    model: _Model | None = None
    links: Any = None
    table: Any = None  # a pair's comparison table: its operator rows in another language
    npu_smi: bool = False  # npu-smi readings were given with the target
    model_foreign: bool = False  # the MINDIR does not match the profiles: shown, never used as evidence
    model_notes: list[str] = field(default_factory=list)  # model warnings of the analysis (a mismatch)
    rank_jobs: list[tuple[str, Any, list[Any]]] = field(default_factory=list)  # (role, RankSet, why causes)
    rank_note: str = ""  # how two jobs were paired for the operator analysis


def diagnose(
    baseline: Source | None = None,
    target: Source | None = None,
    mindir: str | os.PathLike[str] | None = None,
    *,
    rank: float | str | None = None,
    baseline_role: str | None = None,
    progress: Progress | None = None,
    lang: str = "en",
    npu_smi: str | os.PathLike[str] | None = None,
    isolate: bool = True,
    after: Source | None = None,
    translate: bool = True,
    scheduler: str | None = None,
    dumps: tuple[Source, Source] | None = None,
    dump_mapping: str | os.PathLike[str] | None = None,
) -> Report:
    """Diagnose a pair of profiles (or one profile), optionally with the model's MINDIR.

    Each profile is a folder, an archive or a list of uploaded files. `baseline_role` ("first" /
    "second") overrides which run is the baseline (default: the training run). `npu_smi` is the
    output of `npu-smi info` (a path to a text file) taken on the target's device; its clock,
    temperature and power readings join the target run. With `isolate` (the default) archives are
    unpacked and the MINDIR decoded in a child process under memory and time limits (sandbox.isolation);
    False runs them in this process (benchmarks, tests). `after` is the target profiled again after the
    fixes: the report then gains an `after` section (each cause resolved / remaining / worse, the
    measured gain beside the predicted one). With `translate` (the default) the document is also built in
    each other language (Report.translations: a stored case and the page's language switch show the
    viewer's); a caller that writes one report in one language (the CLI) passes False and saves that work.
    A profile holding several ranks is read whole unless `rank` narrows it: every rank is summarised (a
    local process pool, or the Dask cluster at `scheduler`, e.g. tcp://HOST:8786), the slow rank is found
    and diagnosed against a typical rank, and the report gains a `ranks` section.
    `dumps` (baseline's, target's: folders or archives of msprobe or MindSpore dumps, `dump_mapping` a
    layer_mapping.yaml) adds an `outputs` section: one report covers the latency and the results.
    Bad input raises core.errors.InputError with one line for the user.
    """
    report = _diagnose_profiles(
        baseline,
        target,
        mindir,
        rank,
        baseline_role,
        progress,
        lang,
        npu_smi,
        isolate,
        after,
        translate,
        scheduler,
    )
    if dumps is None:
        return report
    from doctor.outputs_report import attach_outputs

    return attach_outputs(report, dumps[0], dumps[1], mapping=dump_mapping, isolate=isolate)


def _diagnose_profiles(
    baseline: Source | None,
    target: Source | None,
    mindir: str | os.PathLike[str] | None,
    rank: float | str | None,
    baseline_role: str | None,
    progress: Progress | None,
    lang: str,
    npu_smi: str | os.PathLike[str] | None,
    isolate: bool,
    after: Source | None,
    translate: bool,
    scheduler: str | None,
) -> Report:
    """diagnose() of the profiles and the model."""
    check_lang(lang)
    rank = check_rank(rank)
    if baseline_role not in BASELINE_CHOICES:
        raise InputError(
            say("facade.unknown-baseline", choice=repr(baseline_role)),
            expected=say("facade.baseline-choices"),
        )
    given = [(role, src) for role, src in (("baseline", baseline), ("target", target)) if _given(src)]
    if _given(after):
        if len(given) != 2:
            raise InputError(
                say("facade.after-alone"),
                path="after",
                expected=AFTER_NEEDS,
            )
        given.append(("after", after))
    if not given:
        if not _path_given(mindir):
            raise InputError(say("facade.nothing"), expected=NOTHING_GIVEN)
        return inspect_model(
            mindir,
            progress=progress,
            lang=lang,
            isolate=isolate,
            translate=translate,
        )
    try:
        options = _Options(rank, baseline_role, npu_smi, isolate, translate, scheduler)
        return _diagnose(given, mindir, options, progress, lang)
    finally:  # the analysis's tables are gone now: give their memory back (docs/security.md)
        release_graph_memory() if _path_given(mindir) else release_memory()


def check_rank(rank: float | str | None) -> int | None:
    """The rank asked for as an int: a whole number from 0 to MAX_RANK (an API client may send NaN,
    Infinity or 1e400; the error shows at most a short prefix of what was given, never 309 digits). Text
    (the app's rank field) is read as decimal digits only; empty text is no rank, as None."""
    if isinstance(rank, str):
        text = rank.strip()
        if not text:
            return None
        rank = int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else text
    if rank is None:
        return None
    whole: int | None = None
    if isinstance(rank, int) and not isinstance(rank, bool):
        whole = rank
    elif isinstance(rank, float) and math.isfinite(rank) and rank.is_integer():
        whole = int(rank)
    if whole is None or not 0 <= whole <= MAX_RANK:
        given = repr(rank if whole is None else whole)
        shown = given if len(given) <= 24 else given[:20] + "…"
        raise InputError(say("facade.bad-rank", shown=shown, max=MAX_RANK), path="rank")
    return whole


def serve_uploads() -> None:
    """This process serves uploads (the web app): every profile file it reads is held to the per-file
    byte and row budgets at their defaults (docs/security.md, Server memory), not only archives."""
    hold_to_budgets()


@dataclass(frozen=True)
class _Options:
    """diagnose()'s reading and report options."""

    rank: int | None
    baseline_role: str | None
    npu_smi: str | os.PathLike[str] | None
    isolate: bool
    translate: bool
    scheduler: str | None


def _diagnose(
    given: list[tuple[str, Source]],
    mindir: str | os.PathLike[str] | None,
    options: _Options,
    progress: Progress | None,
    lang: str,
) -> Report:
    """diagnose() once its arguments are checked: read, compare, analyse, assemble."""
    step = _stepper(progress, lang)
    prefer_jemalloc()
    rank, isolate, translate = options.rank, options.isolate, options.translate
    with Workspace(forbidden=public_folders()) as workspace:
        sides = _read_all(given, workspace, rank, step, isolate, options.scheduler)
        comparison_note = _align_ranks(sides, given, workspace, isolate, options.scheduler)
        if options.npu_smi is not None and isolate:
            sides[-1].run.npu_smi = isolation.read_npu_smi(options.npu_smi)
        elif options.npu_smi is not None:
            attach_npu_smi(sides[-1].run, options.npu_smi)
        if len(sides) >= 2:
            analysis = _pair(sides[0], sides[1], options.baseline_role, step, lang)
        else:
            analysis = _single(sides[0], given[0][0], step, lang)
        analysis.rank_jobs = _rank_jobs(analysis, sides)
        analysis.rank_note = comparison_note
        if len(sides) == 3 and analysis.baseline is not None:  # a pair's baseline: len(sides) >= 2
            analysis.after = _pair(analysis.baseline, sides[2], "first", _quiet, lang)
            analysis.inputs.append(_after_input(sides[2]))
        analysis.npu_smi = options.npu_smi is not None
        if _path_given(mindir):
            model = _load_model(mindir, step, isolate)
            _add_model(analysis, model)
            if analysis.after is not None:  # the same model, cross-linked with the after run
                _add_model(analysis.after, model)
        return _finish(analysis, step, translate)


def inspect_model(
    mindir: str | os.PathLike[str],
    *,
    progress: Progress | None = None,
    lang: str = "en",
    isolate: bool = True,
    translate: bool = True,
) -> Report:
    """Check one MINDIR on its own: export hygiene and fusion chains, ranked like a diagnosis.

    `isolate` and `translate` as in `diagnose`: decode the model in a child process under limits
    (default); build the document in the other languages too (default)."""
    check_lang(lang)
    if mindir is None or not str(mindir).strip():
        raise InputError(say("facade.no-model"), expected=say("facade.mindir-file"))
    try:
        return _inspect(mindir, _stepper(progress, lang), lang, isolate, translate)
    finally:  # the model's graph is unreachable once _inspect has returned
        release_graph_memory()


def _inspect(
    mindir: str | os.PathLike[str], step: _Step, lang: str, isolate: bool, translate: bool
) -> Report:
    model = _load_model(mindir, step, isolate)
    analysis = _Analysis(kind="mindir", lang=lang)
    _add_model(analysis, model)
    return _finish(analysis, step, translate)


def release_graph_memory() -> None:
    """After a request that held a model's graph: collect its reference cycles, then hand the freed
    memory back (release_memory). Without the collection a 100,000-node model leaves about 125 MiB
    resident in the server after the request (bench/hostile_load.py graph: 268 -> 144 MiB)."""
    gc.collect()
    release_memory()


def reprofile_script(report: Report, fixes: Sequence[str] | None = None) -> str:
    """The `reprofile.py` of a pair diagnosis: re-profile with the baseline's recorded profiler settings
    after the ticked fixes (cause ids; default the ranked causes), warm-up first, output packed for
    Perf Doctor (doctor.reprofile)."""
    from doctor.reprofile import reprofile_script as script

    return script(report, fixes)


# -------------------------------------------------------------------------------------------- inputs


def _path_given(path: str | os.PathLike[str] | None) -> TypeGuard[str | os.PathLike[str]]:
    """A path that names something (a MINDIR is one file): not None, not blank."""
    return path is not None and bool(str(path).strip())


def _given(source: Source | os.PathLike[str] | None) -> TypeGuard[Source | os.PathLike[str]]:
    if source is None:
        return False
    if isinstance(source, (str, os.PathLike)):
        return bool(str(source).strip())
    return len(source) > 0


class FolderFiles(list):  # a list of paths, as Source allows
    """The files of one uploaded folder with the folder's name (the browser sends only file names)."""

    def __init__(self, paths: Iterable[str], folder: str) -> None:
        super().__init__(paths)
        self.folder = folder


def display_name(source: Source) -> str:
    """A short name for an input: the folder or archive name, else the first of the uploaded files'
    names and how many more there are ("cpu_op_detail_info_0.csv +4")."""
    folder = getattr(source, "folder", None)
    if folder:
        return str(folder)
    if isinstance(source, (str, os.PathLike)):
        return Path(source).name or str(source)
    items = sorted(Path(p).name for p in source)
    if len(items) == 1:
        return items[0]
    return f"{items[0]} +{len(items) - 1}"  # the user's own file names, in no language


def _read_all(
    given: list[tuple[str, Source]],
    workspace: Workspace,
    rank: int | None,
    step: _Step,
    isolate: bool,
    scheduler: str | None = None,
) -> list[Side]:
    """Read and prepare the one or two profiles; two are handled at once in two threads.

    Much of a read is pyarrow parsing and compute, which release the GIL, so one run's Python work
    overlaps the other's parsing (0.55 -> 0.45 s for a 100k-row pair). Results come out in input order
    and progress is reported from this thread; when both inputs are bad, both problems are raised
    together (InputProblems), so the user can fix both at once. A lone profile keeps the side it was
    given as in its errors."""
    if len(given) == 1:
        step(0.25, "p_read_target")
        return [_read(given[0][0], given[0][1], workspace, rank, isolate, scheduler)]
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="perf-doctor-read") as pool:
        pending = [pool.submit(_read, role, src, workspace, rank, isolate, scheduler) for role, src in given]
        sides: list[Side] = []
        problems: list[InputError] = []
        for (role, _), future in zip(given, pending, strict=True):
            step(READ_PROGRESS[role], f"p_read_{role}")
            try:
                sides.append(future.result())
            except InputError as error:
                problems.append(error)
    if len(problems) > 1:
        raise InputProblems(problems)
    if problems:
        raise problems[0]
    return sides


def _read(
    role: str,
    source: Source,
    workspace: Workspace,
    rank: int | None,
    isolate: bool,
    scheduler: str | None = None,
) -> Side:
    """Materialise, read and prepare one profile (forward kernels, per-operator aggregates: the same
    whatever its role); errors name the role and the user's own file, never the server's folders. A job
    with a slow rank also gets its typical rank read (Side.typical), to diagnose the slow one against."""
    name = display_name(source)
    unpack = isolation.materialize if isolate else materialize
    folder: Path | None = None
    try:
        folder = unpack(source, workspace)
        if isolate:  # every reader of the upload runs in the limited child, SQLite included
            run, typical_run = isolation.read_profile(
                folder, rank=rank, source=name, scheduler=scheduler, workspace=workspace
            )
            typical = None if typical_run is None else prepare(typical_run)
        else:
            cands = find_runs(folder)  # found once for the job and for its typical rank
            run = read_folder(folder, rank=rank, source=name, scheduler=scheduler, candidates=cands)
            typical = _typical_rank(folder, run, name, cands)
    except InputError as error:
        uploaded_path = error.path
        if folder is not None:  # relative to the upload, with the file versions known to write it
            error = in_user_terms(error, folder, name)
        # Loose uploaded files are named by their own names (_user_file), not by the rebuilt folder.
        path = error.path if isinstance(source, (str, os.PathLike)) else uploaded_path
        raise SideError(role, _user_file(path, source), error.problem, expected=error.expected) from None
    side = prepare(run)
    side.typical = typical
    return side


def _align_ranks(
    sides: list[Side],
    given: list[tuple[str, Source]],
    workspace: Workspace,
    isolate: bool,
    scheduler: str | None,
) -> str:
    """Pair two multi-rank jobs rank by rank when they hold the same ranks: both sides' operator analysis
    reads the slow rank (the target's, else the baseline's) or else the same lowest rank; jobs of different
    ranks are compared through a typical rank of each. Returns how they were paired (empty for one input,
    or when neither holds several ranks)."""
    if len(sides) < 2 or (sides[0].run.ranks is None and sides[1].run.ranks is None):
        return ""
    first, second = sides[0].run, sides[1].run
    ranks = [set(r.meta.ranks_available) for r in (first, second)]
    if first.ranks is None or second.ranks is None or ranks[0] != ranks[1]:
        return say(
            "ranks.compare-typical",
            first=len(ranks[0]) or 1,
            second=len(ranks[1]) or 1,
            rank_first=first.meta.rank if first.meta.rank is not None else 0,
            rank_second=second.meta.rank if second.meta.rank is not None else 0,
        )
    slow = [r.ranks.straggler.rank for r in (second, first) if r.ranks.straggler is not None]  # pyright: ignore[reportOptionalMemberAccess]  # both have ranks here
    wanted = slow[0] if slow else min(first.meta.rank or 0, second.meta.rank or 0)
    for i in (0, 1):
        if sides[i].run.meta.rank != wanted:
            old = sides[i]
            role, source = given[i]
            sides[i] = _read(role, source, workspace, wanted, isolate, scheduler)
            sides[i].run.ranks, sides[i].typical = old.run.ranks, old.typical
            if old.run.ranks is not None:
                old.run.ranks.chosen = wanted
            sides[i].run.limitations.extend(lim for lim in old.run.limitations if lim.topic == "ranks")
    return say("ranks.compare-same", rank=wanted)


def _rank_jobs(analysis: _Analysis, sides: list[Side]) -> list[tuple[str, Any, list[Any]]]:
    """(role, RankSet, the slow rank's causes) of every multi-rank input, in the report's roles."""
    roles = {id(analysis.baseline): "baseline", id(analysis.target): "target"}
    out = []
    for i, side in enumerate(sides):
        if side.run.ranks is None:
            continue
        from doctor.ranks import slow_rank_causes  # the section's model (pydantic) only for a multi-rank job

        role = "after" if i == 2 else roles.get(id(side), "target")
        out.append((role, side.run.ranks, slow_rank_causes(side)))
    return out


def _typical_rank(folder: Path, run: Any, name: str, cands: list[Any]) -> Side | None:
    """The typical rank of a job with a slow rank, read in full and prepared; None without a slow rank."""
    ranks = run.ranks
    if ranks is None or ranks.straggler is None:
        return None
    typical = read_folder(folder, rank=ranks.straggler.typical_rank, source=name, candidates=cands)
    return prepare(typical)


def _user_file(path: str | None, source: Source) -> str:
    """The file an error is about as the user knows it: the reader's path without the server's folders
    (an uploaded file, or one the reader missed among them), else the input's own name or, for loose
    uploaded files, their names."""
    shown = user_file(path)
    if shown:
        return shown
    if isinstance(source, (str, os.PathLike)):
        return display_name(source)
    names = [Path(p).name for p in source]
    if len(names) <= 3:
        return ", ".join(names)
    return f"{', '.join(names[:2])} and {len(names) - 2} more files"


def _load_model(path: str | os.PathLike[str], step: _Step, isolate: bool) -> _Model:
    """Decode the MINDIR (in a limited child process when `isolate`), then find chains and hygiene."""
    import graph  # imported on first use: networkx and protobuf are not needed to compare profiles

    step(0.6, "p_model")
    try:
        model = isolation.load_mindir(path) if isolate else graph.load_mindir(path)
    except InputError as error:  # name the user's file, never the server's upload path
        raise SideError("mindir", Path(path).name, error.problem, expected=error.expected) from None
    chains = graph.find_chains(model)
    return _Model(model, chains, Path(path).name, graph.hygiene_symptoms(model, chains))


# ------------------------------------------------------------------------------------------ analysis


def _pair(first: Side, second: Side, baseline_role: str | None, step: _Step, lang: str) -> _Analysis:
    from doctor import build

    step(0.4, "p_compare")
    comparison: Comparison = compare_sides(first, second, baseline=baseline_role)
    step(0.5, "p_analyze")
    analysis = _Analysis(kind="pair", lang=lang)
    analysis.symptoms = analyze_pair(comparison)
    for role, side in (("baseline", comparison.baseline), ("target", comparison.target)):
        analysis.inputs.append(build.input_entry(role, side.run.meta.source, "profile", side.run.meta.layout))
        analysis.runs.append(build.run_meta(side.run, side, role))
        analysis.limitations += [(role, lim) for lim in side.run.limitations]
        analysis.steps += build.step_records(side, role)
    analysis.timing = build.pair_timing(comparison)
    analysis.notes = list(comparison.notes)
    analysis.operators = build.operator_records(comparison.table, lang)
    analysis.table = comparison.table
    analysis.boards = build.leaderboards(comparison.table, ("baseline", "target"))
    analysis.target = comparison.target
    analysis.baseline = comparison.baseline
    return analysis


def _after_input(side: Side) -> Input:
    from doctor import build

    return build.input_entry("after", side.run.meta.source, "profile", side.run.meta.layout)


def _quiet(fraction: float, key: str) -> None:
    """No progress for the second comparison of a three-run diagnosis (its steps repeat the first's)."""


def _single(side: Side, given_as: str, step: _Step, lang: str) -> _Analysis:
    from doctor import build

    step(0.45, "p_analyze")
    run = side.run
    analysis = _Analysis(kind="single", lang=lang)
    analysis.symptoms = analyze_run(side, "target")
    analysis.inputs.append(build.input_entry("target", run.meta.source, "profile", run.meta.layout))
    analysis.runs.append(build.run_meta(run, side, "target"))
    analysis.limitations = [("target", lim) for lim in run.limitations]
    analysis.steps = build.step_records(side, "target")
    analysis.timing = build.single_timing(side)
    analysis.notes = [_single_note(given_as)]
    analysis.operators = build.single_operator_records(side)
    analysis.boards = build.leaderboards(None, (), single=side)
    analysis.target = side
    return analysis


def _single_note(given_as: str) -> str:
    return say("note.single", role=say(f"role.{given_as}"))


def _add_model(analysis: _Analysis, model: _Model) -> None:
    """Model inputs, hygiene symptoms and, when a profile is present, the chain-to-kernel cross-link."""
    from doctor import build

    analysis.model = model
    analysis.inputs.append(build.input_entry("mindir", model.name, "mindir", None))
    if analysis.target is not None:
        import graph

        match = graph.model_match(model.model, analysis.target.run)
        if match is not None and match[0] < graph.MODEL_MATCH_MIN:
            # Another model's MINDIR: its findings are not evidence about these profiles.
            analysis.model_foreign = True
            analysis.model_notes.append(
                say(
                    "model.not-this-profile",
                    name=model.name,
                    share=match[0],
                    how=say(f"model.match-{match[1]}"),
                )
            )
            return
        links, symptoms = graph.crosslink(model.model, model.chains, analysis.target.run)
        analysis.links = links
        analysis.symptoms += symptoms
    analysis.symptoms += model.symptoms


def _input_kinds(analysis: _Analysis) -> set[str]:
    kinds = {"pair"} if analysis.kind == "pair" else {"single"} if analysis.kind == "single" else set()
    if analysis.model is not None and not analysis.model_foreign:
        kinds.add("mindir")
        if analysis.kind != "mindir":
            kinds.add("mindir+profile")
    return kinds


def _finish(analysis: _Analysis, step: _Step, translate: bool) -> Report:
    """Evaluate the knowledge base and assemble the document in the report language and, when
    `translate`, in each other language beside it (Report.translations: a reopened case or a switched
    page shows the viewer's)."""
    from doctor import build

    step(0.85, "p_rules")
    kinds = _input_kinds(analysis)
    found = _evaluate(analysis, kinds)
    step(0.95, "p_report")
    model = analysis.model
    langs = [analysis.lang, *(lang for lang in LANGS if translate and lang != analysis.lang)]
    documents = {}
    for lang in langs:  # the graph section says why a chain is blocked, so it is built per language
        section = None
        if model is not None:
            section = build.graph_section(model.model, model.chains, model.name, analysis.links, lang)
        documents[lang] = _document(analysis, found, kinds, section, lang)
    document = documents.pop(analysis.lang)
    figures = {lang: _chain_figure(model, lang) for lang in langs} if model is not None else {}
    figure = figures.pop(analysis.lang, None)
    step(1.0, "p_done")
    return Report(document, chain_figure=figure, translated=documents, translated_figures=figures)


def _document(
    analysis: _Analysis, found: Any, kinds: set[str], section: Graph | None, lang: str
) -> ReportDocument:
    """The report document of one analysis in `lang`, built as the typed model (doctor.build); `after` only
    when an after run was given."""
    from doctor import build
    from doctor.model import OPERATOR_COLUMN_NAMES, Generator, Leaderboards, Operators, ReportDocument
    from doctor.verdict import verdict
    from doctor.version import SCHEMA_VERSION

    timing = analysis.timing
    causes = build.cause_records(found.causes, lang)
    model = analysis.model
    operators = analysis.operators
    if analysis.table is not None and lang != analysis.lang:
        operators = build.operator_records(analysis.table, lang)
    ranks = _ranks_data(analysis, lang)
    after = None if analysis.after is None else _after_section(causes, analysis, lang)
    return ReportDocument.of(
        schema_version=SCHEMA_VERSION,
        generator=Generator.of(name="perf-doctor", version=VERSION),
        created_utc=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        lang=lang,
        kind=analysis.kind,
        input_kinds=sorted(kinds),
        inputs=analysis.inputs,
        runs=analysis.runs,
        timing=timing,
        verdict=verdict(
            analysis.kind,
            timing,
            causes,
            found.status,
            len(found.undecided),
            lang,
            section,
            runs=analysis.runs,
            operators=operators,
            npu_smi=analysis.npu_smi,
            ranks=ranks,
            after=after,
        ),
        causes=causes,
        symptoms=build.symptom_records(analysis.symptoms, lang),
        operators=Operators.of(columns=list(OPERATOR_COLUMN_NAMES), total=len(operators), records=operators),
        leaderboards=analysis.boards or Leaderboards.of(baseline=[], target=[]),
        steps=analysis.steps,
        graph=section,
        warnings=build.warning_records(
            found.undecided,
            analysis.limitations,
            analysis.notes,
            [*analysis.model_notes, *(model.model.warnings if model is not None else [])],
            lang,
            mindir_given=model is not None and not analysis.model_foreign,
        ),
        after=after,
        ranks=ranks,
    )


def _ranks_data(analysis: _Analysis, lang: str) -> Ranks | None:
    """The Ranks section, or None when no input holds several ranks."""
    if not analysis.rank_jobs:
        return None
    from doctor.ranks import ranks_section

    return ranks_section(analysis.rank_jobs, analysis.rank_note, lang)


def _evaluate(analysis: _Analysis, kinds: set[str]) -> Any:
    """The knowledge base's ranked causes for one analysis, weighed against its target step time."""
    timing = analysis.timing
    step_ms = None if timing is None else timing.target_ms_per_step
    return evaluate(analysis.symptoms, [lim for _, lim in analysis.limitations], kinds, step_ms)


def _after_section(causes: list[Cause], analysis: _Analysis, lang: str) -> After:
    """Diagnose baseline vs after like any pair, then judge the first diagnosis's causes on it."""
    from doctor import build
    from doctor.followup import Measured, after_section

    second = analysis.after
    target = analysis.target
    fixed = None if second is None else second.target
    if second is None or target is None or fixed is None:  # a pair with an after run sets all three
        raise ValueError("an after section needs a pair with an after run")
    found = _evaluate(second, _input_kinds(second))
    after_causes = build.cause_records(found.causes, lang)
    measured = Measured(
        target.ms_per_step,
        fixed.ms_per_step,
        target.batch,
        fixed.batch,
        _mean_wall(analysis.steps, "target"),
        _mean_wall(second.steps, "target"),
    )
    run = build.run_meta(fixed.run, fixed, "after")
    return after_section(causes, after_causes, measured, run)


def _mean_wall(steps: list[Step], role: str) -> float | None:
    """Mean recorded wall time per step of one role's steps, or None when none records it."""
    walls = [s.wall_ms for s in steps if s.role == role and s.wall_ms is not None]
    return sum(walls) / len(walls) if walls else None


def _chain_figure(model: _Model | None, lang: str) -> Any:
    """The fusion-chain figure in `lang` (drawn once per report language, as the documents are: a
    switched or reopened case shows the figure's legend and notes in the viewer's language)."""
    if model is None:
        return None
    from doctor.plots import chain_graph_figure

    return chain_graph_figure(model.model, model.chains, lang=lang)


# ------------------------------------------------------------------------------------------ progress


def _stepper(progress: Progress | None, lang: str) -> _Step:
    """A progress callback taking a text key, translated into the report language."""

    def step(fraction: float, key: str) -> None:
        if progress is not None:
            progress(fraction, t(key, lang))

    return step

"""Command line: `perf-doctor compare`, `outputs`, `inspect`, `triage`, `pack` and `serve`.

Exit codes: 0 done (for `triage`: the batch completed, even when some submissions were broken; their rows
say why); 2 bad input or usage (one line on stderr); 1 internal error (one line plus a hint to rerun with
--debug, which prints the traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from core import InputError, error_line, in_lang, say
from doctor.config import AppConfig
from doctor.facade import diagnose, inspect_model
from doctor.i18n import t
from doctor.problems import SIDES, SideError, problems_of
from doctor.render import RENDERERS, check_output, render
from doctor.report import Report
from sandbox import fork_warm_reader

if TYPE_CHECKING:  # the case store (sqlite3) is imported only by the commands that keep cases
    from desk.cases import CaseBook

PROG = "perf-doctor"
EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line with exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT, f"{PROG}: error: {message} (see {PROG} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The command-line grammar."""
    parser = _Parser(
        prog=PROG, description="Diagnose why a MindSpore model that trains fast runs slow at inference."
    )
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    compare = commands.add_parser("compare", help="compare a fast (baseline) and a slow (target) profile")
    compare.add_argument("baseline", help="profiler output folder or .zip/.tar.gz archive of the fast run")
    compare.add_argument("target", help="profiler output folder or archive of the slow run")
    compare.add_argument("--mindir", help="MINDIR of the same model, for graph checks and chain cross-links")
    compare.add_argument(
        "--after", help="the target profiled again after the fixes: did each cause go away, what was gained"
    )
    compare.add_argument("--case", help="with --after: store this diagnosis on the case with this id")
    compare.add_argument("--db", help="with --case: the case database (default: PERF_DOCTOR_CASE_DB)")
    compare.add_argument(
        "--rank",
        type=int,
        help="read only this rank of a multi-rank job (default: every rank, see docs/scaling.md)",
    )
    compare.add_argument(
        "--scheduler", help="a Dask scheduler (tcp://HOST:8786) whose workers read the ranks (default: local)"
    )
    compare.add_argument(
        "--dumps",
        nargs=2,
        metavar=("BASELINE_DUMP", "TARGET_DUMP"),
        help="both runs' dumps: adds where outputs part ways",
    )
    compare.add_argument(
        "--dump-mapping", help="with --dumps: layer_mapping.yaml for MindSpore against PyTorch"
    )
    compare.add_argument(
        "--baseline", dest="baseline_role", choices=("first", "second"), help="which argument is the baseline"
    )
    _output_options(compare)

    _outputs_parser(commands)

    inspect = commands.add_parser("inspect", help="check a MINDIR model on its own")
    inspect.add_argument("model", help="a .mindir file")
    _output_options(inspect)

    _triage_parser(commands)

    pack = commands.add_parser(
        "pack", help="write a small archive of only the files Perf Doctor reads from a run folder"
    )
    pack.add_argument("run_folder", help="profiler output folder (raw PROF_*/device_*/data is left out)")
    pack.add_argument("-o", "--output", help="archive to write (default: <folder name>.perf-doctor.zip)")
    pack.add_argument("--rank", type=int, help="pack only this rank (default: every rank)")
    pack.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print the traceback of an internal error",
    )

    serve = commands.add_parser("serve", help="start the web app")
    serve.add_argument("--port", type=int, help="port to listen on (default: Gradio's, 7860)")
    serve.add_argument("--example", action="store_true", help="preload a bundled example")
    return parser


def _triage_parser(commands: argparse._SubParsersAction) -> None:
    """`perf-doctor triage INBOX`: one row per submission, the Triage tab's columns."""
    triage = commands.add_parser(
        "triage",
        help="diagnose every submission (sub-folder or archive) of an inbox folder, a few in parallel",
    )
    triage.add_argument(
        "inbox", help="folder whose entries are submissions: folders, archives or .mindir files"
    )
    triage.add_argument("--out", help="write the rows to this .csv or .json file (default: CSV on stdout)")
    triage.add_argument("--jobs", type=int, default=2, help="submissions diagnosed at once (default 2)")
    triage.add_argument(
        "--timeout", type=float, default=600.0, help="seconds one submission may take (default 600)"
    )
    triage.add_argument(
        "--store", action="store_true", help="also keep each submission as a case (PERF_DOCTOR_CASE_DB)"
    )
    triage.add_argument("--db", help="keep the cases in this SQLite file (implies --store)")
    triage.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the verdicts")
    triage.add_argument("--quiet", action="store_true", help="no progress bar")
    triage.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print the traceback of an internal error",
    )


def _outputs_parser(commands: argparse._SubParsersAction) -> None:
    """`perf-doctor outputs A B`: where two runs' outputs part ways, and why."""
    outputs = commands.add_parser(
        "outputs", help="compare two runs' dumps layer by layer: where and why they differ"
    )
    outputs.add_argument("baseline", help="dump folder or archive (msprobe dump.json, statistic.csv or .npy)")
    outputs.add_argument("target", help="dump folder or archive of the other run")
    outputs.add_argument("--mapping", help="layer_mapping.yaml for a MindSpore-vs-PyTorch pair")
    outputs.add_argument(
        "--format", choices=("md", "json", "csv", "html"), default="md", help="report format"
    )
    outputs.add_argument("-o", "--output", help="write the report to this file instead of standard output")
    outputs.add_argument("--lang", choices=("en", "zh"), default="en", help="report language")
    outputs.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="print tracebacks")


def _outputs(args: argparse.Namespace) -> int:
    """Run `perf-doctor outputs` (imported here: `compare --format json` needs none of it)."""
    from doctor.outputs_report import compare_outputs, render_outputs

    report = compare_outputs(args.baseline, args.target, mapping=args.mapping, lang=args.lang)
    text = render_outputs(report, args.format)
    if args.output:
        write_output(Path(args.output), text, args.output)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=tuple(RENDERERS), default="md", help="report format (default: md)"
    )
    parser.add_argument("-o", "--output", help="write the report to this file instead of standard output")
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="report language")
    # SUPPRESS keeps a --debug given before the command from being reset by this sub-command's default.
    parser.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print the traceback of an internal error",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (the console script exits with it). Without `argv` (the
    console script, `python -m cli.main`) this process is the program, and its profile readers' warm
    zygote is a fork of it; with `argv` (called in another program's process, e.g. the tests) that
    process is never forked."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # --help (0) or a usage error (2, already reported in one line)
        return int(done.code or 0)
    if argv is None and args.command in ("compare", "outputs"):
        fork_warm_reader()  # the profile and dump readers fork from this process: no second interpreter
    try:
        return _run(args)
    except InputError as error:
        print(f"{PROG}: error: {_said(error, getattr(args, 'lang', 'en'))}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as error:  # anything else is our bug: one line, traceback only on request
        if args.debug:
            traceback.print_exc()
        first = str(error).splitlines()[0] if str(error) else ""
        print(
            f"{PROG}: internal error: {type(error).__name__}: {first} (rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _said(error: InputError, lang: str) -> str:
    """The error's one line in the language the command was asked for (`--lang`; English without it):
    each problem of the inputs, its side (baseline, target) said in that language too."""
    if lang == "en":
        return error.message
    return " | ".join(_problem_line(problem, lang) for problem in problems_of(error))


def _problem_line(problem: InputError, lang: str) -> str:
    if isinstance(problem, SideError) and problem.side in SIDES:
        side = t(f"side_{problem.side}", lang)  # the words the page's problem lines use
        where = f"{side} {problem.file}" if problem.file else side
        problem = InputError(problem.problem, path=where, expected=problem.expected)
    return str(in_lang(error_line(problem), lang))


def app_command(port: int | None, example: bool) -> list[str]:
    """The command that starts the web app: the app is the top layer and runs as its own program."""
    command = [sys.executable, "-m", "app"]
    if port is not None:
        command += ["--port", str(port)]
    return [*command, "--example"] if example else command


def serve(port: int | None, example: bool) -> None:
    """Replace this process with the app (`python -m app`): the CLI never imports the layer above it,
    and signals (SIGTERM from a container) reach the app directly."""
    command = app_command(port, example)
    os.execv(command[0], command)


def _run(args: argparse.Namespace) -> int:
    if args.command == "serve":
        serve(args.port, args.example)
        return EXIT_OK  # reached only where execv is stubbed (tests): it replaces the process
    if args.command == "triage":
        return _triage(args)
    if args.command == "outputs":
        return _outputs(args)
    if args.command == "pack":
        return _pack(args)
    inputs = (
        [args.baseline, args.target, args.mindir, args.after] if args.command == "compare" else [args.model]
    )
    if args.output is not None:  # before the analysis: a report must never overwrite what it reads
        check_output(args.output, inputs)
    if args.command == "compare":
        report = diagnose(
            args.baseline,
            args.target,
            args.mindir,
            rank=args.rank,
            scheduler=args.scheduler,
            baseline_role=args.baseline_role,
            lang=args.lang,
            after=args.after,
            translate=bool(args.case),  # only a stored case keeps the other languages
            dumps=tuple(args.dumps) if args.dumps else None,
            dump_mapping=args.dump_mapping,
        )
        if args.case:
            _attach_after(args, report)
    else:
        report = inspect_model(args.model, lang=args.lang, translate=False)
    _emit(report, args.format, args.output)
    return EXIT_OK


def _attach_after(args: argparse.Namespace, report: Report) -> None:
    """`compare ... --after A --case ID`: the case receives this diagnosis with its after run."""
    if not args.after:
        raise InputError(say("cli.case-needs-after"), expected=say("cli.after-profile"))
    if not (args.db or AppConfig.from_env().case_db):
        raise InputError(say("cli.no-case-db"), expected=say("cli.db-file-or-env"))
    from desk.cases import CaseBook

    summary = CaseBook.from_config(AppConfig.from_env(), args.db).attach_after(args.case, report)
    print(
        f"{PROG}: case {summary.case_id}: resolved {summary.resolved or '-'}; remaining "
        f"{summary.remaining or '-'}",
        file=sys.stderr,
    )


def _triage(args: argparse.Namespace) -> int:
    """Run the batch; the rows go to --out or stdout, a one-line tally to stderr."""
    from desk.triage.batch import triage_inbox
    from desk.triage.output import output_format, render_rows

    if args.jobs < 1 or not args.timeout > 0:
        raise InputError(say("cli.jobs-positive"))
    out = Path(args.out) if args.out else None
    fmt = output_format(out) if out is not None else "csv"
    if out is not None and not out.parent.is_dir():
        raise InputError(say("cli.no-folder-for", what=say("cli.what-rows")), path=args.out)
    if out is not None and out.is_dir():
        raise InputError(say("cli.is-folder-for", what=say("cli.what-rows")), path=args.out)
    book = _case_book(args.db) if args.store or args.db else None
    inbox, progress = Path(args.inbox), not args.quiet
    rows = triage_inbox(
        inbox, jobs=args.jobs, timeout=args.timeout, lang=args.lang, book=book, progress=progress
    )
    text = render_rows(rows, fmt)
    if out is None:
        sys.stdout.write(text)
    else:
        write_output(out, text, say("cli.what-rows"))
    print(f"{PROG}: {_tally(rows)}", file=sys.stderr)
    return EXIT_OK


def _pack(args: argparse.Namespace) -> int:
    """Write the archive and say what it kept, what it left out and how big it is."""
    from diagnosis import pack_run

    out = Path(args.output) if args.output else None
    packed = pack_run(Path(args.run_folder), out, rank=args.rank)
    for name, size in packed.kept:
        print(f"kept  {name} ({_bytes(size)})")
    print(
        f"skipped {packed.skipped_files} other files ({_bytes(packed.skipped_bytes)}): "
        "not read by Perf Doctor"
    )
    print(f"wrote {packed.archive} ({_bytes(packed.size)}, {len(packed.kept)} files)")
    return EXIT_OK


def _bytes(n: int) -> str:
    """Bytes as KiB/MiB/GiB."""
    value = float(n)
    for unit in ("bytes", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _case_book(db: str | None) -> CaseBook:
    """The case book `--db` or the environment names; a temporary one would vanish, so it is refused."""
    from desk.cases import CaseBook

    config = AppConfig.from_env()
    if db is None and config.case_db is None:
        raise InputError(say("cli.no-case-db-configured"), expected=say("cli.env-or-db-path"))
    return CaseBook.from_config(config, path=db)


def _tally(rows: Sequence[Mapping[str, object]]) -> str:
    """'9 submissions: 6 diagnosed, 1 error, 2 ambiguous'."""
    if not rows:
        return "no submissions found"
    errors = sum(1 for row in rows if row["kind"] == "error")
    unclear = sum(1 for row in rows if row["kind"] == "ambiguous")
    diagnosed = len(rows) - errors - unclear
    return f"{len(rows)} submissions: {diagnosed} diagnosed, {errors} error, {unclear} ambiguous"


def _emit(report: Report, fmt: str, output: str | None) -> None:
    """Print the report, or write it where the user asked."""
    text = render(report, fmt)
    if output is None:
        sys.stdout.write(text)
        return
    write_output(Path(output), text, say("cli.what-report"))


def write_output(target: Path, text: str, what: object) -> None:
    """Write `text` to the file the user named; a folder, a missing folder or a failed write (a full
    disk, /dev/full, no permission) is an InputError naming the path, never a traceback."""
    if target.is_dir():
        raise InputError(say("cli.is-folder-for", what=what), path=str(target))
    if not target.parent.is_dir():
        raise InputError(say("cli.no-folder-for", what=what), path=str(target))
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as error:
        raise InputError(
            say("cli.cannot-write", what=what, reason=error.strerror or error), path=str(target)
        ) from None


if __name__ == "__main__":  # pragma: no cover - `python -m cli.main`
    sys.exit(main())

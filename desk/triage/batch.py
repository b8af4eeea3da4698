"""Batch triage of an inbox: every submission diagnosed in its own process, a few at a time.

Each submission runs in a fresh child process (forked from a forkserver that has the analysis code
imported, so starting one is cheap). The parent waits on the children's pipes and sentinels, so a child
that crashes (killed, out of memory, segfault) or runs past the timeout is recorded for that submission
alone and the others go on. concurrent.futures.ProcessPoolExecutor was not used: it cannot stop one hung
task, and one dead worker breaks the whole pool and every task in flight with it.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import time
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, TypedDict

from tqdm import tqdm

from core import InputError, JsonObject
from desk.cases import STATUSES, CaseBook, summarize
from desk.triage.inbox import Ambiguous, plan_submission, submissions
from desk.triage.view import TriageRow, when_text
from diagnosis import Workspace
from doctor.config import public_folders
from doctor.facade import diagnose
from doctor.report import Report


class Result(TypedDict):
    """What diagnosing one submission gave: its kind, why there is no report (or how the inputs were
    understood), the report as JSON data and the chain figure as plotly JSON (None when absent)."""

    kind: str
    message: str
    report: JsonObject | None
    figure: str | None


Work = Callable[[str, str], Result]
DEFAULT_JOBS = 2
DEFAULT_TIMEOUT_S = 600.0


def triage_submission(path: str, lang: str = "en") -> Result:
    """Diagnose one submission (runs in a child process). Never raises: a broken submission comes back
    with kind "error", an unclear one with kind "ambiguous", each with the reason as message."""
    try:
        with warnings.catch_warnings(), Workspace(forbidden=public_folders()) as workspace:
            warnings.simplefilter("ignore")  # reader warnings would garble the progress bar
            plan = plan_submission(Path(path), workspace)
            report = diagnose(
                plan.baseline, plan.target, plan.mindir, baseline_role=plan.baseline_role, lang=lang
            )
            figure = None if report.chain_figure is None else report.chain_figure.to_json()
            return {"kind": plan.kind, "message": plan.message, "report": report.to_dict(), "figure": figure}
    except Ambiguous as error:
        return _failed("ambiguous", error.message)
    except InputError as error:
        return _failed("error", error.message)
    except Exception as error:  # a bug on this input: recorded, the batch goes on
        first = (str(error).splitlines() or [""])[0]
        return _failed("error", f"internal error: {type(error).__name__}: {first}")


def _failed(kind: str, message: str) -> Result:
    return {"kind": kind, "message": message, "report": None, "figure": None}


# ------------------------------------------------------------------------------------------ processes


def _child(work: Work, item: str, lang: str, conn: Connection) -> None:
    """Child process body: run `work` and send its result back."""
    try:
        result = work(item, lang)
    except BaseException as error:  # even KeyboardInterrupt: the parent must get an answer
        result = _failed("error", f"stopped: {type(error).__name__}")
    conn.send(result)
    conn.close()


@dataclass
class _Job:
    """One running child."""

    index: int
    process: Any  # multiprocessing Process of the forkserver context
    conn: Connection
    deadline: float
    result: Result | None = field(default=None)

    def check(self, timeout: float) -> bool:
        """Whether the child is finished (result sent, crashed or timed out); fills `result`."""
        if self.conn.poll():
            try:
                self.result = self.conn.recv()
            except (EOFError, OSError):
                self.result = _failed("error", _crash_text(self._exit_code()))
        elif not self.process.is_alive():
            self.result = _failed("error", _crash_text(self._exit_code()))
        elif time.monotonic() > self.deadline:
            self.stop()
            self.result = _failed("error", f"no result within {timeout:g} s: stopped")
        return self.result is not None

    def _exit_code(self) -> int | None:
        self.process.join(5)
        return self.process.exitcode

    def stop(self) -> None:
        """Kill the child if it still runs and release its pipe."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()


def _crash_text(code: int | None) -> str:
    """Why a child ended without a result."""
    if code is not None and code < 0:
        try:
            return f"the worker process crashed ({signal.Signals(-code).name})"
        except ValueError:
            return f"the worker process crashed (signal {-code})"
    return f"the worker process ended without a result (exit code {code})"


def _context() -> Any:
    """Forkserver processes (safe with threads in the parent) with the analysis code preloaded."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def run_parallel(
    items: Sequence[str],
    *,
    jobs: int = DEFAULT_JOBS,
    timeout: float = DEFAULT_TIMEOUT_S,
    lang: str = "en",
    work: Work = triage_submission,
    on_done: Callable[[int, Result], None] | None = None,
) -> list[Result]:
    """Run `work(item, lang)` for every item, each in its own process, at most `jobs` at a time; results
    in the order of `items`. `work` must be a module-level function (it is sent to the children)."""
    if jobs < 1 or timeout <= 0:
        raise ValueError("jobs and timeout must be positive")
    ctx = _context()
    results: list[Result | None] = [None] * len(items)
    pending, running = deque(range(len(items))), []
    try:
        while pending or running:
            while pending and len(running) < jobs:
                running.append(_start(ctx, work, pending.popleft(), items, lang, timeout))
            soonest = min(job.deadline for job in running) - time.monotonic()
            handles = [job.conn for job in running] + [job.process.sentinel for job in running]
            wait(handles, timeout=max(0.0, soonest) + 0.05)
            for job in [job for job in running if job.check(timeout)]:
                running.remove(job)
                job.stop()
                results[job.index] = job.result
                if on_done is not None:
                    on_done(job.index, job.result)
    finally:
        for job in running:
            job.stop()
    return [r if r is not None else _failed("error", "not run") for r in results]


def _start(ctx: Any, work: Work, index: int, items: Sequence[str], lang: str, timeout: float) -> _Job:
    """Start the child for one item."""
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_child, args=(work, items[index], lang, send), daemon=True)
    process.start()
    send.close()  # the parent keeps only its end, so a dead child shows as end-of-file
    return _Job(index, process, receive, time.monotonic() + timeout)


# ---------------------------------------------------------------------------------------------- inbox


def result_row(name: str, result: Result, when: datetime, case_id: str = "") -> TriageRow:
    """The triage row (TRIAGE_COLUMNS) of one submission."""
    report = None if result["report"] is None else Report.from_dict(result["report"])
    facts = summarize(None if report is None else report.document)
    return {
        "when": when_text(when),
        "case": case_id,
        "submission": name,
        "kind": result["kind"],
        "layouts": facts["layouts"],
        "verdict": facts["verdict"],
        "top_cause": facts["top_cause"],
        "severity": facts["severity"],
        "confidence": facts["confidence"],
        "recoverable_ms": facts["recoverable_ms"],
        "resolved": facts["resolved"],
        "remaining": facts["remaining"],
        "gain_ms": facts["gain_ms"],
        "predicted_gain_ms": facts["predicted_gain_ms"],
        "ranks": facts["ranks"],
        "status": STATUSES[0],
        "note": "",
        "message": result["message"],
    }


def store_result(book: CaseBook, path: Path, result: Result) -> str:
    """Keep one submission as a case (its archive too, when the operator keeps uploads)."""
    report = None if result["report"] is None else Report.from_dict(result["report"])
    return book.record(
        report,
        given=[("submission", str(path))],
        source=path.name,
        kind=result["kind"],
        message=result["message"],
        figure=result["figure"],
    )


def triage_inbox(
    inbox: Path,
    *,
    jobs: int = DEFAULT_JOBS,
    timeout: float = DEFAULT_TIMEOUT_S,
    lang: str = "en",
    book: CaseBook | None = None,
    progress: bool = True,
    work: Work = triage_submission,
) -> list[TriageRow]:
    """One triage row per submission of `inbox`, in name order; with `book`, each is also kept as a
    case. A progress bar goes to stderr."""
    paths = submissions(inbox)
    rows: list[TriageRow | None] = [None] * len(paths)
    with _progress_bar(len(paths), progress) as bar:

        def done(index: int, result: Result) -> None:
            case_id = store_result(book, paths[index], result) if book is not None else ""
            rows[index] = result_row(paths[index].name, result, datetime.now(timezone.utc), case_id)
            bar.set_postfix_str(paths[index].name[:40], refresh=False)
            bar.update(1)

        run_parallel([str(p) for p in paths], jobs=jobs, timeout=timeout, lang=lang, work=work, on_done=done)
    return [row for row in rows if row is not None]


def _progress_bar(total: int, enabled: bool) -> Any:
    """A tqdm bar on stderr (a no-op when disabled)."""
    return tqdm(total=total, desc="triage", unit="submission", file=sys.stderr, disable=not enabled)

"""Streaming readers for Chrome-trace `trace_view.json` files (a JSON list of events).

Two ways in, both single passes with bounded memory:

- :func:`iter_events` decodes every event, one at a time, with ``json.JSONDecoder.raw_decode`` over
  text chunks (used when the trace is the only source of kernels or ops).
- :func:`scan_events` finds marker byte strings (``"AI Core Freq"``, ``ProfilerStep#``) and decodes only
  the events that contain them, so a gigabyte trace costs a byte search, not a JSON parse.
"""

from __future__ import annotations

import json
import mmap
import os
import re
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from core.errors import InputError
from core.jsontypes import JsonObject, JsonValue
from core.text import Text, say
from diagnosis.readers.io import (
    budget,
    check_file,
    display,
    require_regular,
    rows_error,
)

TEXT_CHUNK = 1 << 22  # characters decoded per read in iter_events
SCAN_REGION = 1 << 23  # bytes per find() call (the GIL is held during each) and per page release
SYNTAX_MARGIN = 1 << 20  # a decode error this far before the buffer end is a syntax error, not truncation
BACK_CONTEXT = 1 << 16  # bytes kept before a marker to find the start of its event
EXPECTED = say("trace.expected")
STEP_PREFIX = "ProfilerStep#"
FREQ_NAME = "AI Core Freq"
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\r\n]*")


# ------------------------------------------------------------------------------------------ iter_events


def iter_events(path: Path) -> Iterator[JsonObject]:
    """Yield each event of a trace_view.json list in file order; InputError on bad or truncated JSON."""
    with _open_text(path) as fh:
        reader = _ChunkReader(fh, path)
        reader.expect_list_start()
        while True:
            obj = reader.next_item()
            if obj is None:
                return
            if isinstance(obj, dict):
                yield obj


def _open_text(path: Path) -> Any:
    check_file(path)  # decoding every event keeps them all: the per-file budget applies
    try:
        return open(path, encoding="utf-8", errors="strict")
    except OSError as exc:
        raise InputError(say("io.cannot-open", why=exc.strerror), path=display(path)) from None


class _ChunkReader:
    """A text buffer over a file that refills itself while raw_decode needs more characters."""

    def __init__(self, fh: Any, path: Path) -> None:
        self.fh = fh
        self.path = path
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.consumed = 0  # characters dropped from the front of buf, for error positions
        self.after_item = False

    def _fill(self) -> bool:
        if self.eof:
            return False
        try:
            data = self.fh.read(TEXT_CHUNK)
        except UnicodeDecodeError as exc:
            raise InputError(
                say("trace.not-utf8", byte=exc.start), path=display(self.path), expected=EXPECTED
            ) from None
        if not data:
            self.eof = True
            return False
        self.consumed += self.pos
        self.buf = self.buf[self.pos :] + data
        self.pos = 0
        return True

    def _skip_space(self) -> str:
        """The next non-space character (filling as needed), or '' at end of file."""
        while True:
            self.pos = _SPACE.match(self.buf, self.pos).end()  # pyright: ignore[reportOptionalMemberAccess]  # [ \t\r\n]* always matches
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._fill():
                return ""

    def _fail(self, problem: Text) -> InputError:
        where = self.consumed + self.pos
        return InputError(
            say("trace.at-char", problem=problem, where=where), path=display(self.path), expected=EXPECTED
        )

    def expect_list_start(self) -> None:
        first = self._skip_space()
        if first == "":
            raise InputError(say("io.empty"), path=display(self.path), expected=EXPECTED)
        if first != "[":
            raise self._fail(say("trace.not-list"))
        self.pos += 1

    def next_item(self) -> Any:
        """The next list element, or None after the closing bracket."""
        char = self._skip_space()
        if char == "]":
            self.pos += 1
            if self._skip_space() != "":
                raise self._fail(say("trace.data-after"))
            return None
        if self.after_item:
            if char != ",":
                raise self._fail(say("trace.truncated") if char == "" else say("trace.found", char=char))
            self.pos += 1
            char = self._skip_space()
        if char == "":
            raise self._fail(say("trace.not-closed"))
        obj = self._decode()
        self.after_item = True
        return obj

    def _decode(self) -> Any:
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if exc.pos < len(self.buf) - SYNTAX_MARGIN or not self._fill():
                    self.pos = exc.pos
                    raise self._fail(say("trace.bad-json", error=exc.msg)) from None
                continue
            except (RecursionError, ValueError) as exc:
                raise _limit_error(exc, self.consumed + self.pos, self.path) from None
            if end == len(self.buf) and not self.eof and _scalar(obj):
                self._fill()  # a bare number may continue in the next chunk
                continue
            self.pos = end
            return obj


def _scalar(value: object) -> bool:
    """Whether a decoded JSON value is a number, string, bool or null (not an object or a list)."""
    return not isinstance(value, dict | list)


def _limit_error(exc: BaseException, where: int, path: Path) -> InputError:
    """An event json cannot decode for a structural reason: nested past the interpreter's recursion
    limit (RecursionError) or an integer past Python's digit limit (ValueError, 4300 digits)."""
    problem = say("trace.too-deep") if isinstance(exc, RecursionError) else say("trace.too-many-digits")
    return InputError(
        say("trace.event-at-char", problem=problem, where=where), path=display(path), expected=EXPECTED
    )


# ------------------------------------------------------------------------------------------ scan_events


def scan_events(path: Path, markers: Sequence[bytes]) -> Iterator[JsonObject]:
    """Yield the events (dicts with a "ph" key) whose JSON text contains any marker, in file order.

    The file is memory-mapped and searched region by region; pages already searched are released
    (MADV_DONTNEED), so peak memory stays small however large the trace is: no size budget applies.
    """
    require_regular(path)
    try:
        with open(path, "rb") as fh:
            _check_list_ends(fh, path)
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                yield from _scan(mapped, path, markers)
    except OSError as exc:
        raise InputError(say("trace.cannot-read", why=exc.strerror), path=display(path)) from None


def _check_list_ends(fh: Any, path: Path) -> None:
    """Cheap structural check before a marker scan: the file opens with '[' and closes with ']'."""
    head = fh.read(4096).lstrip()
    if not head:
        raise InputError(say("io.empty"), path=display(path), expected=EXPECTED)
    if not head.startswith(b"["):
        raise InputError(say("trace.not-list"), path=display(path), expected=EXPECTED)
    fh.seek(0, os.SEEK_END)
    fh.seek(max(0, fh.tell() - 4096))
    if not fh.read().rstrip().endswith(b"]"):
        raise InputError(say("trace.not-closed"), path=display(path), expected=EXPECTED)
    fh.seek(0)


def _scan(mapped: mmap.mmap, path: Path, markers: Sequence[bytes]) -> Iterator[dict[str, Any]]:
    size = len(mapped)
    done_until = 0  # end of the last event yielded (one event may hold several markers)
    for start in range(0, size, SCAN_REGION):
        end = min(size, start + SCAN_REGION)
        for pos in _marker_positions(mapped, markers, start, end):
            if pos < done_until:
                continue
            event, event_end = _enclosing_event(mapped, pos, path)
            done_until = event_end
            yield event
        _release(mapped, start, end - BACK_CONTEXT)


def _marker_positions(mapped: mmap.mmap, markers: Sequence[bytes], start: int, end: int) -> list[int]:
    """Offsets of markers that start in [start, end), sorted."""
    hits: list[int] = []
    for marker in markers:
        stop = end + len(marker) - 1
        pos = mapped.find(marker, start, stop)
        while pos != -1:
            hits.append(pos)
            pos = mapped.find(marker, pos + 1, stop)
    return sorted(hits)


def _release(mapped: mmap.mmap, start: int, end: int) -> None:
    """Drop already-searched pages from this process's resident set (Linux; a no-op elsewhere)."""
    first = start - start % mmap.PAGESIZE
    if end > first and hasattr(mmap, "MADV_DONTNEED"):
        mapped.madvise(mmap.MADV_DONTNEED, first, end - first)


_MAX_NESTING = 6


def _enclosing_event(mapped: mmap.mmap, pos: int, path: Path) -> tuple[dict[str, Any], int]:
    """The event containing byte `pos` and its end offset: the nearest '{' before `pos` that opens a
    decodable object spanning `pos` and carrying "ph" (nested args dicts are skipped outwards)."""
    brace = pos
    floor = max(0, pos - BACK_CONTEXT)
    for _ in range(_MAX_NESTING):
        brace = mapped.rfind(b"{", floor, brace)
        if brace < 0:
            break
        decoded = _decode_at(mapped, brace, path)
        if decoded is None:
            continue
        obj, end = decoded
        if end > pos and isinstance(obj, dict) and "ph" in obj:
            return cast(JsonObject, obj), end
    raise InputError(say("trace.bad-json-at", byte=pos), path=display(path), expected=EXPECTED)


def _decode_at(mapped: mmap.mmap, start: int, path: Path) -> tuple[Any, int] | None:
    """Decode the JSON value opening at `start` from growing slices; None when it is not valid JSON,
    InputError when it nests too deeply or holds an over-long number."""
    size = 4096
    while True:
        text = mapped[start : start + size].decode("utf-8", errors="replace")
        try:
            obj, end = _DECODER.raw_decode(text)
        except json.JSONDecodeError as exc:
            cut_off = exc.pos >= len(text) - BACK_CONTEXT or exc.msg.startswith("Unterminated")
            if not cut_off or start + size >= len(mapped):
                return None
            size *= 8
            continue
        except (RecursionError, ValueError) as exc:
            raise _limit_error(exc, start, path) from None
        return obj, start + (end if text.isascii() else len(text[:end].encode("utf-8")))


# ------------------------------------------------------------------------------------ derived timelines


@dataclass
class Markers:
    """What the marker scan found: ProfilerStep spans and AI Core frequency samples."""

    steps: pd.DataFrame = field(default_factory=pd.DataFrame)  # step, start_us, duration_us
    freq: pd.DataFrame = field(default_factory=pd.DataFrame)  # ts_us, mhz
    computing: pd.DataFrame = field(default_factory=pd.DataFrame)  # Overlap Analysis: start_us, duration_us


def scan_markers(path: Path, steps: bool = True, freq: bool = True) -> Markers:
    """One byte-level pass over trace_view.json for ProfilerStep#N spans and/or "AI Core Freq" counters."""
    markers = ([STEP_PREFIX.encode()] if steps else []) + ([FREQ_NAME.encode()] if freq else [])
    spans: dict[int, list[float]] = {}
    freq_ts: list[float] = []
    freq_mhz: list[float] = []
    for event in scan_events(path, markers) if markers else ():
        name = str(event.get("name", ""))
        if event.get("ph") == "X" and name.startswith(STEP_PREFIX):
            _add_span(spans, name, event)
        elif event.get("ph") == "C" and name == FREQ_NAME:
            add_freq(freq_ts, freq_mhz, event)
    return Markers(steps=step_spans(spans), freq=freq_frame(freq_ts, freq_mhz))


def _add_span(spans: dict[int, list[float]], name: str, event: dict[str, Any]) -> None:
    """Merge a ProfilerStep#N event into spans[N] = [start, end, duration].

    The event's own `dur` is kept as the duration: end - start of two 1.7e15 µs floats is only good to
    0.25 µs. Host and device copies of one step may both exist; they are merged into their hull.
    """
    try:
        step = int(name[len(STEP_PREFIX) :])
        start = float(event["ts"])
        dur = float(event.get("dur", 0) or 0)
    except (KeyError, TypeError, ValueError):
        return
    if step not in spans:
        spans[step] = [start, start + dur, dur]
        return
    span = spans[step]
    span[0], span[1] = min(span[0], start), max(span[1], start + dur)
    span[2] = max(span[2], dur, span[1] - span[0])


def step_spans(spans: dict[int, list[float]]) -> pd.DataFrame:
    """Step spans as a frame sorted by step: step, start_us, duration_us."""
    steps = sorted(spans)
    return pd.DataFrame(
        {
            "step": np.array(steps, dtype="int64"),
            "start_us": np.array([spans[s][0] for s in steps], dtype="float64"),
            "duration_us": np.array([spans[s][2] for s in steps], dtype="float64"),
        }
    )


def add_freq(ts: list[float], mhz: list[float], event: JsonObject) -> None:
    """Append one counter sample: `args.MHz` (or the counter's only value) at `ts`."""
    a: JsonValue = event.get("args")
    args = a if isinstance(a, dict) else {}
    value = args.get("MHz", next(iter(args.values())) if len(args) == 1 else None)
    try:
        sample = (float(event["ts"]), float(value))  # pyright: ignore[reportArgumentType]  # None: TypeError, caught
    except (KeyError, TypeError, ValueError):
        return
    ts.append(sample[0])
    mhz.append(sample[1])


def freq_frame(ts: list[float], mhz: list[float]) -> pd.DataFrame:
    if not ts:
        return pd.DataFrame()
    frame = pd.DataFrame({"ts_us": ts, "mhz": mhz}).sort_values("ts_us", kind="stable").reset_index(drop=True)
    return frame.astype({"ts_us": "double[pyarrow]", "mhz": "double[pyarrow]"})


@dataclass
class DeviceTimeline:
    """Device-side content of a trace: hardware kernels, overlap spans, step spans and frequency."""

    kernels: pd.DataFrame  # name, start_us, duration_us, core, stream
    overlap: pd.DataFrame  # kind (Computing/Free/...), start_us, duration_us
    steps: pd.DataFrame  # step, start_us, duration_us
    freq: pd.DataFrame  # ts_us, mhz
    processes: dict[Hashable, str]  # pid (a JSON number or string) -> process name


HARDWARE = "Ascend Hardware"
OVERLAP = "Overlap Analysis"


def read_device_timeline(path: Path) -> DeviceTimeline:
    """Decode a whole trace (streaming) and keep Ascend Hardware kernels, Overlap Analysis spans,
    ProfilerStep spans and AI Core Freq samples."""
    processes = _process_names(path)
    wanted = {pid for pid, name in processes.items() if name in (HARDWARE, OVERLAP)}
    cols: dict[str, list[Any]] = {k: [] for k in ("pid", "name", "ts", "dur", "core", "tid")}
    spans: dict[int, list[float]] = {}
    freq_ts: list[float] = []
    freq_mhz: list[float] = []
    limit, kept = budget("max_profile_rows"), 0  # every kept event is a row of the device tables
    for event in iter_events(path):
        ph = event.get("ph")
        name = event.get("name")
        if ph == "X" and isinstance(name, str) and name.startswith(STEP_PREFIX):
            _add_span(spans, name, event)
        elif ph == "X" and event.get("pid") in wanted:
            _add_x(cols, event)
        elif ph == "C" and name == FREQ_NAME:
            add_freq(freq_ts, freq_mhz, event)
        else:
            continue
        kept += 1
        if limit is not None and kept > limit:
            raise rows_error(path, limit, say("io.what-events"))
    events = pd.DataFrame(cols)
    hardware = [pid for pid in wanted if processes[pid] == HARDWARE]
    kernels = events[events["pid"].isin(hardware)].drop(columns=["pid"])
    overlap = events[~events["pid"].isin(hardware)][["name", "ts", "dur"]]
    overlap = overlap.rename(columns={"name": "kind", "ts": "start_us", "dur": "duration_us"})
    kernels = kernels.rename(columns={"ts": "start_us", "dur": "duration_us", "tid": "stream"})
    return DeviceTimeline(
        kernels=kernels.reset_index(drop=True),
        overlap=overlap.reset_index(drop=True),
        steps=step_spans(spans),
        freq=freq_frame(freq_ts, freq_mhz),
        processes=processes,
    )


def _process_names(path: Path) -> dict[Hashable, str]:
    """pid -> process name from the `process_name` metadata events (a marker scan, not a full parse)."""
    names: dict[Hashable, str] = {}
    for event in scan_events(path, (b'"process_name"',)):
        if event.get("ph") == "M" and event.get("name") == "process_name":
            names[event.get("pid")] = str(cast(JsonObject, event.get("args") or {}).get("name", ""))
    return names


def _add_x(cols: dict[str, list[Any]], event: dict[str, Any]) -> None:
    try:
        ts = float(event["ts"])
        dur = float(event.get("dur", 0) or 0)
    except (KeyError, TypeError, ValueError):
        return
    a: JsonValue = event.get("args")
    args = a if isinstance(a, dict) else {}
    cols["pid"].append(event.get("pid"))
    cols["name"].append(str(event.get("name", "")))
    cols["ts"].append(ts)
    cols["dur"].append(dur)
    cols["core"].append(args.get("Task Type"))
    cols["tid"].append(event.get("tid"))

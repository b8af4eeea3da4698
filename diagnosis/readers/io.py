"""Reading profiler files with user-facing errors: CSV through pyarrow (only the columns a reader asks
for, under canonical names), small auxiliary CSVs, JSON and text.

Every failure is an InputError naming the file (its last three path parts) and, where pyarrow says which,
the column.
"""

from __future__ import annotations

import contextlib
import csv
import ctypes
import functools
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
from pandas.api.extensions import ExtensionDtype

from core.errors import InputError
from core.jsontypes import JsonValue
from core.model import PIPE_COUNTERS
from core.text import Text, say
from diagnosis.limits import Limits, LineCounter, env_name, is_table

NULL_VALUES = ["N/A", ""]
MIB = 1 << 20
ARROW_BLOCK_BYTES = 1 << 20  # pyarrow.csv's default block: no row or header may be longer
_HEADER_PROBE = 1 << 16  # bytes read to find the header line
JEMALLOC_DECAY_MS = 1000  # Arrow's default dirty/muzzy page decay for its jemalloc pool


def prefer_jemalloc() -> None:
    """Give Arrow buffers to jemalloc unless the user chose a pool (ARROW_DEFAULT_MEMORY_POOL).

    pyarrow's default, mimalloc, returns freed pages to the kernel at once, so the many short-lived
    million-row buffers of a comparison are faulted in again and again (on a 1M+1M-row pair about
    3 s of system time); jemalloc keeps them for reuse at the same peak RSS. Builds without jemalloc
    keep their default. It sets a process-wide pool, so the process entry calls it (the doctor facade
    before it reads), never an import.
    """
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except (NotImplementedError, pa.ArrowException):
        return


def release_memory() -> None:
    """Hand memory freed by the analysis that just ended back to the system: the Arrow pool's unused
    pages (jemalloc keeps them for reuse otherwise) and, on glibc, the malloc heap's free tops
    (malloc_trim). Without it a server stays near its peak after one large request. Safe while other
    analyses run: only unused memory is returned."""
    pool = pa.default_memory_pool()
    if pool.backend_name == "jemalloc":  # jemalloc returns pages only as they decay (1 s by default):
        pa.jemalloc_set_decay_ms(0)  # purge now, then go back to the default for the next analysis
        pool.release_unused()
        pa.jemalloc_set_decay_ms(JEMALLOC_DECAY_MS)
    else:
        pool.release_unused()
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (macOS, musl): nothing more to do
        return
    libc.malloc_trim(0)


# --------------------------------------------------------------------------------------------- errors


def display(path: Path) -> str:
    """How a file is named in messages: its last three path parts (enough to tell runs apart)."""
    return "/".join(path.parts[-3:])


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (at most 240 characters), for one-line errors."""
    text = str(exc).strip()
    return text.splitlines()[0][:240] if text else type(exc).__name__


_READ_WATCHERS: list[Callable[[str, int], None]] = []  # see watch_reads


def watch_reads(watcher: Callable[[str, int], None]) -> None:
    """Call `watcher(name, size)` with a profile file's name as messages give it (`display`) and its size
    in bytes each time the file is opened or parsed, from now on in this process: the isolated reader
    tells its parent which file needed the memory or time when a limit stopped it."""
    _READ_WATCHERS.append(watcher)


def stop_watching() -> None:
    """Tell no watcher from now on in this process (a forked worker: its parent's watchers talk on the
    parent's channel)."""
    _READ_WATCHERS.clear()


def announce(path: Path) -> None:
    """Tell the watchers (`watch_reads`) that `path` is opened or parsed now."""
    if not _READ_WATCHERS:
        return
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    for watcher in _READ_WATCHERS:
        watcher(display(path), size)


def require_regular(path: Path) -> int:
    """A profile file must be a regular file before it is opened (a named pipe would block the reader,
    a device never end); returns its size."""
    announce(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputError(say("io.cannot-open", why=exc.strerror), path=display(path)) from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(say("io.not-regular"), path=display(path), expected=say("io.a-profile-file"))
    return info.st_size


_HELD_TO_BUDGETS = {"always": False}  # set by hold_to_budgets (the web app's server)


def hold_to_budgets() -> None:
    """Hold every profile file this process reads to the per-file byte and row budgets, at their
    defaults unless the operator set them: the web app's server reads only uploads. Without it (CLI,
    Python API) a local folder is read whatever its size unless a budget's variable is set."""
    _HELD_TO_BUDGETS["always"] = True


def budgets_held() -> bool:
    """Whether hold_to_budgets was called in this process (an isolated reader holds its files to the
    budgets exactly when its parent does)."""
    return _HELD_TO_BUDGETS["always"]


def budget(field: str) -> int | None:
    """A per-file profile budget (a Limits field) when it applies to files read here, else None: always
    after hold_to_budgets, otherwise only when its PERF_DOCTOR_ variable is set."""
    if not (_HELD_TO_BUDGETS["always"] or env_name(field) in os.environ):
        return None
    return int(getattr(Limits.from_env(), field))


def check_file(path: Path) -> int:
    """Before a profile file is parsed: a regular file, within the per-file byte budget and, for a
    table, the row budget, when they apply (`budget`: parsing costs a multiple of the size and of the
    rows in memory). Returns its size.

    Uploads and archives are always held to both budgets while they are unpacked or copied (archives.py);
    a local folder read by the CLI or the Python API is the user's own data and, unless a variable is
    set, is read whatever its size (a 1M-row kernel_details.csv is about 400 MiB)."""
    size = require_regular(path)
    limit = budget("max_profile_file_bytes")
    if limit is not None and size > limit:
        raise InputError(
            say("io.file-over", size=size / MIB, limit=limit / MIB),
            path=display(path),
            expected=say("io.shorter-profile", variable=env_name("max_profile_file_bytes")),
        )
    rows = budget("max_profile_rows")
    if rows is not None and is_table(path.name) and _rows_over(path, rows):
        raise rows_error(path, rows, say("io.what-rows"))
    return size


def rows_error(path: Path, limit: int, what: Text) -> InputError:
    """The row budget's refusal, naming the file, the budget and the variable."""
    return InputError(
        say("io.rows-over", limit=limit, what=what),
        path=display(path),
        expected=say("io.fewer-steps", variable=env_name("max_profile_rows")),
    )


def _rows_over(path: Path, limit: int) -> bool:
    """Whether a table has more than `limit` rows (line breaks after the header), counted by streaming
    1 MiB reads before any parsing; remembered per file version (readers look at a file twice)."""
    info = os.stat(path)
    return _count_over(str(path), info.st_size, info.st_mtime_ns, limit)


@functools.lru_cache(maxsize=64)
def _count_over(name: str, _size: int, _mtime_ns: int, limit: int) -> bool:
    lines = LineCounter()
    try:
        with open(name, "rb") as fh:
            while chunk := fh.read(MIB):
                if lines.add(chunk) - 1 > limit:
                    return True
    except OSError as exc:
        raise InputError(say("io.cannot-open", why=exc.strerror), path=display(Path(name))) from None
    return False


# ------------------------------------------------------------------------------------------ CSV reading


@dataclass(frozen=True)
class Col:
    """A canonical column, the header spellings it appears under (first = documented) and its type."""

    name: str
    aliases: tuple[str, ...]
    type: pa.DataType = field(default_factory=pa.string)


def read_header(path: Path) -> list[str]:
    """The header fields of a CSV file as written; InputError when the file is empty, binary or not UTF-8."""
    check_file(path)
    try:
        with open(path, "rb") as fh:
            probe = fh.read(_HEADER_PROBE)
    except OSError as exc:
        raise InputError(say("io.cannot-open", why=exc.strerror), path=display(path)) from None
    if not probe.strip():
        raise InputError(say("io.empty"), path=display(path), expected=say("io.csv-header-rows"))
    if b"\x00" in probe:
        raise InputError(say("io.binary"), path=display(path), expected=say("io.utf8-csv"))
    _check_utf8(probe, path)
    line = re.split(rb"\r\n|\r|\n", probe, maxsplit=1)[0]  # any line ending, old Mac `\r` too
    try:
        return next(csv.reader([line.decode("utf-8-sig")]))
    except csv.Error as exc:  # e.g. a stray quote: the header cannot be read as CSV
        problem = say("io.bad-header", error=str(exc))
        raise InputError(problem, path=display(path), expected=say("io.csv-header")) from None


def _check_utf8(probe: bytes, path: Path) -> None:
    """The start of the file must be UTF-8 (a character cut by the probe's end is fine)."""
    try:
        probe.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data" and exc.start >= len(probe) - 3:
            return
        raise InputError(
            say("io.not-utf8", byte=exc.start), path=display(path), expected=say("io.utf8-csv")
        ) from None


def resolve(header: Sequence[str], cols: Iterable[Col]) -> dict[str, str]:
    """Map canonical name -> header field actually present (first alias that matches, spaces ignored)."""
    present = {h.strip(): h for h in header}
    found: dict[str, str] = {}
    for col in cols:
        hit = next((a for a in col.aliases if a in present), None)
        if hit is not None:
            found[col.name] = present[hit]
    return found


def require(found: dict[str, str], cols: Sequence[Col], required: Iterable[str], path: Path) -> None:
    """InputError naming the first missing required column and the spellings that would do."""
    by_name = {c.name: c for c in cols}
    for name in required:
        if name not in found:
            spellings = " or ".join(repr(a) for a in by_name[name].aliases)
            raise InputError(
                say("io.missing-column", column=by_name[name].aliases[0]),
                path=display(path),
                expected=say("io.header-with", spellings=spellings),
            )


def counter_name(header: str) -> str:
    """`aic_mte2_time(us)` -> `aic_mte2_time_us`, `cube_utilization(%)` -> `cube_utilization_pct`."""
    text = header.strip().lower().replace("(%)", "_pct").replace("%", "_pct")
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


def read_csv(
    path: Path,
    cols: Sequence[Col],
    *,
    required: Iterable[str] = (),
    counters: bool = False,
    nulls: Sequence[str] = NULL_VALUES,
) -> pa.Table:
    """Read the named columns of a CSV file (plus, with `counters`, the PIPE_COUNTERS it has) under
    canonical names.

    Cells `N/A` and empty become null. Errors (bad rows, wrong types, bad encoding) become InputError
    naming the file and, where pyarrow says which, the column.
    """
    header = read_header(path)
    found = resolve(header, cols)
    require(found, cols, required, path)
    types = {found[c.name]: c.type for c in cols if c.name in found}
    rename = {found[c.name]: c.name for c in cols if c.name in found}
    if counters:
        for raw in header:
            name = counter_name(raw)
            if name in PIPE_COUNTERS and raw not in types:
                types[raw] = pa.float64()
                rename[raw] = name
    table = _arrow_read(path, header, types, list(nulls))
    return table.rename_columns([rename[c] for c in table.column_names])


def _arrow_read(path: Path, header: list[str], types: dict[str, pa.DataType], nulls: list[str]) -> pa.Table:
    announce(path)
    convert = pacsv.ConvertOptions(
        include_columns=list(types),
        column_types=types,
        null_values=nulls,
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
    )
    try:
        return pacsv.read_csv(
            path,
            convert_options=convert,
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise InputError(
            _explain_arrow(exc, header), path=display(path), expected=_expectation(exc)
        ) from None


def arrow_block_problem(msg: str, *, nonempty: bool) -> Text | None:
    """Our words for pyarrow's block messages: "straddling object" (a row longer than one read block)
    and "Empty CSV file or block" for a non-empty file (its header line fills the first block)."""
    block = ARROW_BLOCK_BYTES // MIB
    if "straddling object" in msg:
        return say("io.long-row", mib=block)
    if "Empty CSV file or block" in msg and nonempty:
        return say("io.long-header", mib=block)
    return None


def _explain_arrow(exc: BaseException, header: list[str]) -> str:
    """Turn pyarrow's message into one line naming the column ("In CSV column #7: ..." -> its name)."""
    msg = first_line(exc)
    block = arrow_block_problem(msg, nonempty=True)
    if block:
        return block
    hit = re.search(r"CSV column #(\d+)", msg)
    if hit and int(hit.group(1)) < len(header):
        col = header[int(hit.group(1))].strip()
        msg = msg.replace(hit.group(0), f"column {col!r}")
    if "invalid UTF8" in msg or "UTF8" in msg:
        return say("io.not-utf8-detail", detail=msg)
    if "Expected" in msg and "columns" in msg:
        return say("io.bad-row", detail=msg)
    return msg


def _expectation(exc: BaseException) -> str:
    msg = str(exc)
    if "conversion error to" in msg:
        kind = msg.split("conversion error to", 1)[1].split(":", 1)[0].strip()
        return say("io.kind-values", kind=kind)
    if "UTF8" in msg:
        return say("io.utf8-text")
    return say("io.as-many-fields")


def read_table(path: Path) -> pd.DataFrame:
    """A small auxiliary CSV (op_statistic, memory, dataset ...) with every column, types inferred."""
    announce(path)
    read_header(path)
    try:
        table = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(null_values=NULL_VALUES))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise InputError(
            _explain_arrow(exc, read_header(path)),
            path=display(path),
            expected=say("io.as-many-fields"),
        ) from None
    keep = [c for c in table.column_names if c.strip() != "Device_id"]
    return to_frame(table.select(keep))


def to_frame(table: pa.Table) -> pd.DataFrame:
    """pyarrow table -> pandas with the model's dtypes (string[pyarrow], int64/double[pyarrow]).

    Columns are made one chunk each first: the CSV reader yields one chunk per block, and pandas' row
    selections on a many-chunk column cost several times more (0.4 s against 0.05 s for 100k kernels)."""
    with contextlib.suppress(pa.ArrowInvalid, pa.ArrowCapacityError):  # over 2 GiB of text: keep the chunks
        table = table.combine_chunks()
    return arrow_frame(table, _types_mapper)


def arrow_frame(
    table: pa.Table, types_mapper: Callable[[pa.DataType], ExtensionDtype | None] | None = None
) -> pd.DataFrame:
    """`table.to_pandas(types_mapper=...)` typed: one place where pyarrow's conversion meets the checker."""
    return table.to_pandas(types_mapper=types_mapper)  # pyright: ignore[reportUnknownMemberType]  # pyarrow-stubs: an unparametrised list in `categories`


def _types_mapper(arrow_type: pa.DataType) -> ExtensionDtype:
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return pd.StringDtype("pyarrow")
    return pd.ArrowDtype(arrow_type)


# --------------------------------------------------------------------------------------- JSON and text


MAX_JSON_DEPTH = 200  # nesting levels of a profiler JSON document (real ones nest under 10)
MAX_JSON_DIGITS = 400  # digits of one JSON integer (a 64-bit counter has 20)


class JsonLimitError(ValueError):
    """A JSON document over a structural limit (depth, digits), with the one-line reason."""


def bounded_int(digits: str) -> int:
    """parse_int for json: refuses integers longer than MAX_JSON_DIGITS before converting them."""
    if len(digits.lstrip("-")) > MAX_JSON_DIGITS:
        raise JsonLimitError(say("io.digits", digits=len(digits), limit=MAX_JSON_DIGITS))
    return int(digits)


def json_depth_problem(text: str, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Why `text` nests too deeply for json (whose C decoder recurses once per level), or None.

    Brackets inside strings are skipped; the count stops at the first level over the limit."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for token in _JSON_TOKENS.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > limit:
                return say("io.nested", limit=limit)
        elif char in "]}":
            depth -= 1
    return None


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def load_json(
    path: Path, expected: str = "a JSON document", duplicates: list[str] | None = None
) -> JsonValue:
    """Parse a (small) JSON file; empty, non-UTF-8, invalid, too deeply nested or over-long numbers
    raise InputError. Keys given twice in one object are appended to `duplicates` (the last value wins,
    as in json), so the caller can warn about them."""
    announce(path)
    check_file(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(say("io.cannot-open", why=exc.strerror), path=display(path)) from None
    if not raw.strip():
        raise InputError(say("io.empty"), path=display(path), expected=expected)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(say("io.not-utf8", byte=exc.start), path=display(path), expected=expected) from None
    deep = json_depth_problem(text)
    if deep:
        raise InputError(say("io.json-deep", problem=deep), path=display(path), expected=expected)
    seen = duplicates if duplicates is not None else []
    try:
        return json.loads(text, parse_int=bounded_int, object_pairs_hook=lambda pairs: _object(pairs, seen))
    except json.JSONDecodeError as exc:
        problem = say("io.bad-json", line=exc.lineno, column=exc.colno, error=exc.msg)
        raise InputError(problem, path=display(path), expected=expected) from None
    except JsonLimitError as exc:
        raise InputError(
            say("io.json-holds", what=exc.args[0]), path=display(path), expected=expected
        ) from None
    except RecursionError:
        raise InputError(say("io.json-too-deep"), path=display(path), expected=expected) from None


def _object(pairs: list[tuple[str, Any]], duplicates: list[str]) -> dict[str, Any]:
    """A JSON object as a dict; keys that occur twice are recorded in `duplicates`."""
    result = dict(pairs)
    if len(result) != len(pairs):
        counts: dict[str, int] = {}
        for key, _ in pairs:
            counts[key] = counts.get(key, 0) + 1
        duplicates.extend(key for key, count in counts.items() if count > 1)
    return result


def read_text(path: Path) -> str:
    """A text file as str; non-UTF-8 raises InputError naming the byte offset."""
    announce(path)
    check_file(path)
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            say("io.not-utf8", byte=exc.start), path=display(path), expected=say("io.utf8-text")
        ) from None
    except OSError as exc:
        raise InputError(say("io.cannot-open", why=exc.strerror), path=display(path)) from None


def json_items(data: object) -> list[tuple[str, object]]:
    """A JSON object's items (its keys are text); none for anything else."""
    return (
        [(str(k), v) for k, v in cast(dict[object, object], data).items()] if isinstance(data, dict) else []
    )


def is_object(data: object) -> bool:
    """Whether `data` is a JSON object."""
    return isinstance(data, dict)


def json_get(data: object, key: str) -> object:
    """A JSON object's member `key`; None when absent or when `data` is not an object."""
    return cast(dict[str, object], data).get(key) if isinstance(data, dict) else None


def json_number(value: object) -> float | None:
    """A JSON number as a float; None for anything else (true and false are not numbers)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

"""MindSpore's own dump (MINDSPORE_DUMP_CONFIG): per-op ``.npy`` tensors (CPU/GPU, ``saved_data: "tensor"``)
or ``statistic.csv`` (Ascend/GPU, ``saved_data: "statistic"``).

Tensor files are named ``<OpType>.<OpName>.<task>.<stream>.<timestamp>.<input|output>.<slot>.<format>.
<dtype>.npy`` below ``rank_<id>/<net>/<graph>/<iteration>/``; parameters and network inputs are
``Parameter.<name>...output.0...``. ``graphs/*.ir`` says which parameters are weights (``IsWeight``). The
statistics of a tensor file are computed in streaming (outputs.stats); only the first iteration is read.
"""

from __future__ import annotations

import csv
import os
import re
from collections import defaultdict
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from core.errors import InputError
from core.forks import cpus, in_forks, may_fork
from core.text import say
from outputs.layers import Dump, Layer
from outputs.stats import TensorStats, canonical_dtype, npy_stats

NPY_NAME = re.compile(
    r"^(?P<op_type>[^.]+)\.(?P<op_name>.+)\.(?P<task>\d+)\.(?P<stream>\d+)\.(?P<ts>\d+)"
    r"\.(?P<io>input|output)\.(?P<slot>\d+)\.(?P<fmt>[^.]+)\.(?P<dtype>[^.]+)\.npy$"
)
OP_NUMBER = re.compile(r"-op\d+$")
IR_PARAM = re.compile(r"^%para\d+_(?P<name>\S+?):.*IsWeight: (?P<weight>true|false)\s*$", re.MULTILINE)
WEIGHT_WORDS = re.compile(r"weight|bias|gamma|beta|moving_|embedding|scale", re.IGNORECASE)
STATISTIC_CSV = "statistic.csv"
READERS = 1  # threads summarising tensor files; 2 were no faster on the shared bench machine (RESULTS.md)
PROCESSES = 2  # at most this many processes summarise the files: this one and forked workers
# A smaller dump is summarised in one process: a forked worker of a process that imported pandas and
# pyarrow (as doctor's isolated reader) costs 8-10 ms of wall and 5-8 ms of CPU from fork to answer
# (copy-on-write faults, exit), what summarising about 45 MiB in two halves saves on a free core.
FORK_BYTES = 64 << 20


@dataclass(slots=True)
class TensorFile:
    """One dumped tensor file, parsed from its name (not frozen: a frozen dataclass is built 5x slower,
    2 us a file of a 4000-file dump)."""

    path: str
    op_type: str
    op_name: str
    timestamp: int
    io: str
    slot: int
    size: int  # bytes


def tensor_files(folder: Path, iterations: list[Path] | None = None) -> Iterator[TensorFile]:
    """Every dumped tensor of the first iteration folder holding any (os.scandir: thousands of files);
    `iterations`: iteration_folders(folder) when already known."""
    for iteration in (iteration_folders(folder) if iterations is None else iterations)[:1]:
        with os.scandir(iteration) as entries:
            for entry in entries:
                match = NPY_NAME.match(entry.name)
                if match and entry.is_file():
                    yield TensorFile(
                        entry.path,
                        match["op_type"],
                        match["op_name"],
                        int(match["ts"]),
                        match["io"],
                        int(match["slot"]),
                        entry.stat().st_size,
                    )


def iteration_folders(folder: Path) -> list[Path]:
    """Folders directly holding dumped ``.npy`` files, the lowest iteration first."""
    found = {Path(root) for root, _dirs, files in os.walk(folder) if any(NPY_NAME.match(f) for f in files)}
    return sorted(found, key=lambda p: (len(p.parts), _iteration_number(p), str(p)))


def _iteration_number(path: Path) -> int:
    return int(path.name) if path.name.isdigit() else 0


def read_npy_dump(folder: Path, label: str, *, readers: int = READERS, processes: int | None = None) -> Dump:
    """A CPU/GPU tensor dump as a Dump: statistics of every tensor file, ops in execution order. The files
    are summarised by `processes` processes, this one and forked workers (None: `processes_for` the dump;
    a caller asking for more than 1 runs no other thread), or, when that is 1, by `readers` threads (numpy
    and file reads let go of the GIL, the per-file Python work does not, so more threads were no faster)."""
    iterations = iteration_folders(folder)
    files = list(tensor_files(folder, iterations))
    if not files:
        raise InputError(say("outputs.no-tensors"), path=label, expected=say("outputs.dump-expected"))
    weights = _weight_flags(folder)
    grouped: dict[tuple[str, str], list[TensorFile]] = defaultdict(list)
    for item in files:
        grouped[(item.op_type, item.op_name)].append(item)
    ops = sorted(grouped.items(), key=lambda kv: min(f.timestamp for f in kv[1]))
    size = sum(f.size for f in files)
    jobs = [(f.path, _role(f.op_type, f.op_name, weights) != "layer") for f in files]
    shares = processes_for(size) if processes is None else processes
    stats = _forked_stats(jobs, shares) if shares > 1 else _all_stats(jobs, readers)
    layers = [
        _op_layer(op_type, op_name, items, order, weights, stats)
        for order, ((op_type, op_name), items) in enumerate(ops)
    ]
    notes = (say("outputs.more-iterations"),) if len(iterations) > 1 else ()
    return Dump(label, "mindspore-npy", "mindspore", tuple(_numbered(layers)), len(files), size, notes)


Job = tuple[str, bool]  # a tensor file's path, and whether its CRC is taken (inputs and weights)


def processes_for(size: int) -> int:
    """How many processes summarise a dump of `size` bytes: PROCESSES (at most the CPUs this process may
    run on) in a process that runs no other Python thread, such as doctor's isolated reader (which may
    write no file: no multiprocessing pool, forked workers); 1 in a threaded process (a fork could inherit
    a lock another thread holds) and for a dump under FORK_BYTES."""
    if not may_fork() or size < FORK_BYTES:
        return 1
    return max(1, min(PROCESSES, cpus()))


def _forked_stats(jobs: list[Job], processes: int) -> dict[str, TensorStats]:
    """Every file's statistics in `processes` shares (every n-th file each): this process summarises the
    first while forked workers summarise the others and send their statistics back over a pipe
    (core.forks: one fork fewer than a worker per share, and the first share needs no pickling). A worker
    that dies (a limit stopped it) or met a bad file has its share summarised here afterwards, so the
    error names the file."""
    shares = [jobs[i::processes] for i in range(min(processes, len(jobs)))]
    found: dict[str, TensorStats] = {}
    for share, part in zip(shares, in_forks(shares, _share_stats, here=True), strict=True):
        found.update(zip((path for path, _ in share), part, strict=True))
    return found


def _all_stats(jobs: list[Job], readers: int) -> dict[str, TensorStats]:
    """Every file's statistics (inputs and weights with their CRC), by `readers` threads, each summarising
    its share of the files in one loop (no task per file: 4000 futures cost more than they overlap). One
    reader is a worker thread too: on the main thread the same loop took 1.8x the CPU in bench_outputs
    (4.0x a page-cache read against 2.2x), after the main thread's 1 MiB reads of the bench's floor."""
    shares = [jobs[i::readers] for i in range(max(1, min(readers, len(jobs))))]
    with ThreadPoolExecutor(len(shares), thread_name_prefix="npy-stats") as pool:
        found: dict[str, TensorStats] = {}
        for share, part in zip(shares, pool.map(_share_stats, shares), strict=True):
            found.update(zip((path for path, _ in share), part, strict=True))
        return found


def _share_stats(jobs: Sequence[Job]) -> list[TensorStats]:
    """The statistics of one reader's files, in their order."""
    return [_stats(path, whole) for path, whole in jobs]


def _op_layer(
    op_type: str,
    op_name: str,
    items: list[TensorFile],
    order: int,
    weights: dict[str, bool],
    stats: dict[str, TensorStats],
) -> Layer:
    """One op's tensor files as a Layer (inputs and outputs by slot, statistics already computed)."""
    ordered = sorted(items, key=lambda f: (f.io, f.slot)) if len(items) > 1 else items
    role = _role(op_type, op_name, weights)
    inputs = tuple(stats[f.path] for f in ordered if f.io == "input")
    outputs = tuple(stats[f.path] for f in ordered if f.io == "output")
    key = f"{op_type}:{OP_NUMBER.sub('', op_name)}"
    return Layer(op_name, key, op_type, order, role, "forward", inputs, outputs)


def _stats(path: str, checksum: bool) -> TensorStats:
    """One tensor file's statistics; a file that is not a readable .npy is an InputError naming it."""
    try:
        return npy_stats(path, checksum=checksum)
    except (ValueError, OSError, EOFError) as error:
        raise InputError(
            say("outputs.bad-npy", reason=str(error)[:120]),
            path=os.path.basename(path),
            expected=say("outputs.dump-expected"),
        ) from None


def _role(op_type: str, op_name: str, weights: dict[str, bool]) -> str:
    """ "weight", "input" (a Parameter the graph does not hold as a weight) or "layer"."""
    if op_type != "Parameter":
        return "layer"
    if op_name in weights:
        return "weight" if weights[op_name] else "input"
    return "weight" if WEIGHT_WORDS.search(op_name) else "input"


def _weight_flags(folder: Path) -> dict[str, bool]:
    """Parameter name (as in dump file names, dots as underscores) -> IsWeight, from graphs/*.ir."""
    flags: dict[str, bool] = {}
    walk = os.walk(folder)  # not pathlib's rglob: 10 ms more on a 4000-file dump
    found = sorted(Path(root, name) for root, _dirs, names in walk for name in names if name.endswith(".ir"))
    for ir in found[:20]:
        text = ir.read_text(encoding="utf-8", errors="replace")
        for match in IR_PARAM.finditer(text):
            flags[match["name"].replace(".", "_").replace("/", "_")] = match["weight"] == "true"
    return flags


def _numbered(layers: list[Layer]) -> Iterator[Layer]:
    """Layers whose keys repeat get their call number in the key (#1, #2 ...), so each aligns once."""
    seen: dict[str, int] = defaultdict(int)
    for layer in layers:
        count = seen[layer.key]
        seen[layer.key] += 1
        yield layer if not count else replace(layer, key=f"{layer.key}#{count}")


# ------------------------------------------------------------------------------- statistic.csv


STAT_COLUMNS = {"max": "Max Value", "min": "Min Value", "mean": "Avg Value", "norm": "L2Norm Value"}


def read_statistic_csv(path: Path, label: str) -> Dump:
    """An Ascend/GPU ``statistic.csv`` (one row per op input/output) as a Dump."""
    rows: dict[tuple[str, str], dict[str, dict[int, TensorStats]]] = {}
    stamps: dict[tuple[str, str], int] = {}
    with path.open(encoding="utf-8", errors="replace", newline="") as handle, _cell_limit():
        reader = csv.DictReader(handle, restval="")  # a short row's missing cells are empty, not None
        try:
            missing = {"Op Type", "Op Name", "IO", "Slot"} - set(reader.fieldnames or ())
            if missing:
                raise InputError(
                    say("outputs.csv-columns", columns=", ".join(sorted(missing))),
                    path=label,
                    expected=say("outputs.dump-expected"),
                )
            for row in reader:
                op = (row["Op Type"], row["Op Name"])
                stamps.setdefault(op, _int(row.get("Timestamp")) or len(stamps))
                io = "input" if row["IO"].strip().lower().startswith("in") else "output"
                rows.setdefault(op, {"input": {}, "output": {}})[io][_int(row["Slot"]) or 0] = _row_stats(row)
        except (csv.Error, ValueError, OverflowError) as error:  # a cell over csv's limit, a 4300+ digit
            raise InputError(  # size, an infinite slot or time: said with its line, never a traceback
                say("outputs.bad-csv-line", line=_failed_line(reader, error), reason=str(error)[:120]),
                path=label,
                expected=say("outputs.dump-expected"),
            ) from None
    layers: list[Layer] = []
    for order, op in enumerate(sorted(rows, key=lambda o: stamps[o])):
        op_type, op_name = op
        slots = rows[op]
        inputs = tuple(slots["input"][k] for k in sorted(slots["input"]))
        outputs = tuple(slots["output"][k] for k in sorted(slots["output"]))
        role = _role(op_type, op_name, {})
        key = f"{op_type}:{OP_NUMBER.sub('', op_name.replace('/', '_'))}"
        layers.append(Layer(op_name, key, op_type, order, role, "forward", inputs, outputs))
    return Dump(label, "mindspore-statistic", "mindspore", tuple(_numbered(layers)), 1, path.stat().st_size)


CSV_CELL_LIMIT = 131_072  # characters in one statistic.csv cell: the csv module's default, pinned


@contextmanager
def _cell_limit() -> Generator[None, None, None]:
    """csv's cell limit at CSV_CELL_LIMIT while a file is read: the limit is the whole process's, and
    importing MindSpore raises it to 10 MiB (mindspore.utils.runtime_execution_order_check)."""
    previous = csv.field_size_limit(CSV_CELL_LIMIT)
    try:
        yield
    finally:
        csv.field_size_limit(previous)


def _failed_line(reader: csv.DictReader[str], error: Exception) -> int:
    """The line a statistic.csv error is on: csv counts a line only once it parsed (its own errors are
    on the next one)."""
    return reader.line_num + (1 if isinstance(error, csv.Error) else 0)


def _row_stats(row: dict[str, str]) -> TensorStats:
    """One statistic.csv row as TensorStats."""
    shape = tuple(int(n) for n in re.findall(r"\d+", row.get("Shape") or ""))
    counts = [_int(row.get(c)) for c in ("Negative Inf Count", "Positive Inf Count")]
    inf = None if all(c is None for c in counts) else sum(c or 0 for c in counts)
    return TensorStats(
        canonical_dtype(row.get("Data Type") or "unknown"),
        shape,
        *(_float(row.get(STAT_COLUMNS[s])) for s in ("max", "min", "mean", "norm")),
        nan=_int(row.get("NaN Count")),
        inf=inf,
    )


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def _int(text: str | None) -> int | None:
    value = _float(text)
    return None if value is None else int(value)

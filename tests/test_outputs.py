"""Outputs comparison on real inputs: the MindSpore 2.10 CPU dump pairs (tests/fixtures/outputs, made by its
generate.py) each rank their own cause first, the same run twice says nothing, and the real msprobe
MindSpore-vs-PyTorch sample pair (../shared/samples/msprobe_dump) reads and names its first divergent API."""

from __future__ import annotations

import csv
import os
import re
import shutil
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from core.errors import InputError
from diagnosis import Limits, Workspace
from knowledge import evaluate
from outputs import compare_dumps, depth_profile, find_mapping, output_symptoms, read_dump
from outputs.compare import tensor_diff, tolerance
from outputs.layers import Dump, Layer
from outputs.stats import TensorStats
from tests.support.inputs import ROOT, spoiled_dump

DUMPS = ROOT / "tests" / "fixtures" / "outputs"
MSPROBE = ROOT.parent / "shared" / "samples" / "msprobe_dump"

PAIRS = [
    ("reference", "dropout_on", "outputs-dropout-active"),
    ("reference", "bn_train", "outputs-bn-training"),
    ("reference", "flipped", "outputs-random-preprocessing"),
    ("reference", "fp16", "outputs-precision-mode"),
    ("reference", "weights", "outputs-weights-differ"),
    ("reference", "other_input", "outputs-different-inputs"),
    ("big_fp32", "big_fp16", "outputs-fp16-overflow"),
    ("readout_1thread", "readout_2threads", "outputs-nondeterministic"),
]


def _compare(baseline: Path | str, target: Path | str, mapping: dict[str, str] | None = None):
    with Workspace() as ws:
        return compare_dumps(read_dump(baseline, ws, mapping=mapping), read_dump(target, ws, mapping=mapping))


@pytest.mark.parametrize(("baseline", "target", "cause"), PAIRS, ids=[p[1] for p in PAIRS])
def test_each_cause_ranks_first_on_its_own_pair(baseline: str, target: str, cause: str) -> None:
    comparison = _compare(DUMPS / baseline, DUMPS / target)
    diagnosis = evaluate(output_symptoms(comparison), [], ["pair"])
    assert diagnosis.causes and diagnosis.causes[0].id == cause, [c.id for c in diagnosis.causes]
    assert diagnosis.causes[0].significant
    assert comparison.first is not None


def test_the_same_run_twice_says_nothing() -> None:
    comparison = _compare(DUMPS / "reference", DUMPS / "reference_repeat")
    assert comparison.first is None
    assert output_symptoms(comparison) == []
    diagnosis = evaluate(output_symptoms(comparison), [], ["pair"])
    assert diagnosis.nothing_found and not diagnosis.causes
    assert len(comparison.layers) == 6  # Conv2D, BatchNorm, ReLU, ReduceMean, MatMul, BiasAdd


def test_a_run_against_itself_is_identical_layer_by_layer() -> None:
    comparison = _compare(DUMPS / "flipped", DUMPS / "flipped")
    assert all(d.output is not None and d.output.rel_diff == 0.0 for d in comparison.diffs)
    assert not comparison.alignment.only_baseline and not comparison.alignment.only_target


def test_first_divergence_and_depth_profile_on_batchnorm_pair() -> None:
    comparison = _compare(DUMPS / "reference", DUMPS / "bn_train")
    first = comparison.first
    assert first is not None and first.baseline.op_type == "BatchNorm"
    assert not first.inputs_diverged  # Conv2D before it agrees
    profile = depth_profile(comparison)
    assert [p["diverged"] for p in profile] == [False, True, True, True, True, True]
    assert profile[0]["tolerance"] == 1e-6


def test_dropout_left_on_is_seen_though_the_eval_graph_has_no_dropout_op() -> None:
    comparison = _compare(DUMPS / "reference", DUMPS / "dropout_on")
    assert [layer.op_type for layer in comparison.alignment.only_target] == ["Dropout"]
    (divergence,) = [s for s in output_symptoms(comparison) if s.kind == "output-divergence"]
    assert divergence.values["family"] == "dropout" and divergence.values["one_sided_dropouts"] == 1


def test_a_flip_keeps_the_input_statistics_but_not_its_bytes() -> None:
    comparison = _compare(DUMPS / "reference", DUMPS / "flipped")
    (inputs,) = [s for s in output_symptoms(comparison) if s.kind == "output-inputs-differ"]
    assert inputs.values["input"] == "x" and inputs.values["same_statistics"] is True


def test_batchnorm_moving_statistics_are_not_taken_for_changed_weights() -> None:
    comparison = _compare(DUMPS / "reference", DUMPS / "bn_train")
    kinds = {s.kind for s in output_symptoms(comparison)}
    assert "output-weights-differ" not in kinds
    changed = {d.baseline.name for d in comparison.of_role("weight") if d.diverged}
    assert changed == {"bn_moving_mean", "bn_moving_variance"}  # training-mode BN updated them


def test_atomic_scatter_adds_part_ways_first_at_the_scatter_by_a_few_tolerances() -> None:
    """One CPU kernel thread against two (real runs): ScatterNdAdd's atomic adds summed the same 8192
    node vectors in another order, so the first layer that parts ways is the scatter, by a few float32
    tolerances, while the nodes it summed and the weights are equal."""
    comparison = _compare(DUMPS / "readout_1thread", DUMPS / "readout_2threads")
    first = comparison.first
    assert first is not None and first.output is not None and first.baseline.op_type == "ScatterNdAdd"
    assert first.output.tolerance < first.output.rel_diff < 10 * first.output.tolerance
    assert not first.inputs_diverged  # the updates (node vectors) are equal
    assert not any(d.diverged for d in comparison.of_role("input") + comparison.of_role("weight"))
    (divergence,) = output_symptoms(comparison)
    assert divergence.values["family"] == "reduction" and divergence.values["inputs_differ"] is False


def test_the_buffer_an_in_place_op_wrote_is_not_taken_for_its_input() -> None:
    """MindSpore dumps ScatterNdAdd's accumulator (input 0) after the op ran: it differs as the output
    does, so the data input is the updates; an accumulator dumped before the op stays the data input."""
    comparison = _compare(DUMPS / "readout_1thread", DUMPS / "readout_2threads")
    first = comparison.first
    assert first is not None
    buffer, other = first.baseline.inputs[0], first.target.inputs[0]
    assert buffer is not None and other is not None and buffer in first.baseline.outputs
    written = tensor_diff(buffer, other)
    assert written is not None and written.diverged
    baseline = Dump("baseline", "test", "mindspore", (_scatter(0.0, 5.0, 2.0),))
    target = Dump("target", "test", "mindspore", (_scatter(1.0, 6.0, 2.0),))
    (pair,) = compare_dumps(baseline, target).diffs
    assert pair.inputs_diverged  # the accumulator that went in differs


def _scatter(buffer: float, out: float, update: float) -> Layer:
    """A ScatterNdAdd layer with a one-element accumulator, indices, updates and output."""
    stats = [TensorStats("float32", (1,), v, v, v, abs(v)) for v in (buffer, update, out)]
    index = TensorStats("int32", (1, 1), 0.0, 0.0, 0.0, 0.0)
    name = "Default_ScatterNdAdd-op0"
    return Layer(
        name,
        "ScatterNdAdd:" + name,
        "ScatterNdAdd",
        0,
        inputs=(stats[0], index, stats[1]),
        outputs=(stats[2],),
    )


def test_the_same_atomic_scatter_on_one_thread_twice_stays_quiet() -> None:
    """A trait both runs share: the same atomic ScatterNdAdd, one CPU kernel thread on both sides (two
    real runs, each in its own process) adds in the same order, so the runs are bit-identical and the
    non-deterministic cause, first against the two-thread run, is not raised."""
    comparison = _compare(DUMPS / "readout_1thread", DUMPS / "readout_1thread_repeat")
    symptoms = output_symptoms(comparison)
    diagnosis = evaluate(symptoms, [], ["pair"])
    assert comparison.first is None and symptoms == [] and diagnosis.nothing_found
    assert "outputs-nondeterministic" not in [c.id for c in diagnosis.causes]
    assert all(d.output is not None and d.output.rel_diff == 0.0 for d in comparison.diffs)
    assert [d.baseline.op_type for d in comparison.layers] == ["ScatterNdAdd", "MatMul", "BiasAdd", "Assign"]


def test_msprobe_sample_pair_reads_and_names_its_first_divergent_api() -> None:
    mapping = find_mapping(MSPROBE / "mindspore_data")
    assert mapping is not None and mapping["RmsNorm"] == "npu_rms_norm"
    comparison = _compare(MSPROBE / "mindspore_data", MSPROBE / "pytorch_data", mapping)
    assert comparison.baseline.framework == "mindspore" and comparison.target.framework == "pytorch"
    names = {d.baseline.name: d.target.name for d in comparison.diffs}
    assert names["Primitive.norm.RmsNorm.0.forward"] == "NPU.npu_rms_norm.0.forward"
    assert names["Mint.logical_or.0.forward"] == "Tensor.__or__.0.forward"
    assert (
        names[
            "Cell.network_with_loss.module.language_model.encoder.layers.0.attention.ParallelAttention.forward.0"
        ]
        == "Module.module.module.language_model.encoder.layers.0.self_attention.ParallelAttention.forward.0"
    )
    first = comparison.first
    assert first is not None and first.baseline.name == "Tensor.__add__.0.forward"
    assert first.output is not None and first.output.stat == "shape"  # [5, 2] index arithmetic vs a scalar
    later = [d for d in comparison.layers if d is not first]
    assert not any(d.diverged for d in later)  # every other matched API agrees within tolerance


def test_without_the_mapping_cross_framework_names_stay_apart() -> None:
    comparison = _compare(MSPROBE / "mindspore_data", MSPROBE / "pytorch_data")
    assert "Primitive.norm.RmsNorm.0.forward" in {layer.name for layer in comparison.alignment.only_baseline}


def test_an_archive_reads_like_its_folder(tmp_path: Path) -> None:
    archive = tmp_path / "weights.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted((DUMPS / "weights").rglob("*")):
            if path.is_file():
                zipped.write(path, path.relative_to(DUMPS).as_posix())
    from_zip, from_folder = (
        _compare(DUMPS / "reference", archive),
        _compare(DUMPS / "reference", DUMPS / "weights"),
    )
    assert [d.output for d in from_zip.diffs] == [d.output for d in from_folder.diffs]
    assert from_zip.target.files == from_folder.target.files


def test_statistic_csv_gives_the_comparison_the_npy_files_give(tmp_path: Path) -> None:
    """statistic.csv in the documented column layout, written from the real dumps' statistics."""
    for name in ("reference", "bn_train"):
        _write_statistic_csv(DUMPS / name, tmp_path / name / "statistic.csv")
    from_csv = _compare(tmp_path / "reference", tmp_path / "bn_train")
    from_npy = _compare(DUMPS / "reference", DUMPS / "bn_train")
    assert from_csv.first is not None and from_npy.first is not None
    assert from_csv.first.baseline.name.endswith("BatchNorm-op0")
    assert from_csv.first.output.rel_diff == pytest.approx(from_npy.first.output.rel_diff, rel=1e-6)


def test_layers_align_across_versions_that_number_and_scope_ops_differently(tmp_path: Path) -> None:
    """Another MindSpore version numbers its ops otherwise (Conv2D-op0 here, Conv2D-op17 there) and writes
    scopes with "/" (statistic.csv) where the CPU dump's file names use "_": the same run still matches
    layer for layer and agrees everywhere, and a real difference is still found at its layer."""
    renumber = {"reference": 17, "bn_train": 23}
    for name, offset in renumber.items():
        _write_statistic_csv(DUMPS / name, tmp_path / name / "statistic.csv", op_offset=offset)
    same = _compare(DUMPS / "reference", tmp_path / "reference")
    assert len(same.layers) == 6 and same.first is None
    assert not same.alignment.only_baseline and not same.alignment.only_target
    assert all(d.target.name.endswith("-op17") and not d.baseline.name.endswith("-op17") for d in same.layers)
    other = _compare(DUMPS / "reference", tmp_path / "bn_train")
    assert other.first is not None and other.first.target.name.endswith("BatchNorm-op23")


def _write_statistic_csv(folder: Path, out: Path, op_offset: int = 0) -> None:
    """Rows with the statistic.csv header of the MindSpore dump documentation, values from the .npy files
    (`op_offset` added to every -opN number, as another version's compiler numbers ops)."""
    from outputs.ms_dump import tensor_files
    from outputs.stats import npy_stats

    header = [
        "Op Type",
        "Op Name",
        "Task ID",
        "Stream ID",
        "Timestamp",
        "IO",
        "Slot",
        "Data Size",
        "Data Type",
    ]
    header += ["Shape", "Max Value", "Min Value", "Avg Value", "Count", "NaN Count", "Negative Inf Count"]
    header += ["Positive Inf Count", "L2Norm Value"]
    out.parent.mkdir(parents=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for item in sorted(tensor_files(folder), key=lambda f: f.timestamp):
            s = npy_stats(item.path)
            name = _renumbered(item.op_name.replace("_", "/", 1), op_offset)
            shape = "(" + ",".join(str(n) for n in s.shape) + ")"
            writer.writerow(
                [item.op_type, name, 0, 0, item.timestamp, item.io, item.slot, item.size, s.dtype, shape,
                 s.max, s.min, s.mean, s.count,
                 s.nan, 0, s.inf, s.norm]
            )  # fmt: skip


def _renumbered(op_name: str, offset: int) -> str:
    """`op_name` with `offset` added to its trailing -opN (unchanged without one)."""
    return re.sub(r"-op(\d+)$", lambda m: f"-op{int(m.group(1)) + offset}", op_name)


def test_tolerance_follows_the_less_precise_dtype() -> None:
    assert tolerance("float32", "float32") == (1e-6, "float32")
    assert tolerance("float32", "float16") == (1e-3, "float16")
    assert tolerance("bfloat16", "float16") == (1e-2, "bfloat16")
    assert tolerance("int64", "int64") == (0.0, "int64")
    a = TensorStats("float16", (4,), 1.0, -1.0, 0.1, 2.0)
    assert not tensor_diff(a, TensorStats("float16", (4,), 1.0005, -1.0, 0.1, 2.0)).diverged
    assert tensor_diff(a, TensorStats("float16", (4,), 1.01, -1.0, 0.1, 2.0)).diverged


def test_a_folder_without_a_dump_is_an_input_error_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "my_run"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello", encoding="utf-8")
    with Workspace() as ws, pytest.raises(InputError) as caught:
        read_dump(folder, ws)
    assert caught.value.path == "my_run" and "notes.txt" in caught.value.problem


def test_a_broken_dump_json_is_an_input_error_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(MSPROBE / "mindspore_data", folder)
    (folder / "dump.json").write_text("{not json", encoding="utf-8")
    with Workspace() as ws, pytest.raises(InputError) as caught:
        read_dump(folder, ws)
    assert caught.value.path == "run/dump.json"


def test_a_dump_json_over_the_file_budget_is_refused(tmp_path: Path) -> None:
    with Workspace() as ws, pytest.raises(InputError) as caught:
        read_dump(MSPROBE / "mindspore_data", ws, budget=Limits(max_profile_file_bytes=1024))
    assert caught.value.path == "mindspore_data/dump.json"


def test_a_damaged_tensor_file_is_an_input_error_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(DUMPS / "reference", folder)
    victim = next(folder.rglob("ReLU*output.0*.npy"))
    victim.chmod(0o600)
    victim.write_bytes(b"\x93NUMPY garbage")
    with Workspace() as ws, pytest.raises(InputError) as caught:
        read_dump(folder, ws)
    assert caught.value.path == victim.name


def test_a_truncated_tensor_file_is_an_input_error_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(DUMPS / "reference", folder)
    victim = next(folder.rglob("ReLU*output.0*.npy"))
    data = victim.read_bytes()
    victim.chmod(0o600)
    victim.write_bytes(data[: len(data) // 2])
    with Workspace() as ws, pytest.raises(InputError) as caught:
        read_dump(folder, ws)
    assert caught.value.path == victim.name and "ends" in caught.value.problem


def test_msprobe_scope_comes_from_construct_json_with_names_mapped() -> None:
    mapping = find_mapping(MSPROBE / "mindspore_data")
    comparison = _compare(MSPROBE / "mindspore_data", MSPROBE / "pytorch_data", mapping)
    pair = next(d for d in comparison.diffs if d.baseline.name == "Mint.logical_or.0.forward")
    scope = "module.module.language_model.embedding.word_embeddings"
    assert pair.baseline.scope == pair.target.scope == scope


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int64", "bool"])
def test_streamed_statistics_match_a_float64_reduction(
    dtype: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks cut elements in two (CHUNK_BYTES not a multiple of the item size) and float32 blocks are
    summed by BLAS: max/min exact, mean and norm within 1e-6 of numpy in float64, inf/nan counted."""
    import numpy as np

    from outputs import stats

    monkeypatch.setattr(stats, "CHUNK_BYTES", 4099)
    monkeypatch.setattr(stats, "BLOCK", 300)
    rng = np.random.default_rng(7)
    values = (rng.standard_normal((37, 111)) * 50 + 3).astype(dtype)
    if dtype.startswith("float"):
        values[3, 4], values[5, 6] = np.nan, -np.inf
    path = tmp_path / "t.npy"
    np.save(path, values)
    got = stats.npy_stats(path)
    wide = values.astype(np.float64).ravel()
    finite = wide[np.isfinite(wide)]
    assert got.shape == (37, 111) and got.dtype == dtype
    assert got.nan == int(np.isnan(wide).sum()) and got.inf == int(np.isinf(wide).sum())
    assert got.max == np.nanmax(wide) and got.min == np.nanmin(wide)
    assert got.mean == pytest.approx(finite.mean(), rel=1e-6)
    assert got.norm == pytest.approx(float(np.sqrt(finite @ finite)), rel=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_large_tensors_are_summed_within_1e7_of_float64(dtype: str, tmp_path: Path) -> None:
    """At the real sizes (no patched block): a 5 MB float32 tensor is read in two chunks and a float16 one
    widened in two pieces; each is reduced in 64 Ki-element float32 rows by BLAS, the row totals in
    float64: max and min exact, mean and norm within 1e-7 relative of numpy in float64 (float16: 1e-6;
    the float32 sums of its coarse values round one way more often, still a thousandth of its 1e-3
    tolerance)."""
    import numpy as np

    from outputs.stats import npy_stats

    rng = np.random.default_rng(11)
    values = (rng.standard_normal(1_300_001) * 20 + 2).astype(dtype)
    path = tmp_path / "big.npy"
    np.save(path, values)
    got = npy_stats(path)
    wide = values.astype(np.float64)
    assert got.max == wide.max() and got.min == wide.min() and got.nan == got.inf == 0
    close = 1e-7 if dtype == "float32" else 1e-6
    assert got.mean == pytest.approx(wide.mean(), rel=close)
    assert got.norm == pytest.approx(float(np.sqrt(wide @ wide)), rel=close)


def test_a_trait_both_runs_share_stays_quiet() -> None:
    """FP16 on both sides (two real FP16 runs, each in its own process): the precision-mode cause, which
    ranks first against the FP32 reference, is not raised, and nothing is significant; the FP16 quirks
    of the CPU dump (nan in the FP16-named FP32 buffers) are the same on both sides and say nothing."""
    comparison = _compare(DUMPS / "fp16", DUMPS / "fp16_repeat")
    symptoms = output_symptoms(comparison)
    diagnosis = evaluate(symptoms, [], ["pair"])
    assert comparison.first is None and symptoms == []
    assert diagnosis.nothing_found and "outputs-precision-mode" not in [c.id for c in diagnosis.causes]
    against_fp32 = evaluate(
        output_symptoms(_compare(DUMPS / "reference", DUMPS / "fp16_repeat")), [], ["pair"]
    )
    assert against_fp32.causes[0].id == "outputs-precision-mode"


def test_values_too_large_for_float32_sums_are_summed_in_float64(tmp_path: Path) -> None:
    """float32 values near 1e30 are finite, but their squares overflow float32: the chunk is reduced in
    float64, so the norm is finite and right, and nothing is counted as inf."""
    import numpy as np

    from outputs.stats import npy_stats

    values = (np.random.default_rng(5).standard_normal(200_000) * 1e30).astype(np.float32)
    np.save(tmp_path / "huge.npy", values)
    got = npy_stats(tmp_path / "huge.npy")
    wide = values.astype(np.float64)
    assert got.inf == 0 and got.max == wide.max()
    assert got.norm == pytest.approx(float(np.sqrt(wide @ wide)), rel=1e-9)
    assert got.mean == pytest.approx(wide.mean(), rel=1e-9)


def test_two_reader_threads_give_the_same_dump_and_the_same_errors(tmp_path: Path) -> None:
    """Each reader thread summarises a share of the files: the layers are those one reader gives, and a
    damaged file in either share is still an InputError naming it."""
    from outputs.ms_dump import read_npy_dump

    one, two = (read_npy_dump(DUMPS / "bn_train", "b", readers=n) for n in (1, 2))
    assert one == two and len(one.layers) > 5
    folder = tmp_path / "run"
    shutil.copytree(DUMPS / "reference", folder)
    victim = next(folder.rglob("ReLU*output.0*.npy"))
    victim.chmod(0o600)
    victim.write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(InputError) as caught:
        read_npy_dump(folder, "run", readers=2)
    assert caught.value.path == victim.name


@pytest.mark.parametrize("share", [0, 1], ids=["this process", "forked worker"])
def test_two_processes_give_the_serial_dump_and_name_a_damaged_file_in_either_share(
    tmp_path: Path, share: int
) -> None:
    """This process summarises one share of the files while a forked worker summarises the other and
    pickles its statistics back: the dump is the one a single reader gives, and a damaged file is an
    InputError naming it whether this process or the worker met it (the worker's share is then read
    here)."""
    from outputs.ms_dump import read_npy_dump

    for name in ("bn_train", "big_fp16"):  # float32 with weights (CRC), float16 and bool tensors
        serial = read_npy_dump(DUMPS / name, name, processes=1)
        assert read_npy_dump(DUMPS / name, name, processes=2) == serial and len(serial.layers) > 5
    folder, victim = spoiled_dump(tmp_path / "run", share)
    with pytest.raises(InputError) as caught:
        read_npy_dump(folder, "run", processes=2)
    assert caught.value.path == victim.name


def test_a_worker_that_dies_has_its_share_summarised_here(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A worker stopped by a limit (here: killed as it starts) sends nothing: its share is summarised in
    the calling process, so the dump is still whole, and a damaged file in that share is an InputError
    naming it (the limit or the error stops the caller, which names the file)."""
    import signal

    from outputs.ms_dump import read_npy_dump

    serial = read_npy_dump(DUMPS / "bn_train", "b", processes=1)
    real_fork, forked = os.fork, []

    def dying_fork() -> int:
        pid = real_fork()
        if pid == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", dying_fork)
    assert read_npy_dump(DUMPS / "bn_train", "b", processes=2) == serial
    folder, victim = spoiled_dump(tmp_path / "run", 1)
    with pytest.raises(InputError) as caught:
        read_npy_dump(folder, "run", processes=2)
    monkeypatch.setattr(os, "fork", real_fork)
    assert caught.value.path == victim.name and len(forked) == 2


def test_a_large_dump_is_summarised_in_two_processes_only_where_no_other_thread_runs() -> None:
    """Two processes (at most the CPUs) for a dump of FORK_BYTES or more in a single-threaded process such
    as doctor's isolated reader; one while another thread runs (a threaded server must not fork) and for
    a smaller dump (two forks cost more than they save)."""
    import threading

    from core.forks import in_forks
    from outputs.ms_dump import FORK_BYTES, processes_for

    def alone(sizes: Sequence[int]) -> list[int]:  # in a fork: its one thread (pytest may run others)
        return [processes_for(size) for size in sizes]

    cpus = len(os.sched_getaffinity(0))
    assert in_forks([[FORK_BYTES, FORK_BYTES - 1]], alone) == [[min(2, cpus), 1]]
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert processes_for(10 * FORK_BYTES) == 1
    finally:
        release.set()
        other.join()


UNDER_NO_FILE_WRITES = """
import errno, multiprocessing, os, resource, signal, sys
from pathlib import Path
from outputs.ms_dump import read_npy_dump

folder = Path(sys.argv[1])
serial = read_npy_dump(folder, "run", processes=1)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # as doctor's isolated reader
try:
    multiprocessing.get_context("fork").Lock()
    lock = "made"
except OSError as error:
    lock = errno.errorcode[error.errno]
forks = []
fork = os.fork
os.fork = lambda: forks.append(1) or fork()
forked = read_npy_dump(folder, "run", processes=2)
print(lock, len(forks), forked == serial, len(serial.layers))
"""


def test_two_processes_summarise_a_dump_where_no_file_may_be_written() -> None:
    """A process that may write no file (RLIMIT_FSIZE=0, as the isolated reader) cannot make a
    multiprocessing lock (a POSIX semaphore, a file it cannot size); a worker forked to answer over a
    pipe summarises half the files there and the dump is the serial one."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", UNDER_NO_FILE_WRITES, str(DUMPS / "bn_train")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    lock, forks, equal, layers = done.stdout.split()
    assert (lock, forks, equal) == ("EFBIG", "1", "True") and int(layers) > 5

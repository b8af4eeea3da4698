"""Damage to real profile fixtures for the property-based tests: the layouts fuzzed, hypothesis settings,
the damages drawn and a context manager that applies one and restores the file."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from tests.support.layouts import FUZZ, runs_for

LAYOUTS = runs_for(FUZZ)  # the fuzzed runs, by name: a selection of tests/support/layouts.py
EXAMPLES = int(os.environ.get("PERF_DOCTOR_FUZZ_EXAMPLES", "40"))
RANDOM = os.environ.get("PERF_DOCTOR_FUZZ_RANDOM") == "1"  # default: the same examples on every run


def fuzz_settings(examples: int) -> settings:
    """Derandomized (a known bug is a stable expected failure) and, unless PERF_DOCTOR_FUZZ_RANDOM=1,
    without shrinking: a failing example is reported as found instead of costing minutes to minimise."""
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if RANDOM else [])
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=not RANDOM,
        phases=phases,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


TOKENS = [
    b"", b"nan", b"NaN", b"-1", b"-0", b"inf", b"-inf", b"1e309", b"99999999999999999999", b"N/A", b"0",
    b",", b",,", b'"', b"'", b";", b" ", b"\t", b"\n", b"\r\n", b"\x00", b"\xff\xfe", b"\xef\xbb\xbf",
    b"[", b"]", b"{", b"}", b"null", b"true", b"<img src=x>", b"=1+1", "é".encode("latin-1"),
]  # fmt: skip
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", re.IGNORECASE)


@dataclass(frozen=True)
class Damage:
    """One change to one file, applied to its original bytes."""

    kind: str  # truncate | flip | splice | number | empty | remove
    position: int
    value: bytes = b""

    def apply(self, data: bytes) -> bytes | None:
        """The damaged bytes, or None to remove the file."""
        at = self.position % (len(data) + 1)
        if self.kind == "truncate":
            return data[:at]
        if self.kind == "flip" and data:
            index = at % len(data)
            return data[:index] + bytes([data[index] ^ (self.value[0] or 1)]) + data[index + 1 :]
        if self.kind == "splice":
            return data[:at] + self.value + data[at:]
        if self.kind == "number":
            numbers = list(NUMBER.finditer(data))
            if numbers:
                hit = numbers[self.position % len(numbers)]
                return data[: hit.start()] + self.value + data[hit.end() :]
            return data
        if self.kind == "empty":
            return b""
        return None if self.kind == "remove" else data


DAMAGE = st.one_of(
    st.builds(Damage, st.just("truncate"), st.integers(0, 10**7)),
    st.builds(Damage, st.just("flip"), st.integers(0, 10**7), st.binary(min_size=1, max_size=1)),
    st.builds(Damage, st.just("splice"), st.integers(0, 10**7), st.sampled_from(TOKENS)),
    st.builds(Damage, st.just("number"), st.integers(0, 10**5), st.sampled_from(TOKENS)),
    st.builds(Damage, st.sampled_from(["empty", "remove"]), st.just(0)),
)


def files_below(root: Path) -> list[Path]:
    """Every file below a folder, in a stable order (hypothesis draws from it)."""
    return sorted(path for path in root.rglob("*") if path.is_file())


@contextmanager
def damaged(path: Path, damage: Damage) -> Iterator[None]:
    """The file damaged (or removed) for the duration of the block, restored whatever happens."""
    original = path.read_bytes()
    changed = damage.apply(original)
    if changed is None:
        path.unlink()
    else:
        path.write_bytes(changed)
    try:
        yield
    finally:
        path.write_bytes(original)


def known(names: list[str], bugs: dict[str, str], fast: frozenset[str] | None = None) -> list[object]:
    """Parameters, the ones with a known bug marked as strict expected failures and, when `fast` is given,
    the others marked slow (the fast lane fuzzes a representative few; CI all)."""
    params = []
    for n in names:
        marks = [pytest.mark.xfail(strict=True, reason=bugs[n])] if n in bugs else []
        marks += [] if fast is None or n in fast else [pytest.mark.slow]
        params.append(pytest.param(n, marks=marks) if marks else n)
    return params

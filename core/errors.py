"""The one error type every user-caused failure ends in."""

from __future__ import annotations


class InputError(Exception):
    """Bad input: names the file, the problem and what was expected. Shown to the user as one line."""

    def __init__(self, problem: str, *, path: str | None = None, expected: str | None = None) -> None:
        self.problem = problem
        self.path = path
        self.expected = expected
        super().__init__(self.message)

    @property
    def message(self) -> str:
        parts = [f"{self.path}: {self.problem}" if self.path else self.problem]
        if self.expected:
            parts.append(f"expected {self.expected}")
        return "; ".join(parts)

"""The one error type every user-caused failure ends in."""

from __future__ import annotations

import re

# Control characters never shown in a message (a file or member name may carry any byte): line breaks
# and tabs become spaces (the message is one line), the others (NUL, ESC, DEL, C1 ...) are dropped.
_BREAKS = re.compile(r"[\t\n\r\x0b\x0c\x85\u2028\u2029]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class InputError(Exception):
    """Bad input: names the file, the problem and what was expected. Shown to the user as one line."""

    def __init__(self, problem: str, *, path: str | None = None, expected: str | None = None) -> None:
        self.problem = problem
        self.path = path
        self.expected = expected
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """`path: problem; expected ...` as one line without control characters."""
        parts = [f"{self.path}: {self.problem}" if self.path else self.problem]
        if self.expected:
            parts.append(f"expected {self.expected}")
        return _CONTROL.sub("", _BREAKS.sub(" ", "; ".join(parts)))


def error_line(error: InputError) -> str:
    """The error's one line (`message`) as a `core.text` message, so a report says it in its language;
    the plain line when the cleanup of control characters changed it."""
    from core.text import say

    problem = say("error.at", path=error.path, problem=error.problem) if error.path else error.problem
    made = say("error.with-expected", head=problem, expected=error.expected) if error.expected else problem
    return made if str(made) == error.message else error.message

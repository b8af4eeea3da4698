"""The error raised when a rule file breaks the schema: names the file, the field and what was expected."""

from __future__ import annotations


class RuleError(ValueError):
    """A rule file (or a rule fixture) does not follow the schema in knowledge/README.md."""

    def __init__(self, problem: str, *, source: str = "", field: str = "") -> None:
        self.problem = problem
        self.source = source
        self.field = field
        where = ": ".join(part for part in (source, field) if part)
        super().__init__(f"{where}: {problem}" if where else problem)

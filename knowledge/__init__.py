"""Rules as data: root causes in knowledge/rules/*.yaml, an engine that weighs symptoms against them,
ranks the causes by expected benefit and says plainly what it cannot decide.

Public API: :func:`load_rules`, :func:`evaluate`, :func:`catalog_markdown` and the result types.
"""

from collections.abc import Sequence

from knowledge.engine import Cause, Diagnosis, Evidence, Undecided, evaluate
from knowledge.errors import RuleError
from knowledge.loader import load_rules
from knowledge.schema import INPUT_KINDS, LIMITATION_TOPICS, SEVERITIES, Rule, Text


def catalog_markdown(rules: Sequence[Rule] | None = None, lang: str | None = None) -> str:
    """The rule catalog as Markdown: docs/rules.md (bilingual) or, with `lang`, the page version in one
    language; imported on use so that
    ``python -m knowledge.catalog`` does not find its own module already loaded."""
    from knowledge.catalog import catalog_markdown as generate

    return generate(rules, lang)


__all__ = [
    "INPUT_KINDS",
    "LIMITATION_TOPICS",
    "SEVERITIES",
    "Cause",
    "Diagnosis",
    "Evidence",
    "Rule",
    "RuleError",
    "Text",
    "Undecided",
    "catalog_markdown",
    "evaluate",
    "load_rules",
]

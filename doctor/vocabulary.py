"""The symptom vocabulary generated from the kinds declared beside their emitters.

Each emitter module (the analyzers, the graph checks, the outputs comparison) declares its kinds as
`core.symptoms.SymptomValues` subclasses: description, typed values, message ids. `core` cannot import
its emitters, so the vocabulary that rules are checked against is written from those declarations into
core/symptom_kinds.json; `tests/test_symptom_vocabulary.py` fails when it is stale.

    python -m doctor.vocabulary          # rewrite core/symptom_kinds.json
    python -m doctor.vocabulary --check  # exit 1 when it is stale
"""

from __future__ import annotations

import argparse
import json
from typing import TypedDict

import diagnosis
import graph
import outputs
from core import VOCABULARY_FILE, VocabularyEntry, vocabulary_entry

GENERATED_BY = "python -m doctor.vocabulary"


class Vocabulary(TypedDict):
    """core/symptom_kinds.json: the command that wrote it and every kind's entry, by kind."""

    generated_by: str
    kinds: dict[str, VocabularyEntry]


def build() -> Vocabulary:
    """The vocabulary document: every declared kind's entry, by kind; a kind declared twice fails."""
    kinds: dict[str, VocabularyEntry] = {}
    for stage in (diagnosis, graph, outputs):
        for module, declared in stage.symptom_declarations().items():
            for kind in declared:
                if kind.KIND.id in kinds:
                    raise ValueError(
                        f"{kind.KIND.id} is declared by {kinds[kind.KIND.id]['module']} and {module}"
                    )
                kinds[kind.KIND.id] = vocabulary_entry(kind, module)
    return {"generated_by": GENERATED_BY, "kinds": dict(sorted(kinds.items()))}


def render() -> str:
    """The file's text: stable JSON, one value per line."""
    return json.dumps(build(), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write core/symptom_kinds.json, or with --check say whether it is stale."""
    parser = argparse.ArgumentParser(
        prog="python -m doctor.vocabulary", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        stale = VOCABULARY_FILE.read_text(encoding="utf-8") != text
        print(f"{VOCABULARY_FILE.name} is {'stale: run ' + GENERATED_BY if stale else 'up to date'}")
        return int(stale)
    VOCABULARY_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {VOCABULARY_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Input problems as the user reads them: which input (baseline, target, model), the user's own file name,
what is wrong and what to do, one line each, shown in the result area until the next run."""

from __future__ import annotations

import re

from core import InputError, in_lang
from doctor.i18n import UI_TEXT, t
from doctor.text import md_code, md_text

SIDES = ("baseline", "target", "mindir", "after")
HELP_ANCHOR = "#collect-help"  # the "How to collect" box of the app's Compare tab
# The private folder a file upload is rebuilt in (diagnosis.sources: workspace.new_folder("input-")):
# a server detail, never part of the name the user knows.
_WORKSPACE_PART = re.compile(r"^(?:.*[/\\])?input-[A-Za-z0-9_]+[/\\]")


class SideError(InputError):
    """An InputError of one input: `side` (baseline, target or mindir) and the user's own `file`."""

    def __init__(self, side: str, file: str | None, problem: str, *, expected: str | None = None) -> None:
        self.side = side
        self.file = file
        super().__init__(problem, path=f"{side} {file}" if file else side, expected=expected)


class InputProblems(InputError):
    """Several inputs were bad at once: every problem is kept, one line each."""

    def __init__(self, problems: list[InputError]) -> None:
        self.problems = problems
        first = problems[0]
        super().__init__(first.problem, path=first.path, expected=first.expected)

    @property
    def message(self) -> str:
        """All problems on one line, for the CLI and the API."""
        return " | ".join(problem.message for problem in getattr(self, "problems", []))


def user_file(path: str | None) -> str | None:
    """A file path from a reader with the server's private upload folder removed."""
    if not path:
        return path
    return _WORKSPACE_PART.sub("", path) or path


def problems_of(error: InputError) -> list[InputError]:
    """The single problems an error stands for."""
    return list(error.problems) if isinstance(error, InputProblems) else [error]


def problem_line(error: InputError, lang: str, button: str = "run") -> str:
    """One Markdown line: the input, the file, the problem, what to do (press the tab's `button`, a
    UI_TEXT key: "run" is Diagnose, "inspect" Inspect), a link to the collection help."""
    side = getattr(error, "side", None)
    file = getattr(error, "file", None) if side else error.path
    head = f"**{t(f'side_{side}', lang)}**" if side in SIDES else f"**{t('side_input', lang)}**"
    where = f" {md_code(file)}" if file else ""
    said = f"{t('problem_expected', lang)} {md_text(in_lang(error.expected, lang))}"
    expected = f"; {said}" if error.expected else ""
    todo = t("problem_todo", lang, help=HELP_ANCHOR, button=UI_TEXT[lang][button])
    return f"- {head}{where}: {md_text(in_lang(error.problem, lang))}{expected}. {todo}"


def problems_markdown(error: InputError, lang: str, button: str = "run") -> str:
    """The problems of a failed run for the result area: a heading, then one line per problem."""
    lines = [problem_line(problem, lang, button) for problem in problems_of(error)]
    return "\n".join([f"### {t('problems', lang)}", "", *lines])


def failure_markdown(lang: str, kind: str, button: str = "run") -> str:
    """A failure that is not the user's (a bug): what happened and that the server log has more."""
    line = t("internal_error", lang, kind=md_text(kind), button=UI_TEXT[lang][button])
    return "\n".join([f"### {t('problems', lang)}", "", f"- {line}"])

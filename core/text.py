"""Texts a user reads, made from a message id and its values, so every renderer can say them in its language.

An analyzer or reader writes ``say("step-gap", ms=3.2)``: the result is the English sentence (a plain
``str`` to every caller, so JSON and English reports are exactly what they were) that also remembers its
message id and values. A renderer asks ``in_lang(text, "zh")`` for the same message in Chinese. The
wording of both languages lives in one catalog (core/messages.py); an argument that is itself a `Text`
is said in the same language, so a message can be built from smaller ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar, cast, overload

T = TypeVar("T")

JOIN = "join"  # the id of a list joined by a separator message (see join)


class Text(str):
    """An English text that knows its message id and values (see module docstring)."""

    key: str
    args: Mapping[str, object]  # a message's values: numbers, names, other texts, lists of them

    def __new__(cls, key: str, args: Mapping[str, object]) -> Text:
        made = super().__new__(cls, _compose(key, args, "en"))  # an unknown id fails here, where it is made
        made.key = key
        made.args = dict(args)
        return made

    def __reduce__(self) -> tuple[type[Text], tuple[str, Mapping[str, object]]]:
        """Pickles as id and values (the isolated readers send runs back to the parent)."""
        return (Text, (self.key, self.args))

    def said(self, lang: str) -> str:
        """This message in `lang` ("en" gives the text itself)."""
        return str(self) if lang == "en" else _compose(self.key, self.args, lang)


def say(key: str, **args: object) -> Text:
    """The message `key` with `args`: its English text, remembering both (core/messages.py has them)."""
    return Text(key, args)


def join(items: Sequence[object], sep: str = "sep.semicolon") -> Text:
    """`items` (texts or plain names) joined by the separator message `sep` ("; " in English, "；" in
    Chinese): a list said in either language."""
    return Text(JOIN, {"sep": Text(sep, {}), "items": tuple(items)})


@overload
def in_lang(text: str, lang: str) -> str: ...
@overload
def in_lang(text: T, lang: str) -> T: ...
def in_lang(text: object, lang: str) -> object:
    """`text` in `lang` when it is a `Text`; any other value (a plain string, None) as it is."""
    return text.said(lang) if isinstance(text, Text) else text


def _compose(key: str, args: Mapping[str, object], lang: str) -> str:
    """The message `key` in `lang` (English when it has no such translation), filled with `args`."""
    from core.messages import MESSAGES

    if key == JOIN:
        return str(_said(args["sep"], lang)).join(
            str(_said(item, lang)) for item in cast("Sequence[object]", args["items"])
        )
    entry = MESSAGES[key]
    return entry.get(lang, entry["en"]).format(**{k: _said(v, lang) for k, v in args.items()})


def _said(value: object, lang: str) -> object:
    """A message argument for formatting: a `Text` in `lang`, any other value as it is."""
    if isinstance(value, Text):
        return value.said(lang)
    return value

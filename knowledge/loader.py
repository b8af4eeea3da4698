"""Load and validate the rule files: every key checked, every error names the file and the field."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path
from typing import Any, cast

from core.symptoms import SOURCES, SYMPTOM_KINDS
from knowledge.conditions import parse_condition
from knowledge.errors import RuleError
from knowledge.schema import (
    COMBINE_MODES,
    INPUT_KINDS,
    LIMITATION_TOPICS,
    QUANTITY_CLAIMS,
    RECOVERABLE_FROM_SYMPTOM,
    SEVERITIES,
    VERIFY_MODES,
    Explanation,
    Fix,
    Need,
    Reference,
    Rule,
    Signal,
    Support,
    Text,
    code_comments,
)

RULES_DIR = Path(__file__).resolve().parent / "rules"
ID_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
CJK = re.compile(r"[\u4e00-\u9fff]")

RULE_KEYS = {
    "id": True,
    "title": True,
    "severity": True,
    "applies_to": True,
    "supports": True,
    "contradicts": False,
    "needs": False,
    "explanation": True,
    "fix": True,
    "references": True,
    "recoverable_combine": False,
    "explains": False,
    "changes_results": False,
}
SIGNAL_KEYS = {"symptom": True, "weight": True, "when": False, "sources": False}
SUPPORT_KEYS = {**SIGNAL_KEYS, "recoverable": False, "recoverable_scale": False, "corroborating": False}
NEED_KEYS = {"topic": True, "reason": True, "remedy": True, "remedy_with_mindir": False, "inputs": False}
EXPLANATION_KEYS = {"what_it_detects": True, "why_it_matters": True, "how_to_confirm": True}
FIX_KEYS = {"code": True, "language": True, "verify": True, "notes": True, "comments": False}
REFERENCE_KEYS = {"title": True, "url": True}


def load_rules(directory: Path | None = None) -> list[Rule]:
    """All rules, sorted by id; the packaged rules are read and validated once per process."""
    if directory is None:
        return list(_packaged_rules())
    return list(_load_dir(Path(directory)))


@cache
def _packaged_rules() -> tuple[Rule, ...]:
    return _load_dir(RULES_DIR)


def _load_dir(directory: Path) -> tuple[Rule, ...]:
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise RuleError("no rule files (*.yaml) found", source=str(directory))
    rules = [load_rule_file(path) for path in files]
    seen: dict[str, str] = {}
    for rule in rules:
        if rule.id in seen:
            raise RuleError(f"duplicate rule id, also in {seen[rule.id]}", source=rule.source, field="id")
        seen[rule.id] = rule.source
    return tuple(sorted(rules, key=lambda r: r.id))


def load_rule_file(path: Path) -> Rule:
    """Read one YAML rule file and validate it; the id must equal the file name without .yaml.
    A file whose bytes the snapshot holds is taken from it, parsed already (knowledge.snapshot)."""
    from knowledge.snapshot import cached_raw  # here, so that `python -m knowledge.snapshot` runs clean

    source = _display(path)
    data = path.read_bytes()
    raw = cached_raw(path.parent, path.name, data)
    if raw is None:
        raw = _parse_yaml(data, source)
    try:
        rule = parse_rule(raw, source=source)
    except RuleError as exc:
        if exc.source:
            raise
        raise RuleError(exc.problem, source=source, field=exc.field) from None
    if rule.id != path.stem:
        raise RuleError(f"id {rule.id!r} differs from the file name {path.stem!r}", source=source, field="id")
    return rule


def _parse_yaml(data: bytes, source: str) -> Any:
    import yaml

    from knowledge.snapshot import parse_yaml

    try:
        return parse_yaml(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RuleError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", source=source) from None
    except yaml.YAMLError as exc:
        raise RuleError(f"not valid YAML: {exc}", source=source) from None


def parse_rule(data: object, source: str = "") -> Rule:
    """Validate one rule mapping (already parsed from YAML) into a Rule."""
    _mapping(data, RULE_KEYS, "")
    raw = cast("dict[str, Any]", data)  # a mapping with the rule's keys: each value is checked below
    rule_id = raw["id"]
    if not isinstance(rule_id, str) or not ID_PATTERN.match(rule_id):
        raise RuleError(f"{rule_id!r} is not a kebab-case id (a-z, 0-9, single hyphens)", field="id")
    applies_to = _choices(raw["applies_to"], INPUT_KINDS, "applies_to")
    supports = tuple(_support(item, f"supports[{i}]") for i, item in enumerate(_list(raw, "supports")))
    if all(s.corroborating for s in supports):
        raise RuleError("at least one support must not be corroborating", field="supports")
    contradicts = tuple(
        Signal(**_signal_fields(item, f"contradicts[{i}]", SIGNAL_KEYS))
        for i, item in enumerate(_list(raw, "contradicts"))
    )
    needs = tuple(_need(item, f"needs[{i}]", applies_to) for i, item in enumerate(_list(raw, "needs")))
    _no_baseline_contradiction(supports, contradicts)
    combine = raw.get("recoverable_combine", "max")
    if combine not in COMBINE_MODES:
        raise RuleError(f"expected one of {COMBINE_MODES}, got {combine!r}", field="recoverable_combine")
    explains = _choices(raw["explains"], tuple(SYMPTOM_KINDS), "explains") if "explains" in raw else ()
    changes_results = raw.get("changes_results", False)
    if not isinstance(changes_results, bool):
        raise RuleError("must be true or false", field="changes_results")
    title = _text(raw["title"], "title")
    for text in (title.en, title.zh):
        if QUANTITY_CLAIMS.search(text):
            raise RuleError(f"a title states the hypothesis, not a quantity: {text!r}", field="title")
    return Rule(
        id=rule_id,
        title=title,
        severity=_choice(raw["severity"], SEVERITIES, "severity"),
        applies_to=applies_to,
        supports=supports,
        contradicts=contradicts,
        needs=needs,
        explanation=_explanation(raw["explanation"]),
        fix=_fix(raw["fix"]),
        references=tuple(_reference(r, f"references[{i}]") for i, r in enumerate(_list(raw, "references"))),
        recoverable_combine=combine,
        explains=explains,
        changes_results=changes_results,
        source=source,
    )


def _no_baseline_contradiction(supports: tuple[Support, ...], contradicts: tuple[Signal, ...]) -> None:
    """The engine subtracts the baseline's symptom of every supporting kind itself (differential
    evidence); a rule that also contradicts with it would count the shared trait twice."""
    kinds = {s.symptom for s in supports}
    for i, signal in enumerate(contradicts):
        if signal.symptom in kinds and signal.sources == ("baseline",):
            raise RuleError(
                f"{signal.symptom} from the baseline is already subtracted by the engine "
                "(differential evidence); remove this entry",
                field=f"contradicts[{i}]",
            )


def _signal_fields(raw: Any, field: str, keys: dict[str, bool]) -> dict[str, Any]:
    """The fields shared by supports and contradicts, checked against the symptom vocabulary."""
    _mapping(raw, keys, field)
    kind = raw["symptom"]
    if kind not in SYMPTOM_KINDS:
        raise RuleError(f"unknown symptom kind {kind!r} (see SYMPTOM_KINDS)", field=f"{field}.symptom")
    weight = raw["weight"]
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 < weight <= 1:
        raise RuleError(f"weight must be a number in (0, 1], got {weight!r}", field=f"{field}.weight")
    when = None
    if "when" in raw:
        when = parse_condition(raw["when"], f"{field}.when")
        unknown = sorted(when.keys() - set(SYMPTOM_KINDS[kind].values))
        if unknown:
            raise RuleError(
                f"{kind} has no value(s) {unknown}; it carries {list(SYMPTOM_KINDS[kind].values)}",
                field=f"{field}.when",
            )
    sources = _choices(raw["sources"], SOURCES, f"{field}.sources") if "sources" in raw else None
    return {"symptom": kind, "weight": float(weight), "when": when, "sources": sources}


def _support(raw: Any, field: str) -> Support:
    fields = _signal_fields(raw, field, SUPPORT_KEYS)
    kind = fields["symptom"]
    recoverable = raw.get("recoverable")
    allowed = (*SYMPTOM_KINDS[kind].values, RECOVERABLE_FROM_SYMPTOM)
    if recoverable is not None and recoverable not in allowed:
        raise RuleError(
            f"{recoverable!r} is neither a value of {kind} {list(SYMPTOM_KINDS[kind].values)} "
            f"nor '{RECOVERABLE_FROM_SYMPTOM}'",
            field=f"{field}.recoverable",
        )
    scale = raw.get("recoverable_scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale <= 1:
        raise RuleError(f"must be a number in (0, 1], got {scale!r}", field=f"{field}.recoverable_scale")
    corroborating = raw.get("corroborating", False)
    if not isinstance(corroborating, bool):
        raise RuleError("must be true or false", field=f"{field}.corroborating")
    return Support(
        **fields, recoverable=recoverable, recoverable_scale=float(scale), corroborating=corroborating
    )


def _need(raw: Any, field: str, applies_to: tuple[str, ...]) -> Need:
    _mapping(raw, NEED_KEYS, field)
    topic = _choice(raw["topic"], tuple(LIMITATION_TOPICS), f"{field}.topic")
    inputs = _choices(raw["inputs"], applies_to, f"{field}.inputs") if "inputs" in raw else None
    given = raw.get("remedy_with_mindir")
    return Need(
        topic=topic,
        reason=_text(raw["reason"], f"{field}.reason"),
        remedy=_text(raw["remedy"], f"{field}.remedy"),
        inputs=inputs,
        remedy_with_mindir=None if given is None else _text(given, f"{field}.remedy_with_mindir"),
    )


def _explanation(raw: Any) -> Explanation:
    _mapping(raw, EXPLANATION_KEYS, "explanation")
    return Explanation(**{key: _text(raw[key], f"explanation.{key}") for key in EXPLANATION_KEYS})


def _fix(raw: Any) -> Fix:
    _mapping(raw, FIX_KEYS, "fix")
    code = raw["code"]
    if not isinstance(code, str) or not code.strip():
        raise RuleError("expected the fix as a non-empty code block", field="fix.code")
    if raw["language"] != "python":
        raise RuleError(f"only python fixes can be verified, got {raw['language']!r}", field="fix.language")
    try:
        ast.parse(code)
    except SyntaxError as exc:
        raise RuleError(f"not valid Python (line {exc.lineno}): {exc.msg}", field="fix.code") from None
    code = code.rstrip() + "\n"
    return Fix(
        code=code,
        language="python",
        verify=_choice(raw["verify"], VERIFY_MODES, "fix.verify"),
        notes=_text(raw["notes"], "fix.notes"),
        comments_zh=_comments(code, raw.get("comments")),
    )


def _comments(code: str, raw: Any) -> tuple[str, ...]:
    """The code's comments in Chinese (`comments: {zh: [...]}`, one per comment of the code, in order):
    the zh report shows the same code with them. Required when the code has comments."""
    found = code_comments(code)
    if raw is None and not found:
        return ()
    _mapping(raw, {"zh": True}, "fix.comments")
    zh: Any = cast("dict[str, Any]", raw)["zh"]
    texts: list[Any] = cast("list[Any]", zh) if isinstance(zh, list) else []
    if len(texts) != len(found) or not isinstance(zh, list):
        count = len(texts)
        raise RuleError(
            f"expected {len(found)} comment(s), one per comment of the code, got {count}",
            field="fix.comments.zh",
        )
    lines: list[str] = []
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not CJK.search(text) or "\n" in text:
            raise RuleError("expected one line of Chinese text", field=f"fix.comments.zh[{i}]")
        lines.append(text.strip())
    return tuple(lines)


def _reference(raw: Any, field: str) -> Reference:
    _mapping(raw, REFERENCE_KEYS, field)
    title, url = raw["title"], raw["url"]
    if not isinstance(title, str) or not title.strip():
        raise RuleError("expected a non-empty title", field=f"{field}.title")
    if not isinstance(url, str) or not url.startswith("https://"):
        raise RuleError(f"expected an https:// address, got {url!r}", field=f"{field}.url")
    return Reference(title=title.strip(), url=url)


def _text(raw: Any, field: str) -> Text:
    """An {en, zh} pair: both non-empty; the Chinese text must contain Chinese characters."""
    _mapping(raw, {"en": True, "zh": True}, field)
    en, zh = raw["en"], raw["zh"]
    for lang, value in (("en", en), ("zh", zh)):
        if not isinstance(value, str) or not value.strip():
            raise RuleError("expected a non-empty string", field=f"{field}.{lang}")
    if not CJK.search(zh):
        raise RuleError("the zh text has no Chinese characters", field=f"{field}.zh")
    if CJK.search(en):
        raise RuleError("the en text contains Chinese characters", field=f"{field}.en")
    return Text(en=" ".join(en.split()), zh=" ".join(zh.split()))


def _mapping(raw: Any, keys: dict[str, bool], field: str) -> None:
    if not isinstance(raw, dict):
        raise RuleError(f"expected a mapping, got {type(raw).__name__}", field=field or "<file>")
    missing = [k for k, required in keys.items() if required and k not in raw]
    unknown = sorted(set(cast("dict[str, Any]", raw)) - set(keys))
    prefix = f"{field}." if field else ""
    if missing:
        raise RuleError(f"missing required key '{missing[0]}'", field=prefix + missing[0])
    if unknown:
        raise RuleError(f"unknown key(s) {unknown}; allowed: {sorted(keys)}", field=field or "<file>")


def _list(raw: dict[str, Any], key: str) -> list[Any]:
    value: Any = raw.get(key, [])
    if not isinstance(value, list):
        raise RuleError("expected a list", field=key)
    if key in ("supports", "references") and not value:
        raise RuleError("expected at least one entry", field=key)
    return cast("list[Any]", value)


def _choice(raw: Any, allowed: tuple[str, ...], field: str) -> str:
    if raw not in allowed:
        raise RuleError(f"expected one of {list(allowed)}, got {raw!r}", field=field)
    return raw


def _choices(raw: Any, allowed: tuple[str, ...], field: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise RuleError(f"expected a non-empty list from {list(allowed)}", field=field)
    out = tuple(_choice(item, allowed, f"{field}[{i}]") for i, item in enumerate(cast("list[Any]", raw)))
    if len(set(out)) != len(out):
        raise RuleError("duplicate entries", field=field)
    return out


def _display(path: Path) -> str:
    """A short path for messages: relative to the repository when possible."""
    try:
        return str(path.resolve().relative_to(RULES_DIR.parent.parent))
    except ValueError:
        return str(path)

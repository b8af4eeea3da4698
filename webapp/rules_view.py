"""The Rules tab: the knowledge-base catalog, narrowed by a free-text search.

The catalog Markdown comes from the packaged rules (trusted text); only the user's query is user data
and is escaped before it is shown.
"""

from __future__ import annotations

from doctor.i18n import t
from doctor.text import md_text
from knowledge import Rule, catalog_markdown, load_rules


def rule_haystack(rule: Rule) -> str:
    """Everything a search may match in one rule: id, texts, symptom kinds, fix code, references."""
    parts = [rule.id, rule.severity, *rule.applies_to, *rule.texts(), rule.fix.code, *rule.fix.comments_zh]
    parts += [s.symptom for s in (*rule.supports, *rule.contradicts)]
    parts += [need.topic for need in rule.needs]
    parts += [ref.url for ref in rule.references]
    return "\n".join(parts).lower()


def matching_rules(query: str) -> list[Rule]:
    """Rules containing every word of the query (case-insensitive); all rules for an empty query."""
    words = query.lower().split()
    return [rule for rule in load_rules() if all(word in rule_haystack(rule) for word in words)]


def rules_markdown(query: str = "", lang: str = "en") -> str:
    """The catalog of the matching rules, headed by how many matched the (escaped) query."""
    rules = matching_rules(query or "")
    total = len(load_rules())
    if not query.strip():
        return catalog_markdown(rules, lang)
    head = t("rules_found", lang, shown=len(rules), total=total, query=md_text(query.strip()))
    if not rules:
        return head
    return head + "\n\n" + catalog_markdown(rules, lang)

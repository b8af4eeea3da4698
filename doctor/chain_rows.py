"""One row per fusion chain of a report's graph section, for the app's chain table and the Markdown and
HTML reports: a user finds a blocked or split chain and reads why, without hovering or reading JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from doctor.model import Chain, ReportDocument

# Display order of a chain's status: the ones that cost time or need a change first.
CHAIN_STATUS_ORDER = ("blocked", "split", "partly-fused", "not-found", "fusible", "fused")


class ChainRecord(TypedDict):
    """One fusion chain as the report's chain table lists it (see chain_records)."""

    index: int  # from 1, in the graph section's order
    pattern: str
    scope: str
    ops: str  # the ops joined by " > "
    status: str
    reason: str
    separate_us: float | None  # the separate kernels' time per step, with a profile


def chain_records(document: ReportDocument) -> list[ChainRecord]:
    """One record per fusion chain of the graph section, whatever its pattern: pattern, scope, ops,
    status (fused / partly-fused / split / not-found from the profile cross-link, else fusible or
    blocked), the blocking reason and the separate-kernel time per step; blocked and split first.
    Chains of any pattern (new ones included) are listed."""
    graph = document.graph
    if graph is None:
        return []
    links = {row.chain: row for row in graph.crosslink or []}
    records: list[ChainRecord] = []
    for index, chain in enumerate(graph.chains.items):
        link = links.get(index)
        reason = chain.blocked_reason or ""
        status = link.status if link else ("fusible" if chain.fusible else "blocked")
        if reason and status != "fused":
            status = "blocked"
        records.append(
            {
                "index": index + 1,
                "pattern": _pattern_text(chain),
                "scope": _common_scope(chain.scopes),
                "ops": " > ".join(chain.ops),
                "status": status,
                "reason": reason,
                "separate_us": link.separate_us_per_step if link else None,
            }
        )
    rank = {status: i for i, status in enumerate(CHAIN_STATUS_ORDER)}
    return sorted(records, key=lambda r: (rank.get(r["status"], len(rank)), r["index"]))


def _pattern_text(chain: Chain) -> str:
    """The pattern's name, and for a decomposed pattern the fused op that replaces it."""
    pattern, fused = chain.pattern, chain.replaced_by
    return f"{pattern} → {fused}" if fused else pattern


def _common_scope(scopes: list[str]) -> str:
    """The scope the chain's nodes share (their longest common `/` prefix), else the first one."""
    parts = [scope.split("/") for scope in scopes if scope]
    if not parts:
        return ""
    common = []
    for level in zip(*parts, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return "/".join(common) or parts[0][0]

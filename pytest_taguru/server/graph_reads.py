"""Read operations over a context's graph: resolve, pinned query, the alias listing, and how one
association is served with its attributions (server-wire §2.9–§2.11, §3.2, §3.5).

Each function holds ``Store.reading`` for the whole operation, as the store's own methods do.
"""

from bisect import bisect_right
from typing import Any

from pytest_taguru.core.wire import (
    Association,
    Attribution,
    Locator,
    QueryPlan,
    QueryResult,
    ResolveCandidate,
)
from pytest_taguru.server.context import Context
from pytest_taguru.server.index.graph import MatchRow, Namespace, QueryCursor
from pytest_taguru.server.index.passages import StoredPassage
from pytest_taguru.server.index.resolve import DEFAULT_DICE_FLOOR
from pytest_taguru.server.store import Store

GLOSSED_CANDIDATES = 8
"""Only the first candidates of a resolve answer carry a gloss."""


def list_aliases(
    store: Store, name: str, limit: int, after: str | None, prefix: str | None
) -> dict[str, Any]:
    """``GET …/aliases``: one keyset over ``concept:<alias>`` then ``label:<alias>``."""
    with store.reading(name) as context:
        keys = [
            f"{ns.value}:{alias}"
            for ns in (Namespace.CONCEPT, Namespace.LABEL)
            for alias in sorted(context.graph.names(ns).aliases)
            if not prefix or alias.startswith(prefix)
        ]
        start = bisect_right(keys, after) if after is not None else 0
        result: dict[str, Any] = {"total": len(keys), "concepts": {}, "labels": {}}
        for key in keys[start : start + limit]:
            ns_name, alias = key.split(":", 1)
            ns = Namespace(ns_name)
            result["concepts" if ns is Namespace.CONCEPT else "labels"][alias] = (
                context.graph.names(ns).aliases[alias]
            )
        return result


def resolve(
    store: Store, name: str, namespace: Namespace, cue: str, limit: int, dice_floor: float | None
) -> list[dict[str, Any]]:
    """``POST …/resolve`` / ``resolve_label``: the lexical list cut to ``limit`` (§3.2)."""
    with store.reading(name) as context:
        floor = dice_floor if dice_floor is not None else context.options.dice_floor
        graph = context.graph
        candidates = (
            graph.names(namespace).index.resolve(
                cue, limit, floor if floor is not None else DEFAULT_DICE_FLOOR
            )
            if limit
            else []
        )
        gloss = graph.concept_gloss if namespace is Namespace.CONCEPT else graph.label_gloss
        result = [
            ResolveCandidate(
                name=c.name,
                score=c.score,
                tier="lexical",
                kind=c.kind,
                gloss=gloss(c.name) if position < GLOSSED_CANDIDATES else None,
            ).model_dump(exclude_none=True)
            for position, c in enumerate(candidates[:limit])
        ]
        store.note_read(context, empty=not result)
        return result


def query(
    store: Store,
    name: str,
    positions: tuple[list[str], list[str], list[str]],
    limit: int,
    after: QueryCursor | None,
    window: tuple[int | None, int | None] | None,
) -> dict[str, Any]:
    """``POST …/query``: pinned exact-name match, ranked and paged (§3.5)."""
    with store.reading(name) as context:
        window_sources = None
        if window is not None:
            window_sources = {s for s, p in context.passages.items() if _in_window(p, *window)}
        rows = context.graph.query(*positions, window_sources)
        rows.sort(key=_rank_key)
        total = len(rows)
        if after is not None:
            # The cursor names its edge by identity: that edge is dropped whatever its
            # weight reads now, the rest by rank (taguru's page_by).
            seat = (after.subject, after.label, after.object)
            cursor = (-abs(after.weight), *seat)
            rows = [r for r in rows if r.triple != seat and _rank_key(r) > cursor]
        matches = [association_out(context, r) for r in rows[:limit]]
        store.note_read(context, empty=total == 0)
        return QueryResult(
            total=total, matches=matches, plan=QueryPlan(contexts=[name])
        ).model_dump()


def association_out(context: Context, row: MatchRow) -> Association:
    """One served association with its attributions' sections and locators resolved."""
    attributions = []
    for a in row.attributions:
        passage = context.passages.get(a.source)
        section = locator = None
        if passage is not None and a.paragraph is not None:
            section = passage.section_of(a.paragraph)
            found = passage.locator_of(a.paragraph)
            locator = Locator(kind=found.kind, value=found.value) if found else None
        attributions.append(
            Attribution(
                source=a.source,
                weight=a.total,
                count=a.count,
                paragraph=a.paragraph,
                section=section,
                locator=locator,
            )
        )
    s, lab, o = row.triple
    return Association(
        subject=s,
        label=lab,
        object=o,
        weight=row.weight,
        count=row.count,
        attributions=attributions,
    )


def _rank_key(row: MatchRow) -> tuple[float, str, str, str]:
    return (-abs(row.weight), *row.triple)


def _in_window(passage: StoredPassage, since: int | None, until: int | None) -> bool:
    """``since ≤ t < until`` over the passage's effective time (open ends allowed)."""
    moment = passage.effective_time
    return (since is None or moment >= since) and (until is None or moment < until)

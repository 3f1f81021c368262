"""The reference server's state: contexts behind one lock, with revisions and usage.

Each public method is one HTTP operation's effect on the state, already validated by the
request layer except for what needs the state itself (existence, aliases, conflicts).
Counters follow server-wire §3.10; shapes follow §2. All methods hold ``Store.lock``, so
concurrent requests (uvicorn threads, in-process callers) see whole operations only. One
context's own state (``Context``, ``Counters``) and the ``AssocOp`` write live in ``context``.
"""

import threading
import time
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from pytest_taguru.core.wire import (
    Citation,
    ContextEntry,
    EmbeddingsStatus,
    Locator,
)
from pytest_taguru.server.context import AssocOp, Context
from pytest_taguru.server.errors import ApiError, check_size, no_context
from pytest_taguru.server.index.graph import Namespace
from pytest_taguru.server.index.passages import (
    MarkerCounts,
    PassageSubmission,
    build_passage,
)
from pytest_taguru.server.options import (
    MAX_CONTEXT_NAME_BYTES,
    MAX_DESCRIPTION_BYTES,
    ContextOptions,
)


def page_after(ordered: Sequence[str], after: str | None, limit: int) -> list[str]:
    """Keyset page: the first ``limit`` names strictly greater than ``after``."""
    start = bisect_right(ordered, after) if after is not None else 0
    return list(ordered[start : start + limit])


class Store:
    """All contexts of one server; ``clock`` yields unix seconds (injectable for tests)."""

    def __init__(self, clock: Callable[[], int] | None = None) -> None:
        self.lock = threading.RLock()
        self.contexts: dict[str, Context] = {}
        self._clock = clock or (lambda: int(time.time()))

    def clear(self) -> None:
        """Forget every context (test isolation on a long-lived server)."""
        with self.lock:
            self.contexts.clear()

    def compact_worst(self, ratio: float) -> str | None:
        """Compact the context with the worst dead ratio if it is strictly above ``ratio``.

        taguru's flusher does this once per tick (§3.4); revisions and usage do not move.
        Returns the compacted context's name.
        """
        with self.lock:
            ratios = {name: c.graph.dead_ratio for name, c in self.contexts.items()}
            worst = max(ratios, key=lambda name: ratios[name], default=None)
            if worst is None or ratios[worst] <= ratio:
                return None
            self.contexts[worst].graph.compact()
            return worst

    def now(self) -> int:
        return self._clock()

    def context(self, name: str) -> Context:
        """The named context, or 404 ``no_context``. Callers hold the lock."""
        found = self.contexts.get(name)
        if found is None:
            raise no_context(name)
        return found

    @contextmanager
    def reading(self, name: str) -> Iterator[Context]:
        with self.lock:
            yield self.context(name)

    def note_read(self, context: Context, empty: bool) -> None:
        context.counters.reads += 1
        context.counters.empty_reads += int(empty)
        context.counters.last_read_epoch = self.now()

    def note_write(self, context: Context) -> None:
        context.counters.writes += 1
        context.counters.last_write_epoch = self.now()

    # --- contexts -------------------------------------------------------------------------

    def create(self, name: str, options: ContextOptions) -> None:
        """``PUT /contexts/{name}``: caps, then the empty name, then existence (§2.3)."""
        check_size("the context name", name, MAX_CONTEXT_NAME_BYTES)
        check_size("the description", options.description, MAX_DESCRIPTION_BYTES)
        if not name:
            raise ApiError("invalid_argument", "the context name must not be empty")
        with self.lock:
            if name in self.contexts:
                raise ApiError("already_exists", f"context '{name}' already exists")
            self.contexts[name] = Context(name, options)

    def update(self, name: str, changes: ContextOptions, given: frozenset[str]) -> dict[str, Any]:
        """``PATCH /contexts/{name}``: set the ``given`` fields; ``revision.config`` += 1 only
        when something actually changed. Not a write in usage (§2.3, §3.10)."""
        with self.reading(name) as context:
            updated = replace(context.options, **{key: getattr(changes, key) for key in given})
            if updated != context.options:
                context.options = updated
                context.counters.config += 1
            return updated.as_json()

    def delete(self, name: str) -> bool:
        """``DELETE /contexts/{name}``: forget the context; a recreate starts from zero."""
        with self.lock:
            self.context(name)
            del self.contexts[name]
            return True

    def entry(self, name: str) -> dict[str, Any]:
        with self.reading(name) as context:
            return self._entry(context)

    @staticmethod
    def _entry(context: Context) -> dict[str, Any]:
        c = context.counters
        entry = ContextEntry.model_validate(
            {
                "name": context.name,
                "description": context.options.description,
                "pinned": context.options.pinned,
                "loaded": True,
                "dice_floor": context.options.dice_floor,
                "semantic_floor": context.options.semantic_floor,
                "stats": context.graph.stats(),
                "usage": {
                    "reads": c.reads,
                    "empty_reads": c.empty_reads,
                    "writes": c.writes,
                    "last_read_epoch": c.last_read_epoch,
                    "last_write_epoch": c.last_write_epoch,
                },
                "revision": {"graph": c.graph, "passages": c.passages, "config": c.config},
                "schema_mode": None,
            }
        ).model_dump()
        entry["semantic_floor"] = context.options.semantic_floor
        return entry

    def list_contexts(self, limit: int, after: str | None, pinned: bool | None) -> dict[str, Any]:
        with self.lock:
            names = sorted(
                n for n, c in self.contexts.items() if pinned is None or c.options.pinned == pinned
            )
            page = page_after(names, after, limit)
            return {
                "total": len(names),
                "contexts": [self._entry(self.contexts[n]) for n in page],
            }

    def embeddings(self, name: str) -> dict[str, Any]:
        with self.reading(name):
            return EmbeddingsStatus(provider_model=None).model_dump()

    # --- passages -------------------------------------------------------------------------

    def list_sources(
        self, name: str, limit: int, after: str | None, prefix: str | None
    ) -> dict[str, Any]:
        with self.reading(name) as context:
            ordered = context.sorted_sources()
            if prefix:
                ordered = [s for s in ordered if s.startswith(prefix)]
            page = page_after(ordered, after, limit)
            entries: list[dict[str, Any]] = []
            for source in page:
                passage = context.passages[source]
                entry: dict[str, Any] = {"name": source, "stored_at": passage.stored_at}
                if passage.date is not None:
                    entry["date"] = passage.date
                if passage.tags:
                    entry["tags"] = list(passage.tags)
                entries.append(entry)
            return {"total": len(ordered), "sources": page, "entries": entries}

    def store_passages(
        self, name: str, submissions: dict[str, PassageSubmission]
    ) -> dict[str, Any]:
        """``POST …/sources``: replace each named source wholesale (§2.7)."""
        with self.reading(name) as context:
            now = self.now()
            totals = MarkerCounts()
            for source, submission in submissions.items():
                passage = build_passage(submission, now)
                context.put_passage(source, passage)
                totals += passage.counts
            context.counters.passages += len(submissions)
            self.note_write(context)
            return {"stored": len(submissions), **totals.as_json()}

    def cite(self, name: str, source: str, paragraph: int) -> dict[str, Any]:
        """``POST …/citations``: one paragraph with its section and locator (§2.13)."""
        with self.reading(name) as context:
            passage = context.passages.get(source)
            if passage is None:
                self.note_read(context, empty=True)
                raise ApiError("no_source", f"source '{source}' not found in context '{name}'")
            if paragraph >= len(passage.paragraphs):
                self.note_read(context, empty=True)
                raise ApiError(
                    "no_paragraph",
                    f"paragraph {paragraph} out of range for source '{source}' in context '{name}'",
                )
            self.note_read(context, empty=False)
            locator = passage.locator_of(paragraph)
            return Citation(
                text=passage.paragraphs[paragraph],
                source=source,
                section=passage.section_of(paragraph),
                locator=Locator(kind=locator.kind, value=locator.value) if locator else None,
            ).model_dump()

    def retract_source(self, name: str, source: str, dry_run: bool) -> dict[str, Any]:
        """``…/sources/retract``: drop the source's attributions and passage (§2.15)."""
        with self.reading(name) as context:
            interned = source in context.graph.sources
            if dry_run:
                touched = sum(
                    1
                    for e in context.graph.edges.values()
                    if any(a.source == source for a in e.attributions)
                )
                return {
                    "associations_touched": touched,
                    "passage_removed": source in context.passages,
                }
            touched = context.graph.retract_source(source)
            removed = context.drop_passage(source)
            context.counters.graph += int(interned)
            context.counters.passages += int(removed)
            if touched or removed:
                self.note_write(context)
            return {"associations_touched": touched, "passage_removed": removed}

    # --- graph ----------------------------------------------------------------------------

    def add_associations(self, name: str, ops: Sequence[AssocOp]) -> int:
        """``POST …/associations``: apply in order; return the applied count (§2.8, §3.4)."""
        with self.reading(name) as context:
            self.apply_associations(context, ops)
            if ops:
                self.note_write(context)
            return len(ops)

    @staticmethod
    def apply_associations(context: Context, ops: Sequence[AssocOp]) -> int:
        """Apply ``ops``; a paragraph past the stored passage becomes null. Returns drops."""
        dropped = 0
        for op in ops:
            paragraph = op.paragraph if op.source is not None else None
            count = context.paragraph_count(op.source)
            if paragraph is not None and count is not None and paragraph >= count:
                paragraph = None
                dropped += 1
            context.graph.add(op.subject, op.label, op.object, op.weight, op.source, paragraph)
        context.counters.graph += len(ops)
        return dropped

    def retract_association(self, name: str, subject: str, label: str, obj: str) -> dict[str, Any]:
        with self.reading(name) as context:
            withdrawn, removed = context.graph.retract_triple(subject, label, obj)
            if withdrawn:
                context.counters.graph += 1
                self.note_write(context)
            return {"retracted": withdrawn, "attributions_removed": removed}

    def _alias_batch(
        self,
        name: str,
        steps: Sequence[tuple[Namespace, str]],
        apply: Callable[[Context, Namespace, str, int], str | None],
    ) -> int:
        """Apply ``steps`` in order, one graph write each, stopping at the first refusal.

        ``apply`` gets the count done so far and returns ``None`` or the conflict message; the
        writes made before a refusal stay and are counted.
        """
        with self.reading(name) as context:
            done = 0
            try:
                for namespace, alias in steps:
                    refusal = apply(context, namespace, alias, done)
                    if refusal is not None:
                        raise ApiError("conflict", refusal)
                    done += 1
            finally:
                context.counters.graph += done
                if done:
                    self.note_write(context)
            return done

    def register_aliases(self, name: str, concepts: dict[str, str], labels: dict[str, str]) -> int:
        """``POST …/aliases``: concepts then labels, each sorted by alias; stop at a failure."""
        targets = {Namespace.CONCEPT: concepts, Namespace.LABEL: labels}

        def register(
            context: Context, namespace: Namespace, alias: str, applied: int
        ) -> str | None:
            target = targets[namespace][alias]
            reason = context.graph.register_alias(namespace, alias, target)
            if reason is None:
                return None
            return (
                f"applied {applied} aliases, then {namespace.value} alias "
                f"'{alias}' → '{target}': {reason}"
            )

        steps = [
            (namespace, alias) for namespace, pairs in targets.items() for alias in sorted(pairs)
        ]
        return self._alias_batch(name, steps, register)

    def remove_aliases(self, name: str, concepts: list[str], labels: list[str]) -> int:
        """``DELETE …/aliases``: in the order given; stop at the first non-alias (§2.9)."""

        def remove(context: Context, namespace: Namespace, alias: str, removed: int) -> str | None:
            if context.graph.remove_alias(namespace, alias):
                return None
            return (
                f"removed {removed} aliases, then '{alias}' is not a "
                f"{namespace.value} alias (canonical names cannot be removed "
                "this way)"
            )

        steps = [(Namespace.CONCEPT, alias) for alias in concepts]
        steps += [(Namespace.LABEL, alias) for alias in labels]
        return self._alias_batch(name, steps, remove)

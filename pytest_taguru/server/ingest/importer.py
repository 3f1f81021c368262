"""taguru's NDJSON import stream: parsing into batches and applying them (server-wire §2.14).

Parsing refuses the whole stream on the first bad line (400 ``malformed_request``, message
``line <N>: …``, nothing applied). Applying runs batch by batch under the store lock; each
batch is one source's complete truth: alias prediction, create if needed, retract the
source, then passage, associations and aliases. A refusal after k landed batches reports
``integrity: durable_prefix`` with ``durable_batches: k``.
"""

import copy
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from pytest_taguru.core.serde import SerdeError, read_json
from pytest_taguru.core.text import trim
from pytest_taguru.server.context import AssocOp, Context
from pytest_taguru.server.errors import ApiError, Issue
from pytest_taguru.server.index.graph import Namespace
from pytest_taguru.server.index.passages import (
    Locator,
    MarkerCounts,
    PassageSubmission,
    build_passage,
)
from pytest_taguru.server.ingest.import_lines import (
    AliasLine,
    AssociationLine,
    HeaderLine,
    LocatorLine,
    PassageLine,
    QuestionLine,
    SectionLine,
    line_model,
)
from pytest_taguru.server.options import ContextOptions, clamp_unit, semantic_floor_f32
from pytest_taguru.server.store import Store

MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_QUESTIONS_PER_PARAGRAPH = 8
BOM = "\ufeff"


@dataclass
class ImportBatch:
    """One header and its operation lines: everything one source asserts."""

    header: HeaderLine
    line: int
    passage: PassageLine | None = None
    questions: list[tuple[int, str]] = field(default_factory=list)
    sections: list[tuple[int, str]] = field(default_factory=list)
    locators: list[tuple[int, Locator]] = field(default_factory=list)
    associations: list[AssociationLine] = field(default_factory=list)
    aliases: dict[Namespace, dict[str, str]] = field(
        default_factory=lambda: {Namespace.CONCEPT: {}, Namespace.LABEL: {}}
    )
    marker_lines: dict[str, list[int]] = field(
        default_factory=lambda: {"question": [], "section": [], "locator": [], "association": []}
    )
    """The stream line of each entry of ``questions``, ``sections``, ``locators`` and
    ``associations``, position for position (for the import feedback)."""

    @property
    def context(self) -> str:
        return self.header.context

    @property
    def source(self) -> str:
        return self.header.source


def _refuse(message: str) -> ApiError:
    return ApiError(
        "malformed_request",
        message,
        extras={"integrity": "nothing_written", "retryable_after_correction": True},
    )


def _describe(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def parse_import(raw: bytes) -> list[ImportBatch]:
    """Split a stream into batches, refusing it whole at the first bad line.

    Lines are read in order, each decoded (UTF-8) and checked on its own, so the first bad
    line of the stream is the one reported, as taguru's streaming parser does; a repeated
    (context, source) header is refused at its own line.
    """
    batches: list[ImportBatch] = []
    owners: set[tuple[str, str]] = set()
    for number, raw_line in enumerate(raw.removeprefix(BOM.encode()).split(b"\n"), start=1):
        try:
            content = trim(raw_line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise _refuse(f"line {number}: not UTF-8: {exc}") from exc
        if not content:
            continue
        if len(content.encode()) > MAX_LINE_BYTES:
            raise _refuse(f"line {number}: the line is over the 16 MiB cap")
        try:
            record = read_json(content)
        except SerdeError as exc:
            raise _refuse(f"line {number}: not JSON: {exc}") from exc
        model = line_model(record) if isinstance(record, dict) else None
        if model is None:
            raise _refuse(
                f"line {number}: not a batch header or an operation line (taguru_schema and "
                "taguru_group records are not supported by the reference server)"
            )
        try:
            parsed = model.model_validate(record)
        except ValidationError as exc:
            raise _refuse(f"line {number}: {_describe(exc)}") from exc
        if isinstance(parsed, HeaderLine):
            _close(batches)
            if (parsed.context, parsed.source) in owners:
                raise _refuse(
                    f"line {number}: source '{parsed.source}' in context '{parsed.context}' is "
                    "already stated by an earlier batch of this stream — one batch owns one "
                    "source's truth"
                )
            owners.add((parsed.context, parsed.source))
            batches.append(ImportBatch(parsed, number))
        elif not batches:
            raise _refuse(f"line {number}: an operation line before any batch header")
        else:
            _add_line(batches[-1], parsed, number)
    if not batches:
        raise _refuse("empty file: the stream holds no batch header and no record line")
    _close(batches)
    return batches


def _add_line(batch: ImportBatch, line: Any, number: int) -> None:
    if isinstance(line, PassageLine):
        if batch.passage is not None:
            raise _refuse(f"line {number}: a second passage line in one batch")
        batch.passage = line
    elif isinstance(line, QuestionLine):
        pair = (line.paragraph, line.question)
        if pair not in batch.questions:
            if sum(1 for p, _ in batch.questions if p == line.paragraph) >= 8:
                raise _refuse(
                    f"line {number}: paragraph {line.paragraph} carries more than "
                    f"{MAX_QUESTIONS_PER_PARAGRAPH} questions"
                )
            batch.questions.append(pair)
            batch.marker_lines["question"].append(number)
    elif isinstance(line, SectionLine):
        batch.sections.append((line.paragraph, line.section))
        batch.marker_lines["section"].append(number)
    elif isinstance(line, LocatorLine):
        batch.locators.append((line.paragraph, Locator(line.locator.kind, line.locator.value)))
        batch.marker_lines["locator"].append(number)
    elif isinstance(line, AssociationLine):
        batch.associations.append(line)
        batch.marker_lines["association"].append(number)
    elif isinstance(line, AliasLine):
        namespace = Namespace(line.kind)
        if line.alias in batch.aliases[namespace]:
            raise _refuse(f"line {number}: {line.kind} alias '{line.alias}' appears twice")
        batch.aliases[namespace][line.alias] = line.canonical


def _close(batches: list[ImportBatch]) -> None:
    """End-of-batch rule: markers and paragraph-carrying associations need a passage line."""
    if not batches or batches[-1].passage is not None:
        return
    batch = batches[-1]
    if batch.questions or batch.sections or batch.locators:
        raise _refuse(
            f"batch for context '{batch.context}', source '{batch.source}' carries question, "
            "section or locator lines without a passage line"
        )
    if any(a.paragraph is not None for a in batch.associations):
        raise _refuse(
            f"batch for context '{batch.context}', source '{batch.source}' carries an "
            "association with a paragraph but no passage line"
        )


def apply_import(store: Store, batches: list[ImportBatch], dry_run: bool = False) -> dict[str, Any]:
    """Apply batches in order; ``dry_run`` applies them to a scratch copy instead."""
    with store.lock:
        target = store
        if dry_run:
            target = Store(clock=store.now)
            names = {b.context for b in batches}
            target.contexts = {n: copy.deepcopy(c) for n, c in store.contexts.items() if n in names}
        outcomes = []
        for index, batch in enumerate(batches):
            try:
                outcomes.append(_apply_batch(target, batch, index))
            except ApiError as error:
                raise _located(error, batches, index, dry_run) from None
        return {"batches": outcomes}


def _located(error: ApiError, batches: list[ImportBatch], index: int, dry_run: bool) -> ApiError:
    """Prefix a multi-batch refusal and state what landed (§2.14); a dry run words it as a
    preview and never lands anything."""
    landed = 0 if dry_run else index
    if len(batches) > 1:
        batch = batches[index]
        verb, clause, next_step = (
            (
                "would be refused",
                "previewed clean (dry_run=true; nothing is written)",
                "fixing the stream and re-running the preview is exact",
            )
            if dry_run
            else (
                "refused",
                "landed durably",
                "fixing the stream and re-POSTing it whole is exact (each batch replaces its "
                "own source)",
            )
        )
        error.message = (
            f"batch {index + 1} of {len(batches)} (context '{batch.context}', source "
            f"'{batch.source}') {verb} — the {index} batch(es) before it {clause}; "
            f"{next_step}: {error.message}"
        )
    error.extras["integrity"] = "durable_prefix" if landed else "nothing_written"
    if landed:
        error.extras["durable_batches"] = landed
    error.extras["retryable_after_correction"] = True
    return error


def _apply_batch(store: Store, batch: ImportBatch, index: int) -> dict[str, Any]:
    context = store.contexts.get(batch.context)
    if context is None and batch.header.create is None:
        raise ApiError(
            "no_context",
            f"context '{batch.context}' not found",
            issues=[
                Issue(
                    f"batches[{index}].create",
                    "missing",
                    "a create object for a context that does not exist yet",
                    "absent",
                )
            ],
            issues_total=1,
        )
    _predict_aliases(context, batch, index)
    created = context is None
    if context is None:
        spec = batch.header.create
        assert spec is not None
        store.create(
            batch.context,
            ContextOptions(
                spec.description,
                spec.pinned,
                clamp_unit(spec.dice_floor),
                semantic_floor_f32(spec.semantic_floor),
            ),
        )
        context = store.contexts[batch.context]
    return _replace_source(store, context, batch, created)


def _predict_aliases(context: Context | None, batch: ImportBatch, index: int) -> None:
    """Check every alias line without writing: canonical known, alias not taken elsewhere."""
    will_intern = {
        Namespace.CONCEPT: {n for a in batch.associations for n in (a.subject, a.object)},
        Namespace.LABEL: {a.label for a in batch.associations},
    }
    for namespace in (Namespace.CONCEPT, Namespace.LABEL):
        names = context.graph.names(namespace) if context is not None else None
        pairs = batch.aliases[namespace]
        for alias in sorted(pairs):
            canonical = pairs[alias]
            path = f"batches[{index}].{namespace.value}s['{alias}']"
            target = names.lookup(canonical) if names is not None else None
            if target is None and canonical in will_intern[namespace]:
                target = canonical
            if target is None:
                raise _alias_refusal(
                    namespace,
                    alias,
                    canonical,
                    "the canonical spelling is not interned",
                    Issue(
                        path,
                        "unknown_reference",
                        f"'{canonical}' already interned as a concept or label this batch's "
                        "associations use",
                        "not present in this request",
                    ),
                )
            existing = names.lookup(alias) if names is not None else None
            if existing is not None and existing != target:
                raise _alias_refusal(
                    namespace,
                    alias,
                    canonical,
                    "the alias already resolves to a different record",
                    Issue(
                        path,
                        "conflict",
                        f"'{alias}' free or naming '{target}'",
                        f"resolves to '{existing}'",
                    ),
                )


def _alias_refusal(
    namespace: Namespace, alias: str, canonical: str, reason: str, issue: Issue
) -> ApiError:
    return ApiError(
        "conflict",
        f"{namespace.value} alias '{alias}' → '{canonical}': {reason}; nothing was applied",
        issues=[issue],
        issues_total=1,
    )


def _replace_source(
    store: Store, context: Context, batch: ImportBatch, created: bool
) -> dict[str, Any]:
    counters = context.counters
    interned = batch.source in context.graph.sources
    retracted = context.graph.retract_source(batch.source)
    counters.graph += int(interned)
    had_passage = context.drop_passage(batch.source)
    counters.passages += int(had_passage)
    outcome: dict[str, Any] = {
        "context": batch.context,
        "source": batch.source,
        "created": created,
        "retracted": retracted,
        "passage_stored": batch.passage is not None,
        "passage_dropped": had_passage and batch.passage is None,
    }
    passage = batch.passage
    counts = MarkerCounts()
    if passage is not None:
        stored = build_passage(
            PassageSubmission(
                text=passage.passage,
                questions=batch.questions,
                sections=batch.sections,
                locators=batch.locators,
                tags=passage.tags or [],
                date=passage.date,
                stored_at=passage.stored_at,
            ),
            store.now(),
        )
        context.put_passage(batch.source, stored)
        counters.passages += 1
        counts = stored.counts
    ops = [
        AssocOp(a.subject, a.label, a.object, a.weight, batch.source, a.paragraph)
        for a in batch.associations
    ]
    dropped = store.apply_associations(context, ops)
    aliases = 0
    for namespace in (Namespace.CONCEPT, Namespace.LABEL):
        pairs = batch.aliases[namespace]
        for alias in sorted(pairs):
            if context.graph.register_alias(namespace, alias, pairs[alias]) is None:
                aliases += 1
    counters.graph += aliases
    store.note_write(context)
    outcome.update(
        associations=len(ops),
        aliases=aliases,
        association_paragraphs_dropped=dropped,
        schema_violations=0,
        **counts.as_json(),
    )
    return outcome

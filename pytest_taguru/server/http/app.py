"""Routes of the reference server: HTTP in, store call, result out (server-wire §2).

Handlers only decode (the query string before the body, as taguru's extractors do), validate
what must be refused before the context lookup (in taguru's order), and call the store; the
envelope, JSON text, raw-path routing and error mapping live in :mod:`transport`.
``POST /contexts/{name}/evidence`` is served by :mod:`evidence` (evidence assembly), the three
``*/explain`` routes by :mod:`.explain`, ``GET /protocol`` by :mod:`.protocol`.
"""

from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from pytest_taguru.server import graph_reads
from pytest_taguru.server.errors import ApiError, check_size, list_over_limit
from pytest_taguru.server.evidence.assemble import assemble_evidence
from pytest_taguru.server.http.auth import BearerAuth
from pytest_taguru.server.http.bodies import (
    CitationBody,
    CreateContextBody,
    QueryBody,
    RegisterAliasesBody,
    RemoveAliasesBody,
    ResolveBody,
    RetractAssociationBody,
    RetractSourceBody,
    SearchBody,
    UpdateContextBody,
    decode_model,
    parse_json,
)
from pytest_taguru.server.http.common import (
    MAX_LIST_ITEMS,
    MAX_MATCH_LIMIT,
    check_text,
    check_window,
    clamp_limit,
    name_of,
    source_filter,
    store_of,
)
from pytest_taguru.server.http.explain import EXPLAIN_ROUTES
from pytest_taguru.server.http.protocol import protocol_text
from pytest_taguru.server.http.search_hits import hits_json
from pytest_taguru.server.http.transport import (
    DEFAULT_BODY_CAP,
    JsonBody,
    RawPathRouting,
    enveloped,
    framework_error,
    json_body,
    page_limit,
    query_bool,
    query_text,
    read_body,
    typed_body,
)
from pytest_taguru.server.http.validate import parse_associations, parse_store_passages
from pytest_taguru.server.index.graph import Namespace, QueryCursor
from pytest_taguru.server.index.search import search
from pytest_taguru.server.ingest.importer import apply_import, parse_import
from pytest_taguru.server.options import (
    MAX_DESCRIPTION_BYTES,
    ContextOptions,
    clamp_unit,
    semantic_floor_f32,
)
from pytest_taguru.server.store import Store

SERVER_VERSION = "0.9.3"
"""The taguru version this server mirrors (``/health``'s ``version``, ``/version``'s ``server``)."""

MAX_NAME_BYTES = 1024
MAX_CURSOR_BYTES = MAX_NAME_BYTES + len("concept:")
MAX_ALIAS_PAIRS = 10_000

VERSION_BODY: dict[str, Any] = {
    "http_contract": {"current": 1, "supported": [1]},
    "mcp_contract": {"current": 1, "supported": [1]},
    "mcp_protocol": {"supported": ["2024-11-05", "2025-03-26", "2025-06-18"]},
    "batch_formats": [1],
    "schema_formats": [1],
    "image_formats": [1, 2, 3, 4, 5, 6],
    "communities_formats": [1],
}


def keyset_cursor(request: Request) -> tuple[str | None, str | None]:
    """``after`` and ``prefix`` of a keyset listing; ``prefix`` is length-checked first."""
    after, prefix = query_text(request, "after"), query_text(request, "prefix")
    for key, value in (("prefix", prefix), ("after", after)):
        if value is not None:
            check_size(key, value, MAX_CURSOR_BYTES)
    return after, prefix


def as_names(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


# --- probes and contexts --------------------------------------------------------------------


async def health(request: Request) -> Response:
    return JsonBody({"status": "ok", "version": SERVER_VERSION})


async def live(request: Request) -> Response:
    return PlainTextResponse("ok")


async def version(request: Request) -> Response:
    return JsonBody({"server": SERVER_VERSION, **VERSION_BODY})


async def protocol(request: Request) -> Response:
    text = protocol_text(ROUTES, SERVER_VERSION, VERSION_BODY)
    return Response(text, media_type="text/markdown; charset=utf-8")


async def create_context(request: Request) -> bool:
    raw = await read_body(request)
    body = CreateContextBody()
    if raw:
        try:
            body = decode_model(CreateContextBody, parse_json(raw))
        except ApiError as error:
            raise ApiError("malformed_request", error.message) from error
    store_of(request).create(
        name_of(request),
        ContextOptions(
            description=body.description,
            pinned=body.pinned,
            dice_floor=clamp_unit(body.dice_floor),
            semantic_floor=semantic_floor_f32(body.semantic_floor),
        ),
    )
    return True


async def update_context(request: Request) -> Any:
    body = await typed_body(request, UpdateContextBody)
    if body.description is not None:
        check_size("the description", body.description, MAX_DESCRIPTION_BYTES)
    changes = ContextOptions(
        description=body.description or "",
        pinned=bool(body.pinned),
        dice_floor=clamp_unit(body.dice_floor),
        semantic_floor=semantic_floor_f32(body.semantic_floor),
    )
    given = frozenset(key for key in body.model_fields_set if getattr(body, key) is not None)
    return store_of(request).update(name_of(request), changes, given)


async def delete_context(request: Request) -> bool:
    return store_of(request).delete(name_of(request))


async def list_contexts(request: Request) -> Any:
    limit = page_limit(request)
    pinned = query_bool(request, "pinned")
    return store_of(request).list_contexts(limit, query_text(request, "after"), pinned)


async def get_context(request: Request) -> Any:
    return store_of(request).entry(name_of(request))


async def embeddings(request: Request) -> Any:
    return store_of(request).embeddings(name_of(request))


# --- passages -------------------------------------------------------------------------------


async def list_sources(request: Request) -> Any:
    limit = page_limit(request)
    after, prefix = keyset_cursor(request)
    return store_of(request).list_sources(name_of(request), limit, after, prefix)


async def store_passages(request: Request) -> Any:
    submissions = parse_store_passages(await json_body(request))
    return store_of(request).store_passages(name_of(request), submissions)


async def search_passages(request: Request) -> Any:
    body = await typed_body(request, SearchBody)
    spec = source_filter(body.tags, body.since, body.until)
    store = store_of(request)
    with store.reading(name_of(request)) as context:
        result = search(context, body.query, clamp_limit(body.limit, 5), spec)
        store.note_read(context, empty=not result["hits"])
    return {**result, "hits": hits_json(result["hits"])}


async def cite(request: Request) -> Any:
    body = await typed_body(request, CitationBody)
    check_text("source", body.source, MAX_NAME_BYTES)
    return store_of(request).cite(name_of(request), body.source, body.paragraph)


async def retract_source(request: Request) -> Any:
    dry_run = query_bool(request, "dry_run") or False  # the query string decodes first
    body = await typed_body(request, RetractSourceBody)
    check_text("source", body.source, MAX_NAME_BYTES)
    return store_of(request).retract_source(name_of(request), body.source, dry_run)


# --- graph ----------------------------------------------------------------------------------


async def add_associations(request: Request) -> Any:
    ops = parse_associations(await json_body(request))
    return store_of(request).add_associations(name_of(request), ops)


async def retract_association(request: Request) -> Any:
    body = await typed_body(request, RetractAssociationBody)
    for what, value in (("subject", body.subject), ("label", body.label), ("object", body.object)):
        check_text(what, value, MAX_NAME_BYTES)
    return store_of(request).retract_association(
        name_of(request), body.subject, body.label, body.object
    )


async def resolve_concept(request: Request) -> Any:
    return await _resolve(request, Namespace.CONCEPT)


async def resolve_label(request: Request) -> Any:
    return await _resolve(request, Namespace.LABEL)


async def _resolve(request: Request, namespace: Namespace) -> Any:
    body = await typed_body(request, ResolveBody)
    return graph_reads.resolve(
        store_of(request),
        name_of(request),
        namespace,
        body.cue,
        clamp_limit(body.limit, MAX_MATCH_LIMIT),
        clamp_unit(body.dice_floor),
    )


async def query(request: Request) -> Any:
    body = await typed_body(request, QueryBody)
    positions = (as_names(body.subject), as_names(body.label), as_names(body.object))
    for field_name, names in zip(("subject", "label", "object"), positions, strict=True):
        if len(names) > MAX_LIST_ITEMS:
            raise list_over_limit(field_name, len(names))
    if not any(positions):
        raise ApiError(
            "invalid_argument", "'subject', 'label', or 'object' must pin at least one value"
        )
    type_filters = {"subject_types": as_names(body.subject_types)}
    type_filters["object_types"] = as_names(body.object_types)
    for field_name, names in type_filters.items():
        if len(names) > MAX_LIST_ITEMS:
            raise list_over_limit(field_name, len(names))
    store = store_of(request)
    name = name_of(request)
    if any(type_filters.values()):
        # No schema is ever installed here, so a type filter matches nothing (§2.11).
        with store.reading(name) as context:
            check_window(body.since, body.until)
            store.note_read(context, empty=True)
            return {"total": 0, "matches": [], "plan": {"contexts": [name]}}
    check_window(body.since, body.until)
    after = (
        QueryCursor(body.after.weight, body.after.subject, body.after.label, body.after.object)
        if body.after is not None
        else None
    )
    window = None if body.since is None and body.until is None else (body.since, body.until)
    return graph_reads.query(store, name, positions, clamp_limit(body.limit, 100), after, window)


# --- aliases --------------------------------------------------------------------------------


async def register_aliases(request: Request) -> Any:
    body = await typed_body(request, RegisterAliasesBody)
    pairs = len(body.concepts) + len(body.labels)
    if pairs > MAX_ALIAS_PAIRS:
        raise ApiError(
            "over_limit",
            f"batch of {pairs} aliases exceeds the per-request limit of {MAX_ALIAS_PAIRS}; "
            "split the ingest",
        )
    for namespace, mapping in (("concepts", body.concepts), ("labels", body.labels)):
        for alias in sorted(mapping):
            check_text(f"a {namespace} alias", alias, MAX_NAME_BYTES)
            check_text(f"a {namespace} canonical", mapping[alias], MAX_NAME_BYTES)
    return store_of(request).register_aliases(name_of(request), body.concepts, body.labels)


async def list_aliases(request: Request) -> Any:
    limit = page_limit(request)
    after, prefix = keyset_cursor(request)
    if after is not None and not after.startswith(("concept:", "label:")):
        raise ApiError(
            "invalid_argument",
            f"after '{after}' is not an alias cursor (expected 'concept:<alias>' or "
            "'label:<alias>')",
        )
    return graph_reads.list_aliases(store_of(request), name_of(request), limit, after, prefix)


async def remove_aliases(request: Request) -> Any:
    body = await typed_body(request, RemoveAliasesBody)
    if not body.concepts and not body.labels:
        raise ApiError("invalid_argument", "the request names no aliases to remove")
    names = len(body.concepts) + len(body.labels)
    if names > MAX_ALIAS_PAIRS:
        raise ApiError(
            "over_limit",
            f"batch of {names} alias removals exceeds the per-request limit of "
            f"{MAX_ALIAS_PAIRS}; split the request",
        )
    for namespace, aliases in (("concepts", body.concepts), ("labels", body.labels)):
        for alias in aliases:
            check_text(f"a {namespace} alias", alias, MAX_NAME_BYTES)
    return store_of(request).remove_aliases(name_of(request), body.concepts, body.labels)


async def import_stream(request: Request) -> Any:
    dry_run = query_bool(request, "dry_run") or False  # the query string decodes first
    batches = parse_import(await read_body(request))
    return apply_import(store_of(request), batches, dry_run=dry_run)


ROUTES = [
    Route("/health", health, methods=["GET"]),
    Route("/live", live, methods=["GET"]),
    Route("/version", version, methods=["GET"]),
    Route("/protocol", protocol, methods=["GET"]),
    Route("/import", enveloped(import_stream), methods=["POST"]),
    Route("/contexts", enveloped(list_contexts), methods=["GET"]),
    Route("/contexts/{name}", enveloped(get_context), methods=["GET"]),
    Route("/contexts/{name}", enveloped(create_context), methods=["PUT"]),
    Route("/contexts/{name}", enveloped(update_context), methods=["PATCH"]),
    Route("/contexts/{name}", enveloped(delete_context), methods=["DELETE"]),
    Route("/contexts/{name}/embeddings", enveloped(embeddings), methods=["GET"]),
    Route("/contexts/{name}/sources", enveloped(list_sources), methods=["GET"]),
    Route("/contexts/{name}/sources", enveloped(store_passages), methods=["POST"]),
    Route("/contexts/{name}/sources/search", enveloped(search_passages), methods=["POST"]),
    Route("/contexts/{name}/sources/retract", enveloped(retract_source), methods=["POST"]),
    Route("/contexts/{name}/citations", enveloped(cite), methods=["POST"]),
    Route("/contexts/{name}/evidence", enveloped(assemble_evidence), methods=["POST"]),
    Route("/contexts/{name}/resolve", enveloped(resolve_concept), methods=["POST"]),
    Route("/contexts/{name}/resolve_label", enveloped(resolve_label), methods=["POST"]),
    Route("/contexts/{name}/query", enveloped(query), methods=["POST"]),
    Route("/contexts/{name}/associations", enveloped(add_associations), methods=["POST"]),
    Route(
        "/contexts/{name}/associations/retract", enveloped(retract_association), methods=["POST"]
    ),
    Route("/contexts/{name}/aliases", enveloped(register_aliases), methods=["POST"]),
    Route("/contexts/{name}/aliases", enveloped(list_aliases), methods=["GET"]),
    Route("/contexts/{name}/aliases", enveloped(remove_aliases), methods=["DELETE"]),
    *EXPLAIN_ROUTES,
]


def create_app(
    store: Store | None = None, tokens: list[bytes] | None = None, body_cap: int = DEFAULT_BODY_CAP
) -> ASGIApp:
    """The ASGI app over ``store``; bearer auth is on when ``tokens`` is non-empty.

    Routing is on the raw path (:class:`RawPathRouting`, ahead of auth, which also sees the raw
    path, as taguru's does) and a trailing slash is no route (no redirect).
    """
    app = Starlette(routes=ROUTES, exception_handlers={HTTPException: framework_error})
    app.router.redirect_slashes = False
    app.state.store = store if store is not None else Store()
    app.state.body_cap = body_cap
    return RawPathRouting(BearerAuth(app, tokens or []))

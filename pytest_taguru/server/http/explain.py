"""``POST …/sources/search/explain``, ``…/resolve/explain`` and ``…/resolve_label/explain``:
decode and check the request as the call being explained is checked, then answer with
:mod:`pytest_taguru.server.index.explain`. An explanation counts as a read of the context (an
empty one when it ended before scoring, or the name is not in the vocabulary), never as a
search, as in taguru.
"""

from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from pytest_taguru.server.http.bodies import ExplainResolveBody, ExplainSearchBody
from pytest_taguru.server.http.common import (
    MAX_MATCH_LIMIT,
    clamp_limit,
    name_of,
    source_filter,
    store_of,
)
from pytest_taguru.server.http.transport import enveloped, typed_body
from pytest_taguru.server.index.explain import explain_resolve, explain_search
from pytest_taguru.server.index.graph import Namespace
from pytest_taguru.server.index.resolve import DEFAULT_DICE_FLOOR
from pytest_taguru.server.options import clamp_unit


async def explain_search_passages(request: Request) -> Any:
    body = await typed_body(request, ExplainSearchBody)
    spec = source_filter(body.tags, body.since, body.until)
    store = store_of(request)
    with store.reading(name_of(request)) as context:
        explanation, scored = explain_search(
            context, body.query, body.source, body.paragraph, clamp_limit(body.limit, 5), spec
        )
        store.note_read(context, empty=not scored)
    return explanation


async def _explain_resolve(request: Request, namespace: Namespace) -> Any:
    body = await typed_body(request, ExplainResolveBody)
    store = store_of(request)
    with store.reading(name_of(request)) as context:
        floor = clamp_unit(body.dice_floor)
        if floor is None:
            floor = context.options.dice_floor
        explanation, known = explain_resolve(
            context.graph.names(namespace).index,
            "concept" if namespace is Namespace.CONCEPT else "label",
            body.cue,
            body.expected,
            clamp_limit(body.limit, MAX_MATCH_LIMIT),
            DEFAULT_DICE_FLOOR if floor is None else floor,
        )
        store.note_read(context, empty=not known)
    return explanation


async def explain_resolve_concept(request: Request) -> Any:
    return await _explain_resolve(request, Namespace.CONCEPT)


async def explain_resolve_label(request: Request) -> Any:
    return await _explain_resolve(request, Namespace.LABEL)


EXPLAIN_ROUTES = [
    Route(
        "/contexts/{name}/sources/search/explain",
        enveloped(explain_search_passages),
        methods=["POST"],
    ),
    Route("/contexts/{name}/resolve/explain", enveloped(explain_resolve_concept), methods=["POST"]),
    Route(
        "/contexts/{name}/resolve_label/explain",
        enveloped(explain_resolve_label),
        methods=["POST"],
    ),
]

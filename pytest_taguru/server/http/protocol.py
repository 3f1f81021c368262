"""``GET /protocol``: what this server answers, as Markdown (taguru serves its manual there;
every ``unknown_path`` error points at it). The route list is derived from the routing table.
"""

import json
from collections.abc import Sequence
from typing import Any

from starlette.routing import BaseRoute, Route

INTRO = """\
# taguru reference server (pytest-taguru)

A taguru-compatible server for tests and demos: it serves the contexts of its import files with
taguru's HTTP wire contract (envelopes, error codes, paging, revisions and usage) and does real
retrieval (BM25 over taguru's tokenizer, tiered lexical resolve, associations, citations,
evidence assembly). It is not taguru: only the routes below exist.
"""


def protocol_text(routes: Sequence[BaseRoute], version: str, facts: dict[str, Any]) -> str:
    """The manual: the introduction, every route (method and path), then this server's facts."""
    lines = [INTRO, "## Routes", ""]
    for route in routes:
        if isinstance(route, Route):
            for method in sorted((route.methods or set()) - {"HEAD"}):
                lines.append(f"- `{method} {route.path}`")
    lines += [
        "",
        "## This server",
        "",
        "No embedding provider is configured: the semantic resolve tier and the vector lane of "
        "passage search do not run, and their plans and explanations say so.",
        "",
        f"Server {version}. Contract versions (also `GET /version`):",
        "",
        "```json",
        json.dumps(facts, indent=2),
        "```",
        "",
    ]
    return "\n".join(lines)

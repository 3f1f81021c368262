"""Request URLs as taguru builds them: a base URL, percent-encoded path segments, a query.

taguru appends each segment through the Rust ``url`` crate's ``path_segments_mut`` and the
query through ``query_pairs_mut``; this module reproduces both over a WHATWG parser
(``ada_url``). Specification: ``evaluate-run.md`` §1.5; ``server-wire.md`` §1.1.
"""

from collections.abc import Sequence

import ada_url

# WHATWG percent-encode sets as the Rust ``url`` crate (2.5.8) applies them to a path segment:
# C0 controls, DEL and all non-ASCII, plus these ASCII characters.
_SEGMENT_ESCAPED = frozenset(b' "<>`#?{}/%')
_SPECIAL_SEGMENT_ESCAPED = _SEGMENT_ESCAPED | {ord("\\")}
_SPECIAL_SCHEMES = frozenset({"http:", "https:", "ws:", "wss:", "ftp:", "file:"})
_REMOVED_FROM_SEGMENTS = str.maketrans("", "", "\t\r\n")
_FORM_UNRESERVED = frozenset(b"*-._0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


class UrlError(ValueError):
    """A base URL no request URL can be built from; the message is the complete text."""


def _percent_encode(text: str, escaped: frozenset[int]) -> str:
    out: list[str] = []
    for byte in text.encode("utf-8"):
        if byte < 0x20 or byte >= 0x7F or byte in escaped:
            out.append(f"%{byte:02X}")
        else:
            out.append(chr(byte))
    return "".join(out)


def form_urlencode(pairs: Sequence[tuple[str, str]]) -> str:
    """``application/x-www-form-urlencoded``: space as ``+``, all but ``A-Za-z0-9*-._`` escaped."""

    def encode(text: str) -> str:
        return "".join(
            chr(byte) if byte in _FORM_UNRESERVED else "+" if byte == 0x20 else f"%{byte:02X}"
            for byte in text.encode("utf-8")
        )

    return "&".join(f"{encode(name)}={encode(value)}" for name, value in pairs)


def _append_segment(path: str, segment: str, special: bool) -> str:
    """Append one segment to a URL path exactly as the Rust ``url`` crate's setter does.

    A segment that is exactly ``.`` or ``..`` is skipped. Otherwise a ``/`` separator is added
    unless the path is exactly ``/`` (so a base path ending in ``/`` gains a doubled slash),
    tab/CR/LF are dropped, and the rest is percent-encoded as one segment. A segment that only
    becomes ``.``/``..`` once tab/CR/LF are dropped is still treated as a dot segment.
    """
    if segment in (".", ".."):
        return path
    if path != "/":
        path += "/"
    start = len(path)
    encoded = _percent_encode(
        segment.translate(_REMOVED_FROM_SEGMENTS),
        _SPECIAL_SEGMENT_ESCAPED if special else _SEGMENT_ESCAPED,
    )
    if encoded == "..":
        path = path[:start]
        if path.endswith("/") and path[:-1].rfind("/") >= 0:
            path = path[:-1]
        return path[: path.rfind("/") + 1] if path else path
    if encoded == ".":
        path = path[:start]
        return path if path.endswith("/") else path + "/"
    return path + encoded


def _split_href(href: str, protocol: str) -> tuple[str, str, str, str] | None:
    """``href`` as (scheme+authority, path, ``?query`` or "", ``#fragment`` or "").

    ``None`` when the URL has an opaque path (nothing after ``scheme:`` starts with ``/``).
    A bare ``?`` or ``#`` is kept, as the serialized URL keeps it.
    """
    rest_at = len(protocol)
    if not href.startswith("/", rest_at):
        return None
    path_at = rest_at
    if href.startswith("//", rest_at):
        path_at = next((i for i in range(rest_at + 2, len(href)) if href[i] in "/?#"), len(href))
    fragment_at = href.find("#", path_at)
    fragment_at = len(href) if fragment_at < 0 else fragment_at
    query_at = href.find("?", path_at, fragment_at)
    query_at = fragment_at if query_at < 0 else query_at
    return href[:path_at], href[path_at:query_at], href[query_at:fragment_at], href[fragment_at:]


def join_segments(
    base: str, segments: Sequence[str], query: Sequence[tuple[str, str]] | None = None
) -> str:
    """The request URL: ``base`` plus encoded path ``segments`` plus form-encoded ``query``.

    The base is parsed by WHATWG rules; its path is kept and the segments appended to it (see
    :func:`_append_segment`); its own query and fragment stay on the URL, the ``query`` pairs
    being appended after the base's own query (joined by ``&`` when that query is non-empty).
    Raises :class:`UrlError` for a base that does not parse or that cannot carry a path (an
    opaque path such as ``localhost:8248``).
    """
    try:
        parsed = ada_url.URL(base)
    except ValueError as error:
        raise UrlError(f"'{base}' is not a usable base URL: {error}") from error
    protocol: str = parsed.protocol
    parts = _split_href(parsed.href, protocol)
    if parts is None:
        raise UrlError(f"'{base}' cannot carry a path")
    prefix, path, query_text, fragment = parts
    special = protocol in _SPECIAL_SCHEMES
    for segment in segments:
        path = _append_segment(path, segment, special)
    if query:
        pairs = form_urlencode(query)
        separator = "?" if not query_text else "" if query_text == "?" else "&"
        query_text += separator + pairs
    return prefix + path + query_text + fragment

"""How a run reaches its server: the base URL (evaluate-run.md §1.4), its start-up checks
(§1.3 steps 7-9), the masked form shown in output (§1.6), and the bearer token (§1.5).

Nothing here touches ``os.environ`` or the network: the environment is passed in.
"""

import re
from collections.abc import Mapping
from ipaddress import AddressValueError, IPv6Address
from typing import Any

import ada_url

from pytest_taguru.core.limits import U32_MAX
from pytest_taguru.core.text import trim
from pytest_taguru.errors import UsageError
from pytest_taguru.flags import DEFAULT_ADDR

UNPARSEABLE_URL = "<unparseable-url>"

USERINFO_MESSAGE = (
    "the URL must not carry credentials (user:password@…) — set TAGURU_API_TOKEN "
    "(or TAGURU_API_TOKENS) instead"
)

_UNSPECIFIED_V4 = re.compile(r"0\.0\.0\.0:([0-9]+)")
_BRACKETED_V6 = re.compile(r"\[([^\]]*)\]:([0-9]+)")
_SCOPE = re.compile(r"%([0-9]+)")


def default_base_url(environ: Mapping[str, str]) -> str:
    """``http://`` + TAGURU_ADDR (default 127.0.0.1:8248), an unspecified IP replaced by the
    loopback of its family; UsageError when the address ends with port ``:0``."""
    address = environ.get("TAGURU_ADDR", DEFAULT_ADDR)
    host_port = _loopback_of(address)
    if host_port.endswith(":0"):
        raise UsageError(
            f"TAGURU_ADDR ({address}) binds to port 0 (OS-assigned) — the actual port can't be "
            "discovered from here; pass the server's real URL explicitly: "
            "'taguru health http://host:PORT'"
        )
    return f"http://{host_port}"


def _loopback_of(address: str) -> str:
    """``address`` unchanged unless it is a socket address (Rust ``SocketAddr`` syntax) with
    the unspecified IP, which becomes ``127.0.0.1:<port>`` or ``[::1]:<port>``."""
    v4 = _UNSPECIFIED_V4.fullmatch(address)
    if v4 is not None and int(v4.group(1)) <= 0xFFFF:
        return f"127.0.0.1:{int(v4.group(1))}"
    v6 = _BRACKETED_V6.fullmatch(address)
    if v6 is None or int(v6.group(2)) > 0xFFFF:
        return address
    ip, percent, scope = v6.group(1).partition("%")
    if percent and (_SCOPE.fullmatch(percent + scope) is None or int(scope) > U32_MAX):
        return address
    try:
        unspecified = IPv6Address(ip).is_unspecified
    except AddressValueError:
        return address
    if not unspecified:
        return address
    scope_text = f"%{int(scope)}" if percent and int(scope) else ""
    return f"[::1{scope_text}]:{int(v6.group(2))}"


def _parse_url(url: str) -> Any:
    try:
        return ada_url.URL(url)
    except ValueError:
        return None


def address_hint(url_flag: str, url: str | None, environ: Mapping[str, str]) -> str | None:
    """What to type instead of a server address taguru resolves by its rules but that was
    probably meant otherwise (§1.3 note, §1.4): a scheme-less ``--url`` value (``localhost:8248``
    parses with scheme ``localhost``; ``127.0.0.1:8248`` does not parse), or a URL in
    ``TAGURU_ADDR``, which takes ``host:port``."""
    if url is not None:
        if "://" in url:
            return None
        return f"{url_flag} {url}: did you mean http://{url}?"
    address = environ.get("TAGURU_ADDR")
    if address is None or "://" not in address:
        return None
    host_port = address.split("://", 1)[1].rstrip("/")
    return (
        f"TAGURU_ADDR takes host:port, not a URL — did you mean TAGURU_ADDR={host_port} "
        f"(or {url_flag} {address})?"
    )


def check_base_url(base_url: str, url_flag: str = "--url") -> None:
    """Steps 8-9: refuse userinfo (when the URL parses), then an unparsable URL (WHATWG)."""
    parsed = _parse_url(base_url)
    if parsed is None:
        raise UsageError(f"the {url_flag} value could not be parsed as a URL")
    if parsed.username or parsed.password:
        raise UsageError(USERINFO_MESSAGE)


def mask_url(url: str) -> str:
    """``<scheme>://<host>[:<port>]`` of the parsed URL (§1.6).

    The host is parser-normalized (lowercase, punycode, bracketed IPv6, canonical IPv4); a
    default port is dropped; path, query, fragment and userinfo never appear. No host gives
    ``<scheme>://``; an unparsable value gives ``<unparseable-url>``.
    """
    parsed = _parse_url(url)
    if parsed is None:
        return UNPARSEABLE_URL
    masked = f"{parsed.protocol.removesuffix(':')}://{parsed.hostname}"
    return f"{masked}:{parsed.port}" if parsed.port else masked


# ---------------------------------------------------------------- bearer token (§1.5)


def bearer_token(environ: Mapping[str, str]) -> str | None:
    """``TAGURU_API_TOKEN`` trimmed if non-empty; else the first ``name:token`` entry of the
    comma-separated ``TAGURU_API_TOKENS`` whose trimmed token (after the first ``:``) is
    non-empty; else None."""
    token = trim(environ.get("TAGURU_API_TOKEN", ""))
    if token:
        return token
    for entry in environ.get("TAGURU_API_TOKENS", "").split(","):
        _, separator, secret = trim(entry).partition(":")
        if separator and trim(secret):
            return trim(secret)
    return None

"""URL masking (evaluate-run.md §1.6) and the bearer token (§1.5)."""

import pytest

from pytest_taguru.run.server_access import address_hint, bearer_token, mask_url

# ---------------------------------------------------------------- masking (§1.6)


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("https://host:8443/x?y=1", "https://host:8443"),
        ("http://example.com/a", "http://example.com"),
        ("http://[::1]:8248", "http://[::1]:8248"),
        ("localhost:8248", "localhost://"),
        ("http://h:80", "http://h"),
        ("https://h:443/", "https://h"),
        ("https://h:80/", "https://h:80"),
        ("ftp://h:21", "ftp://h"),
        ("http://EXAMPLE.com:8080/p#f", "http://example.com:8080"),
        ("HTTP://Example.COM", "http://example.com"),
        ("http://bücher.de/", "http://xn--bcher-kva.de"),
        ("http://0x7f.1/", "http://127.0.0.1"),
        ("http://[0:0::1]/", "http://[::1]"),
        ("http://user:pw@h:9/x", "http://h:9"),
        ("file:///x", "file://"),
        ("not a url", "<unparseable-url>"),
        ("127.0.0.1:8248", "<unparseable-url>"),
    ],
)
def test_mask_url(url: str, masked: str) -> None:
    assert mask_url(url) == masked


# ---------------------------------------------------------------- bearer token (§1.5)


@pytest.mark.parametrize(
    ("environ", "token"),
    [
        ({}, None),
        ({"TAGURU_API_TOKEN": " tok \t"}, "tok"),
        ({"TAGURU_API_TOKEN": "tok", "TAGURU_API_TOKENS": "ci:other"}, "tok"),
        ({"TAGURU_API_TOKEN": " \u3000", "TAGURU_API_TOKENS": "ci:tokA"}, "tokA"),
        ({"TAGURU_API_TOKENS": "ci:tokA,laptop:tokB"}, "tokA"),
        ({"TAGURU_API_TOKENS": "ci: ,laptop:tokB"}, "tokB"),
        ({"TAGURU_API_TOKENS": "nocolon,:tokC"}, "tokC"),
        ({"TAGURU_API_TOKENS": " ci : tokA , x:y"}, "tokA"),
        ({"TAGURU_API_TOKENS": "ci:a:b"}, "a:b"),
        ({"TAGURU_API_TOKENS": "nocolon"}, None),
        ({"TAGURU_API_TOKENS": ""}, None),
        ({"TAGURU_API_TOKEN": "  abc \n"}, "abc"),
        ({"TAGURU_API_TOKEN": "   ", "TAGURU_API_TOKENS": "ci:xyz"}, "xyz"),
        ({"TAGURU_API_TOKEN": "a", "TAGURU_API_TOKENS": "ci:xyz"}, "a"),
        ({"TAGURU_API_TOKENS": "bad, ro: ,  ci : t:1 ,x:y"}, "t:1"),
        ({"TAGURU_API_TOKENS": ":anon"}, "anon"),
        ({"TAGURU_API_TOKENS": "noseparator,also"}, None),
    ],
)
def test_bearer_token(environ: dict[str, str], token: str | None) -> None:
    assert bearer_token(environ) == token


@pytest.mark.parametrize(
    ("url", "environ", "hint"),
    [
        ("localhost:8248", {}, "--url localhost:8248: did you mean http://localhost:8248?"),
        ("127.0.0.1:9", {}, "--url 127.0.0.1:9: did you mean http://127.0.0.1:9?"),
        ("http://h:1", {}, None),
        ("https://h", {"TAGURU_ADDR": "http://x:1"}, None),  # --url wins, TAGURU_ADDR unused
        (None, {}, None),
        (None, {"TAGURU_ADDR": "127.0.0.1:8"}, None),
        (
            None,
            {"TAGURU_ADDR": "http://127.0.0.1:8/"},
            "TAGURU_ADDR takes host:port, not a URL — did you mean TAGURU_ADDR=127.0.0.1:8 "
            "(or --url http://127.0.0.1:8/)?",
        ),
    ],
)
def test_address_hint(url: str | None, environ: dict[str, str], hint: str | None) -> None:
    assert address_hint("--url", url, environ) == hint

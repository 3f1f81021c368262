"""client.py, exchange.py, envelope.py: bearer token, envelope rule, failure messages,
redirects (URL building: test_urls.py; deadline, retries, dead server: test_client_faults.py)."""

import json
from collections.abc import Callable

import httpx
import pytest

from pytest_taguru.run import exchange as exchange_module
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.exchange import CallFailed

Handler = Callable[[httpx.Request], httpx.Response]


def make_client(handler: Handler, token: str | None = None, base: str = "http://h") -> TaguruClient:
    return TaguruClient(base, token, transport=httpx.MockTransport(handler))


def envelope(result: object, status: int = 200) -> httpx.Response:
    return httpx.Response(status, json={"result": result, "status": "ok", "time": 0.0})


# --- requests --------------------------------------------------------------------------------


def test_authorization_header_when_token_set() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return envelope(1)

    make_client(handler, token="s3cret").get_json(["contexts", "c"])
    assert seen[0].headers["authorization"] == "Bearer s3cret"


def test_no_authorization_header_without_token() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return envelope(1)

    make_client(handler).get_json(["contexts", "c"])
    assert "authorization" not in seen[0].headers


def test_repr_never_shows_the_token() -> None:
    client = make_client(lambda r: envelope(1), token="s3cret")
    assert "s3cret" not in repr(client)
    assert "s3cret" not in str(vars(client).get("base_url"))


def test_post_sends_compact_json_with_content_type() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return envelope([])

    body = {"cue": "青嶺", "limit": 5, "semantic_floor": 0.4000000059604645, "tags": []}
    make_client(handler).post_json(["contexts", "c", "resolve"], body)
    request = seen[0]
    assert request.method == "POST"
    assert request.headers["content-type"] == "application/json"
    assert request.content.decode("utf-8") == (
        '{"cue":"青嶺","limit":5,"semantic_floor":0.4000000059604645,"tags":[]}'
    )


def test_get_sends_no_body_and_the_encoded_path() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return envelope({})

    make_client(handler).get_json(["contexts", "日本", "sources"], [("limit", "1000")])
    assert seen[0].method == "GET"
    assert seen[0].content == b""
    assert seen[0].url.raw_path == b"/contexts/%E6%97%A5%E6%9C%AC/sources?limit=1000"


def test_request_timeout_is_the_35_second_budget() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return envelope(1)

    make_client(handler).get_json(["x"])
    timeout = seen[0].extensions["timeout"]
    assert 34.0 < timeout["read"] <= 35.0


# --- the envelope rule and failure messages (§3.5) ------------------------------------------


def failure_of(response: httpx.Response, *, post: bool = False) -> CallFailed:
    client = make_client(lambda request: response)
    with pytest.raises(CallFailed) as caught:
        if post:
            client.post_json(["contexts", "c", "citations"], {"source": "s", "paragraph": 0})
        else:
            client.get_json(["contexts", "c"])
    return caught.value


def test_success_returns_result() -> None:
    assert make_client(lambda r: envelope({"a": [1]})).get_json(["x"]) == {"a": [1]}


def test_result_null_is_still_a_result() -> None:
    assert make_client(lambda r: envelope(None)).get_json(["x"]) is None


def test_non_200_with_error_string() -> None:
    failure = failure_of(
        httpx.Response(400, json={"status": "error", "code": "invalid_argument", "error": "bad"})
    )
    assert failure.message == "http://h/contexts/c answered 400: bad"
    assert (failure.status, failure.code) == (400, None)


def test_non_200_without_json_uses_the_trimmed_body() -> None:
    failure = failure_of(httpx.Response(502, text="  Bad Gateway \n"))
    assert failure.message == "http://h/contexts/c answered 502: Bad Gateway"


def test_non_200_with_non_string_error_uses_the_body() -> None:
    failure = failure_of(httpx.Response(500, text='{"error": 5}'))
    assert failure.message == 'http://h/contexts/c answered 500: {"error": 5}'


def test_retry_after_is_appended_raw() -> None:
    failure = failure_of(
        httpx.Response(
            429,
            headers={"Retry-After": "10"},
            json={"status": "error", "code": "rate_limited", "error": "slow down"},
        )
    )
    assert failure.message == "http://h/contexts/c answered 429: slow down (Retry-After: 10)"


def test_404_carries_the_string_code() -> None:
    failure = failure_of(
        httpx.Response(404, json={"status": "error", "code": "no_context", "error": "gone"})
    )
    assert (failure.status, failure.code, failure.not_found) == (404, "no_context", True)
    assert failure.message == "http://h/contexts/c answered 404: gone"


def test_404_with_a_non_string_code_has_none() -> None:
    failure = failure_of(httpx.Response(404, json={"code": 7, "error": "gone"}))
    assert (failure.status, failure.code) == (404, None)


def test_only_404_carries_a_code() -> None:
    failure = failure_of(httpx.Response(400, json={"code": "over_limit", "error": "x"}))
    assert failure.code is None


def test_other_2xx_is_a_failure() -> None:
    failure = failure_of(httpx.Response(201, json={"result": 1}))
    assert failure.message == 'http://h/contexts/c answered 201: {"result":1}'


def test_200_without_envelope() -> None:
    failure = failure_of(httpx.Response(200, text=' {"data": {"result": 1}} '))
    assert failure.message == 'http://h/contexts/c: not a taguru response: {"data": {"result": 1}}'
    assert failure.status == 200


def test_200_with_a_lone_surrogate_escape_is_not_json() -> None:
    # serde_json refuses the escape, so taguru's client reads this body as no envelope at all.
    failure = failure_of(httpx.Response(200, text='{"result": ["\\ud800"]}'))
    assert failure.message == (
        'http://h/contexts/c: not a taguru response: {"result": ["\\ud800"]}'
    )


def test_200_with_non_json_body() -> None:
    failure = failure_of(httpx.Response(200, text="hello"))
    assert failure.message == "http://h/contexts/c: not a taguru response: hello"


def test_unreadable_body_is_checked_before_the_status() -> None:
    failure = failure_of(httpx.Response(404, content=b'{"code":"no_source","error":"\xff"}'))
    assert failure.message.startswith("http://h/contexts/c: unreadable response: ")
    assert (failure.status, failure.code, failure.not_found) == (None, None, False)


def test_body_over_the_cap_is_unreadable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exchange_module, "RESPONSE_CAP_BYTES", 8)
    failure = failure_of(httpx.Response(200, content=b'{"result": 12345}'))
    assert failure.message.startswith("http://h/contexts/c: unreadable response: ")


def test_transport_failure_names_the_url() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(CallFailed) as caught:
        make_client(handler).get_json(["contexts", "c"], [("limit", "1")])
    assert caught.value.message == "http://h/contexts/c?limit=1: connection refused"
    assert caught.value.status is None


def test_unusable_base_fails_without_a_request() -> None:
    client = make_client(lambda r: pytest.fail("no request expected"), base="localhost:8248")
    with pytest.raises(CallFailed) as caught:
        client.health()
    assert caught.value.message == "'localhost:8248' cannot carry a path"


def test_truncated_message() -> None:
    failure = CallFailed("é" * 150)
    assert failure.truncated() == "é" * 100 + "…"
    assert CallFailed("short").truncated() == "short"


# --- /health ---------------------------------------------------------------------------------


def test_health_returns_any_200_body() -> None:
    assert make_client(lambda r: httpx.Response(200, text="ok")).health() == "ok"


def test_health_non_200_fails_with_the_status_message() -> None:
    client = make_client(
        lambda r: httpx.Response(503, json={"code": "maintenance", "error": "sweeping"})
    )
    with pytest.raises(CallFailed, match=r"^http://h/health answered 503: sweeping$"):
        client.health()


def test_skew_probe_uses_its_own_4_second_budget_and_the_token() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, text='{"status":"ok","version":"0.9.3"}')

    assert make_client(handler, token="t").skew_probe() == '{"status":"ok","version":"0.9.3"}'
    assert seen[0].extensions["timeout"]["read"] <= 4.0
    assert seen[0].headers["authorization"] == "Bearer t"


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(500, text="ok"),
        httpx.Response(200, content=b"\xff"),
    ],
)
def test_skew_probe_is_silent_on_trouble(response: httpx.Response) -> None:
    assert make_client(lambda r: response).skew_probe() is None


def test_skew_probe_is_silent_on_transport_failure() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    assert make_client(handler).skew_probe() is None


# --- redirects -------------------------------------------------------------------------------


def redirecting(first: httpx.Response, seen: list[httpx.Request]) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/moved":
            return envelope("there")
        return first

    return handler


@pytest.mark.parametrize("status", [301, 302, 303])
def test_post_redirect_is_reissued_as_get_without_body_or_token(status: int) -> None:
    seen: list[httpx.Request] = []
    first = httpx.Response(status, headers={"Location": "/moved"})
    client = make_client(redirecting(first, seen), token="s3cret")
    assert client.post_json(["contexts", "c", "query"], {"limit": 1}) == "there"
    assert [(r.method, r.url.path) for r in seen] == [
        ("POST", "/contexts/c/query"),
        ("GET", "/moved"),
    ]
    assert seen[0].headers["authorization"] == "Bearer s3cret"
    assert "authorization" not in seen[1].headers
    assert seen[1].content == b""
    assert "content-type" not in seen[1].headers


@pytest.mark.parametrize("status", [307, 308])
def test_get_redirect_307_308_is_followed(status: int) -> None:
    seen: list[httpx.Request] = []
    first = httpx.Response(status, headers={"Location": "http://other/moved"})
    client = make_client(redirecting(first, seen), token="s3cret")
    assert client.get_json(["contexts", "c"]) == "there"
    assert str(seen[1].url) == "http://other/moved"
    assert "authorization" not in seen[1].headers


@pytest.mark.parametrize("status", [307, 308])
def test_post_redirect_307_308_is_a_transport_failure(status: int) -> None:
    seen: list[httpx.Request] = []
    first = httpx.Response(status, headers={"Location": "/moved"})
    with pytest.raises(CallFailed) as caught:
        make_client(redirecting(first, seen)).post_json(["contexts", "c", "query"], {})
    assert caught.value.message.startswith("http://h/contexts/c/query: ")
    assert caught.value.status is None
    assert len(seen) == 1


def test_failure_after_redirect_keeps_the_original_url() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/moved":
            return httpx.Response(404, json={"code": "no_context", "error": "gone"})
        return httpx.Response(302, headers={"Location": "/moved"})

    with pytest.raises(CallFailed) as caught:
        make_client(handler).get_json(["contexts", "c"])
    assert caught.value.message == "http://h/contexts/c answered 404: gone"
    assert caught.value.code == "no_context"


def hops(count: int) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        hop = int(request.url.params.get("hop", "0"))
        if hop < count:
            return httpx.Response(302, headers={"Location": f"/r?hop={hop + 1}"})
        return envelope(hop)

    return handler


def test_ten_redirects_are_followed() -> None:
    assert make_client(hops(10)).get_json(["r"]) == 10


def test_eleven_redirects_are_a_transport_failure() -> None:
    with pytest.raises(CallFailed) as caught:
        make_client(hops(11)).get_json(["r"])
    assert caught.value.message.startswith("http://h/r: ")
    assert caught.value.status is None


def test_redirect_without_location_is_an_ordinary_status() -> None:
    failure = failure_of(httpx.Response(302, text="elsewhere"))
    assert failure.message == "http://h/contexts/c answered 302: elsewhere"


def test_health_follows_redirects() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/health":
            return httpx.Response(301, headers={"Location": "/v2/health"})
        return httpx.Response(200, text=json.dumps({"status": "ok"}))

    assert make_client(handler).health() == '{"status": "ok"}'


def test_cookies_are_never_replayed() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200, headers={"Set-Cookie": "session=abc; Path=/"}, json={"result": 1}
        )

    client = make_client(handler)
    client.get_json(["a"])
    client.get_json(["b"])
    assert "cookie" not in seen[1].headers


def test_a_token_that_cannot_be_a_header_never_reaches_a_message() -> None:
    client = make_client(lambda r: envelope(1), token="ab\ncd")
    with pytest.raises(CallFailed) as caught:
        client.get_json(["x"])
    assert caught.value.message == "http://h/x: the bearer token is not a valid HTTP header value"
    assert "cd" not in caught.value.message


def test_non_ascii_token_is_sent_as_utf8() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return envelope(1)

    make_client(handler, token="tök").get_json(["x"])
    raw = {key.lower(): value for key, value in seen[0].headers.raw}
    assert raw[b"authorization"] == "Bearer tök".encode()

"""Bearer-token authentication (server-wire §1.2, pitfalls 26-27)."""

import pytest
from app_client import client, refusal, result
from starlette.testclient import TestClient

from pytest_taguru.server.http.auth import configured_tokens, presented_token


@pytest.fixture
def http() -> TestClient:
    return client(tokens=[b"s3cret", b"other"])


def test_exempt_paths_need_no_token(http: TestClient) -> None:
    assert http.get("/health").status_code == 200
    assert http.get("/version").status_code == 200
    assert http.get("/live").status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"authorization": "Bearer wrong"},
        {"authorization": "Basic s3cret"},
        {"authorization": "Bearers3cret"},
        {"authorization": "Bearer s3cret "},
    ],
)
def test_missing_or_invalid_token_is_401(http: TestClient, headers: dict[str, str]) -> None:
    for method, path in (("GET", "/contexts"), ("GET", "/no/such/path"), ("POST", "/import")):
        response = http.request(method, path, headers=headers)
        body = refusal(response, 401, "unauthorized")
        assert (
            body["error"] == "missing or invalid bearer token (send Authorization: Bearer <token>)"
        )
        assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("scheme", ["Bearer ", "bearer ", "BEARER   "])
def test_valid_token_passes(http: TestClient, scheme: str) -> None:
    assert result(http.get("/contexts", headers={"authorization": scheme + "s3cret"}))["total"] == 0
    assert result(http.get("/contexts", headers={"authorization": scheme + "other"}))["total"] == 0


def test_unknown_path_with_token_is_404(http: TestClient) -> None:
    refusal(http.get("/passages", headers={"authorization": "Bearer s3cret"}), 404, "unknown_path")


def test_two_authorization_headers_count_as_none() -> None:
    headers = [(b"authorization", b"Bearer s3cret"), (b"authorization", b"Bearer s3cret")]
    assert presented_token(headers) is None
    assert presented_token([(b"Authorization", b"bearer  tok en")]) == b"tok en"


def test_configured_tokens_from_environment() -> None:
    assert configured_tokens({}) == []
    assert configured_tokens({"TAGURU_API_TOKEN": "  "}) == []
    assert configured_tokens(
        {"TAGURU_API_TOKEN": " a ", "TAGURU_API_TOKENS": "ci: b , bad, x:,y:c:d"}
    ) == [b"a", b"b", b"c:d"]


def test_auth_off_without_tokens() -> None:
    assert result(client().get("/contexts"))["total"] == 0

"""Shared helpers for the reference-server app tests: an in-memory ASGI client."""

import warnings
from typing import Any

with warnings.catch_warnings():
    # Starlette nudges towards another HTTP library; httpx is what this project ships with.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from pytest_taguru.server.app import create_app
from pytest_taguru.server.store import Store

SAKE_PASSAGES = {
    "passages": {
        "corpus/brewery.md": "青嶺酒造は1907年に創業した。\n\n杜氏は高瀬である。",
        "corpus/rice.md": "原料米には山田錦を使う。",
    },
    "sections": {"corpus/brewery.md": [{"paragraph": 0, "section": "沿革"}]},
    "locators": {
        "corpus/brewery.md": [{"paragraph": 1, "locator": {"kind": "page", "value": "2"}}]
    },
}
SAKE_ASSOCIATIONS = [
    {
        "subject": "青嶺酒造",
        "label": "杜氏",
        "object": "高瀬",
        "weight": 2.0,
        "source": "corpus/brewery.md",
        "paragraph": 1,
    },
    {
        "subject": "青嶺酒造",
        "label": "創業年",
        "object": "1907年",
        "weight": 1.0,
        "source": "corpus/brewery.md",
        "paragraph": 0,
    },
    {"subject": "高瀬", "label": "出身", "object": "南部", "weight": 1.0},
]


class FixedClock:
    """A settable unix-seconds clock for deterministic epochs."""

    def __init__(self, now: int = 1_767_225_600) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def client(store: Store | None = None, tokens: list[bytes] | None = None) -> TestClient:
    return TestClient(
        create_app(store or Store(FixedClock()), tokens), raise_server_exceptions=True
    )


def result(response: Any) -> Any:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ok" and isinstance(body["time"], float)
    return body["result"]


def refusal(response: Any, status: int, code: str) -> dict[str, Any]:
    """Assert the error envelope with ``status`` and ``code``; return the body."""
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["status"] == "error" and body["code"] == code, body
    assert isinstance(body["error"], str) and isinstance(body["time"], float)
    return body


def sake(http: TestClient) -> TestClient:
    """Populate the server-wire §3.11 worked example."""
    result(http.put("/contexts/sake", json={"description": "青嶺酒造の知識"}))
    result(http.post("/contexts/sake/sources", json=SAKE_PASSAGES))
    result(http.post("/contexts/sake/associations", json=SAKE_ASSOCIATIONS))
    result(http.post("/contexts/sake/aliases", json={"concepts": {"Aomine Brewery": "青嶺酒造"}}))
    return http

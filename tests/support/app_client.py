"""Shared helpers for the reference-server app tests: an in-memory ASGI client."""

import json
import warnings
from typing import Any

with warnings.catch_warnings():
    # Starlette nudges towards another HTTP library; httpx is what this project ships with.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from paths import DATA

from pytest_taguru.server.http.app import create_app
from pytest_taguru.server.store import Store

SAKE_EXAMPLE: dict[str, Any] = json.loads(
    (DATA / "sake_worked_example.json").read_text("utf-8")
)
"""The server-wire §3.11 worked example, shared with the SDK contract test."""


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
    result(http.put("/contexts/sake", json={"description": SAKE_EXAMPLE["description"]}))
    result(http.post("/contexts/sake/sources", json=SAKE_EXAMPLE["sources"]))
    result(http.post("/contexts/sake/associations", json=SAKE_EXAMPLE["associations"]))
    result(http.post("/contexts/sake/aliases", json=SAKE_EXAMPLE["aliases"]))
    return http

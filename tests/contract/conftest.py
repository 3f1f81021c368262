"""Fixtures for wire-contract tests: one in-process reference server, emptied per test."""

from collections.abc import Iterator

import httpx
import pytest

from pytest_taguru.server.runner import ReferenceServer


@pytest.fixture(scope="session")
def running_server() -> Iterator[ReferenceServer]:
    with ReferenceServer() as running:
        yield running


@pytest.fixture
def server(running_server: ReferenceServer) -> ReferenceServer:
    running_server.store.clear()
    return running_server


@pytest.fixture
def http(server: ReferenceServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client

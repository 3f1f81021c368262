"""Headless Chromium for the report's browser tests (Debian's ``chromium``, driven by
playwright; playwright never downloads a browser here).

Every page gets a fresh profile, records each request it makes and each script error, and has
every request that is not to a ``file://`` URL aborted: a test then asserts that there was none.
Screenshots go to ``test-artifacts/`` at the repository root (kept by CI, ignored by git).
"""

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from paths import REPO

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = REPO / "test-artifacts"


def chromium_path() -> str | None:
    """``$TAGURU_CHROMIUM``, else Debian's ``chromium`` on the PATH or in /usr/bin."""
    named = os.environ.get("TAGURU_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    return shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None
    )


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium with a fresh user-data directory per test module.

    Module scope, not session: playwright's sync API keeps an asyncio loop marked running on
    the main thread while it is open, so a session-long driver would break every later test
    that calls ``asyncio.run``.
    """
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (the test extra has it)"
    )
    executable = chromium_path()
    if executable is None:
        pytest.skip("chromium not found: install Debian's chromium (apt-get install chromium)")
    with sync_api.sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=executable,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 1000},
        )
        yield context
        context.close()


@dataclass
class Browsed:
    """A page and what it did: every request's URL, and the URLs aborted as network."""

    page: Any
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def open(self, url: str) -> Any:
        self.page.goto(url)
        self.page.wait_for_selector("html[data-ready=true]", timeout=30_000)
        return self.page

    def screenshot(self, name: str, **options: Any) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / name
        self.page.screenshot(path=str(path), **options)
        return path


@pytest.fixture
def browsed(chromium: Any) -> Iterator[Browsed]:
    page = chromium.new_page()
    seen = Browsed(page)

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith("file://"):
            request_route.continue_()
        else:
            seen.blocked.append(url)
            request_route.abort()

    page.route("**/*", route)
    page.on("request", lambda request: seen.requests.append(request.url))
    page.on("pageerror", lambda error: seen.errors.append(str(error)))
    page.on(
        "console",
        lambda message: seen.errors.append(message.text) if message.type == "error" else None,
    )
    yield seen
    page.close()

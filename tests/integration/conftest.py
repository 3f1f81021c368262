"""Fixtures of the end-to-end (pytester) runs; the material itself lives in ``e2e``."""

from collections.abc import Iterator
from pathlib import Path

import httpcore
import numpy
import pytest
from e2e import CORPUS, TOKEN, CountingListener, Suite

import pytest_taguru.compare.stats_render
import pytest_taguru.hooks
from pytest_taguru.server.runner import ReferenceServer

PRELOADED = (httpcore, numpy, pytest_taguru.hooks, pytest_taguru.compare.stats_render)
"""The run machinery, imported once here: pytester's in-process runs drop the modules first
imported inside them, and a re-import would leave two copies of their classes (httpx imports
httpcore lazily and caches its exception map, so httpcore is named explicitly; numpy cannot be
loaded twice in one process at all)."""


@pytest.fixture(autouse=True)
def hermetic_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs must not see the outer CI's GitHub variables or a developer's taguru settings, and
    see a wide terminal."""
    for name in (
        "GITHUB_ACTIONS",
        "GITHUB_STEP_SUMMARY",
        "TAGURU_ADDR",
        "TAGURU_CONFIG",
        "TAGURU_API_TOKEN",
        "TAGURU_API_TOKENS",
        "PYTEST_XDIST_AUTO_NUM_WORKERS",
    ):
        monkeypatch.delenv(name, raising=False)
    # Short-summary lines are cut at the terminal's width; the tests read them whole.
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def suite(pytester: pytest.Pytester) -> Suite:
    return Suite(pytester)


@pytest.fixture(params=[pytest.param((), id="plain"), pytest.param(("-n", "2"), id="xdist")])
def dist(request: pytest.FixtureRequest) -> tuple[str, ...]:
    """Extra arguments: a plain run, or a pytest-xdist run with two workers."""
    value: tuple[str, ...] = request.param
    return value


@pytest.fixture
def listener() -> Iterator[CountingListener]:
    counting = CountingListener()
    yield counting
    counting.close()


@pytest.fixture
def served_corpus(tmp_path: Path) -> Iterator[ReferenceServer]:
    """The test corpus on a reference server started in this process (for ``--taguru-url``);
    it requires the bearer token ``TOKEN``."""
    corpus = tmp_path / "served-corpus.ndjson"
    corpus.write_text(CORPUS, encoding="utf-8")
    with ReferenceServer.from_import_files([corpus], token=TOKEN) as server:
        yield server

"""Shared material of the end-to-end (pytester) runs of the plugin.

Every run happens in a pytester directory holding a small purpose-built corpus (context
``mini``, three sources) and an eval set of four cases, served by the embedded reference server
(``--taguru-serve``). Each paragraph of the corpus carries the word ``SENTINEL`` so a test can
prove that no passage text reached an output. ``c-miss`` is an honest miss (recall 0), the case
the gate tests bound.
"""

import json
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

SENTINEL = "zqxsentinel"
TOKEN = "tok-e2e-Secret-4711"
"""A bearer token that must never appear in an output."""


def _paragraphs(*texts: str) -> str:
    return "\n\n".join(f"{text} {SENTINEL} {number}." for number, text in enumerate(texts))


CORPUS_RECORDS: list[dict[str, Any]] = [
    {
        "taguru_batch": 1,
        "context": "mini",
        "source": "docs/alpha.md",
        "create": {"description": "pytester corpus"},
    },
    {
        "passage": _paragraphs(
            "The alpha widget is a red gadget made in Oslo.",
            "The alpha widget costs ten crowns and ships worldwide.",
        )
    },
    {"paragraph": 0, "section": "Overview"},
    {
        "subject": "alpha widget",
        "label": "made in",
        "object": "Oslo",
        "weight": 1.0,
        "paragraph": 0,
    },
    {"taguru_batch": 1, "context": "mini", "source": "docs/beta.md"},
    {
        "passage": _paragraphs(
            "The beta gizmo is a blue gadget from Lima.", "Beta gizmos are waterproof and light."
        )
    },
    {"taguru_batch": 1, "context": "mini", "source": "docs/gamma.md"},
    {
        "passage": _paragraphs(
            "Gamma tools are green and heavy.", "Gamma tools need oil every winter."
        )
    },
]
CORPUS = "".join(json.dumps(record) + "\n" for record in CORPUS_RECORDS)

EVAL_LINES = [
    '{"taguru_eval":1,"name":"mini","default_target":{"context":"mini"}}',
    '{"case_id":"c-alpha","query":"alpha widget red gadget","expected_sources":[{"source":'
    '"docs/alpha.md","paragraphs":[0],"relevance":2}],"expected_concepts":["alpha widget"],'
    '"expected_associations":[{"subject":"alpha widget","label":"made in","object":"Oslo"}],'
    '"expected_citations":[{"source":"docs/alpha.md","paragraph":0,"section":"Overview"}]}',
    '{"case_id":"c-beta","query":"beta gizmo blue","expected_sources":[{"source":"docs/beta.md"}]}',
    "",
    '{"case_id":"c-gamma","query":"gamma tools green","expected_sources":[{"source":'
    '"docs/gamma.md","paragraphs":[0]}]}',
    '{"case_id":"c-miss","query":"alpha widget","expected_sources":[{"source":"docs/beta.md",'
    '"paragraphs":[1]}],"options":{"limit":1}}',
]
EVAL = "\n".join(EVAL_LINES) + "\n"
CASE_IDS = ["c-alpha", "c-beta", "c-gamma", "c-miss"]
CASE_LINES = {"c-alpha": 2, "c-beta": 3, "c-gamma": 5, "c-miss": 6}
"""1-based physical lines in EVAL (line 4 is blank)."""

# hypothesis and anyio are installed for other tests; their pytest plugins would only slow down
# every interpreter a run starts (the controller and each xdist worker).
QUIET_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:anyio")
BASE_ARGS = (*QUIET_PLUGINS, "-p", "no:cacheprovider", "--taguru-eval", "eval.jsonl")
SERVE_ARGS = ("--taguru-serve", "corpus.ndjson")

# A write that lands mid-run: a new source bumps the context's passages revision.
MID_RUN_WRITE_CONFTEST = """
import httpx
import pytest

from pytest_taguru.run.case_runner import RUNNER_KEY

LATE = b'{"taguru_batch":1,"context":"mini","source":"docs/late.md"}\\n{"passage":"Late."}\\n'


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    if item.name == "c-beta":
        base_url = item.config.stash[RUNNER_KEY].settings.base_url
        httpx.post(base_url + "/import", content=LATE).raise_for_status()
"""


@dataclass
class Suite:
    """The pytester directory with the corpus and eval set written, and ways to run it."""

    pytester: pytest.Pytester
    path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.path = self.pytester.path
        (self.path / "corpus.ndjson").write_text(CORPUS, encoding="utf-8")
        (self.path / "eval.jsonl").write_text(EVAL, encoding="utf-8")

    def run(self, *args: str, serve: bool = True, isolated: bool = False) -> pytest.RunResult:
        """A pytest run on the eval set (embedded server unless ``serve=False``).

        It runs in this process (fast) unless it asks for pytest-xdist or is ``isolated``: a
        run expected to end before its session starts (a usage error) needs a subprocess,
        because pytester's in-process recorder relies on ``pytest_configure`` having run.
        """
        served = SERVE_ARGS if serve else ()
        if isolated or "-n" in args:
            return self.pytester.runpytest_subprocess(*BASE_ARGS, *served, *args)
        return self.pytester.runpytest_inprocess(*BASE_ARGS, *served, *args)

    def write_ini(self, text: str) -> None:
        (self.path / "pytest.ini").write_text("[pytest]\n" + text, encoding="utf-8")

    def write_thresholds(self, document: dict[str, Any], name: str = "thresholds.json") -> str:
        (self.path / name).write_text(json.dumps(document), encoding="utf-8")
        return name

    def artifact(self, name: str = "evaluation.json") -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.path / name).read_text(encoding="utf-8"))
        return loaded

    def every_output(self, result: pytest.RunResult) -> str:
        """stdout, stderr and every file the run left in the directory, as one text."""
        texts = [result.stdout.str(), result.stderr.str()]
        for file in self.path.rglob("*"):
            if file.is_file() and file.name != "corpus.ndjson":
                texts.append(file.read_text(encoding="utf-8", errors="replace"))
        return "\n".join(texts)


class CountingListener:
    """A loopback TCP port that counts the connections made to it and closes each at once.

    ``--taguru-url`` pointed here proves that a run made no request at all.
    """

    def __init__(self) -> None:
        self.connections = 0
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._socket.close()


def strip_volatile(value: Any) -> Any:
    """An artifact without what differs between two identical runs: the time stamp, the
    server's port, the corpus import time, latencies (case fields and ``latency.*`` metrics)
    and the output path."""
    if isinstance(value, dict):
        return {
            key: strip_volatile(item)
            for key, item in value.items()
            if key not in ("generated_at", "latency_ms", "url", "out")
            and not key.startswith(("latency.", "last_write_epoch"))
        }
    if isinstance(value, list):
        return [strip_volatile(item) for item in value]
    return value

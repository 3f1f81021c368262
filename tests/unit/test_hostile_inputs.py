"""Every reader of untrusted text, fed hostile documents: deep nesting, huge numbers, invalid
UTF-8, lone surrogates, a BOM, NUL bytes and CRLF line ends.

The property is the same for each reader: it returns, or it refuses with its own typed error
(the eval.jsonl loader, the thresholds file, an artifact and compare's view: a usage error,
exit 2; the config file: its own; a server answer: the call's failure; a request to the
reference server: a 4xx envelope). Nothing escapes as another exception (no RecursionError,
no UnicodeError, no 500), and nesting past serde's 127 levels is refused in serde's words
with its place.
"""

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from app_client import client
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.artifact.evaluation import ArtifactError, parse_evaluation
from pytest_taguru.authoring.label_merge import load_labelled_queue
from pytest_taguru.authoring.recorded_text import recorded_texts
from pytest_taguru.cli.compare import load_run
from pytest_taguru.errors import ConfigFileError, UsageError
from pytest_taguru.gate.thresholds import check_thresholds
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.config_file import load_config_file
from pytest_taguru.run.dataset import load_eval_set
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.score.registry import METRICS
from pytest_taguru.server.store import Store

METRIC_NAMES = [metric.name for metric in METRICS]
RECURSION = re.compile(r"recursion limit exceeded at line \d+ column \d+")

SCALARS = [
    "1",
    "-0",
    "0.1",
    "1" * 400,
    "1e999",
    "-1e-999",
    "18446744073709551616",
    "-9223372036854775809",
    '"text"',
    '"\\ud800"',
    '"\\udc00\\ud800"',
    '"\\u0000"',
    '"a\\r\\nb"',
    "null",
    "true",
]


@dataclass(frozen=True)
class Hostile:
    """A hostile document; ``deep`` when its only flaw is nesting past serde's limit."""

    data: bytes
    deep: bool


@st.composite
def hostile(draw: st.DrawFn, *, wrap: str | None = None, one_line: bool = False) -> Hostile:
    """A document: a value nested 0 to 100,000 deep (arrays and objects) around a hostile
    scalar, inside ``wrap`` (a format string with one ``{}``, e.g. a field the reader reads),
    with CRLF line ends (only at its end when ``one_line``), maybe a BOM, NUL or CR-LF in
    front, and a damaged byte somewhere."""
    depth = draw(st.sampled_from([0, 1, 5, 127, 128, 129, 1000, 100_000]))
    kinds = draw(st.lists(st.sampled_from(["[", '{"k":']), min_size=1, max_size=3))
    levels = [kinds[i % len(kinds)] for i in range(depth)]
    closing = "".join("]" if level == "[" else "}" for level in reversed(levels))
    text = "".join(levels) + draw(st.sampled_from(SCALARS)) + closing
    if wrap is not None:
        text = wrap.format(text)
    if draw(st.booleans()):
        text = text + "\r\n" if one_line else text.replace(",", ",\r\n")
    data = text.encode("utf-8")
    prefix = draw(st.sampled_from([b"", b"\xef\xbb\xbf", b"\x00", b"\r\n"]))
    damage = draw(st.sampled_from([b"", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"]))
    where = draw(st.integers(0, len(data)))
    intact = prefix in (b"", b"\r\n") and not damage
    nested = depth + (wrap is not None and wrap.startswith("{"))
    return Hostile(prefix + data[:where] + damage + data[where:], intact and nested > 127)


def write(data: bytes, name: str) -> str:
    path = Path(tempfile.mkdtemp()) / name
    path.write_bytes(data)
    return str(path)


HEADER = b'{"taguru_eval":1,"name":"n","default_target":{"context":"c"}}\n'


def eval_jsonl(data: bytes) -> None:
    load_eval_set(write(HEADER + data + b"\n", "eval.jsonl"))


def thresholds(data: bytes) -> None:
    check_thresholds(data, path="t.json", metric_names=METRIC_NAMES, case_ids=[])


def compare_view(data: bytes) -> None:
    load_run(write(data, "evaluation.json"), "left")


def config_file(data: bytes) -> None:
    load_config_file(write(data, "taguru.env"), {})


def label_queue(data: bytes) -> None:
    load_labelled_queue(write(b'{"taguru_label_queue":1}\n' + data + b"\n", "q.jsonl"))


def recording(data: bytes) -> None:
    folder = Path(tempfile.mkdtemp())
    (folder / "cases").mkdir()
    (folder / "cases" / "case.json").write_bytes(data)
    recorded_texts(str(folder))


@dataclass(frozen=True)
class Reader:
    """A reader, where it reads the hostile value, its typed refusal and how that begins."""

    read: Callable[[bytes], object]
    wrap: str
    refusal: type[Exception]
    begins: str
    one_line: bool = False
    nests: bool = True
    """It reads JSON, so a deep document must be refused with serde's recursion words."""


READERS = {
    "eval.jsonl": Reader(
        eval_jsonl, '{{"case_id":"a","query":"q","x":{}}}', UsageError, "", one_line=True
    ),
    "thresholds": Reader(
        thresholds, '{{"taguru_evaluate_thresholds":1,"aggregate":{}}}', UsageError, "t.json: "
    ),
    "artifact": Reader(parse_evaluation, '{{"taguru_evaluation":1,"x":{}}}', ArtifactError, ""),
    "compare": Reader(
        compare_view,
        '{{"taguru_evaluation":1,"cases":[],"metrics":{{}},"x":{}}}',
        UsageError,
        "left ",
    ),
    "config": Reader(
        config_file, "TAGURU_ADDR=127.0.0.1:1\nX={}\n", ConfigFileError, "", nests=False
    ),
    "label queue": Reader(
        label_queue,
        '{{"case_id":"a","source":"s","paragraph":0,"relevance":null,"text":{}}}',
        UsageError,
        "",
        one_line=True,
    ),
    "recording": Reader(recording, '{{"exchanges":[],"x":{}}}', UsageError, ""),
}


@settings(max_examples=60)
@given(st.data())
@pytest.mark.parametrize("name", READERS)
def test_input_files(name: str, data: st.DataObject) -> None:
    reader = READERS[name]
    document = data.draw(hostile(wrap=reader.wrap, one_line=reader.one_line))
    try:
        reader.read(document.data)
    except reader.refusal as error:
        assert str(error).startswith(reader.begins)
        if document.deep and reader.nests:
            assert RECURSION.search(str(error)), str(error)
    else:
        assert not (document.deep and reader.nests)


@settings(max_examples=60)
@given(hostile(wrap='{{"result":{},"status":"ok","time":0.1}}'), st.sampled_from([200, 503]))
def test_client_envelope(document: Hostile, status: int) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(status, content=document.data))
    try:
        TaguruClient("http://h", transport=transport).get_json(["contexts", "c"])
    except CallFailed as failure:
        assert failure.message.startswith("http://h/contexts/c")
        if document.deep and status == 200:
            # taguru reads such a body as Value::Null: not an envelope.
            assert failure.message.startswith("http://h/contexts/c: not a taguru response: ")
    else:
        assert not document.deep and status == 200


@pytest.fixture(scope="module")
def server() -> Any:
    http = client(Store())
    http.put("/contexts/c")
    return http


ROUTES = [
    ("/contexts/c/resolve", '{{"cue":"a","x":{}}}'),
    ("/contexts/c/sources/search", '{{"query":{}}}'),
    ("/contexts/c/evidence", '{{"origins":["a"],"x":{}}}'),
    ("/contexts/c/sources", "[{}]"),
    ("/contexts/c/associations", "[{}]"),
]


@settings(max_examples=40)
@given(st.data(), st.sampled_from(ROUTES))
def test_reference_server_request_bodies(
    server: Any, data: st.DataObject, route: tuple[str, str]
) -> None:
    path, wrap = route
    document = data.draw(hostile(wrap=wrap))
    response = server.post(
        path, content=document.data, headers={"Content-Type": "application/json"}
    )
    assert response.status_code in (200, 400, 422), response.text
    if response.status_code != 200:
        body = response.json()
        assert body["status"] == "error" and body["code"] in (
            "malformed_request",
            "invalid_argument",
            "over_limit",
        )
    if document.deep:
        assert response.status_code == 400, response.text
        assert RECURSION.search(json.loads(response.text)["error"]), response.text

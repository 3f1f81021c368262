"""Request bodies read by the one JSON reader (``core/serde``), as taguru's serde reads them.

Before, a body nested deeper than Python's recursion limit answered a bare 500; refusals were
worded by Python's parser; floats were correctly rounded; ``-0`` was the integer 0; a lone
surrogate escape was accepted and later broke the answer.
"""

import pytest
from app_client import client, refusal, result, sake
from starlette.testclient import TestClient

JSON = {"content-type": "application/json"}
SYNTAX = "Failed to parse the request body as JSON: "
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def http() -> TestClient:
    return sake(client())


@pytest.mark.parametrize(
    ("path", "wrap", "column"),
    [
        ("/contexts/sake/resolve", '{{"cue":"x","junk":{}}}', 145),
        ("/contexts/sake/sources/search", '{{"query":{}}}', 136),
        ("/contexts/sake/query", '{{"subject":{}}}', 138),
        ("/contexts/sake/citations", "{}", 128),
        ("/contexts/sake/aliases", '{{"concepts":{}}}', 139),
        ("/contexts/sake/evidence", '{{"origins":["a"],"x":{}}}', 148),
        ("/contexts/sake/sources", "{}", 128),
        ("/contexts/sake/associations", "[{}]", 128),
    ],
)
def test_nesting_past_serdes_limit_is_the_400_envelope(
    http: TestClient, path: str, wrap: str, column: int
) -> None:
    response = http.post(path, content=wrap.format(DEEP).encode(), headers=JSON)
    body = refusal(response, 400, "malformed_request")
    assert body["error"] == f"{SYNTAX}recursion limit exceeded at line 1 column {column}"


def test_nesting_on_create_and_import_is_refused_too(http: TestClient) -> None:
    body = refusal(http.put("/contexts/deep", content=DEEP.encode()), 400, "malformed_request")
    assert body["error"] == f"{SYNTAX}recursion limit exceeded at line 1 column 128"
    stream = b'{"taguru_batch":1,"context":"sake","source":"x.md"}\n' + DEEP.encode() + b"\n"
    body = refusal(http.post("/import", content=stream), 400, "malformed_request")
    assert body["error"] == "line 2: not JSON: recursion limit exceeded at line 1 column 128"


def test_nesting_within_the_limit_reaches_the_shape_check(http: TestClient) -> None:
    nested = "[" * 126 + "]" * 126
    response = http.post("/contexts/sake/resolve", content=f'{{"cue":{nested}}}', headers=JSON)
    refusal(response, 422, "malformed_request")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"cue": }', "expected value at line 1 column 9"),
        (b'{"cue": "x",}', "trailing comma at line 1 column 13"),
        (b'{"cue": "x"} x', "trailing characters at line 1 column 14"),
        (b'{"cue": "x", "limit": 1e999}', "number out of range at line 1 column 27"),
        (b'{"cue": NaN}', "expected value at line 1 column 9"),
        (b"\xef\xbb\xbf{}", "expected value at line 1 column 1"),
    ],
)
def test_syntax_errors_are_in_serdes_words(http: TestClient, raw: bytes, message: str) -> None:
    response = http.post("/contexts/sake/resolve", content=raw, headers=JSON)
    assert refusal(response, 400, "malformed_request")["error"] == SYNTAX + message


def test_minus_zero_is_a_float_as_serde_reads_it(http: TestClient) -> None:
    response = http.post("/contexts/sake/resolve", content=b'{"cue":"x","limit":-0}', headers=JSON)
    refusal(response, 422, "malformed_request")
    response = http.post("/contexts/sake/resolve", content=b'{"cue":"x","limit":0}', headers=JSON)
    result(response)


def test_a_lone_surrogate_is_refused_where_the_shape_reads_it(http: TestClient) -> None:
    lone = b'{"cue":"\\ud800"}'
    response = http.post("/contexts/sake/resolve", content=lone, headers=JSON)
    body = refusal(response, 400, "malformed_request")
    assert body["error"] == SYNTAX + "lone leading surrogate in hex escape"
    # serde skips an unknown member unread: there it is no refusal.
    skipped = b'{"cue":"x","note":"\\ud800"}'
    result(http.post("/contexts/sake/resolve", content=skipped, headers=JSON))
    # A hand-validated body is read whole.
    stored = b'[{"source":"s.md","passage":"p","note":"\\udc00"}]'
    response = http.post("/contexts/sake/sources", content=stored, headers=JSON)
    body = refusal(response, 400, "malformed_request")
    assert body["error"] == SYNTAX + "lone leading surrogate in hex escape"

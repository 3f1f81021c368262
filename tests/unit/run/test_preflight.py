"""preflight.py: version skew, reachability, context entry, embeddings, sources walk, re-read."""

import io
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from lane_script import BASE, Script, error, ok

from pytest_taguru.errors import RunError, UsageError
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.eval_models import EvalCase, EvalHeader, EvalSet
from pytest_taguru.run.preflight import major_minor, reread_context, run_preflight, skew_warning

SAKE = "/contexts/sake"
SOURCES = [
    "corpus/brewery.md",
    "corpus/history.md",
    "corpus/ledger.md",
    "corpus/menu.md",
    "corpus/pairing.md",
    "corpus/products.md",
]
TAIL = " — minor versions differ, and pre-1.0 a minor may change response shapes; continuing anyway"


@dataclass(frozen=True)
class FakeSettings:
    context: str = "sake"
    masked_url: str = "http://localhost:8248"


def entry(**overrides: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "name": "sake",
        "description": "",
        "pinned": False,
        "loaded": True,
        "dice_floor": None,
        "semantic_floor": None,
        "schema_mode": None,
        "stats": {},
        "usage": {"last_write_epoch": 1785231000},
        "revision": {"graph": 1042, "passages": 87, "config": 5},
    }
    value.update(overrides)
    return value


def eval_set(*expected: list[dict[str, Any]]) -> EvalSet:
    cases = [
        EvalCase.model_validate({"case_id": f"c{i}", "query": "q", "expected_sources": sources})
        for i, sources in enumerate(expected, 1)
    ]
    return EvalSet(path="eval.jsonl", header=EvalHeader(taguru_eval=1), cases=cases)


HEALTH = httpx.Response(200, text='{"status":"ok","version":"0.9.3"}')


def healthy(script: Script) -> Script:
    return script.get("/health", HEALTH).get("/health", HEALTH)


def through_sources(script: Script) -> Script:
    return (
        healthy(script)
        .get(SAKE, ok(entry()))
        .get(f"{SAKE}/embeddings", ok({"provider_model": "bge-m3", "passages": {"rows": 3}}))
        .get(f"{SAKE}/sources?limit=1000", ok({"total": 6, "sources": SOURCES}))
        .get(f"{SAKE}/sources?limit=1000&after=corpus%2Fproducts.md", ok({"sources": []}))
    )


def preflight(script: Script, cases: EvalSet | None = None) -> tuple[Any, str]:
    stderr = io.StringIO()
    facts = run_preflight(script.client(), FakeSettings(), cases or eval_set(), stderr=stderr)
    assert script.done()
    return facts, stderr.getvalue()


# --- version skew ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "pair"),
    [
        ("0.9.3", (0, 9)),
        ("1.10", (1, 10)),
        ("+0.+9.x", (0, 9)),
        ("0", None),
        ("0.9-beta", None),
        ("v0.9.1", None),
        (" 0.9", None),
        ("0..9", None),
    ],
)
def test_major_minor(version: str, pair: tuple[int, int] | None) -> None:
    assert major_minor(version) == pair


def test_skew_warning_pre_0_5_server() -> None:
    assert skew_warning("http://h/x?y=1", "0.9.3", " ok\n") == (
        "taguru: evaluate: warning: this CLI is 0.9.3 but the server at http://h/x?y=1 answers "
        f"/health as a pre-0.5 server{TAIL}"
    )


def test_skew_warning_other_minor() -> None:
    assert skew_warning("http://h", "0.9.3", '{"status":"ok","version":"0.10.0"}') == (
        f"taguru: evaluate: warning: this CLI is 0.9.3 but the server at http://h runs 0.10.0{TAIL}"
    )


@pytest.mark.parametrize(
    "body",
    [
        '{"status":"ok","version":"0.9.7"}',
        '{"status":"ok"}',
        '{"version": 0.1}',
        '{"version": "nightly"}',
        '["0.1.0"]',
        "OK",
        "",
        "not json",
    ],
)
def test_skew_warning_silent(body: str) -> None:
    assert skew_warning("http://h", "0.9.3", body) is None


def test_skew_warning_names_the_unmasked_base() -> None:
    base = "http://localhost:8248/api?k=v"

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/health":
            return httpx.Response(200, text="ok")
        raise AssertionError("stop after the probe and the health check")

    client = TaguruClient(base, None, transport=httpx.MockTransport(handler))
    stderr = io.StringIO()
    with pytest.raises(AssertionError):
        run_preflight(client, FakeSettings(), eval_set(), stderr=stderr)
    assert stderr.getvalue() == (
        f"taguru: evaluate: warning: this CLI is 0.9.3 but the server at {base} answers "
        f"/health as a pre-0.5 server{TAIL}\n"
    )


# --- the whole preflight ---------------------------------------------------------------------


def test_spec_example_preflight() -> None:
    facts, stderr = preflight(through_sources(Script()), eval_set([{"source": SOURCES[0]}]))
    assert stderr == ""
    assert (facts.context.revision.graph, facts.context.revision.passages) == (1042, 87)
    assert facts.context.revision.config == 5
    assert facts.context.last_write_epoch == 1785231000
    assert (facts.embeddings_read, facts.provider_model) == (True, "bge-m3")
    assert facts.sources_count == 6


def test_skew_probe_failure_is_silent_and_health_still_checked() -> None:
    script = (
        Script()
        .get("/health", httpx.Response(500, text="ok"))
        .get("/health", httpx.Response(200, text="anything"))
        .get(SAKE, ok(entry()))
        .get(f"{SAKE}/embeddings", ok({"provider_model": None}))
        .get(f"{SAKE}/sources?limit=1000", ok({"sources": []}))
    )
    facts, stderr = preflight(script)
    assert stderr == ""
    assert facts.sources_count == 0


def test_unreachable_server_is_a_run_error() -> None:
    script = (
        Script().get("/health", HEALTH).get("/health", error(503, "maintenance", "sweep running"))
    )
    with pytest.raises(RunError) as caught:
        preflight(script)
    assert caught.value.message == (
        "server at http://localhost:8248 is not reachable: "
        f"{BASE}/health answered 503: sweep running"
    )


def test_unknown_context_is_a_usage_error() -> None:
    script = healthy(Script()).get(SAKE, error(404, "no_context", "context 'sake' not found"))
    with pytest.raises(UsageError) as caught:
        preflight(script)
    assert caught.value.message == f"{BASE}{SAKE} answered 404: context 'sake' not found"


@pytest.mark.parametrize(
    "answer",
    [error(500, "internal", "disk"), httpx.Response(200, json={"entry": {}})],
)
def test_other_context_failures_are_run_errors(answer: httpx.Response) -> None:
    with pytest.raises(RunError) as caught:
        preflight(healthy(Script()).get(SAKE, answer))
    assert caught.value.message.startswith(f"{BASE}{SAKE}")


@pytest.mark.parametrize(
    "broken",
    [
        {"revision": None},
        {"stats": None},
        {"usage": {"last_write_epoch": None}},
        {"revision": {"graph": -1}},
        {"pinned": "no"},
    ],
)
def test_undecodable_context_entry(broken: dict[str, Any]) -> None:
    with pytest.raises(RunError) as caught:
        preflight(healthy(Script()).get(SAKE, ok(entry(**broken))))
    assert caught.value.message.startswith("sake: unreadable context entry: ")


def test_missing_revision_and_counters_read_as_zero() -> None:
    value = entry(usage={})
    del value["revision"]
    script = (
        healthy(Script())
        .get(SAKE, ok(value))
        .get(f"{SAKE}/embeddings", ok({}))
        .get(f"{SAKE}/sources?limit=1000", ok({"sources": []}))
    )
    facts, _ = preflight(script)
    assert facts.context.revision.model_dump() == {"graph": 0, "passages": 0, "config": 0}
    assert facts.context.last_write_epoch == 0
    assert (facts.embeddings_read, facts.provider_model) == (True, None)


@pytest.mark.parametrize("result", [{"provider_model": 7}, ["bge"], None])
def test_embedding_status_with_no_string_model(result: Any) -> None:
    script = (
        healthy(Script())
        .get(SAKE, ok(entry()))
        .get(f"{SAKE}/embeddings", ok(result))
        .get(f"{SAKE}/sources?limit=1000", ok({"sources": []}))
    )
    facts, _ = preflight(script)
    assert (facts.embeddings_read, facts.provider_model) == (True, None)


def test_embedding_status_failure_is_a_warning() -> None:
    script = (
        healthy(Script())
        .get(SAKE, ok(entry()))
        .get(f"{SAKE}/embeddings", error(502, "embeddings_failed", "provider down"))
        .get(f"{SAKE}/sources?limit=1000", ok({"sources": []}))
    )
    facts, stderr = preflight(script)
    assert (facts.embeddings_read, facts.provider_model) == (False, None)
    assert stderr == (
        "taguru: evaluate: sake: could not read embedding status (recording none): "
        f"{BASE}{SAKE}/embeddings answered 502: provider down\n"
    )


# --- the sources walk ------------------------------------------------------------------------


def walk(*pages: httpx.Response) -> Script:
    script = healthy(Script()).get(SAKE, ok(entry())).get(f"{SAKE}/embeddings", ok({}))
    cursor = None
    for page in pages:
        suffix = "" if cursor is None else f"&after={cursor}"
        script.get(f"{SAKE}/sources?limit=1000{suffix}", page)
        body = page.json() if page.status_code == 200 else {}
        result = body.get("result") if isinstance(body, dict) else None
        names = result.get("sources") if isinstance(result, dict) else None
        if isinstance(names, list) and names and isinstance(names[-1], str):
            cursor = names[-1].replace("/", "%2F").replace(" ", "+")
    return script


def test_short_page_does_not_end_the_walk() -> None:
    facts, _ = preflight(
        walk(ok({"sources": ["a", "b"]}), ok({"sources": ["c d"]}), ok({"sources": []}))
    )
    assert facts.sources == frozenset({"a", "b", "c d"})


@pytest.mark.parametrize(
    ("pages", "message"),
    [
        ([ok({"total": 0})], "sake: not a taguru sources page"),
        ([ok(["a"])], "sake: not a taguru sources page"),
        ([ok({"sources": ["a", 3]})], "sake: a sources entry is not a string"),
        (
            [ok({"sources": ["a", "b"]}), ok({"sources": ["b", "c"]})],
            "sake: the server's sources page did not advance past 'b'",
        ),
        (
            [ok({"sources": ["b"]}), ok({"sources": ["a"]})],
            "sake: the server's sources page did not advance past 'b'",
        ),
    ],
)
def test_sources_walk_failures(pages: list[httpx.Response], message: str) -> None:
    with pytest.raises(RunError) as caught:
        preflight(walk(*pages))
    assert caught.value.message == message


def test_sources_walk_guard_uses_code_point_order() -> None:
    facts, _ = preflight(walk(ok({"sources": ["Z"]}), ok({"sources": ["a"]}), ok({"sources": []})))
    assert facts.sources_count == 2


def test_sources_walk_http_failure_is_a_run_error() -> None:
    with pytest.raises(RunError) as caught:
        preflight(walk(error(400, "invalid_argument", "cursor too long")))
    assert caught.value.message == (
        f"{BASE}{SAKE}/sources?limit=1000 answered 400: cursor too long"
    )


# --- expected sources ------------------------------------------------------------------------


def test_missing_expected_sources_are_all_listed_then_a_usage_error() -> None:
    cases = eval_set(
        [{"source": "corpus/menu.md"}, {"source": "gone.md", "relevance": 0}],
        [{"source": "gone.md"}, {"source": "gone.md"}, {"source": "other.md"}],
    )
    stderr = io.StringIO()
    with pytest.raises(UsageError) as caught:
        run_preflight(through_sources(Script()).client(), FakeSettings(), cases, stderr=stderr)
    assert stderr.getvalue() == (
        "taguru: evaluate: case 'c1': expected_sources names 'gone.md', which 'sake' does not "
        "carry\n"
        "taguru: evaluate: case 'c2': expected_sources names 'gone.md', which 'sake' does not "
        "carry\n"
        "taguru: evaluate: case 'c2': expected_sources names 'gone.md', which 'sake' does not "
        "carry\n"
    )
    assert caught.value.message == (
        "case 'c2': expected_sources names 'other.md', which 'sake' does not carry"
    )


def test_expected_sources_match_exactly() -> None:
    with pytest.raises(UsageError):
        preflight(through_sources(Script()), eval_set([{"source": " corpus/menu.md"}]))


# --- after the run ---------------------------------------------------------------------------


def test_reread_context() -> None:
    script = Script().get(SAKE, ok(entry(usage={"last_write_epoch": 7})))
    facts = reread_context(script.client(), "sake")
    assert (facts.revision.graph, facts.last_write_epoch) == (1042, 7)


def test_reread_404_is_a_run_error() -> None:
    script = Script().get(SAKE, error(404, "no_context", "context 'sake' not found"))
    with pytest.raises(RunError) as caught:
        reread_context(script.client(), "sake")
    assert caught.value.message == (
        "sake: could not re-read the context after the run: "
        f"{BASE}{SAKE} answered 404: context 'sake' not found"
    )


def test_reread_decode_failure_is_a_run_error() -> None:
    script = Script().get(SAKE, ok(entry(revision=None)))
    with pytest.raises(RunError) as caught:
        reread_context(script.client(), "sake")
    assert caught.value.message.startswith("sake: unreadable context entry after the run: ")


def test_missing_expected_sources_get_a_line_and_a_suggestion_as_hints() -> None:
    cases = eval_set([{"source": "corpus/brewery.md"}, {"source": "brewery.md"}], [{"source": "x"}])
    with pytest.raises(UsageError) as caught:
        run_preflight(
            through_sources(Script()).client(), FakeSettings(), cases, stderr=io.StringIO()
        )
    assert caught.value.hints == [
        "eval.jsonl:0: case 'c1': expected_sources[1].source 'brewery.md' — did you mean "
        "'corpus/brewery.md'?",
        "eval.jsonl:0: case 'c2': expected_sources[0].source 'x' — no stored source is close",
    ]

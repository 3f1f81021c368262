"""run/lanes/: request bodies, decoding, recorded outcomes and the per-case request sequence."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from lane_script import BASE, Script, case, error, ok, search_hit, written
from paths import SPEC_7_8_EVALUATION, WIRE_FIXTURES

from pytest_taguru.artifact.case import (
    CheckResolved,
    CheckUnresolved,
    PassageFailed,
    PassageSearched,
    PositionAmbiguous,
    PositionErrored,
    PositionNotFound,
    PositionResolved,
    QueryErrored,
    QueryQueried,
)
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.core.jsontext import dumps_compact, to_f32
from pytest_taguru.core.serde import read_json
from pytest_taguru.run.lanes import clock
from pytest_taguru.run.lanes import passage as passage_lane
from pytest_taguru.run.lanes import structural as structural_lane
from pytest_taguru.run.lanes.case import run_lanes
from pytest_taguru.run.lanes.passage import (
    HIT_WITHOUT_PARAGRAPH,
    HIT_WITHOUT_SOURCE,
    NO_RECOGNIZABLE_HITS,
    search_passage_lane,
)

SEARCH = "/contexts/c/sources/search"
RESOLVE = "/contexts/c/resolve"
RESOLVE_LABEL = "/contexts/c/resolve_label"
QUERY = "/contexts/c/query"
CITATIONS = "/contexts/c/citations"

LONG = "x" * 300
FIXTURES = WIRE_FIXTURES / "http"


def lex(name: str, score: float = 1.0) -> dict[str, Any]:
    return {"name": name, "score": score, "tier": "lexical", "kind": "exact"}


def sem(name: str, score: float = 0.8) -> dict[str, Any]:
    return {"name": name, "score": score, "tier": "semantic"}


def default_body(query: str = "q", limit: int = 10) -> dict[str, Any]:
    return {
        "query": query,
        "limit": limit,
        "semantic_floor": None,
        "tags": [],
        "since": None,
        "until": None,
    }


def passage_of(result: Any, answer: httpx.Response | None = None, **fields: Any) -> Any:
    script = Script().post(SEARCH, None, answer or ok(result))
    return search_passage_lane(script.client(), "c", case(**fields))


# --- passage lane: request -------------------------------------------------------------------


def test_search_body_without_options_is_six_keys_in_order() -> None:
    script = Script().post(SEARCH, None, ok({"plan": {"contexts": []}, "hits": []}))
    run_lanes(script.client(), "c", case(query="  青嶺 "))
    assert script.seen[0].content.decode() == (
        '{"query":"  青嶺 ","limit":10,"semantic_floor":null,"tags":[],"since":null,"until":null}'
    )


def test_search_body_with_options_sends_the_widened_f32_floor() -> None:
    script = Script().post(SEARCH, None, ok([]))
    options = {"limit": 3, "floor": to_f32(0.4), "tags": ["a", "b"], "since": 5, "until": 9}
    run_lanes(script.client(), "c", case(options=options))
    assert script.seen[0].content.decode() == (
        '{"query":"q","limit":3,"semantic_floor":0.4000000059604645,"tags":["a","b"],'
        '"since":5,"until":9}'
    )


# --- passage lane: strict decode ------------------------------------------------------------


def test_strict_shape_records_first_plan_and_locators_without_text() -> None:
    fixture = json.loads((FIXTURES / "sources_search.json").read_text(encoding="utf-8"))
    passage = passage_of(fixture["response"]["result"])
    assert isinstance(passage, PassageSearched)
    recorded = written(passage)
    del recorded["latency_ms"]
    assert recorded == {
        "outcome": "searched",
        "plan": {
            "context": "corpus-c",
            "lanes": {
                "bm25": {"ran": True},
                "vector": {"ran": False, "reason": "no embedding provider is configured"},
            },
        },
        "hits": [
            {
                "source": "doc.md",
                "paragraph": 0,
                "score": 0.28768212,
                "lanes": {"bm25": {"rank": 1, "score": 0.28768212}},
            }
        ],
    }
    assert "蔵元" not in dumps_compact(to_jsonable(passage))


def test_f32_fields_are_written_as_shortest_f32_text() -> None:
    result = {
        "plan": {
            "contexts": [
                {
                    "context": "c",
                    "lanes": {"bm25": {"ran": True}, "vector": {"ran": True, "floor": 0.35}},
                    "filter": {"eligible_sources": 1, "total_sources": 2},
                }
            ]
        },
        "hits": [
            {
                "source": "s",
                "paragraph": 1,
                "score": 0.03278688341379166,
                "text": "t",
                "lanes": {"vector": {"rank": 2, "score": 6.840000152587891}},
            }
        ],
    }
    text = dumps_compact(to_jsonable(passage_of(result)))
    assert '"score":0.032786883' in text
    assert '"vector":{"rank":2,"score":6.84}' in text
    assert '"floor":0.35' in text
    assert '"filter":{"eligible_sources":1,"total_sources":2}' in text


def test_empty_plan_contexts_means_no_plan() -> None:
    passage = passage_of({"plan": {"contexts": []}, "hits": []})
    assert isinstance(passage, PassageSearched)
    assert passage.plan is None
    assert "plan" not in written(passage)
    assert written(passage)["hits"] == []


# --- passage lane: fallback -----------------------------------------------------------------


def test_fallback_bare_array() -> None:
    passage = passage_of(
        [
            {"source": "a", "paragraph": 2**32 + 5, "score": 0.1, "text": "t"},
            {"source": "b", "paragraph": 0, "score": "high"},
            {"source": "c", "paragraph": 1},
        ]
    )
    recorded = written(passage)
    assert recorded["outcome"] == "searched"
    assert "plan" not in recorded
    assert recorded["hits"] == [
        {"source": "a", "paragraph": 5, "score": 0.1, "lanes": {}},
        {"source": "b", "paragraph": 0, "score": 0.0, "lanes": {}},
        {"source": "c", "paragraph": 1, "score": 0.0, "lanes": {}},
    ]


def test_fallback_when_strict_shape_fails_loses_plan_and_lanes() -> None:
    result = {
        "plan": {"contexts": []},
        "hits": [{"source": "a", "paragraph": 1, "score": 2, "lanes": {"bm25": {"rank": 1}}}],
    }
    recorded = written(passage_of(result))
    assert recorded["hits"] == [{"source": "a", "paragraph": 1, "score": 2.0, "lanes": {}}]
    assert "plan" not in recorded


def test_fallback_keeps_text_internally_for_the_budget_hook() -> None:
    hits = [{"source": "a", "paragraph": 0, "text": "本"}, {"source": "b", "paragraph": 1}]
    script = Script().post(SEARCH, None, ok({"hits": hits}))
    fetched = passage_lane.fetch_passage_hits(script.client(), "c", case())
    assert isinstance(fetched, passage_lane.PassageFetch)
    assert [hit.text for hit in fetched.hits] == ["本", ""]


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({"items": []}, NO_RECOGNIZABLE_HITS),
        ("hits", NO_RECOGNIZABLE_HITS),
        ({"hits": {"source": "a"}}, NO_RECOGNIZABLE_HITS),
        ([{"paragraph": 0}], HIT_WITHOUT_SOURCE),
        ([{"source": 3, "paragraph": 0}], HIT_WITHOUT_SOURCE),
        (["a"], HIT_WITHOUT_SOURCE),
        ([{"source": "a"}], HIT_WITHOUT_PARAGRAPH),
        ([{"source": "a", "paragraph": -1}], HIT_WITHOUT_PARAGRAPH),
        ([{"source": "a", "paragraph": 1.0}], HIT_WITHOUT_PARAGRAPH),
        ([{"source": "a", "paragraph": True}], HIT_WITHOUT_PARAGRAPH),
        ([{"source": "a", "paragraph": 0}, {"paragraph": 0}], HIT_WITHOUT_SOURCE),
    ],
)
def test_fallback_failures_use_the_fixed_messages(result: Any, message: str) -> None:
    passage = passage_of(result)
    assert isinstance(passage, PassageFailed)
    assert passage.message == message


def test_http_failure_is_recorded_truncated() -> None:
    passage = passage_of(None, error(500, "internal", LONG))
    assert isinstance(passage, PassageFailed)
    assert passage.message == (f"{BASE}{SEARCH} answered 500: {LONG}".encode()[:200].decode() + "…")


def test_non_envelope_failure_is_recorded() -> None:
    passage = passage_of(None, httpx.Response(200, json={"hits": []}))
    assert isinstance(passage, PassageFailed)
    assert passage.message == f'{BASE}{SEARCH}: not a taguru response: {{"hits":[]}}'


# --- structural lane: cues -------------------------------------------------------------------


def test_no_structural_expectation_means_no_structural_lane() -> None:
    script = Script().post(SEARCH, None, ok([]))
    results = run_lanes(script.client(), "c", case(cues=["a"], expected_sources=[{"source": "s"}]))
    assert results.structural is None
    assert results.checks is None
    assert script.done()


def test_cue_list_falls_back_to_the_raw_query_concepts_before_labels() -> None:
    script = (
        Script()
        .post(SEARCH, None, ok([]))
        .post(RESOLVE, {"cue": " raw q ", "limit": 5}, ok([lex("A"), lex("B")]))
        .post(RESOLVE_LABEL, {"cue": " raw q ", "limit": 5}, ok([sem("rel")]))
    )
    results = run_lanes(
        script.client(),
        "c",
        case(query=" raw q ", expected_concepts=["a"], expected_labels=["rel"]),
    )
    assert script.done()
    assert results.structural is not None
    recorded = [written(cue) for cue in results.structural.cues]
    for item in recorded:
        del item["latency_ms"]
    assert recorded == [
        {
            "cue": " raw q ",
            "kind": "concept",
            "resolved_names": ["A", "B"],
            "tier": "lexical",
            "limit": 5,
        },
        {
            "cue": " raw q ",
            "kind": "label",
            "resolved_names": ["rel"],
            "tier": "semantic",
            "limit": 5,
        },
    ]
    assert written(results.structural)["associations"] == []


def test_every_cue_is_resolved_per_kind_in_order() -> None:
    script = Script().post(SEARCH, None, ok([]))
    for path in (RESOLVE, RESOLVE, RESOLVE_LABEL, RESOLVE_LABEL):
        cue = "c1" if len(script.steps) % 2 == 1 else "c2"
        script.post(path, {"cue": cue, "limit": 5}, ok([]))
    results = run_lanes(
        script.client(),
        "c",
        case(cues=["c1", "c2"], expected_concepts=["x"], expected_labels=["y"]),
    )
    assert script.done()
    assert results.structural is not None
    assert [(c.cue, c.kind) for c in results.structural.cues] == [
        ("c1", "concept"),
        ("c2", "concept"),
        ("c1", "label"),
        ("c2", "label"),
    ]


@pytest.mark.parametrize(
    ("candidates", "names", "tier"),
    [
        ([sem("s1"), lex("l1"), lex("l2"), sem("s2")], ["l1", "l2"], "lexical"),
        ([sem("s1"), sem("s2")], ["s1", "s2"], "semantic"),
        ([{"name": "f", "score": 1.0, "tier": "fuzzy"}, sem("s")], ["s"], "semantic"),
        ([{"name": "f", "score": 1.0, "tier": "Lexical"}], [], None),
        ([], [], None),
    ],
)
def test_top_tier_rule(
    candidates: list[dict[str, Any]], names: list[str], tier: str | None
) -> None:
    call = structural_lane.call_resolve(
        Script().post(RESOLVE, None, ok(candidates)).client(), "c", "resolve", "x"
    )
    assert [c.name for c in call.group] == names
    cue = structural_lane.resolve_cue(
        Script().post(RESOLVE, None, ok(candidates)).client(), "c", "x", "concept"
    )
    assert (cue.resolved_names, cue.tier, cue.error) == (names, tier, None)
    if tier is None:
        assert "tier" not in written(cue)


def test_cue_http_error_is_recorded_truncated() -> None:
    script = Script().post(RESOLVE_LABEL, None, error(503, "overloaded", LONG))
    cue = structural_lane.resolve_cue(script.client(), "c", "x", "label")
    assert cue.resolved_names == []
    assert cue.tier is None
    assert cue.error is not None
    assert cue.error.startswith(f"{BASE}{RESOLVE_LABEL} answered 503: xxx")
    assert cue.error.endswith("…")
    assert len(cue.error.encode()) == 203


@pytest.mark.parametrize(
    ("kind", "prefix"),
    [
        ("concept", "resolve response did not parse: "),
        ("label", "resolve_label response did not parse: "),
    ],
)
def test_cue_decode_error_message(kind: Any, prefix: str) -> None:
    path = RESOLVE if kind == "concept" else RESOLVE_LABEL
    cue = structural_lane.resolve_cue(
        Script().post(path, None, ok({"name": "x"})).client(), "c", "x", kind
    )
    assert cue.error is not None and cue.error.startswith(prefix)
    assert cue.resolved_names == []


def test_candidate_missing_tier_is_a_decode_error() -> None:
    cue = structural_lane.resolve_cue(
        Script().post(RESOLVE, None, ok([{"name": "x", "score": 1.0}])).client(),
        "c",
        "x",
        "concept",
    )
    assert cue.error == "resolve response did not parse: [0].tier: Field required"


# --- structural lane: positions and /query ---------------------------------------------------


def position(answer: httpx.Response) -> Any:
    call = structural_lane.call_resolve(
        Script().post(RESOLVE, None, answer).client(), "c", "resolve", "x"
    )
    return structural_lane.classify_position(call)


def test_position_errored() -> None:
    outcome = position(error(500, "internal", "boom"))
    assert isinstance(outcome, PositionErrored)
    assert outcome.message == f"{BASE}{RESOLVE} answered 500: boom"


def test_position_not_found() -> None:
    assert isinstance(position(ok([])), PositionNotFound)


def test_position_resolved_takes_the_group_member() -> None:
    outcome = position(ok([sem("s1"), lex("l1")]))
    assert isinstance(outcome, PositionResolved)
    assert (outcome.name, outcome.tier) == ("l1", "lexical")


def test_position_ambiguous_counts_entries_not_distinct_names() -> None:
    outcome = position(ok([lex("same"), lex("same")]))
    assert isinstance(outcome, PositionAmbiguous)
    assert (outcome.tier, outcome.candidates) == ("lexical", ["same", "same"])


def association_script(query_answer: httpx.Response | None) -> Script:
    script = (
        Script()
        .post(SEARCH, None, ok([]))
        .post(RESOLVE, {"cue": "subj", "limit": 5}, ok([lex("Subject")]))
        .post(RESOLVE_LABEL, {"cue": "lab", "limit": 5}, ok([sem("Label")]))
        .post(RESOLVE, {"cue": "obj", "limit": 5}, ok([lex("Object")]))
    )
    if query_answer is not None:
        body = {"subject": "Subject", "label": "Label", "object": "Object", "limit": 1}
        script.post(QUERY, body, query_answer)
    return script


ASSOCIATION = {"expected_associations": [{"subject": "subj", "label": "lab", "object": "obj"}]}


def match(*attributions: dict[str, Any]) -> dict[str, Any]:
    return {
        "subject": "Subject",
        "label": "Label",
        "object": "Object",
        "weight": 2.0,
        "count": 1,
        "attributions": list(attributions),
    }


def probe_of(script: Script) -> Any:
    results = run_lanes(script.client(), "c", case(**ASSOCIATION))
    assert script.done()
    assert results.structural is not None
    return results.structural.associations[0]


def test_query_runs_with_resolved_names_and_records_attributions() -> None:
    result = {
        "total": 1,
        "matches": [
            match(
                {"source": "a.md", "weight": 1.0, "count": 1, "paragraph": 3, "section": None},
                {"source": "b.md", "weight": 1.0, "count": 1},
            )
        ],
        "plan": {"contexts": ["c"]},
    }
    probe = probe_of(association_script(ok(result)))
    assert isinstance(probe.query, QueryQueried)
    recorded = written(probe.query)
    del recorded["latency_ms"]
    assert recorded == {
        "outcome": "queried",
        "total": 1,
        "matches": 1,
        "attributions": [{"source": "a.md", "paragraph": 3}, {"source": "b.md", "paragraph": None}],
    }
    assert (probe.subject_cue, probe.label_cue, probe.object_cue) == ("subj", "lab", "obj")


def test_query_without_attributions_omits_the_key() -> None:
    probe = probe_of(association_script(ok({"total": 0, "matches": []})))
    assert "attributions" not in written(probe.query)


def test_query_http_error_is_truncated() -> None:
    probe = probe_of(association_script(error(400, "invalid_argument", LONG)))
    assert isinstance(probe.query, QueryErrored)
    assert probe.query.message.endswith("…")
    assert len(probe.query.message.encode()) == 203


def test_query_decode_error_is_not_truncated() -> None:
    locator = {"kind": "page", "value": "1", LONG: 1}
    attribution = {"source": "a", "weight": 1.0, "count": 1, "locator": locator}
    probe = probe_of(association_script(ok({"total": 1, "matches": [match(attribution)]})))
    assert isinstance(probe.query, QueryErrored)
    assert probe.query.message == (
        f"query response did not parse: matches[0].attributions[0].locator.{LONG}: "
        "Extra inputs are not permitted"
    )


def test_query_match_without_weight_is_a_decode_error() -> None:
    bad = match()
    del bad["weight"]
    probe = probe_of(association_script(ok({"total": 1, "matches": [bad]})))
    assert isinstance(probe.query, QueryErrored)
    assert probe.query.message == "query response did not parse: matches[0].weight: Field required"


@pytest.mark.parametrize(
    "answers",
    [
        (ok([]), ok([lex("L")]), ok([lex("O")])),
        (ok([lex("S")]), ok([lex("L1"), lex("L2")]), ok([lex("O")])),
        (ok([lex("S")]), ok([lex("L")]), error(500, "internal", "x")),
    ],
)
def test_query_not_called_unless_all_three_resolved(answers: tuple[httpx.Response, ...]) -> None:
    script = (
        Script()
        .post(SEARCH, None, ok([]))
        .post(RESOLVE, None, answers[0])
        .post(RESOLVE_LABEL, None, answers[1])
        .post(RESOLVE, None, answers[2])
    )
    probe = probe_of(script)
    assert probe.query is None
    assert "query" not in written(probe)


# --- citation lane ---------------------------------------------------------------------------


def citation_check(answer: httpx.Response, **citation: Any) -> Any:
    expected = {"source": "s.md", "paragraph": 2, **citation}
    script = (
        Script()
        .post(SEARCH, None, ok([]))
        .post(CITATIONS, {"source": "s.md", "paragraph": 2}, answer)
    )
    results = run_lanes(script.client(), "c", case(expected_citations=[expected]))
    assert script.done()
    assert results.checks is not None
    return results.checks[0]


def cited(section: Any = None, text: str = "本文") -> httpx.Response:
    return ok({"text": text, "source": "s.md", "section": section, "locator": None})


SECTION_ABSENT = object()


@pytest.mark.parametrize(
    ("declared", "served", "check"),
    [
        (SECTION_ABSENT, "沿革", {"check": "not_checked"}),
        (None, None, {"check": "matched", "expected": None}),
        (None, "沿革", {"check": "mismatched", "expected": None}),
        ("沿革", "沿革", {"check": "matched", "expected": "沿革"}),
        ("沿革", "製品", {"check": "mismatched", "expected": "沿革"}),
        ("沿革", None, {"check": "mismatched", "expected": "沿革"}),
        ("沿革 ", "沿革", {"check": "mismatched", "expected": "沿革 "}),
    ],
)
def test_section_check_table(declared: Any, served: str | None, check: dict[str, Any]) -> None:
    fields = {} if declared is SECTION_ABSENT else {"section": declared}
    result = citation_check(cited(served), **fields)
    assert isinstance(result, CheckResolved)
    assert written(result.section) == check
    assert result.quote is None


def test_section_missing_from_the_response_reads_as_null() -> None:
    result = citation_check(ok({"text": "t", "source": "s.md"}), section=None)
    assert written(result.section) == {"check": "matched", "expected": None}


@pytest.mark.parametrize(
    ("quote", "text", "matched"),
    [
        ("1897年に創業", "青嶺酒造は1897年に創業した蔵元である。", True),
        ("  カタカナ ", "ひらがなの かたかな です", True),
        ("ＡＢＣ", "xabcx", True),
        ("創業した蔵", "創業\nした蔵", False),
        ("欠落", "本文", False),
    ],
)
def test_quote_check(quote: str, text: str, matched: bool) -> None:
    result = citation_check(cited(text=text), quote=quote)
    assert isinstance(result, CheckResolved)
    assert written(result)["quote"] == {"declared": quote, "matched": matched}
    assert text not in json.dumps(written(result), ensure_ascii=False)


def test_404_records_its_code_and_truncated_message() -> None:
    result = citation_check(error(404, "no_paragraph", LONG))
    assert isinstance(result, CheckUnresolved)
    assert result.code == "no_paragraph"
    assert result.message.endswith("…") and len(result.message.encode()) == 203


def test_404_without_code_records_null() -> None:
    result = citation_check(httpx.Response(404, text="not here"))
    assert isinstance(result, CheckUnresolved)
    assert written(result)["code"] is None
    assert result.message == f"{BASE}{CITATIONS} answered 404: not here"


def test_coded_400_records_null_code() -> None:
    result = citation_check(error(400, "invalid_argument", "source must not be empty"))
    assert isinstance(result, CheckUnresolved)
    assert result.code is None


def test_non_envelope_200_is_unresolved_without_code() -> None:
    result = citation_check(httpx.Response(200, json={"text": "t"}))
    assert isinstance(result, CheckUnresolved)
    assert result.code is None
    assert result.message.startswith(f"{BASE}{CITATIONS}: not a taguru response: ")


def test_locator_with_an_extra_key_is_a_decode_failure() -> None:
    answer = ok({"text": "t", "source": "s.md", "locator": {"kind": "p", "value": "1", "x": 1}})
    result = citation_check(answer)
    assert isinstance(result, CheckUnresolved)
    assert result.code is None
    assert result.message == (
        "citation response did not parse: locator.x: Extra inputs are not permitted"
    )


def test_citation_decode_failure_message_is_truncated() -> None:
    answer = ok({"text": "t", "source": "s.md", "locator": {"kind": "p", "value": "1", LONG: 1}})
    result = citation_check(answer)
    assert result.message.endswith("…") and len(result.message.encode()) == 203


def test_served_through_passage_hits() -> None:
    hits = [{"source": "s.md", "paragraph": 2}, {"source": "t.md", "paragraph": 0}]
    script = (
        Script()
        .post(SEARCH, None, ok(hits))
        .post(CITATIONS, None, cited())
        .post(CITATIONS, None, cited())
    )
    citations = [{"source": "s.md", "paragraph": 2}, {"source": "s.md", "paragraph": 0}]
    results = run_lanes(script.client(), "c", case(expected_citations=citations))
    assert results.checks is not None
    assert [check.served for check in results.checks] == [True, False]


def test_served_through_query_attributions_even_when_passage_failed() -> None:
    attributions = [
        {"source": "s.md", "weight": 1.0, "count": 1, "paragraph": 2},
        {"source": "u.md", "weight": 1.0, "count": 1, "paragraph": None},
    ]
    script = Script().post(SEARCH, None, error(500, "internal", "down"))
    script.steps += association_script(ok({"total": 0, "matches": [match(*attributions)]})).steps[
        1:
    ]
    script.post(CITATIONS, None, cited()).post(CITATIONS, None, cited())
    citations = [{"source": "s.md", "paragraph": 2}, {"source": "u.md", "paragraph": 0}]
    results = run_lanes(script.client(), "c", case(**ASSOCIATION, expected_citations=citations))
    assert script.done()
    assert isinstance(results.passage, PassageFailed)
    assert results.checks is not None
    assert [check.served for check in results.checks] == [True, False]


# --- the per-case request sequence (§3.2) ----------------------------------------------------


def test_request_sequence_of_a_case_declaring_everything() -> None:
    script = (
        Script()
        .post(SEARCH, default_body(), ok([]))
        .post(RESOLVE, {"cue": "c1", "limit": 5}, ok([]))
        .post(RESOLVE, {"cue": "c2", "limit": 5}, ok([]))
        .post(RESOLVE_LABEL, {"cue": "c1", "limit": 5}, ok([]))
        .post(RESOLVE_LABEL, {"cue": "c2", "limit": 5}, ok([]))
        .post(RESOLVE, {"cue": "S", "limit": 5}, ok([lex("S")]))
        .post(RESOLVE_LABEL, {"cue": "L", "limit": 5}, ok([lex("L")]))
        .post(RESOLVE, {"cue": "O", "limit": 5}, ok([lex("O")]))
        .post(
            QUERY,
            {"subject": "S", "label": "L", "object": "O", "limit": 1},
            ok({"total": 0, "matches": []}),
        )
        .post(CITATIONS, {"source": "a", "paragraph": 0}, cited())
        .post(CITATIONS, {"source": "b", "paragraph": 1}, cited())
    )
    run_lanes(
        script.client(),
        "c",
        case(
            cues=["c1", "c2"],
            expected_sources=[{"source": "a"}],
            expected_concepts=["x"],
            expected_labels=["y"],
            expected_associations=[{"subject": "S", "label": "L", "object": "O"}],
            expected_citations=[{"source": "a", "paragraph": 0}, {"source": "b", "paragraph": 1}],
        ),
    )
    assert script.done()


def test_context_name_is_one_encoded_segment() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return ok([])

    from pytest_taguru.run.client import TaguruClient

    client = TaguruClient(BASE, None, transport=httpx.MockTransport(handler))
    run_lanes(client, "酒/蔵", case())
    assert seen[0].url.raw_path == b"/contexts/%E9%85%92%2F%E8%94%B5/sources/search"


def test_passage_lane_strategy_is_swappable() -> None:
    script = Script()
    replaced = PassageFailed(message="custom", latency_ms=0)
    results = run_lanes(script.client(), "c", case(), passage_lane=lambda c, n, k: replaced)
    assert results.passage is replaced
    assert script.done()


# --- latency clock ---------------------------------------------------------------------------


@pytest.fixture
def ticking(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """A latency clock that advances 1.9 ms per reading; yields the readings taken."""
    readings: list[int] = []

    def now() -> int:
        readings.append(len(readings) * 1_900_000)
        return readings[-1]

    monkeypatch.setattr(clock, "monotonic_ns", now)
    yield readings


def test_latency_is_whole_ms_truncated(ticking: list[int]) -> None:
    passage = passage_of([])
    assert len(ticking) == 2
    assert passage.latency_ms == 1


def test_decode_failure_latency_stops_after_decoding(ticking: list[int]) -> None:
    cue = structural_lane.resolve_cue(
        Script().post(RESOLVE, None, ok("bad")).client(), "c", "x", "concept"
    )
    assert len(ticking) == 3
    assert cue.latency_ms == 3


def test_query_decode_failure_latency_stops_at_unwrap(ticking: list[int]) -> None:
    probe = structural_lane.run_query(
        Script().post(QUERY, None, ok({"total": -1})).client(), "c", "s", "l", "o"
    )
    assert isinstance(probe, QueryErrored)
    assert len(ticking) == 2
    assert probe.latency_ms == 1


# --- the §7.8 example, replayed --------------------------------------------------------------

EVAL_JSONL = """{"taguru_eval":1,"name":"sake retrieval cases"}
{"case_id":"brand-origin-001","query":"青嶺はどこの蔵の酒か","cues":["青嶺"],"expected_sources":[{"source":"corpus/brewery.md","paragraphs":[0],"relevance":3},{"source":"corpus/history.md"}],"expected_concepts":["青嶺酒造"],"expected_citations":[{"source":"corpus/brewery.md","paragraph":0,"section":"沿革","quote":"1897年に創業"}],"options":{"limit":3}}

{"case_id":"pairing-002","query":"青嶺に合う料理","expected_sources":[{"source":"corpus/pairing.md","relevance":2},{"source":"corpus/menu.md"}],"expected_associations":[{"subject":"青嶺","label":"合う","object":"焼き魚"}],"expected_citations":[{"source":"corpus/pairing.md","paragraph":5,"section":null}]}
"""

GOLDEN = SPEC_7_8_EVALUATION
SAKE = "/contexts/sake"
PLAN = {
    "contexts": [
        {
            "context": "sake",
            "lanes": {"bm25": {"ran": True}, "vector": {"ran": True, "floor": 0.35}},
        }
    ]
}


def without_latency(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_latency(v) for k, v in value.items() if k != "latency_ms"}
    if isinstance(value, list):
        return [without_latency(item) for item in value]
    return value


def test_spec_7_8_example_lanes(tmp_path: Path) -> None:
    from pytest_taguru.run.dataset import load_eval_set

    path = tmp_path / "eval.jsonl"
    path.write_text(EVAL_JSONL, encoding="utf-8")
    eval_set = load_eval_set(str(path))
    both = [lex("青嶺", 1.0), {**lex("青嶺酒造", 0.67), "kind": "containment"}]
    script = (
        Script()
        .post(
            f"{SAKE}/sources/search",
            default_body("青嶺はどこの蔵の酒か", 3),
            ok(
                {
                    "plan": PLAN,
                    "hits": [
                        search_hit(
                            "corpus/history.md", 2, 0.032786883, bm25=(1, 6.84), vector=(1, 0.74)
                        ),
                        search_hit(
                            "corpus/brewery.md", 0, 0.032258064, bm25=(2, 5.91), vector=(2, 0.71)
                        ),
                        search_hit("corpus/products.md", 1, 0.015873017, bm25=(3, 2.05)),
                    ],
                }
            ),
        )
        .post(f"{SAKE}/resolve", {"cue": "青嶺", "limit": 5}, ok(both))
        .post(
            f"{SAKE}/citations",
            {"source": "corpus/brewery.md", "paragraph": 0},
            ok(
                {
                    "text": "青嶺酒造は1897年に創業した蔵元である。",
                    "source": "corpus/brewery.md",
                    "section": "沿革",
                    "locator": None,
                }
            ),
        )
        .post(
            f"{SAKE}/sources/search",
            default_body("青嶺に合う料理", 10),
            ok(
                {
                    "plan": PLAN,
                    "hits": [
                        search_hit("corpus/brewery.md", 1, 0.016393442, bm25=(1, 3.12)),
                        search_hit("corpus/pairing.md", 2, 0.016129032, vector=(1, 0.66)),
                    ],
                }
            ),
        )
        .post(f"{SAKE}/resolve", {"cue": "青嶺", "limit": 5}, ok(both))
        .post(f"{SAKE}/resolve_label", {"cue": "合う", "limit": 5}, ok([lex("合う")]))
        .post(f"{SAKE}/resolve", {"cue": "焼き魚", "limit": 5}, ok([sem("焼き魚", 0.82)]))
        .post(
            f"{SAKE}/citations",
            {"source": "corpus/pairing.md", "paragraph": 5},
            error(
                404,
                "no_paragraph",
                "paragraph 5 out of range for source 'corpus/pairing.md' in context 'sake'",
            ),
        )
    )
    client = script.client()
    results = [run_lanes(client, "sake", item) for item in eval_set.cases]
    assert script.done()
    golden = read_json(GOLDEN.read_text(encoding="utf-8"))["cases"]
    for result, expected in zip(results, golden, strict=True):
        assert without_latency(written(result.passage)) == without_latency(expected["passage"])
        assert without_latency(written(result.structural)) == without_latency(
            expected["structural"]
        )
        assert result.checks is not None
        assert [without_latency(written(check)) for check in result.checks] == without_latency(
            expected["citations"]["checks"]
        )

"""Decoding of the evidence request body (assembly.md §2.2, §2.3), with property tests."""

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.core.budget import Limits
from pytest_taguru.core.wire_evidence import EvidenceRequest as WireEvidenceRequest
from pytest_taguru.server.errors import ApiError
from pytest_taguru.server.evidence.request import (
    EvidenceRequest,
    RerankRequest,
    decode_evidence_request,
)
from pytest_taguru.server.http.bodies import parse_json

POSITION = re.compile(r" at line (\d+) column (\d+)$")

json_scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.integers(10**307, 10**310),
    st.text(max_size=5),
    st.floats(allow_nan=False, allow_infinity=False),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
FIELDS = [
    "origins",
    "labels",
    "dice_floor",
    "semantic_floor",
    "resolve_limit",
    "activate_decay",
    "activate_limit",
    "text_fallback_query",
    "search_limit",
    "include_communities",
    "budget",
    "rerank",
    "unknown",
]


def test_evaluate_body_decodes() -> None:
    body = {
        "origins": ["青嶺酒造"],
        "text_fallback_query": "青嶺酒造の杜氏",
        "search_limit": 3,
        "semantic_floor": 0.4000000059604645,
        "budget": {"max_items": 3, "max_bytes": 65536, "max_tokens": 4000},
        "rerank": {"model": "bge-m3"},
    }
    request = decode_evidence_request(json.dumps(body, ensure_ascii=False))
    assert request == EvidenceRequest(
        origins=("青嶺酒造",),
        text_fallback_query="青嶺酒造の杜氏",
        search_limit=3,
        semantic_floor=0.4000000059604645,
        budget=Limits(3, 65536, 4000),
        rerank=RerankRequest("bge-m3"),
    )
    assert request.canonical_query == "青嶺酒造の杜氏"


def test_defaults_and_the_canonical_query() -> None:
    request = decode_evidence_request('{"origins": "a", "labels": null, "rerank": {}}')
    assert request.origins == ("a",) and request.labels == ()
    assert request.budget == Limits(40, 65536, 4000)
    assert request.rerank == RerankRequest(None)
    assert decode_evidence_request('{"origins": ["a", "b"]}').canonical_query == "a; b"
    assert decode_evidence_request('{"origins": [], "rerank": null}').rerank is None


def test_budget_caps_and_zero() -> None:
    request = decode_evidence_request(
        '{"origins": [], "budget": {"max_items": 5000, "max_bytes": 0, "max_tokens": null}}'
    )
    assert request.budget == Limits(1000, 0, 4000)


def test_position_counts_utf8_bytes_of_the_line() -> None:
    with pytest.raises(ApiError) as refused:
        decode_evidence_request('{"origins":"青","search_limit":"x"}')
    # 33 characters, but 青 is 3 bytes: the value ends after 35 bytes.
    assert refused.value.message.endswith("at line 1 column 35")


@given(st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=5))
def test_any_object_decodes_or_is_a_positioned_422(body: dict[str, Any]) -> None:
    text = json.dumps(body, ensure_ascii=False)
    try:
        parse_json(text.encode())  # the route reads the body first (core/serde)
        request = decode_evidence_request(text)
    except ApiError as refused:
        if refused.code == "over_limit":
            return
        # A number past the f64 range is serde's syntax error (400); every other problem 422.
        out_of_range = "number out of range at line" in refused.message
        assert refused.http_status == (400 if out_of_range else 422)
        assert refused.code == "malformed_request"
        match = POSITION.search(refused.message)
        assert match is not None, refused.message
        assert int(match.group(1)) == 1
        assert 1 <= int(match.group(2)) <= len(text.encode())
        return
    assert isinstance(request.origins, tuple)
    assert request.budget.max_items <= 1000 and request.budget.max_bytes <= 1_048_576
    # The shared client-side request model accepts whatever the server accepts.
    WireEvidenceRequest.model_validate(body)


@given(
    st.lists(st.text(max_size=8), max_size=5),
    st.none() | st.integers(0, 2**64 - 1),
    st.none() | st.floats(0, 1),
    st.booleans(),
)
def test_well_typed_bodies_always_decode(
    origins: list[str], limit: int | None, floor: float | None, communities: bool
) -> None:
    body = {
        "origins": origins,
        "search_limit": limit,
        "semantic_floor": floor,
        "include_communities": communities,
        "budget": {"max_items": limit},
    }
    request = decode_evidence_request(json.dumps(body))
    assert request.origins == tuple(origins)
    assert request.search_limit == limit
    assert request.include_communities is communities
    assert request.budget == Limits.resolve(max_items=limit)


def test_an_integer_beyond_the_f64_range_is_a_positioned_400() -> None:
    # serde classifies "number out of range" as a syntax error: axum answers 400, not 422. The
    # body reader refuses it before the shape is looked at, at the number's last digit (taguru
    # also prefixes serde_path_to_error's "dice_floor: ", which is not reproduced).
    text = '{"origins": ["a"], "dice_floor": ' + str(2**1024) + "}"
    with pytest.raises(ApiError) as refused:
        parse_json(text.encode())
    assert refused.value.http_status == 400
    assert refused.value.message == (
        "Failed to parse the request body as JSON: number out of range at line 1 column "
        f"{len(text) - 1}"
    )

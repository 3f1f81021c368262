"""recording/key.py: what a recorded answer is filed under."""

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.run.recording.key import RequestKey, canonical_body

# JSON values as request bodies hold them: text (any Unicode but lone surrogates), whole
# numbers in serde's exact range, finite floats, nesting.
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


def shuffled(value: Any, rng: random.Random) -> Any:
    """The same JSON value with every object's keys in another order."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {key: shuffled(item, rng) for key, item in items}
    if isinstance(value, list):
        return [shuffled(item, rng) for item in value]
    return value


@settings(max_examples=200, deadline=None)
@given(VALUES, st.randoms(use_true_random=False), st.sampled_from([None, 0, 1, 4]))
def test_key_order_and_white_space_do_not_matter(
    value: Any, rng: random.Random, indent: int | None
) -> None:
    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    spelled = json.dumps(shuffled(value, rng), indent=indent, ensure_ascii=indent == 4)

    assert canonical_body(spelled.encode("utf-8")) == canonical_body(compact)


NO_FLOATS = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(NO_FLOATS, NO_FLOATS)
def test_different_bodies_never_share_a_key(first: Any, second: Any) -> None:
    def key(value: Any) -> str | None:
        return canonical_body(json.dumps(value).encode("utf-8"))

    assert (key(first) == key(second)) == (
        json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    )


@settings(max_examples=100, deadline=None)
@given(NO_FLOATS)
def test_the_canonical_text_is_the_value_itself(value: Any) -> None:
    canonical = canonical_body(dumps_compact(value).encode("utf-8"))
    assert canonical is not None
    assert json.loads(canonical) == json.loads(dumps_compact(value))


def test_a_float_is_keyed_as_the_server_reads_it() -> None:
    # serde's float parser is not correctly rounded: two spellings it reads as one f64 are
    # one request to the server, so one key.
    assert canonical_body(b"[0.09090909090909091]") == canonical_body(b"[0.09090909090909093]")
    assert canonical_body(b"[0.5]") != canonical_body(b"[0.25]")


def test_a_body_keeps_its_unicode_raw_and_its_numbers_exact() -> None:
    body = '{ "query": "青嶺酒造",\n "limit": 10, "big": 18446744073709551615, "f": 0.25 }'
    assert canonical_body(body.encode("utf-8")) == (
        '{"big":18446744073709551615,"f":0.25,"limit":10,"query":"青嶺酒造"}'
    )


def test_no_body_and_an_empty_body_are_the_same_and_not_a_json_null() -> None:
    assert canonical_body(None) is None
    assert canonical_body(b"") is None
    assert canonical_body(b"null") == "null"


def test_a_body_that_is_not_json_is_keyed_by_its_text() -> None:
    assert canonical_body(b"not json {") == "not json {"


def test_a_request_key_has_the_method_the_target_with_its_query_and_the_body() -> None:
    key = RequestKey.of("get", "http://h:1/base/contexts/%E6%97%A5/sources?limit=1000&after=a", b"")
    assert key == RequestKey("GET", "/base/contexts/%E6%97%A5/sources?limit=1000&after=a", None)
    assert key.describe() == "GET /base/contexts/%E6%97%A5/sources?limit=1000&after=a"


def test_the_host_is_not_part_of_the_key() -> None:
    body = b'{"cue":"x","limit":5}'
    assert RequestKey.of("POST", "http://a:1/c", body) == RequestKey.of("POST", "https://b/c", body)


def test_a_long_body_is_cut_short_in_messages() -> None:
    key = RequestKey.of("POST", "http://h/q", json.dumps({"query": "x" * 1000}).encode())
    described = key.describe()
    assert described.startswith('POST /q {"query":"xxx')
    assert described.endswith("…") and len(described) < 400

"""``sources/search`` answers written fast and still byte for byte: the hits' own writer
(``search_hits``) against the generic ``render_json``, the hit dicts against the wire model,
and ``render_json``'s per-value float texts."""

import json
import math
import struct
from typing import Any

from app_client import client, result, sake
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.core.jsontext import Float32
from pytest_taguru.core.wire import SearchResult
from pytest_taguru.server.http.search_hits import hits_json
from pytest_taguru.server.http.transport import JsonText, render_json


def _f32(bits: int) -> Float32:
    return Float32(struct.unpack("<f", struct.pack("<I", bits))[0])


# Every finite float32 (tiny, huge, negative, zeros) plus the everyday BM25 range, repeated.
_SCORE = st.integers(0, 2**32 - 1).map(_f32).filter(math.isfinite) | st.sampled_from(
    [Float32(0.0), Float32(-0.0), _f32(0x3E934B5D), _f32(0x40081A5F)]
)
_TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ['a "quoted" \\ path', "line\nbreak\ttab\x00\x1f\x7f", "青嶺酒造\u2028\u2029", ""]
)


@st.composite
def _hits(draw: st.DrawFn) -> list[dict[str, Any]]:
    hits = []
    for rank in range(1, draw(st.integers(0, 12)) + 1):
        score = draw(_SCORE)
        hits.append(
            {
                "source": draw(_TEXT),
                "paragraph": draw(st.integers(0, 2**32 - 1)),
                "score": score,
                "text": draw(_TEXT),
                "lanes": {"bm25": {"rank": rank, "score": score}},
            }
        )
    return hits


def _hit(score: float, rank: int = 1) -> dict[str, Any]:
    score = Float32(score)
    lanes = {"bm25": {"rank": rank, "score": score}}
    return {"source": "a.md", "paragraph": 0, "score": score, "text": "t", "lanes": lanes}


@settings(max_examples=300)
@given(_hits())
def test_hits_writer_matches_the_generic_writer(hits: list[dict[str, Any]]) -> None:
    assert hits_json(hits) == render_json(hits)
    assert render_json({"hits": hits_json(hits), "n": 1.5}) == render_json({"hits": hits, "n": 1.5})


def test_hits_writer_tells_the_zeros_apart() -> None:
    written = json.loads(hits_json([_hit(0.0), _hit(-0.0, 2), _hit(0.0, 3)]))
    assert [math.copysign(1.0, hit["score"]) for hit in written] == [1.0, -1.0, 1.0]


def test_render_json_formats_each_kind_and_sign_of_a_value() -> None:
    value = 0.1
    document = [Float32(0.5), 0.5, Float32(0.0), Float32(-0.0), 0.0, -0.0, value, Float32(value)]
    assert render_json(document * 2) == (
        "[0.5,0.5,0.0,-0.0,0.0,-0.0,0.1,0.1,0.5,0.5,0.0,-0.0,0.0,-0.0,0.1,0.1]"
    )
    assert render_json([Float32(2.1578243)]) == "[2.1578243]"
    assert render_json([1e-05, 1e16]) == "[0.00001,1e+16]"


def test_json_text_is_spliced_as_written() -> None:
    spliced = JsonText('[{"a":"\\u0000 \\\\1"},0.1]')
    assert render_json({"x": spliced, "y": 0.25}) == '{"x":[{"a":"\\u0000 \\\\1"},0.1],"y":0.25}'


def test_search_hits_are_the_wire_models_dump_in_its_key_order() -> None:
    http = sake(client())
    found = result(http.post("/contexts/sake/sources/search", json={"query": "杜氏は誰の酒造"}))
    assert found["hits"]
    model = SearchResult.model_validate(found).model_dump(exclude_none=True)
    assert json.dumps(found, ensure_ascii=False) == json.dumps(model, ensure_ascii=False)

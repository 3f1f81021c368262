"""``sources/search`` hits written straight to serde's JSON text.

A deep search serves 1,000 hits; taking them through :func:`.transport.render_json`'s
generic walk (every node visited in Python, then ``json.dumps``, then the float markers
replaced) costs more than the search itself. Here each hit is one f-string in
``SearchHit``'s key order: strings go through the C escaper ``json.dumps`` itself uses with
``ensure_ascii=False``, each distinct score is formatted once. Tests hold the text to
``render_json``'s, byte for byte.
"""

from json.encoder import encode_basestring as _json_string
from typing import Any

from pytest_taguru.core.jsontext import format_f32
from pytest_taguru.server.http.transport import JsonText


def hits_json(hits: list[dict[str, Any]]) -> JsonText:
    """The hits (``SearchHit`` dumps with bm25 lanes only, scores 32-bit) as one JSON array."""
    texts: dict[float, str] = {}

    def score_text(value: float) -> str:
        # 0.0 == -0.0 and their texts differ: zeros are formatted every time.
        found = texts.get(value) if value else None
        if found is None:
            found = texts[value] = format_f32(value)
        return found

    parts = []
    for hit in hits:
        lane = hit["lanes"]["bm25"]
        parts.append(
            f'{{"source":{_json_string(hit["source"])},"paragraph":{hit["paragraph"]:d},'
            f'"score":{score_text(hit["score"])},"text":{_json_string(hit["text"])},'
            f'"lanes":{{"bm25":{{"rank":{lane["rank"]:d},"score":{score_text(lane["score"])}}}}}}}'
        )
    return JsonText("[" + ",".join(parts) + "]")

"""The request bodies the lanes send are the ones the drill-down prints (``request_bodies``)."""

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.core.jsontext import Float32, dumps_compact, to_f32
from pytest_taguru.core.limits import U64_MAX
from pytest_taguru.report.reproduce import json_body
from pytest_taguru.run.eval_models import EvalCase
from pytest_taguru.run.lanes.request_bodies import search_body

_CASES = st.builds(
    lambda query, limit, floor, tags, since: EvalCase.model_validate(
        {
            "case_id": "c",
            "query": query,
            "options": {
                "limit": limit,
                "floor": None if floor is None else to_f32(floor),
                "tags": tags,
                "since": since,
            },
        }
    ),
    st.text(min_size=1),
    st.none() | st.integers(1, 1000),
    st.none() | st.floats(0.0, 1.0),
    st.lists(st.text(max_size=4), max_size=2),
    st.none() | st.integers(0, U64_MAX),
)


@given(_CASES)
def test_the_printed_search_asks_what_the_lane_sends(case: EvalCase) -> None:
    sent: dict[str, Any] = json.loads(dumps_compact(search_body(case)))
    printed: dict[str, Any] = json.loads(json_body(search_body(case, floor_type=Float32)))
    assert list(printed) == list(sent) == [
        "query", "limit", "semantic_floor", "tags", "since", "until",
    ]
    floor = printed.pop("semantic_floor")
    assert sent.pop("semantic_floor") == (None if floor is None else to_f32(floor))
    assert printed == sent

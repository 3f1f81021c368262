"""Budget accounting: canonical JSON, bytes, token quarters, limits and admission.

Worked examples from ``assembly.md`` §1.2, §1.6, §1.7, §3.9, §4.1, §4.2 and §4.5.
"""

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.core.budget import (
    Cost,
    Limits,
    Unit,
    Usage,
    admit,
    admit_items,
    array_overhead,
    canonical_json,
    item_cost,
    measure,
    passage_item,
    quarters,
    stamp_cost,
    tokens_of,
)
from pytest_taguru.core.jsontext import Float32, to_f32
from pytest_taguru.core.wire import HitLanes, LaneRank

KURA_TEXT = "青嶺酒造は雲居県霧沢町の蔵元である。"

# The §4.1 envelope of hit 1, verbatim from the specification.
KURA_ENVELOPE = (
    '{"candidate_id":"passage\\u0000sake\\u0000docs/kura.md\\u00000","kind":"passage",'
    '"fused_rank":1,"lane_ranks":[{"lane":"passage_bm25","rank":1}],"citation_refs":[],'
    '"passage":{"source":"docs/kura.md","paragraph":0,"score":0.86304635,'
    '"text":"青嶺酒造は雲居県霧沢町の蔵元である。",'
    '"lanes":{"bm25":{"rank":1,"score":0.86304635}}}}'
)


def bm25(rank: int, score: float) -> HitLanes:
    return HitLanes(bm25=LaneRank(rank=rank, score=score))


def simulated(
    source: str, paragraph: int, score: float, text: str, lanes: HitLanes, rank: int
) -> dict[str, Any]:
    return passage_item(
        "sake",
        source=source,
        paragraph=paragraph,
        score=score,
        text=text,
        lanes=lanes,
        fused_rank=rank,
        lane_rank=rank,
    )


# --- §4.5 token estimator ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected_quarters", "expected_tokens"),
    [("abcd", 4, 1), ("日", 4, 1), ("a日", 5, 2), ("", 0, 0), ("abcde", 5, 2)],
)
def test_quarters_and_tokens(text: str, expected_quarters: int, expected_tokens: int) -> None:
    assert quarters(text) == expected_quarters
    assert tokens_of(quarters(text)) == expected_tokens


def test_a_json_string_counts_its_quotes() -> None:
    assert measure("青嶺酒造") == Cost(bytes=14, quarters=18)
    assert measure("青嶺酒造").estimated_tokens == 5


def test_a_nul_is_six_ascii_characters() -> None:
    assert measure("\x00") == Cost(bytes=8, quarters=8)  # "\u0000" plus two quotes
    assert canonical_json("a\x00b") == '"a\\u0000b"'


def test_array_overhead() -> None:
    assert [array_overhead(n) for n in range(4)] == [2, 2, 3, 4]


# --- §1.7 canonical JSON -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Float32(0.86304635), "0.86304635"),
        (Float32(0.00005), "0.00005"),
        (Float32(0.000001), "0.000001"),
        (Float32(1e-7), "1e-7"),
        (Float32(1.5e-7), "1.5e-7"),
        (Float32(1e13), "1e+13"),
        (Float32(12345678.0), "12345678.0"),
        (Float32(1.0), "1.0"),
        (Float32(-0.0), "-0.0"),
        (0.00001, "0.00001"),
        (1e-7, "1e-7"),
        (1e16, "1e+16"),
        (0.5, "0.5"),
    ],
)
def test_float_spelling(value: float, text: str) -> None:
    assert canonical_json(value) == text


def test_a_widened_f32_is_measured_in_its_32_bit_spelling() -> None:
    widened = to_f32(0.86304635)
    assert canonical_json(Float32(widened)) == "0.86304635"
    assert canonical_json(widened) == "0.8630463480949402"


def test_strings_are_raw_utf8_with_json_escapes_only() -> None:
    assert canonical_json({"k": '/"\\\t\x1f\x7f\u2028é'}) == '{"k":"/\\"\\\\\\t\\u001f\x7f\u2028é"}'


@given(st.text())
def test_string_measure_matches_compact_json(text: str) -> None:
    expected = json.dumps(text, ensure_ascii=False, separators=(",", ":"))
    assert canonical_json(text) == expected
    assert measure(text).bytes == len(expected.encode("utf-8", "surrogatepass"))


# --- §1.2 limits -------------------------------------------------------------------------


def test_limits_default_and_ceilings() -> None:
    assert Limits.resolve() == Limits(40, 65536, 4000)
    assert Limits.resolve(max_items=2) == Limits(2, 65536, 4000)
    assert Limits.resolve(max_items=5000) == Limits(1000, 65536, 4000)
    assert Limits.resolve(max_bytes=2**40) == Limits(40, 1048576, 4000)
    assert Limits.resolve(max_tokens=2**64 - 1).max_tokens == 2**64 - 1
    assert Limits.resolve(0, 0, 0) == Limits(0, 0, 0)
    assert Limits(3, 5, 7).as_json() == {"max_items": 3, "max_bytes": 5, "max_tokens": 7}


# --- §4.1 and §4.2 baseline walks --------------------------------------------------------


def test_the_spec_envelope_is_reproduced_exactly() -> None:
    item = simulated("docs/kura.md", 0, 0.86304635, KURA_TEXT, bm25(1, 0.86304635), 1)
    assert canonical_json(item) == KURA_ENVELOPE
    assert item_cost(item) == Cost(bytes=340, quarters=358)
    assert len(KURA_ENVELOPE) == 304


def max_items_example() -> list[dict[str, Any]]:
    return [
        simulated("docs/kura.md", 0, 0.86304635, KURA_TEXT, bm25(1, 0.86304635), 1),
        simulated("docs/mizu.md", 2, 0.5, "仕込み水は伏流水。", bm25(2, 0.5), 2),
        simulated("docs/kura.md", 1, 0.25, "Toji: Takase", bm25(3, 0.25), 3),
    ]


def test_worked_example_4_1_truncation_by_max_items() -> None:
    items = max_items_example()
    costs = [item_cost(item) for item in items]
    assert costs == [Cost(340, 358), Cost(299, 308), Cost(286, 286)]
    admission = admit_items(["hit1", "hit2", "hit3"], costs, Limits.resolve(max_items=2))
    assert admission.admitted == ["hit1", "hit2"]
    assert admission.omitted == ["hit3"]
    assert admission.usage == Usage(items_used=2, bytes_used=644, tokens_used=168)


def skip_and_continue_example() -> list[dict[str, Any]]:
    fused = HitLanes(bm25=LaneRank(rank=2, score=0.25), vector=LaneRank(rank=1, score=0.25))
    vector = HitLanes(vector=LaneRank(rank=2, score=0.125))
    return [
        simulated("a.md", 0, 0.5, "Toji: Takase", bm25(1, 0.5), 1),
        simulated("b.md", 3, 0.25, "x" * 400, fused, 2),
        simulated("c.md", 0, 0.125, "杜氏は高瀬である。", vector, 3),
    ]


def test_worked_example_4_2_skip_and_continue_under_max_tokens() -> None:
    items = skip_and_continue_example()
    assert [item["lane_ranks"][0]["lane"] for item in items] == [
        "passage_bm25",
        "passage_fused",
        "passage_vector",
    ]
    costs = [item_cost(item) for item in items]
    assert costs == [Cost(268, 268), Cost(692, 692), Cost(291, 300)]
    admission = admit_items(["a", "b", "c"], costs, Limits.resolve(max_tokens=200))
    assert admission.admitted == ["a", "c"]
    assert admission.omitted == ["b"]
    assert admission.usage == Usage(items_used=2, bytes_used=564, tokens_used=144)
    assert '"fused_rank":3' in canonical_json(items[2])
    assert '"vector":{"rank":2,' in canonical_json(items[2])


def test_stop_at_first_overflow_would_differ() -> None:
    """Skip-and-continue: a small hit after an oversized one is still admitted."""
    costs = [Cost(10, 10), Cost(1000, 1000), Cost(10, 10)]
    admission = admit_items([1, 2, 3], costs, Limits.resolve(max_bytes=100))
    assert admission.admitted == [1, 3]


def test_an_empty_package_is_not_zero() -> None:
    admission = admit_items(["a"], [Cost(10, 10)], Limits(0, 0, 0))
    assert admission.admitted == [] and admission.omitted == ["a"]
    assert admission.usage == Usage(items_used=0, bytes_used=4, tokens_used=1)
    assert admit([], Limits()).usage == Usage(0, 4, 1)


def test_limits_are_inclusive() -> None:
    # One item of 10 bytes: 2 + 10 + 2 = 14 bytes; 14 quarters → 4 tokens.
    assert admit_items([1], [Cost(10, 10)], Limits(1, 14, 4)).admitted == [1]
    assert admit_items([1], [Cost(10, 10)], Limits(1, 13, 4)).admitted == []
    assert admit_items([1], [Cost(10, 10)], Limits(1, 14, 3)).admitted == []


# --- §3.9 units and citations ------------------------------------------------------------


def test_a_citation_shared_by_units_is_counted_once() -> None:
    kura = ("docs/kura.md", 0)
    units = [
        Unit("A", (Cost(100, 100),), ((kura, Cost(50, 60)),)),
        Unit("B", (Cost(100, 100),), ((kura, Cost(50, 60)),)),
    ]
    usage = admit(units, Limits()).usage
    # overhead(2) + 200 + overhead(1) + 50 bytes; quarters 3 + 200 + 2 + 60 = 265 → 67.
    assert usage == Usage(items_used=2, bytes_used=255, tokens_used=67)


def test_a_group_unit_is_admitted_or_omitted_whole() -> None:
    units = [
        Unit("single", (Cost(10, 10),)),
        Unit("group", (Cost(10, 10), Cost(10, 10))),
        Unit("late", (Cost(10, 10),)),
    ]
    admission = admit(units, Limits.resolve(max_items=2))
    assert admission.admitted == ["single", "late"]
    assert admission.omitted == ["group"]


def test_tokens_are_one_ceiling_over_the_whole_text() -> None:
    costs = [Cost(1, 1), Cost(1, 1)]
    usage = admit_items([1, 2], costs, Limits()).usage
    assert sum(cost.estimated_tokens for cost in costs) == 2
    assert usage.tokens_used == tokens_of(3 + 2 + 2) == 2
    assert usage.bytes_used == 7


@given(
    st.lists(st.tuples(st.integers(0, 500), st.integers(0, 2000)), max_size=12),
    st.integers(0, 6),
    st.integers(0, 3000),
    st.integers(0, 800),
)
def test_admission_never_breaks_a_ceiling(
    sizes: list[tuple[int, int]], max_items: int, max_bytes: int, max_tokens: int
) -> None:
    costs = [Cost(size, size + extra) for size, extra in sizes]
    limits = Limits(max_items, max_bytes, max_tokens)
    admission = admit_items(list(range(len(costs))), costs, limits)
    assert sorted(admission.admitted + admission.omitted) == list(range(len(costs)))
    assert admission.admitted == sorted(admission.admitted)
    usage = admission.usage
    assert usage.items_used == len(admission.admitted)
    if admission.admitted:
        assert usage.items_used <= max_items
        assert usage.bytes_used <= max_bytes and usage.tokens_used <= max_tokens
    # Every omitted unit would have broken a ceiling at its turn, so re-admitting the admitted
    # ones alone reproduces the same usage.
    again = admit_items(admission.admitted, [costs[i] for i in admission.admitted], limits)
    assert again.usage == usage and again.omitted == []


# --- cost stamps -------------------------------------------------------------------------


def test_stamp_cost_goes_before_the_payload_and_ignores_old_stamps() -> None:
    item = max_items_example()[0]
    stamped = stamp_cost({**item, "bytes": 1, "estimated_tokens": 1})
    assert list(stamped) == [
        "candidate_id",
        "kind",
        "fused_rank",
        "lane_ranks",
        "citation_refs",
        "bytes",
        "estimated_tokens",
        "passage",
    ]
    assert (stamped["bytes"], stamped["estimated_tokens"]) == (340, 90)
    assert item_cost(stamped) == item_cost(item)


def test_payload_scores_are_measured_as_f32_but_weights_as_f64() -> None:
    plain = {
        "kind": "x",
        "passage": {"score": 0.86304635, "lanes": {"vector": {"rank": 1, "score": 0.1}}},
        "association": {"weight": 0.86304635},
        "community": {"score": 0.1, "members": [{"name": "m", "strength": 0.1}]},
    }
    expected = (
        '{"kind":"x","passage":{"score":0.86304635,"lanes":{"vector":{"rank":1,"score":0.1}}},'
        '"association":{"weight":0.86304635},'
        '"community":{"score":0.1,"members":[{"name":"m","strength":0.1}]}}'
    )
    assert item_cost(plain) == measure(json.loads(expected))
    widened = {"passage": {"score": to_f32(0.1)}}
    assert item_cost(widened) == measure({"passage": {"score": Float32(0.1)}})
    assert item_cost(widened) != measure(widened)

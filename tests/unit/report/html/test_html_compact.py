"""The island's number encodings: packed integers, scaled scores, case values, detail chunks."""

import base64
import gzip
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.report.html.compact import (
    DETAIL_CHUNK,
    NOT_APPLICABLE,
    VLQ_ALPHABET,
    StringTable,
    case_number,
    figure,
    pack_integers,
    packed_details,
    scaled_scores,
    scaled_value,
    score,
    value_scale,
)


def unpack(text: str) -> list[int]:
    """The page's decoder (``unpackIntegers`` in assets/util.js), in Python."""
    out, value, shift = [], 0, 0
    for char in text:
        digit = VLQ_ALPHABET.index(char)
        value += (digit & 31) << shift
        if digit & 32:
            shift += 5
            continue
        out.append(-(value >> 1) if value & 1 else value >> 1)
        value = shift = 0
    return out


def test_packed_integers_are_source_map_vlq() -> None:
    # Source-map VLQ: five bits a character, the lowest bit of a number its sign.
    assert pack_integers([0, 1, -1, 15, 16, 1000]) == "ACDegBw+B"
    assert pack_integers([]) == ""


@given(st.lists(st.integers(min_value=-(2**40), max_value=2**40)))
def test_packed_integers_round_trip(values: list[int]) -> None:
    assert unpack(pack_integers(values)) == values


def test_scores_share_one_exponent_per_case() -> None:
    assert scaled_scores([15.486469, 6.5, 0.0001]) == (-2, [1549, 650, 0])
    assert scaled_scores([0.032786883]) == (-5, [3279])
    assert scaled_scores([123456.0]) == (2, [1235])


def test_a_score_that_rounds_up_to_an_extra_digit_moves_the_exponent() -> None:
    assert scaled_scores([9999.7]) == (1, [1000])


def test_non_finite_and_zero_scores() -> None:
    assert scaled_scores([math.nan, math.inf]) == (0, [None, None])
    assert scaled_scores([0.0, 2.0]) == (-3, [0, 2000])
    assert scaled_scores([]) == (0, [])
    assert scaled_scores([-0.5]) == (-4, [-5000])


def test_case_values_are_scaled_by_unit() -> None:
    assert value_scale("ratio") == 10_000
    assert value_scale("ms") == value_scale("source") == 1
    assert scaled_value(0.63092975, 10_000) == 6309
    assert scaled_value(1.0, 10_000) == 10_000
    assert scaled_value(-0.0, 10_000) == 0
    assert scaled_value(None, 10_000) == NOT_APPLICABLE
    assert scaled_value(17, 1) == 17


def test_run_level_figures_keep_nine_digits() -> None:
    # Both sides of a last-bit difference between the writer and serde's reader.
    assert figure(0.9385574520455129) == figure(0.9385574520455128) == 0.938557452
    assert figure(2.0) == 2 and figure(None) is None and figure(math.inf) is None


def test_rounded_numbers_drop_a_needless_point_zero() -> None:
    assert case_number(1.0) == 1 and isinstance(case_number(1.0), int)
    assert case_number(-0.333333333) == -0.3333
    assert case_number(None) is None
    assert score(0.30000001192092896) == 0.3
    assert score(math.nan) is None


def test_details_travel_in_deterministic_gzip_chunks() -> None:
    details = [{"i": index, "t": "青嶺 </script>"} for index in range(DETAIL_CHUNK * 2 + 3)]
    chunks = packed_details(details)
    assert len(chunks) == 3
    assert packed_details(details) == chunks  # no time stamp: the same bytes every time
    inflated = [json.loads(gzip.decompress(base64.b64decode(chunk))) for chunk in chunks]
    assert [len(chunk) for chunk in inflated] == [DETAIL_CHUNK, DETAIL_CHUNK, 3]
    assert [item for chunk in inflated for item in chunk] == details
    assert packed_details([]) == []


def test_details_refuse_non_finite_numbers() -> None:
    with pytest.raises(ValueError):
        packed_details([{"x": math.nan}])


def test_string_table_indexes_in_first_use_order() -> None:
    table = StringTable()
    assert [table.ref(name) for name in ("b", "a", "b", "c")] == [0, 1, 0, 2]
    assert table.strings() == ["b", "a", "c"]

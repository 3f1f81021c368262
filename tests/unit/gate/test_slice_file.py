"""The slice thresholds file: strict, located errors; its aggregate read by the thresholds
file's own reader and rules."""

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.errors import UsageError
from pytest_taguru.gate.file import Bound, ThresholdsParseError, parse_thresholds
from pytest_taguru.gate.slice_file import (
    DEFAULT_MIN_CASES,
    check_slice_thresholds,
    load_slice_thresholds,
)

SLICES = ["history", "drinks", "misses"]


def check(document: Any, slices: list[str] = SLICES) -> Any:
    raw = document if isinstance(document, bytes) else json.dumps(document, indent=2).encode()
    return check_slice_thresholds(raw, path="st.json", slice_names=slices)


def test_a_slice_thresholds_file() -> None:
    checked = check({
        "taguru_slice_thresholds": 1,
        "slices": {
            "history": {"min_cases": 3, "aggregate": {"recall.mrr": {"min": 0.8}}},
            "drinks": {"aggregate": {"diversity.sources": {"min": 2, "max": None}}},
            "misses": {},
        },
    })  # fmt: skip
    slices = checked.file.slices
    assert list(slices) == ["history", "drinks", "misses"]
    assert slices["history"].min_cases == 3
    assert slices["history"].aggregate == {"recall.mrr": Bound(min=0.8)}
    assert slices["drinks"].min_cases == DEFAULT_MIN_CASES == 1
    assert slices["drinks"].aggregate == {"diversity.sources": Bound(min=2.0)}
    assert slices["misses"].aggregate == {}
    assert len(checked.sha256) == 64 and checked.warnings == () and checked.path == "st.json"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"slices": {}}, "st.json:1: the top level: missing field `taguru_slice_thresholds`"),
        ({"taguru_slice_thresholds": 3, "slices": {}},
         "st.json:2: taguru_slice_thresholds: must be 1, got integer `3`"),
        ({"taguru_slice_thresholds": 1, "slices": {"history": {"min_case": 3}}},
         "st.json:5: slices.history.min_case: unknown field, expected one of `min_cases`, "
         "`aggregate`"),
        ({"taguru_slice_thresholds": 1, "slices": {"history": {"min_cases": -1}}},
         "st.json:5: slices.history.min_cases: expected a whole number of cases, 0 or more, got "
         "integer `-1`"),
        ({"taguru_slice_thresholds": 1, "slices": {"history": []}},
         "st.json:4: slices.history: expected a slice's gate"),
        ({"taguru_slice_thresholds": 1, "slices": {"history": {"aggregate": {"recall.mrr": 1}}}},
         "st.json:6: invalid type: integer `1`, expected a bound ({\"min\": …, \"max\": …}, "
         "either or both, e.g. {\"min\": 0.8}) at slices.history.aggregate.recall.mrr"),
        ({"taguru_slice_thresholds": 1,
          "slices": {"history": {"aggregate": {"recall.mrr": {"min": "0.8"}}}}},
         "st.json:6: invalid type: string \"0.8\", expected f64 at "
         "slices.history.aggregate.recall.mrr.min"),
        ({"taguru_slice_thresholds": 1, "slices": {"history": {"aggregate": []}}},
         "st.json:5: invalid type: sequence, expected an object of metric name → bound at "
         "slices.history.aggregate"),
    ],
)  # fmt: skip
def test_a_parse_problem_names_file_line_and_field(document: Any, message: str) -> None:
    with pytest.raises(UsageError) as refused:
        check(document)
    assert refused.value.message.startswith(message)


def test_every_semantic_problem_is_reported_at_once_with_hints() -> None:
    with pytest.raises(UsageError) as refused:
        check({
            "taguru_slice_thresholds": 1,
            "slices": {
                "histroy": {"aggregate": {"recall.mrr": {"min": 0.8}}},
                "drinks": {"aggregate": {"citations.resolved": {"min": 0.5},
                                         "recall.ndcg": {"min": 2, "max": 1},
                                         "recall.mrr": {}}},
            },
        })  # fmt: skip
    assert refused.value.message.split("; ") == [
        "st.json:4: slices.histroy: unknown slice 'histroy'",
        "st.json:13: slices.drinks.aggregate.citations.resolved: unknown (or not per-case) "
        "metric name 'citations.resolved'",
        "st.json:20: slices.drinks.aggregate.recall.mrr: needs at least one of min/max",
        "st.json:16: slices.drinks.aggregate.recall.ndcg: min 2 must be <= max 1",
    ]
    hints = refused.value.hints
    assert hints[0] == "st.json: 'histroy' is not a slice of the run — did you mean 'history'?"
    assert hints[1].startswith("st.json: 'citations.resolved': the valid names, closest first: ")
    assert "citations.recall" in hints[1] and "citations.resolved," not in hints[1]


def test_an_unknown_slice_without_a_close_name_lists_the_slices() -> None:
    with pytest.raises(UsageError) as refused:
        check({"taguru_slice_thresholds": 1, "slices": {"zzz": {}}}, ["a", "b"])
    assert refused.value.hints == ["st.json: 'zzz' is not a slice of the run — its slices are a, b"]


def test_a_ratio_bound_outside_0_1_is_a_warning() -> None:
    checked = check({
        "taguru_slice_thresholds": 1,
        "slices": {"history": {"aggregate": {"recall.mrr": {"min": 80}}}},
    })  # fmt: skip
    assert checked.warnings == (
        "st.json: slices.history.aggregate: 'recall.mrr': min 80 is outside 0..1, the range of "
        "a ratio: it can never hold (a percentage? write 0.8)",
    )


SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3)
BOUND_JSON = st.recursive(
    SCALARS | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["min", "max", "x"]), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(bound=BOUND_JSON)
def test_a_bound_reads_as_the_thresholds_file_reads_it(bound: Any) -> None:
    """The same bound in the thresholds file's aggregate and in a slice's: both accepted with
    the same value, or both refused with the same words."""
    aggregate = json.dumps({"recall.mrr": bound})
    thresholds = f'{{"taguru_evaluate_thresholds": 1, "aggregate": {aggregate}}}'
    gate = f'{{"history": {{"aggregate": {aggregate}}}}}'
    sliced = f'{{"taguru_slice_thresholds": 1, "slices": {gate}}}'
    try:
        expected: Any = parse_thresholds(thresholds.encode()).aggregate
    except ThresholdsParseError as error:
        expected = str(error).replace(" at aggregate", " at slices.history.aggregate")
    try:
        found: Any = check(sliced.encode()).file.slices["history"].aggregate
    except UsageError as refused:
        found = refused.message.split(": ", 1)[1]
        if not isinstance(expected, str):  # a valid bound refused only by the validity rules
            assert "must be" in found or "needs at least one" in found
            return
    assert found == expected


def test_a_file_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "st.json"
    path.write_text('{"taguru_slice_thresholds": 1, "slices": {}}', encoding="utf-8")
    assert load_slice_thresholds(str(path), slice_names=[]).file.slices == {}
    with pytest.raises(UsageError, match="No such file or directory"):
        load_slice_thresholds(str(tmp_path / "nope.json"), slice_names=[])

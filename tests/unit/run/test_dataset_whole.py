"""The loader's one-pass decode against its step-by-step decode: for any line, the same case
(values and which keys were given) or the same error, in the specification's order."""

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.core.limits import U32_MAX, U64_MAX
from pytest_taguru.core.serde import read_json
from pytest_taguru.run import dataset
from pytest_taguru.run.dataset import load_eval_set
from pytest_taguru.run.eval_models import EvalCase

EXAMPLE_SUITE = Path(__file__).parents[3] / "example_suite" / "eval.jsonl"

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.sampled_from([U32_MAX + 1, U64_MAX, U64_MAX + 1, -(2**63)]),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["", " ", "\u3000", "a", "docs/a.md", "  x  "]),
)
anything = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)
texts = st.sampled_from(["", " ", "\u3000", "a", "b", "docs/a.md", " a"])


def sometimes_wrong(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly ``good``, sometimes any JSON value at all."""
    return st.integers(0, 11).flatmap(lambda n: anything if n == 0 else good)


ids = st.sampled_from(["a", "b", " a", "x", "y", "z", ""])


@st.composite
def sources(draw: st.DrawFn) -> Any:
    entry: dict[str, Any] = {"source": draw(sometimes_wrong(texts))}
    if draw(st.booleans()):
        entry["paragraphs"] = draw(sometimes_wrong(st.lists(st.integers(0, U32_MAX), max_size=2)))
    if draw(st.booleans()):
        entry["relevance"] = draw(sometimes_wrong(st.integers(0, 5)))
    if draw(st.integers(0, 9)) == 0:
        entry[draw(st.sampled_from(["paragraph", "x", "source"]))] = draw(anything)
    return entry


@st.composite
def citations(draw: st.DrawFn) -> Any:
    entry: dict[str, Any] = {"source": draw(sometimes_wrong(texts))}
    if draw(st.integers(0, 9)):
        entry["paragraph"] = draw(sometimes_wrong(st.integers(0, U32_MAX)))
    for key in ("section", "quote"):
        if draw(st.booleans()):
            entry[key] = draw(sometimes_wrong(st.none() | texts))
    return entry


@st.composite
def options(draw: st.DrawFn) -> Any:
    fields = {
        "limit": st.none() | st.integers(0, 1001),
        "floor": st.none() | st.floats(-0.5, 1.5) | st.sampled_from([0, 1, 2, -0.0, 1e39]),
        "tags": st.none() | st.lists(texts, max_size=2),
        "since": st.none() | st.integers(0, U64_MAX),
        "until": st.none() | st.integers(0, U64_MAX),
        "extra": anything,
    }
    chosen = draw(st.lists(st.sampled_from(sorted(fields)), unique=True, max_size=4))
    return {
        key: draw(sometimes_wrong(fields[key]))
        for key in chosen
        if key != "extra" or draw(st.integers(0, 4)) == 0
    }


@st.composite
def case_lines(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 30)) == 0:
        return draw(anything)
    case: dict[str, Any] = {}
    if draw(st.integers(0, 20)):
        case["case_id"] = draw(sometimes_wrong(ids))
    if draw(st.integers(0, 20)):
        case["query"] = draw(sometimes_wrong(ids))
    fields = {
        "cues": st.lists(texts, max_size=2),
        "expected_sources": st.lists(sources(), max_size=2),
        "expected_concepts": st.lists(texts, max_size=2),
        "options": options(),
        "expected_labels": st.none() | st.lists(texts, max_size=2),
        "expected_associations": st.none()
        | st.lists(
            st.fixed_dictionaries({"subject": texts, "label": texts, "object": texts}), max_size=2
        ),
        "expected_citations": st.none() | st.lists(citations(), max_size=2),
        "line": st.integers(0, 9),
        "unknown": anything,
    }
    for key in draw(st.lists(st.sampled_from(sorted(fields)), unique=True, max_size=5)):
        if key in ("line", "unknown") and draw(st.integers(0, 3)):
            continue
        case[key] = draw(sometimes_wrong(fields[key]))
    return case


def stepwise_or_error(value: Any, seen: set[str]) -> EvalCase | str:
    try:
        return dataset._read_case_stepwise(value, 7, seen)
    except dataset._LineError as error:
        return f"error: {error}"


def whole_or_error(value: Any, seen: set[str]) -> EvalCase | str:
    try:
        return dataset._read_case(value, 7, seen)
    except dataset._LineError as error:
        return f"error: {error}"


def same_case(one: EvalCase, other: EvalCase) -> bool:
    """Equal values, every nested model's given keys (``section_declared``) included."""
    return one == other and [c.section_declared for c in one.expected_citations] == [
        c.section_declared for c in other.expected_citations
    ]


@settings(max_examples=600, deadline=None)
@given(case_lines(), st.sampled_from([set(), {"a"}, {"b", " a"}]))
def test_whole_and_stepwise_decoding_agree(value: Any, seen: set[str]) -> None:
    # Through the JSON reader, as the loader reads a line.
    value = read_json(json.dumps(value), exact_wide_integers=True, objects="last_wins")
    stepwise = stepwise_or_error(value, set(seen))
    whole = whole_or_error(value, set(seen))
    if isinstance(stepwise, str) or isinstance(whole, str):
        assert whole == stepwise
    else:
        assert same_case(whole, stepwise)


def test_the_example_suite_decodes_alike() -> None:
    loaded = load_eval_set(str(EXAMPLE_SUITE))
    seen: set[str] = set()
    lines = [line for line in EXAMPLE_SUITE.read_text(encoding="utf-8").splitlines() if line]
    for case, line in zip(loaded.cases, lines[1:], strict=True):
        stepwise = dataset._read_case_stepwise(
            read_json(line, exact_wide_integers=True), case.line, seen
        )
        assert same_case(case, stepwise)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"case_id":"a","query":"q","line":3}', "not a valid eval case: unknown field `line`"),
        (
            '{"case_id":"a","query":"q","expected_labels":[" "],"expected_citations":[{}]}',
            "case 'a': expected_labels: entries must not be empty",
        ),
        ('{"case_id":"","query":"q","expected_labels":7}', "case_id must not be empty"),
        (
            '{"case_id":"a","query":"q","options":{"floor":2}}',
            "case 'a': options.floor must be 0.0..=1.0, got 2",
        ),
    ],
)
def test_errors_keep_their_order_and_words(tmp_path: Path, line: str, expected: str) -> None:
    path = tmp_path / "eval.jsonl"
    path.write_text('{"taguru_eval":1}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(dataset.UsageError) as raised:
        load_eval_set(str(path))
    assert f": line 2: {expected}" in raised.value.message

"""The one reading rule against the readers it replaced (``core/serde`` module docstring).

The three old readers (``jsontext.loads_serde`` for artifacts and server answers,
``serde.load_json`` for thresholds and compare, the eval.jsonl loader's own) were Python's
``json`` with serde's float parser and some of serde's refusals. The oracle below is that
common core with every refusal of the rule spelled out plainly; the merged reader must accept
exactly what it accepts, with the same values, in each caller's mode.
"""

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.artifact.evaluation import ArtifactError, parse_evaluation
from pytest_taguru.core.limits import I64_MIN, U64_MAX
from pytest_taguru.core.serde import SerdeError, read_json
from pytest_taguru.core.serde_numbers import parse_serde_float


class _Refused(Exception):
    pass


def _oracle(text: str, *, exact: bool, check_strings: bool) -> Any:
    """Python's json, then each refusal of the rule, one by one."""

    def integer(token: str) -> int | float:
        if token == "-0":
            return -0.0
        if len(token) > 400:  # past the f64 range however it reads (and past int()'s limit)
            raise _Refused("number out of range")
        value = int(token)
        if I64_MIN <= value <= U64_MAX:
            return value
        try:
            wide = parse_serde_float(token)
        except ValueError:
            raise _Refused("number out of range") from None
        return value if exact else wide

    def decimal(token: str) -> float:
        try:
            return parse_serde_float(token)
        except ValueError:
            raise _Refused("number out of range") from None

    def constant(name: str) -> Any:
        raise _Refused(name)

    try:
        value = json.loads(text, parse_int=integer, parse_float=decimal, parse_constant=constant)
    except (json.JSONDecodeError, RecursionError) as error:
        raise _Refused(str(error)) from None
    if _depth(value) > 127:
        raise _Refused("recursion limit exceeded")
    if check_strings and any(_lone(string) for string in _strings(text)):
        raise _Refused("lone surrogate")
    return value


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    return 0


def _strings(text: str) -> list[str]:
    """Every string of a valid document, keys and overwritten values included."""
    found: list[str] = []
    pending: list[Any] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        found.extend(key for key, _ in items)
        pending.extend(value for _, value in items)  # objects among them did this already
        return dict(items)

    pending.append(json.loads(text, object_pairs_hook=pairs))
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, list):
            pending += item
    return found


def _lone(string: str) -> bool:
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in string)


def _typed(value: Any) -> Any:
    """A value with its number types and float bits, to compare exactly."""
    if isinstance(value, dict):
        return ("map", sorted((key, _typed(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("seq", [_typed(item) for item in value])
    if isinstance(value, float):
        return ("f64", value.hex() if math.isfinite(value) else repr(value))
    return (type(value).__name__, value)


# --- documents as text, with what the old readers disagreed on -------------------------------

_NUMBER_TOKENS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(
        [str(U64_MAX), str(U64_MAX + 1), str(I64_MIN), str(I64_MIN - 1), "-0", "0", "-0.0",
         "1" + "0" * 308, "1" + "0" * 309, "-" + "9" * 400, "1e400", "-1e400", "1e-400",
         "0.09090909090909091", "1.5e308", "NaN", "Infinity", "-Infinity"]
    ),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
_STRING_TOKENS = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=6).map(
        lambda text: json.dumps(text, ensure_ascii=False)
    ),
    st.sampled_from(['"\\ud800"', '"a\\udfff"', '"\\ud83d\\ude00"', '"\\\\ud800"', '"é"']),
)


def _containers(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    keys = st.sampled_from(['"a"', '"b"', '"\\udc00"', '"é"'])
    arrays = st.lists(inner, max_size=4).map(lambda items: "[" + ",".join(items) + "]")
    objects = st.lists(st.tuples(keys, inner), max_size=4).map(
        lambda pairs: "{" + ",".join(f"{key}:{value}" for key, value in pairs) + "}"
    )
    return arrays | objects


_DOCUMENTS = st.recursive(
    _NUMBER_TOKENS | _STRING_TOKENS | st.sampled_from(["true", "false", "null"]),
    _containers,
    max_leaves=12,
)
_DEEP = st.integers(120, 135).map(lambda depth: "[" * depth + "1" + "]" * depth)
_BROKEN = st.tuples(_DOCUMENTS, st.integers(0, 40), st.sampled_from(["", ",", "}", "]", ":", "x"]))


def _texts() -> st.SearchStrategy[str]:
    broken = _BROKEN.map(lambda cut: cut[0][: cut[1]] + cut[2])
    return _DOCUMENTS | _DEEP | broken | _DOCUMENTS.map(lambda text: f" \n{text}\t")


MODES = [
    pytest.param(True, True, id="eval.jsonl, artifact, server answers (exact wide integers)"),
    pytest.param(False, True, id="thresholds file (serde's f64 for wide integers)"),
    pytest.param(False, False, id="compare's view (strings checked where read)"),
]


@pytest.mark.parametrize(("exact", "check_strings"), MODES)
@settings(max_examples=400)
@given(text=_texts())
def test_the_reader_accepts_what_the_rule_accepts_with_the_same_values(
    exact: bool, check_strings: bool, text: str
) -> None:
    try:
        expected = _oracle(text, exact=exact, check_strings=check_strings)
    except _Refused:
        with pytest.raises(SerdeError):
            read_json(text, exact_wide_integers=exact, check_strings=check_strings)
        return
    read = read_json(text, exact_wide_integers=exact, check_strings=check_strings)
    assert _typed(read) == _typed(expected)


def test_deep_answers_and_artifacts_are_refused_not_crashed() -> None:
    # The old artifact/answer reader let Python's RecursionError escape past ~1000 levels.
    deep = "[" * 5000 + "]" * 5000
    with pytest.raises(SerdeError, match=r"^recursion limit exceeded at line 1 column 128$"):
        read_json(deep, exact_wide_integers=True)
    with pytest.raises(ArtifactError, match=r"not JSON: recursion limit exceeded at line 1 co"):
        parse_evaluation('{"taguru_evaluation": 1, "x": ' + deep + "}")


def test_an_artifact_in_bytes_is_utf8() -> None:
    assert parse_evaluation(b'{"taguru_evaluation": 1}').taguru_evaluation == 1
    with pytest.raises(ArtifactError, match="not JSON: 'utf-8' codec can't decode"):
        parse_evaluation(b'{"taguru_evaluation": 1, "x": "\xff"}')
    with pytest.raises(ArtifactError, match=r"not JSON: expected value at line 1 column 1$"):
        parse_evaluation('\ufeff{"taguru_evaluation": 1}'.encode())

"""The streamed artifact is the old renderer's text, byte for byte."""

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from old_renderer import old_render
from synthetic_run import synthetic_run

from pytest_taguru.artifact.case import CaseBlock, HitLocator, PassageSearched
from pytest_taguru.artifact.evaluation import parse_evaluation
from pytest_taguru.artifact.writing import (
    CASE_PAD,
    case_text,
    render,
    write_evaluation,
    written_members,
)
from pytest_taguru.core import atomic_file
from pytest_taguru.core.jsontext import Float32, dumps_pretty, write_pretty


@pytest.mark.parametrize("block", [1 << 16, 7, 1])
def test_streamed_file_is_the_old_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(atomic_file._Spool, "BLOCK", block)  # flushes at every size
    evaluation = synthetic_run(300).evaluation
    path = tmp_path / "evaluation.json"
    write_evaluation(path, evaluation)
    expected = old_render(evaluation)
    assert render(evaluation) == expected
    assert path.read_bytes() == expected.encode("utf-8")


def test_the_golden_artifact_is_unchanged() -> None:
    golden = Path(__file__).parents[2] / "golden" / "spec_7_8_evaluation.json"
    evaluation = parse_evaluation(golden.read_bytes())
    assert render(evaluation) == old_render(evaluation)


scores = st.floats(width=32) | st.sampled_from([math.inf, -math.inf, math.nan, -0.0])
texts = st.text(max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(texts, st.integers(0, 2**32 - 1), scores), max_size=4), texts)
def test_any_hits_are_written_as_before(hits: list[tuple[str, int, float]], query: str) -> None:
    passage = PassageSearched(
        hits=[HitLocator(source=s, paragraph=p, score=score, text="x") for s, p, score in hits]
    )
    block = CaseBlock(case_id=query, query=query, passage=passage, cues=[query])
    assert render_block(block) == old_render(block)


def render_block(block: CaseBlock) -> str:
    pieces: list[str] = []
    write_pretty(block, pieces.append, members=written_members)
    return "".join(pieces)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | texts,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
        max_leaves=12,
    )
)
def test_plain_data_is_written_as_before(value: object) -> None:
    assert dumps_pretty(value) == old_render(value)
    if isinstance(value, float):
        assert dumps_pretty(Float32(value)) == old_render(Float32(value))


def old_case_text(block: CaseBlock) -> str:
    """The old renderer's text of a case block, at its place in ``cases``."""
    return old_render(block).replace("\n", "\n" + CASE_PAD)


def test_case_texts_are_the_old_text() -> None:
    golden = Path(__file__).parents[2] / "golden" / "spec_7_8_evaluation.json"
    cases = [*synthetic_run(300).evaluation.cases, *parse_evaluation(golden.read_bytes()).cases]
    for block in cases:
        assert case_text(block) == old_case_text(block), block.case_id


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(texts, st.integers(0, 2**32 - 1), scores), max_size=4), texts)
def test_any_case_text_is_written_as_before(hits: list[tuple[str, int, float]], query: str) -> None:
    passage = PassageSearched(
        hits=[HitLocator(source=s, paragraph=p, score=score, text="x") for s, p, score in hits]
    )
    block = CaseBlock(case_id=query, query=query, passage=passage, cues=[query], retries=3)
    assert case_text(block) == old_case_text(block)

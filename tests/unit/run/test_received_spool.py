"""The controller's spool of received cases: places survive interleaved reads and writes."""

from pytest_taguru.artifact.case import (
    CaseBlock,
    PassageSearched,
    Recall,
    case_summary,
    dump_case_block,
)
from pytest_taguru.artifact.writing import case_text
from pytest_taguru.run.received import CaseTexts, ReceivedBlocks


def texts(case_id: str, query: str) -> CaseTexts:
    recall = Recall(recall_at_k=1.0, mrr=1.0, ndcg=1.0, expected_total=1, matched=1)
    block = CaseBlock(case_id=case_id, query=query, passage=PassageSearched(), recall=recall)
    return CaseTexts(dump_case_block(case_summary(block)), case_text(block))


def test_cases_read_back_exactly_between_later_writes() -> None:
    received = ReceivedBlocks()
    try:
        first, second, third = texts("a", "酒造"), texts("b", "米" * 5000), texts("c", "水")
        received.add(first)
        received.add(second)
        assert received.text("a") == first.text  # a read between writes ...
        received.add(third)  # ... must not make the next case overwrite the second
        assert [received.text(case) for case in "abc"] == [first.text, second.text, third.text]
        assert received.summary("b").query == "米" * 5000
        assert received["c"].query == "水"
        assert list(received) == ["a", "b", "c"]
    finally:
        received.close()


def test_a_case_sent_again_replaces_the_first_copy() -> None:
    received = ReceivedBlocks()
    try:
        received.add(texts("a", "old"))
        received.add(texts("a", "new"))
        assert len(received) == 1
        assert received.summary("a").query == "new"
    finally:
        received.close()

"""The label queue (``authoring.label_queue``): which hits it holds, in which order, its text,
and the served texts a recording adds (``authoring.recorded_text``)."""

import json
from pathlib import Path

import pytest

from pytest_taguru.artifact.case import CaseBlock, HitLocator, PassageFailed, PassageSearched
from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.authoring.label_queue import SavedRun, build_queue, file_identity
from pytest_taguru.authoring.recorded_text import recorded_texts
from pytest_taguru.errors import UsageError
from pytest_taguru.run.dataset import parse_eval_set

EVAL = "\n".join(
    [
        '{"taguru_eval":1}',
        '{"case_id":"ranked","query":"q1","expected_sources":[{"source":"a","relevance":1}]}',
        '{"case_id":"negative","query":"q2","expected_sources":[{"source":"n","relevance":0}]}',
        '{"case_id":"structural","query":"q3","expected_concepts":["c"]}',
    ]
)
EVAL_SET = parse_eval_set(EVAL, "eval.jsonl")
IDENTITY = file_identity("eval.jsonl", EVAL)


def block(case_id: str, *locators: tuple[str, int]) -> CaseBlock:
    hits = [HitLocator(source=s, paragraph=p, score=1.0) for s, p in locators]
    return CaseBlock(case_id=case_id, query="q", passage=PassageSearched(hits=hits))


def run(path: str, *blocks: CaseBlock) -> SavedRun:
    return SavedRun(path, Evaluation(cases=list(blocks)))


def test_the_queue_holds_unjudged_hits_ranked_by_their_swing() -> None:
    # ranked: a at rank 3 (MRR 1/3, nDCG 1/2); x at rank 1 can raise both, y at rank 2 less.
    # negative: no graded entry, so its unjudged z counts from zero and comes first.
    # structural: no expected_sources, no labels to grow: not queued.
    queue = build_queue(
        EVAL_SET,
        IDENTITY,
        [
            run(
                "r.json",
                block("ranked", ("x", 0), ("y", 0), ("a", 5)),
                block("negative", ("n", 1), ("z", 2)),
                block("structural", ("q", 0)),
            )
        ],
    )
    assert [(h.case_id, h.source, h.rank) for h in queue.hits] == [
        ("negative", "z", 2),
        ("ranked", "x", 1),
        ("ranked", "y", 2),
    ]
    priorities = [h.priority or 0.0 for h in queue.hits]
    assert priorities == sorted(priorities, reverse=True) and priorities[-1] > 0
    assert queue.notes == ()
    assert queue.summary() == "3 unjudged hit(s) in 2 case(s) of 1 run(s)"


def test_a_hit_seen_in_several_runs_is_queued_once_from_the_run_where_it_matters_most() -> None:
    low = run("low.json", block("ranked", ("a", 0), ("x", 0)))  # x below a perfect answer
    high = run("high.json", block("ranked", ("x", 0), ("a", 0)))  # x above it
    queue = build_queue(EVAL_SET, IDENTITY, [low, high])
    assert [(h.source, h.rank, h.artifact) for h in queue.hits] == [("x", 1, "high.json")]
    assert queue.header.artifacts == ["low.json", "high.json"]


def test_cases_the_eval_set_lacks_are_noted_and_failed_searches_skipped() -> None:
    failed = CaseBlock(case_id="ranked", query="q", passage=PassageFailed(message="boom"))
    queue = build_queue(EVAL_SET, IDENTITY, [run("r.json", failed, block("gone", ("x", 0)))])
    assert queue.hits == ()
    assert queue.notes == ("r.json: case 'gone' is not in eval.jsonl: skipped",)


def test_the_queue_text_is_a_versioned_header_then_one_line_per_hit() -> None:
    queue = build_queue(EVAL_SET, IDENTITY, [run("r.json", block("ranked", ("x", 3)))])
    header, line, end = queue.text().split("\n")
    assert end == ""
    assert json.loads(header) == {
        "taguru_label_queue": 1,
        "eval": {"path": "eval.jsonl", "sha256": IDENTITY.sha256},
        "artifacts": ["r.json"],
        "hits": 1,
    }
    record = json.loads(line)
    assert list(record) == [
        "case_id", "query", "rank", "source", "paragraph", "priority", "artifact", "relevance"
    ]  # fmt: skip
    assert record["query"] == "q1" and record["relevance"] is None
    # recall 0 → 1/2 and MRR 0 → 1 are possible; nDCG 0 → 3/(3 + 1/log2 3) = 0.8262
    assert record["priority"] == pytest.approx(0.5 + 1 + 0.8262346571285599)


# --- served texts from a recording -------------------------------------------------------------


def search_answer(*hits: tuple[str, int, str]) -> str:
    result = {
        "plan": {"contexts": []},
        "hits": [
            {"source": s, "paragraph": p, "score": 1.0, "text": t, "lanes": {}} for s, p, t in hits
        ],
    }
    return json.dumps({"result": result})


def write_case(directory: Path, name: str, exchanges: list[dict[str, object]]) -> None:
    cases = directory / "cases"
    cases.mkdir(parents=True, exist_ok=True)
    run_key = {
        "server": {"url": "http://127.0.0.1:1"},
        "context": "mini",
        "revision": {"graph": 1, "passages": 1, "config": 1},
    }
    document = {
        "taguru_recording": 1,
        "kind": "case",
        "run": run_key,
        "case_id": name,
        "exchanges": exchanges,
    }
    (cases / f"{name}.json").write_text(json.dumps(document), encoding="utf-8")


def test_texts_come_from_the_recorded_search_answers(tmp_path: Path) -> None:
    write_case(
        tmp_path,
        "one",
        [
            {
                "method": "POST",
                "target": "/contexts/mini/sources/search",
                "body": "{}",
                "answers": [
                    {"status": 503, "body": "busy"},
                    {"status": 200, "body": search_answer(("x", 3, "served text"))},
                ],
            },
            {
                "method": "POST",
                "target": "/contexts/mini/citations",
                "answers": [{"status": 200, "body": search_answer(("y", 0, "not a hit"))}],
            },
        ],
    )
    write_case(
        tmp_path, "two", [{"method": "GET", "target": "/health", "answers": [{"failure": "x"}]}]
    )
    assert recorded_texts(str(tmp_path)) == {("x", 3): "served text"}
    texts = recorded_texts(str(tmp_path))
    queue = build_queue(EVAL_SET, IDENTITY, [run("r.json", block("ranked", ("x", 3)))], texts)
    assert [hit.text for hit in queue.hits] == ["served text"]
    assert '"text":"served text","relevance":null' in queue.text()


def test_a_folder_that_is_not_a_recording_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"not a recording \(no cases/ folder\)"):
        recorded_texts(str(tmp_path))
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "x.json").write_text('{"exchanges": 3}', encoding="utf-8")
    with pytest.raises(UsageError, match=r"not a recording file: .*x.json: "):
        recorded_texts(str(tmp_path))
    (tmp_path / "cases" / "x.json").write_text("[" * 300, encoding="utf-8")
    with pytest.raises(UsageError, match="recursion limit exceeded"):
        recorded_texts(str(tmp_path))

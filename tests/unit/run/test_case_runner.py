"""The per-process case runner's display of scores and the case block's trip to the controller."""

import io
import math
from pathlib import Path

from pytest_taguru.artifact.case import CaseBlock, HitLocator, PassageSearched, Recall
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.core.jsontext import dumps_pretty
from pytest_taguru.core.wire import ContextPlan, HitLanes, LanePlan, LaneRank, PlanLanes
from pytest_taguru.run.case_runner import CaseRunner, scalar_scores
from pytest_taguru.run.controller import RunController
from pytest_taguru.run.dataset import load_eval_set
from pytest_taguru.run.settings import Settings


def render_block(block: CaseBlock) -> str:
    return dumps_pretty(to_jsonable(block))


def make_controller(tmp_path: Path) -> RunController:
    eval_path = tmp_path / "eval.jsonl"
    eval_path.write_text('{"taguru_eval":1}\n{"case_id":"c","query":"q"}\n', encoding="utf-8")
    settings = Settings(
        eval_path=str(eval_path), context="ctx", base_url="http://h", masked_url="http://h"
    )
    return RunController(settings, load_eval_set(str(eval_path)), None, stderr=io.StringIO())


def unmatched_block() -> CaseBlock:
    recall = Recall(recall_at_k=0.0, mrr=0.0, ndcg=-0.0, expected_total=1, matched=0)
    return CaseBlock(case_id="c", query="q", passage=PassageSearched(), recall=recall)


def test_scores_show_a_negative_zero_as_zero() -> None:
    block = unmatched_block()

    assert all(math.copysign(1.0, value) == 1.0 for _, value in scalar_scores(block))
    assert CaseRunner.status_text(block) == (
        "recall.recall_at_k 0.000, recall.mrr 0.000, recall.ndcg 0.000"
    )


def test_a_block_with_out_of_range_f32_scores_reaches_the_controller_unchanged(
    tmp_path: Path,
) -> None:
    # A server score beyond the 32-bit range decodes to infinity and is written as null
    # (evaluate-run.md §7.1); on its way to the controller it must neither break the case
    # nor turn a written-null plan floor into an absent one.
    lanes = HitLanes(bm25=LaneRank(rank=1, score=math.inf), vector=LaneRank(rank=2, score=0.5))
    plan = ContextPlan(
        context="ctx",
        lanes=PlanLanes(bm25=LanePlan(ran=True), vector=LanePlan(ran=True, floor=math.inf)),
    )
    block = CaseBlock(
        case_id="c",
        query="q",
        passage=PassageSearched(
            plan=plan,
            hits=[HitLocator(source="a", paragraph=0, score=-math.inf, lanes=lanes)],
            latency_ms=3,
        ),
        recall=Recall(recall_at_k=0.0, mrr=0.0, ndcg=-0.0, expected_total=1, matched=0),
    )
    controller = make_controller(tmp_path)

    controller.record_case(CaseRunner.transport(block))

    received = controller.blocks["c"]
    assert render_block(received) == render_block(block)
    assert '"floor": null' in render_block(received)
    assert '"ndcg": -0.0' in render_block(received)

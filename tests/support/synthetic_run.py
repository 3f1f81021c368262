"""A synthetic run of any size, built through the plugin's own scoring: eval cases, lane results
with plausible hits, the case blocks ``build_case_block`` makes of them, the 31 metrics and a
gate. For the report's size check (100,000 cases), its benchmark and its browser tests.

Every case searches (limit 10, ten hits with both lanes' ranks, from a pool of 2,000 sources);
one in ten also declares concepts, labels and an association, one in eight a citation (the
profile of a large generated eval set); one in eight misses its graded source, and a
case-scoped ``recall.recall_at_k`` bound of 0.5 makes the misses fail. ``drift`` shifts which
cases miss, for a second run to compare against.
"""

import json
import random
from dataclasses import dataclass

from pytest_taguru.artifact.case import (
    AssociationProbe,
    CaseBlock,
    CheckResolved,
    CheckUnresolved,
    CitationCheck,
    CueResolution,
    HitLocator,
    PassageFailed,
    PassageSearched,
    PositionAmbiguous,
    PositionResolved,
    QueryQueried,
    QuoteCheck,
    SectionMatched,
    Structural,
)
from pytest_taguru.artifact.evaluation import (
    ARTIFACT_VERSION,
    Corpus,
    EvalInput,
    Evaluation,
    Inputs,
    RevisionRecord,
)
from pytest_taguru.core.jsontext import to_f32
from pytest_taguru.core.wire import ContextPlan, HitLanes, LanePlan, LaneRank, PlanLanes
from pytest_taguru.gate.thresholds import check_thresholds, evaluate_gate
from pytest_taguru.run.eval_models import EvalCase, EvalHeader, EvalSet
from pytest_taguru.score.case import LaneResults, build_case_block
from pytest_taguru.score.metrics import build_metrics, definitions

WORDS = [
    "rice", "koji", "yeast", "water", "brewing", "press", "label", "tank", "batch", "season",
    "cellar", "polish", "ratio", "aroma", "acidity", "pasteurize", "storage", "shipping",
    "price", "award", "toji", "history", "festival", "pairing", "warm", "cold",
]  # fmt: skip
SOURCES = [f"docs/{topic}/{number:04d}.md" for topic in WORDS[:20] for number in range(100)]
PLAN = ContextPlan(
    context="synthetic",
    lanes=PlanLanes(bm25=LanePlan(ran=True), vector=LanePlan(ran=True, floor=to_f32(0.3))),
)
THRESHOLDS = {
    "taguru_evaluate_thresholds": 1,
    "aggregate": {"recall.recall_at_k": {"min": 0.8}, "recall.mrr": {"min": 0.6}},
    "cases": {"default": {"recall.recall_at_k": {"min": 0.5}}},
}


@dataclass(frozen=True)
class SyntheticRun:
    evaluation: Evaluation
    eval_set: EvalSet


def _hits(rng: random.Random, expected: str, paragraph: int, hit: bool) -> list[HitLocator]:
    sources = rng.sample(SOURCES, 10)
    slot = rng.randrange(4)  # drawn either way: a miss must not change the cases after it
    if hit:
        sources[slot] = expected
    score = rng.uniform(8.0, 20.0)
    hits = []
    for rank, source in enumerate(sources, start=1):
        score *= rng.uniform(0.75, 0.97)
        value = to_f32(score)
        lanes = HitLanes(
            bm25=LaneRank(rank=rank, score=value),
            vector=LaneRank(rank=rng.randint(1, 40), score=to_f32(rng.uniform(0.3, 0.9))),
        )
        drawn = rng.randrange(30)
        at = paragraph if source == expected else drawn
        hits.append(HitLocator(source=source, paragraph=at, score=value, lanes=lanes))
    return hits


def _structural(rng: random.Random, concept: str, label: str) -> Structural:
    resolved = PositionResolved(name=concept, tier="lexical", latency_ms=1)
    pinned = rng.random() < 0.8
    return Structural(
        cues=[
            CueResolution(
                cue=concept, kind="concept", resolved_names=[concept], tier="lexical", latency_ms=1
            ),
            CueResolution(
                cue=concept, kind="label", resolved_names=[label] if pinned else [], latency_ms=1
            ),
        ],
        associations=[
            AssociationProbe(
                subject_cue=concept,
                label_cue=label,
                object_cue="Oslo",
                subject=resolved,
                label=PositionResolved(name=label, tier="lexical", latency_ms=1)
                if pinned
                else PositionAmbiguous(
                    tier="lexical", candidates=[label, label + "s"], latency_ms=1
                ),
                object=PositionResolved(name="Oslo", tier="exact", latency_ms=0),
                query=QueryQueried(total=1, matches=1, latency_ms=2) if pinned else None,
            )
        ],
    )


def _check(rng: random.Random, source: str, paragraph: int, served: bool) -> CitationCheck:
    if rng.random() < 0.1:
        return CheckUnresolved(
            source=source,
            paragraph=paragraph + 40,
            served=False,
            code="no_paragraph",
            message="paragraph out of range",
            latency_ms=1,
        )
    return CheckResolved(
        source=source,
        paragraph=paragraph,
        served=served,
        section=SectionMatched(expected="Overview"),
        quote=QuoteCheck(declared="ten crowns", matched=True),
        latency_ms=1,
    )


def _case(rng: random.Random, index: int, drift: int) -> tuple[EvalCase, CaseBlock]:
    words = rng.sample(WORDS, rng.randint(5, 8))
    expected, paragraph = rng.choice(SOURCES), rng.randrange(30)
    structural = index % 10 == 0
    cited = index % 8 == 1
    case = EvalCase.model_validate(
        {
            "case_id": f"case-{index:06d}",
            "query": " ".join(words),
            "expected_sources": [{"source": expected, "paragraphs": [paragraph], "relevance": 2}],
            "expected_concepts": [words[0]] if structural else [],
            "expected_labels": [words[1]] if structural else [],
            "expected_associations": (
                [{"subject": words[0], "label": words[1], "object": "Oslo"}] if structural else []
            ),
            "expected_citations": [{"source": expected, "paragraph": paragraph}] if cited else [],
        }
    ).model_copy(update={"line": index + 2})
    hit = (index + drift) % 8 != 0
    latency = rng.randint(2, 40)
    passage = (
        PassageFailed(message="POST sources/search: timed out", latency_ms=latency)
        if index % 997 == 0
        else PassageSearched(
            plan=PLAN, hits=_hits(rng, expected, paragraph, hit), latency_ms=latency
        )
    )
    lanes = LaneResults(
        passage=passage,
        structural=_structural(rng, words[0], words[1]) if structural else None,
        checks=[_check(rng, expected, paragraph, hit)] if cited else None,
    )
    return case, build_case_block(case, lanes)


def _renamed(case: EvalCase, block: CaseBlock, index: int) -> tuple[EvalCase, CaseBlock]:
    case_id = f"case-{index:06d}"
    return (
        case.model_copy(update={"case_id": case_id, "line": index + 2}),
        block.model_copy(update={"case_id": case_id}),
    )


def synthetic_run(
    cases: int, *, seed: int = 7, drift: int = 0, distinct: int = 5000
) -> SyntheticRun:
    """A gated run of ``cases`` cases and its eval set (``synthetic.jsonl``).

    At most ``distinct`` cases are built through the scoring (half a millisecond each); the
    rest repeat them under their own case ids and lines, so a 100,000-case run takes seconds.
    """
    rng = random.Random(seed)
    built = [_case(rng, index, drift) for index in range(min(cases, distinct))]
    built += [_renamed(*built[index % distinct], index) for index in range(len(built), cases)]
    eval_cases = [case for case, _ in built]
    blocks = [block for _, block in built]
    thresholds = check_thresholds(
        json.dumps(THRESHOLDS).encode(),
        path="thresholds.json",
        metric_names=definitions().keys(),
        case_ids=[case.case_id for case in eval_cases],
    )
    evaluation = Evaluation(
        taguru_evaluation=ARTIFACT_VERSION,
        generated_at="2026-01-02T03:04:05Z",
        inputs=Inputs(
            eval=EvalInput(path="synthetic.jsonl", name="synthetic", cases=cases),
            context="synthetic",
            url="http://127.0.0.1:8248",
        ),
        corpus=Corpus(
            revision_before=RevisionRecord(graph=4, passages=9, config=1),
            revision_after=RevisionRecord(graph=4, passages=9, config=1),
            stable=True,
            sources_count=len(SOURCES),
        ),
        definitions=definitions(),
        cases=blocks,
        metrics=build_metrics(blocks),
    )
    gate = evaluate_gate(thresholds, evaluation)
    header = EvalHeader(taguru_eval=1, name="synthetic")
    return SyntheticRun(
        evaluation.model_copy(update={"thresholds": gate.to_block()}),
        EvalSet(path="synthetic.jsonl", header=header, cases=eval_cases),
    )

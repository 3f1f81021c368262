"""The label queue: the unjudged hits of saved runs, most telling first, in a versioned JSONL
of our own that a labeller fills in and ``label-merge`` folds back into the eval set.

A hit is unjudged when no ``expected_sources`` entry of its case (any relevance, 0 included)
satisfies it — judged against the eval set given now, so labels merged since the run count.
Each distinct (case, source, paragraph) is queued once, from the run where it matters most,
ranked by :func:`~pytest_taguru.score.label_coverage.label_swing`: how far that one label could
move its case's recall@k, MRR and nDCG (a rank discount is built into MRR's and nDCG's share).

The file: a header line ``{"taguru_label_queue": 1, "eval": {"path", "sha256"}, "artifacts":
[...], "hits": N}``, then one line per hit ``{"case_id", "query", "rank", "source",
"paragraph", "priority", "artifact", "text"?, "relevance": null}``: ``rank`` 1-based in that
run's hits, ``text`` only with a recording and ``--with-text`` (the queue is then corpus
data). The labeller sets ``relevance`` to 0–3 (0: judged not relevant) or leaves it null.
"""

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.core.limits import U8, U32, U64
from pytest_taguru.run.eval_models import EvalSet
from pytest_taguru.score.case import judgements, score_recall, searched_hits
from pytest_taguru.score.label_coverage import label_swing

QUEUE_VERSION = 1
"""The ``taguru_label_queue`` stamp written, and the highest version read."""

_OURS = ConfigDict(strict=True, extra="forbid", frozen=True)


class QueueEval(BaseModel):
    """The eval set a queue was exported against: its path as given and its bytes' sha256."""

    model_config = _OURS

    path: str
    sha256: str


class QueueHeader(BaseModel):
    model_config = _OURS

    taguru_label_queue: U64
    eval: QueueEval | None = None
    artifacts: list[str] = []
    hits: U64 | None = None


class QueueLine(BaseModel):
    """One queued hit. Only ``case_id``, ``source``, ``paragraph`` and ``relevance`` (which
    may be null: not labelled) are needed to merge; the rest helps the labeller."""

    model_config = _OURS

    case_id: str
    query: str | None = None
    rank: U32 | None = None
    source: str
    paragraph: U32
    priority: float | None = None
    artifact: str | None = None
    text: str | None = None
    relevance: U8 | None


@dataclass(frozen=True)
class SavedRun:
    """An artifact read for the export: the path as typed and its contents."""

    path: str
    evaluation: Evaluation


@dataclass(frozen=True)
class Queue:
    """The export: its hits in queue order, and what was skipped on the way."""

    header: QueueHeader
    hits: tuple[QueueLine, ...]
    notes: tuple[str, ...]

    def text(self) -> str:
        lines: list[dict[str, Any]] = [self.header.model_dump(exclude_none=True)]
        lines += [
            {**hit.model_dump(exclude_none=True), "relevance": hit.relevance} for hit in self.hits
        ]
        return "".join(dumps_compact(line) + "\n" for line in lines)

    def summary(self) -> str:
        cases = len({hit.case_id for hit in self.hits})
        runs = len(self.header.artifacts)
        return f"{len(self.hits)} unjudged hit(s) in {cases} case(s) of {runs} run(s)"


def file_identity(path: str, text: str) -> QueueEval:
    return QueueEval(path=path, sha256=hashlib.sha256(text.encode("utf-8")).hexdigest())


def _queued(run: SavedRun, eval_set: EvalSet, notes: list[str]) -> Iterable[QueueLine]:
    """Every unjudged locator of one run, with its priority."""
    cases = {case.case_id: case for case in eval_set.cases}
    for block in run.evaluation.cases:
        hits = searched_hits(block.passage)
        case = cases.get(block.case_id)
        if case is None:
            notes.append(f"{run.path}: case '{block.case_id}' is not in {eval_set.path}: skipped")
            continue
        judged = None if hits is None else judgements(hits, case.expected_sources)
        if hits is None or judged is None:
            continue
        official = score_recall(hits, case.expected_sources)
        for index, hit in enumerate(judged.unjudged):
            yield QueueLine(
                case_id=case.case_id,
                query=case.query,
                rank=hit.rank,
                source=hit.source,
                paragraph=hit.paragraph,
                priority=label_swing(judged, official, index),
                artifact=run.path,
                relevance=None,
            )


def build_queue(
    eval_set: EvalSet,
    eval_identity: QueueEval,
    runs: Sequence[SavedRun],
    texts: Mapping[tuple[str, int], str] | None = None,
) -> Queue:
    """The queue of ``runs`` against ``eval_set``: one line per (case, source, paragraph), from
    the run giving it the highest priority (the first such run on a tie); ordered by priority,
    highest first, then by the case's eval.jsonl order and rank. ``texts`` (a recording's
    served texts by locator) adds ``text`` where it has one."""
    notes: list[str] = []
    best: dict[tuple[str, str, int], QueueLine] = {}
    for run in runs:
        for line in _queued(run, eval_set, notes):
            key = (line.case_id, line.source, line.paragraph)
            kept = best.get(key)
            if kept is None or (line.priority or 0.0) > (kept.priority or 0.0):
                best[key] = line
    order = {case.case_id: index for index, case in enumerate(eval_set.cases)}
    ranked = sorted(
        best.values(), key=lambda line: (-(line.priority or 0.0), order[line.case_id], line.rank)
    )
    if texts is not None:
        ranked = [
            line.model_copy(update={"text": texts.get((line.source, line.paragraph))})
            for line in ranked
        ]
    header = QueueHeader(
        taguru_label_queue=QUEUE_VERSION,
        eval=eval_identity,
        artifacts=[run.path for run in runs],
        hits=len(ranked),
    )
    return Queue(header, tuple(ranked), tuple(notes))

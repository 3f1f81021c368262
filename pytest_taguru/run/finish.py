"""The finished run's artifact, assembled from plain data: settings, the eval set, the case
blocks that came back, and the context facts read before and after (``evaluate-run.md`` §7).

Pure apart from the clock (``generated_at`` is taken after the run, §9 item 23).
"""

from collections.abc import Container, Mapping, Sequence
from datetime import UTC, datetime

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.artifact.evaluation import (
    ARTIFACT_VERSION,
    Corpus,
    EmbeddingsRecord,
    EvalInput,
    Evaluation,
    Inputs,
    RevisionRecord,
)
from pytest_taguru.report.summary import retry_warning
from pytest_taguru.run.eval_models import DEFAULT_LIMIT, RESOLVE_LIMIT, EvalSet
from pytest_taguru.run.lanes.assembly import RunShape
from pytest_taguru.run.preflight import ContextFacts, PreflightFacts
from pytest_taguru.run.settings import Settings
from pytest_taguru.run.shard import ShardPlan
from pytest_taguru.score.fold import RunFold
from pytest_taguru.score.metrics import definitions


def ran_in_order(eval_set: EvalSet, received: Container[str]) -> list[str]:
    """The case ids that came back, in dataset order (workers finish in any order)."""
    return [case.case_id for case in eval_set.cases if case.case_id in received]


def partial_run_warning(dataset_cases: int, ran_cases: int) -> str | None:
    """The ``warnings[]`` entry (and summary line) of a run that left dataset cases out."""
    missing = dataset_cases - ran_cases
    if missing <= 0:
        return None
    return (
        f"{missing} of {dataset_cases} dataset case(s) did not run (deselected, skipped, not "
        "reached after -x/--maxfail, or lost with a crashed worker); the artifact holds the "
        f"{ran_cases} that ran"
    )


def start_fold(settings: Settings, slices: Mapping[str, Sequence[str]] | None) -> RunFold:
    """What a live run's case summaries are folded into at the finish: ``slices`` (name →
    globs) adds the per-slice scorecards."""
    shape = RunShape.from_settings(settings)
    return RunFold(rerank_requested=shape.rerank is not None, slices=slices)


def build_evaluation(
    settings: Settings,
    eval_set: EvalSet,
    fold: RunFold,
    before: PreflightFacts,
    after: ContextFacts,
    *,
    out: str,
    shard: ShardPlan | None = None,
) -> Evaluation:
    """The artifact (``thresholds`` still null) of the cases folded into ``fold``
    (:func:`start_fold`), without their blocks (``cases`` is empty: the controller writes
    the cases' texts in its place); ``out`` is the path it is written to; a shard's dataset
    is its own cases, and its ``inputs`` say which shard it is."""
    assert settings.masked_url is not None
    shape = RunShape.from_settings(settings)
    dataset = eval_set.cases if shard is None else shard.select(eval_set.cases)
    inputs = Inputs(
        eval=EvalInput(path=settings.eval_path, name=eval_set.name, cases=len(eval_set.cases)),
        context=settings.context,
        url=settings.masked_url,
        out=out,
        default_limit=DEFAULT_LIMIT,
        resolve_limit=RESOLVE_LIMIT,
        mode=shape.mode,
        budget=shape.budget_input,
        rerank=shape.rerank,
        replayed=settings.replay_dir,
        shard=None if shard is None else shard.record(),
    )
    corpus = Corpus(
        revision_before=RevisionRecord(**before.context.revision.model_dump()),
        revision_after=RevisionRecord(**after.revision.model_dump()),
        stable=before.context.revision == after.revision,
        last_write_epoch_before=before.context.last_write_epoch,
        last_write_epoch_after=after.last_write_epoch,
        embeddings=(
            EmbeddingsRecord(provider_model=before.provider_model)
            if before.embeddings_read
            else None
        ),
        sources_count=before.sources_count,
    )
    return evaluation_of(
        inputs,
        corpus,
        fold,
        cases=[],
        dataset_cases=len(dataset),
        case_warnings=shape.filter_warnings(dataset),
    )


def assemble_evaluation(
    inputs: Inputs,
    corpus: Corpus,
    cases: list[CaseBlock],
    *,
    dataset_cases: int,
    case_warnings: list[str],
    slices: Mapping[str, Sequence[str]] | None = None,
) -> Evaluation:
    """The artifact of the case blocks that came back (``thresholds`` still null), as
    ``taguru-evaluate merge`` builds it: :func:`evaluation_of` ``cases``."""
    fold = RunFold.of(cases, rerank_requested=inputs.rerank is not None, slices=slices)
    return evaluation_of(
        inputs,
        corpus,
        fold,
        cases=cases,
        dataset_cases=dataset_cases,
        case_warnings=case_warnings,
    )


def evaluation_of(
    inputs: Inputs,
    corpus: Corpus,
    fold: RunFold,
    *,
    cases: list[CaseBlock],
    dataset_cases: int,
    case_warnings: list[str],
) -> Evaluation:
    """The artifact of a run whose case blocks were folded into ``fold`` (``thresholds``
    still null), for a live run and for ``taguru-evaluate merge`` alike: the warnings (the
    per-case ones given, then the run's own), the definitions, every metric and the slices'
    scorecards; ``cases`` are the blocks it holds."""
    warnings = list(case_warnings)
    summary = fold.summary()
    partial = partial_run_warning(dataset_cases, summary.cases)
    if partial is not None:
        warnings.append(partial)
    retried = retry_warning(summary)
    if retried is not None:
        warnings.append(retried)
    return Evaluation(
        taguru_evaluation=ARTIFACT_VERSION,
        generated_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        inputs=inputs,
        corpus=corpus,
        definitions=definitions(),
        warnings=warnings or None,
        cases=cases,
        metrics=fold.metrics(),
        extra_metrics=fold.extra_metrics(),
        slices=fold.slice_cards(),
    )

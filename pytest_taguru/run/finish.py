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
from pytest_taguru.score.metrics import build_extra_metrics, build_metrics, definitions
from pytest_taguru.score.slices import slice_cards
from pytest_taguru.score.summary import run_summary


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


def build_evaluation(
    settings: Settings,
    eval_set: EvalSet,
    cases: list[CaseBlock],
    before: PreflightFacts,
    after: ContextFacts,
    *,
    out: str,
    slices: Mapping[str, Sequence[str]] | None = None,
    shard: ShardPlan | None = None,
) -> Evaluation:
    """The artifact (``thresholds`` still null): ``out`` is the path it is written to;
    ``slices`` (name → globs) adds the per-slice scorecards; a shard's dataset is its own
    cases, and its ``inputs`` say which shard it is."""
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
    return assemble_evaluation(
        inputs,
        corpus,
        cases,
        dataset_cases=len(dataset),
        case_warnings=shape.filter_warnings(dataset),
        slices=slices,
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
    """The artifact of the case blocks that came back (``thresholds`` still null), for a live
    run and for ``taguru-evaluate merge`` alike: the warnings (the per-case ones given, then
    the run's own), the definitions, every metric and the slices' scorecards, computed from
    ``cases``."""
    warnings = list(case_warnings)
    partial = partial_run_warning(dataset_cases, len(cases))
    if partial is not None:
        warnings.append(partial)
    retried = retry_warning(run_summary(cases))
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
        metrics=build_metrics(cases, rerank_requested=inputs.rerank is not None),
        extra_metrics=build_extra_metrics(cases),
        slices=None if slices is None else slice_cards(slices, cases),
    )

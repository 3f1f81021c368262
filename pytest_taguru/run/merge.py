"""Shard artifacts joined into the artifact of one complete run (``taguru-evaluate merge``).

The shards (``--taguru-shard I/N``, ``run.shard``) must be one run's: the same eval set (its
SHA-256 and its case ids), context, mode, budget, rerank model, limits, slices and thresholds
files; each complete (every case of its own shard ran, and none of another's); no shard twice;
and together every case of the set. Any other input is refused with the file it concerns. The
merged cases go in dataset order, and everything else is computed from them by the live run's
own code (``run.finish.assemble_evaluation``: warnings, definitions, every metric, the slices'
scorecards; the gates are the caller's, ``gate.thresholds.evaluate_gate`` and
``run.slices.judge_slices``), so the result equals the artifact of a single complete run, but
for its time stamp, latencies and server URL.

The corpus is bracketed across the shards: ``revision_before`` holds the lowest revision any
shard started at, ``revision_after`` the highest any ended at (each counter on its own: they
only grow), the write epochs likewise; ``stable`` only when every shard was stable and all saw
the same revisions. The URL, the eval path, ``replayed``, the embeddings record and the sources
count are those of the shard with the lowest index. Pure: the caller reads and writes the files.
"""

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.artifact.evaluation import Corpus, Evaluation, RevisionRecord, ShardInput
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.core.limits import MAX_SHARDS
from pytest_taguru.errors import UsageError
from pytest_taguru.run.finish import assemble_evaluation
from pytest_taguru.run.lanes.assembly import FILTER_WARNING
from pytest_taguru.run.shard import ShardSpec, shard_of

SHOWN_IDS = 10
"""Case ids named in one refusal before ``(+N more)``."""


@dataclass(frozen=True)
class ShardArtifact:
    """One shard's artifact as read, and the path it was read from (for messages)."""

    path: str
    evaluation: Evaluation

    @property
    def shard(self) -> ShardInput:
        shard = self.evaluation.inputs.shard
        assert shard is not None, "checked by merge_shards"
        return shard

    @property
    def spec(self) -> ShardSpec:
        return ShardSpec(self.shard.index, self.shard.count)


def listed(case_ids: Sequence[str]) -> str:
    """``'a', 'b' (+3 more)``: the first ``SHOWN_IDS`` ids, quoted."""
    shown = ", ".join(f"'{case_id}'" for case_id in case_ids[:SHOWN_IDS])
    more = len(case_ids) - SHOWN_IDS
    return f"{shown} (+{more} more)" if more > 0 else shown


def _check_record(artifact: ShardArtifact) -> None:
    """The artifact is a shard's, and its ``inputs.shard`` is well formed."""
    shard = artifact.evaluation.inputs.shard
    path = artifact.path
    if shard is None:
        raise UsageError(
            f"{path}: not a shard's artifact (no inputs.shard): it was written without "
            "--taguru-shard"
        )
    if not (1 <= shard.index <= shard.count <= MAX_SHARDS):
        raise UsageError(
            f"{path}: inputs.shard is malformed: shard {shard.index}/{shard.count} is not "
            f"within 1 <= I <= N <= {MAX_SHARDS}"
        )
    if not shard.case_ids or len(set(shard.case_ids)) != len(shard.case_ids):
        raise UsageError(
            f"{path}: inputs.shard is malformed: case_ids must list the eval set's case ids, "
            "each once"
        )


def _sha256(block: dict[str, Any] | None) -> str | None:
    sha256 = (block or {}).get("sha256")
    return sha256 if isinstance(sha256, str) else None


def thresholds_identity(evaluation: Evaluation) -> str | None:
    """The SHA-256 of the thresholds file a run was gated by; None for a report-only run."""
    return _sha256(evaluation.thresholds)


def slice_thresholds_identity(evaluation: Evaluation) -> str | None:
    """The SHA-256 of the slice thresholds file a run's slices were gated by, or None."""
    return _sha256(evaluation.slice_thresholds)


def recorded_slices(evaluation: Evaluation) -> dict[str, tuple[str, ...]] | None:
    """The slices a run defined (name → globs, in declaration order), as its scorecards
    record them; None for a run without slices."""
    if evaluation.slices is None:
        return None
    return {name: tuple(card.globs) for name, card in evaluation.slices.items()}


_IDENTITY: tuple[tuple[str, Callable[[ShardArtifact], Any]], ...] = (
    ("the shard count", lambda artifact: artifact.shard.count),
    ("the eval set's sha256", lambda artifact: artifact.shard.eval_sha256),
    ("the eval set's case ids", lambda artifact: artifact.shard.case_ids),
    ("the eval set's name", lambda artifact: artifact.evaluation.inputs.eval.name),
    ("the context", lambda artifact: artifact.evaluation.inputs.context),
    ("the mode", lambda artifact: artifact.evaluation.inputs.mode),
    ("the budget", lambda artifact: artifact.evaluation.inputs.budget),
    ("the rerank model", lambda artifact: artifact.evaluation.inputs.rerank),
    ("default_limit", lambda artifact: artifact.evaluation.inputs.default_limit),
    ("resolve_limit", lambda artifact: artifact.evaluation.inputs.resolve_limit),
    ("the slices", lambda artifact: recorded_slices(artifact.evaluation)),
    ("the thresholds sha256", lambda artifact: thresholds_identity(artifact.evaluation)),
    ("the slice thresholds sha256", lambda a: slice_thresholds_identity(a.evaluation)),
)
"""What every shard of one run shares, compared in this order; the first difference is named."""


def _size(value: list[Any] | dict[str, Any] | None) -> str:
    return "none" if value is None else str(len(value))


def _shown(value: Any) -> str:
    if isinstance(value, BaseModel):
        return json.dumps(to_jsonable(value))
    return "none" if value is None else repr(value)


def _check_same_run(first: ShardArtifact, other: ShardArtifact) -> None:
    for what, identity in _IDENTITY:
        ours, theirs = identity(first), identity(other)
        if ours == theirs:
            continue
        if isinstance(ours, list | dict) or isinstance(theirs, list | dict):
            sizes = f"{_size(theirs)} there, {_size(ours)} in {first.path}"
            difference = f"{what} differ ({sizes})"
        else:
            difference = f"{what} is {_shown(theirs)} there, {_shown(ours)} in {first.path}"
        raise UsageError(
            f"{other.path} is not a shard of the same run as {first.path}: {difference}"
        )


def _check_own_cases(artifact: ShardArtifact, owners: Mapping[str, int]) -> None:
    """Every case of the artifact's own shard ran, once, and no case of another (``owners``:
    each case id of the set → its shard)."""
    spec, path = artifact.spec, artifact.path
    seen: set[str] = set()
    for block in artifact.evaluation.cases:
        if block.case_id in seen:
            raise UsageError(f"{path}: case '{block.case_id}' is in it twice")
        if owners.get(block.case_id) != spec.index:
            raise UsageError(
                f"{path}: case '{block.case_id}' is not one of shard {spec}'s cases (a foreign "
                "or altered artifact)"
            )
        seen.add(block.case_id)
    own = [case_id for case_id, index in owners.items() if index == spec.index]
    missing = [case_id for case_id in own if case_id not in seen]
    if missing:
        raise UsageError(
            f"{path}: shard {spec} is partial: {len(missing)} of its {len(own)} case(s) did "
            f"not run ({listed(missing)}); run the shard again without -k, node ids, --lf "
            "or -x"
        )


def _check_complete(shards: Sequence[ShardArtifact], owners: Mapping[str, int]) -> None:
    """No shard twice, and every shard that holds a case given (a shard holding no case
    writes no artifact: it has nothing to add)."""
    by_index: dict[int, ShardArtifact] = {}
    for artifact in shards:
        twin = by_index.get(artifact.shard.index)
        if twin is not None:
            raise UsageError(f"{twin.path} and {artifact.path} are both shard {artifact.spec}")
        by_index[artifact.shard.index] = artifact
    count = shards[0].shard.count
    absent: dict[int, list[str]] = {}
    for case_id, index in owners.items():
        if index not in by_index:
            absent.setdefault(index, []).append(case_id)
    if absent:
        missing = "; ".join(
            f"shard {index}/{count} ({len(ids)} case(s): {listed(ids)})"
            for index, ids in sorted(absent.items())
        )
        raise UsageError(f"missing {len(absent)} shard artifact(s): {missing}")


def _per_counter(
    records: Sequence[RevisionRecord], pick: Callable[[Iterable[int]], int]
) -> RevisionRecord:
    """``pick`` (min or max) of each revision counter on its own."""
    counters = RevisionRecord.model_fields
    return RevisionRecord(**{name: pick(getattr(r, name) for r in records) for name in counters})


def bracket_corpus(corpora: Sequence[Corpus]) -> Corpus:
    """One bracket around every shard's (the rule in this module's docstring)."""
    befores = [corpus.revision_before for corpus in corpora]
    afters = [corpus.revision_after for corpus in corpora]
    seen = {(r.graph, r.passages, r.config) for r in (*befores, *afters)}
    return corpora[0].model_copy(
        update={
            "revision_before": _per_counter(befores, min),
            "revision_after": _per_counter(afters, max),
            "stable": all(corpus.stable for corpus in corpora) and len(seen) == 1,
            "last_write_epoch_before": min(c.last_write_epoch_before for c in corpora),
            "last_write_epoch_after": max(c.last_write_epoch_after for c in corpora),
        }
    )


def case_warnings(shards: Sequence[ShardArtifact], case_ids: Sequence[str]) -> list[str]:
    """The per-case warnings of the merged run in dataset order: each shard wrote those of its
    own cases (``--assembly`` filter warnings), with the text a single run writes."""
    written = {warning for artifact in shards for warning in artifact.evaluation.warnings or []}
    candidates = (FILTER_WARNING.format(case_id=case_id) for case_id in case_ids)
    return [warning for warning in candidates if warning in written]


def merge_shards(shards: Sequence[ShardArtifact], *, out: str) -> Evaluation:
    """The artifact of the complete run the shards are parts of (``thresholds`` still null),
    to be written to ``out``; raises ``UsageError`` naming the file at fault."""
    if not shards:
        raise UsageError("no shard artifact given")
    for artifact in shards:
        _check_record(artifact)
    for artifact in shards[1:]:
        _check_same_run(shards[0], artifact)
    count = shards[0].shard.count
    owners = {case_id: shard_of(case_id, count) for case_id in shards[0].shard.case_ids}
    for artifact in shards:
        _check_own_cases(artifact, owners)
    _check_complete(shards, owners)
    ordered = sorted(shards, key=lambda artifact: artifact.shard.index)
    blocks: dict[str, CaseBlock] = {
        block.case_id: block for artifact in ordered for block in artifact.evaluation.cases
    }
    case_ids = ordered[0].shard.case_ids
    first = ordered[0].evaluation
    inputs = first.inputs.model_copy(update={"out": out, "shard": None})
    return assemble_evaluation(
        inputs,
        bracket_corpus([artifact.evaluation.corpus for artifact in ordered]),
        [blocks[case_id] for case_id in case_ids],
        dataset_cases=len(case_ids),
        case_warnings=case_warnings(ordered, case_ids),
        slices=recorded_slices(first),
    )

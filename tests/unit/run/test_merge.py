"""Shard artifacts joined into one run (``run.merge``): the merged artifact is the whole run's,
and every input that is not one complete run's shards is refused with the file it concerns."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shard_runs import EVAL_SHA256, shard_of_run, shards, whole_run

from pytest_taguru.artifact.assembly import BudgetInput
from pytest_taguru.artifact.evaluation import Corpus, Evaluation, RevisionRecord
from pytest_taguru.artifact.writing import render
from pytest_taguru.errors import UsageError
from pytest_taguru.run.lanes.assembly import FILTER_WARNING
from pytest_taguru.run.merge import (
    ShardArtifact,
    bracket_corpus,
    case_warnings,
    merge_shards,
    recorded_slices,
)
from pytest_taguru.run.shard import ShardSpec, shard_of
from pytest_taguru.score.slices import slice_cards

RUN = whole_run(40)


def expected_merge(run: Evaluation, out: str = "merged.json") -> str:
    """What merging ``run``'s shards must write: the run itself, ungated, written to ``out``."""
    inputs = run.inputs.model_copy(update={"out": out})
    return render(run.model_copy(update={"inputs": inputs, "thresholds": None}))


def written(merged: Evaluation, like: Evaluation = RUN) -> str:
    return render(merged.model_copy(update={"generated_at": like.generated_at}))


def with_fields(artifact: ShardArtifact, **changes: Any) -> ShardArtifact:
    """The artifact with top-level fields replaced."""
    return ShardArtifact(artifact.path, artifact.evaluation.model_copy(update=changes))


def with_inputs(artifact: ShardArtifact, **changes: Any) -> ShardArtifact:
    return with_fields(artifact, inputs=artifact.evaluation.inputs.model_copy(update=changes))


def with_shard(artifact: ShardArtifact, **changes: Any) -> ShardArtifact:
    shard = artifact.shard.model_copy(update=changes)
    return with_inputs(artifact, shard=shard)


def refusal(given: list[ShardArtifact]) -> str:
    with pytest.raises(UsageError) as refused:
        merge_shards(given, out="merged.json")
    assert refused.value.exit_code == 2
    return refused.value.message


# --- the merged run ------------------------------------------------------------------------------


def test_the_shards_merge_into_the_whole_run() -> None:
    merged = merge_shards(shards(RUN), out="merged.json")

    assert written(merged) == expected_merge(RUN)
    assert merged.inputs.shard is None
    assert merged.thresholds is None


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 9), st.randoms(use_true_random=False))
def test_any_shard_count_in_any_order_merges_into_the_whole_run(count: int, rng: Any) -> None:
    given_shards = [artifact for artifact in shards(RUN, count) if artifact.evaluation.cases]
    rng.shuffle(given_shards)

    assert written(merge_shards(given_shards, out="merged.json")) == expected_merge(RUN)


def test_a_shard_holding_no_case_is_not_needed() -> None:
    count = 40  # 40 cases in 40 shards: some shard holds none
    held = {shard_of(block.case_id, count) for block in RUN.cases}
    assert len(held) < count
    given_shards = [artifact for artifact in shards(RUN, count) if artifact.shard.index in held]

    assert written(merge_shards(given_shards, out="merged.json")) == expected_merge(RUN)


def test_assembly_filter_warnings_come_back_in_dataset_order() -> None:
    ids = [block.case_id for block in RUN.cases]
    warned = [ids[3], ids[11], ids[29]]
    parts = []
    for artifact in shards(RUN):
        own = [FILTER_WARNING.format(case_id=i) for i in warned if artifact.spec.holds(i)]
        retry = "retries: 1 request(s) of 1 case(s) were sent again …"
        parts.append(with_fields(artifact, warnings=[*own, retry]))

    assert case_warnings(parts[::-1], ids) == [FILTER_WARNING.format(case_id=i) for i in warned]
    merged = merge_shards(parts, out="merged.json")
    assert merged.warnings == [FILTER_WARNING.format(case_id=i) for i in warned]


GLOBS = {"even": ("case-*[02468]",), "low": ("case-00000[0-4]", "case-00001*"), "none": ("x*",)}


def test_the_slices_scorecards_are_computed_again_from_the_merged_cases() -> None:
    run = RUN.model_copy(update={"slices": slice_cards(GLOBS, RUN.cases)})
    parts = [with_fields(part, slices=slice_cards(GLOBS, part.evaluation.cases))
             for part in shards(run)]  # fmt: skip

    merged = merge_shards(parts, out="merged.json")
    assert written(merged) == expected_merge(run)
    assert recorded_slices(merged) == GLOBS


def test_shards_with_other_slices_are_refused() -> None:
    parts = shards(RUN.model_copy(update={"slices": slice_cards(GLOBS, RUN.cases)}))
    parts[1] = with_fields(parts[1], slices=None)

    assert refusal(parts) == f"{FOREIGN}the slices differ (none there, 3 in shard-1.json)"


# --- the corpus bracket --------------------------------------------------------------------------


Counters = tuple[int, int, int]


def corpus(before: Counters, after: Counters, epochs: tuple[int, int]) -> Corpus:
    return Corpus(
        revision_before=RevisionRecord(graph=before[0], passages=before[1], config=before[2]),
        revision_after=RevisionRecord(graph=after[0], passages=after[1], config=after[2]),
        stable=before == after,
        last_write_epoch_before=epochs[0],
        last_write_epoch_after=epochs[1],
        sources_count=13,
    )


def test_the_same_revision_everywhere_is_stable() -> None:
    same = corpus((4, 9, 1), (4, 9, 1), (100, 100))
    merged = bracket_corpus([same, same.model_copy(update={"last_write_epoch_before": 90})])

    assert merged.stable
    assert merged.revision_before == merged.revision_after == same.revision_before
    assert (merged.last_write_epoch_before, merged.last_write_epoch_after) == (90, 100)


def test_a_shard_that_saw_a_write_makes_the_run_unstable() -> None:
    merged = bracket_corpus(
        [corpus((4, 9, 1), (4, 9, 1), (100, 100)), corpus((4, 9, 1), (5, 10, 1), (100, 130))]
    )

    assert not merged.stable
    assert merged.revision_before == RevisionRecord(graph=4, passages=9, config=1)
    assert merged.revision_after == RevisionRecord(graph=5, passages=10, config=1)
    assert merged.last_write_epoch_after == 130


def test_shards_that_saw_different_revisions_make_the_run_unstable() -> None:
    """Each shard was stable on its own, but the corpus changed between them."""
    merged = bracket_corpus(
        [corpus((4, 9, 2), (4, 9, 2), (100, 100)), corpus((5, 8, 1), (5, 8, 1), (120, 120))]
    )

    assert not merged.stable
    assert merged.revision_before == RevisionRecord(graph=4, passages=8, config=1)
    assert merged.revision_after == RevisionRecord(graph=5, passages=9, config=2)


def test_the_merged_artifact_carries_the_bracket() -> None:
    parts = shards(RUN)
    changed = parts[1].evaluation.corpus.model_copy(
        update={"revision_after": RevisionRecord(graph=9, passages=9, config=9), "stable": False}
    )
    parts[1] = with_fields(parts[1], corpus=changed)

    merged = merge_shards(parts, out="merged.json")
    assert not merged.corpus.stable
    assert merged.corpus.revision_after == RevisionRecord(graph=9, passages=9, config=9)


# --- refusals ------------------------------------------------------------------------------------


def test_nothing_to_merge() -> None:
    assert refusal([]) == "no shard artifact given"


def test_an_artifact_that_is_no_shard_is_refused() -> None:
    parts = shards(RUN)
    parts[1] = with_inputs(parts[1], shard=None)

    assert refusal(parts) == (
        "shard-2.json: not a shard's artifact (no inputs.shard): it was written without "
        "--taguru-shard"
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"index": 4}, "shard 4/3 is not within 1 <= I <= N <= 10000"),
        ({"index": 0}, "shard 0/3 is not within 1 <= I <= N <= 10000"),
        ({"case_ids": []}, "case_ids must list the eval set's case ids, each once"),
        ({"case_ids": ["a", "a"]}, "case_ids must list the eval set's case ids, each once"),
    ],
)
def test_a_malformed_shard_record_is_refused(changes: dict[str, Any], message: str) -> None:
    parts = shards(RUN)
    parts[2] = with_shard(parts[2], **changes)

    assert refusal(parts) == f"shard-3.json: inputs.shard is malformed: {message}"


FOREIGN = "shard-2.json is not a shard of the same run as shard-1.json: "


@pytest.mark.parametrize(
    ("part", "changes", "difference"),
    [
        ("shard", {"count": 4}, "the shard count is 4 there, 3 in shard-1.json"),
        ("shard", {"eval_sha256": "0" * 64},
         f"the eval set's sha256 is '{'0' * 64}' there, '{EVAL_SHA256}' in shard-1.json"),
        ("shard", {"case_ids": [b.case_id for b in RUN.cases][::-1]},
         "the eval set's case ids differ (40 there, 40 in shard-1.json)"),
        ("inputs", {"context": "other"},
         "the context is 'other' there, 'synthetic' in shard-1.json"),
        ("inputs", {"mode": "assembly"},
         "the mode is 'assembly' there, 'baseline' in shard-1.json"),
        ("inputs", {"rerank": "lexical-cross"},
         "the rerank model is 'lexical-cross' there, none in shard-1.json"),
        ("inputs", {"default_limit": 20}, "default_limit is 20 there, 10 in shard-1.json"),
        ("inputs", {"resolve_limit": 3}, "resolve_limit is 3 there, 5 in shard-1.json"),
        ("inputs", {"budget": BudgetInput(max_items=8, max_bytes=4096, max_tokens=600)},
         'the budget is {"max_items": 8, "max_bytes": 4096, "max_tokens": 600} there, none in '
         "shard-1.json"),
    ],
)  # fmt: skip
def test_a_shard_of_another_run_is_refused_naming_both_files(
    part: str, changes: dict[str, Any], difference: str
) -> None:
    parts = shards(RUN)
    change = with_shard if part == "shard" else with_inputs
    parts[1] = change(parts[1], **changes)

    assert refusal(parts) == FOREIGN + difference


def test_a_shard_gated_by_other_thresholds_is_refused() -> None:
    parts = shards(RUN)
    other = dict(parts[1].evaluation.thresholds or {}, sha256="f" * 64)
    parts[1] = with_fields(parts[1], thresholds=other)
    ours = (RUN.thresholds or {})["sha256"]

    assert refusal(parts) == (
        f"{FOREIGN}the thresholds sha256 is '{'f' * 64}' there, '{ours}' in shard-1.json"
    )


def test_a_report_only_shard_beside_gated_ones_is_refused() -> None:
    parts = shards(RUN)
    parts[1] = with_fields(parts[1], thresholds=None)

    assert refusal(parts).startswith(f"{FOREIGN}the thresholds sha256 is none there, '")


def test_the_eval_name_is_part_of_the_identity() -> None:
    parts = shards(RUN)
    renamed = parts[1].evaluation.inputs.eval.model_copy(update={"name": "other"})
    parts[1] = with_inputs(parts[1], eval=renamed)

    assert refusal(parts) == (
        f"{FOREIGN}the eval set's name is 'other' there, 'synthetic' in shard-1.json"
    )


def test_a_partial_shard_is_refused_with_its_missing_cases() -> None:
    parts = shards(RUN)
    own = parts[1].evaluation.cases
    parts[1] = with_fields(parts[1], cases=own[2:])

    assert refusal(parts) == (
        f"shard-2.json: shard 2/3 is partial: 2 of its {len(own)} case(s) did not run "
        f"('{own[0].case_id}', '{own[1].case_id}'); run the shard again without -k, node ids, "
        "--lf or -x"
    )


@pytest.mark.parametrize(
    ("taken_from", "problem"),
    [
        (0, "is not one of shard 3/3's cases (a foreign or altered artifact)"),
        (2, "is in it twice"),
    ],
)
def test_a_case_not_the_shards_own_or_not_once_is_refused(taken_from: int, problem: str) -> None:
    parts = shards(RUN)
    extra = parts[taken_from].evaluation.cases[0]
    parts[2] = with_fields(parts[2], cases=[*parts[2].evaluation.cases, extra])

    assert refusal(parts) == f"shard-3.json: case '{extra.case_id}' {problem}"


def test_a_shard_given_twice_is_refused_naming_both_files() -> None:
    parts = shards(RUN)
    again = ShardArtifact("copy-of-shard-2.json", parts[1].evaluation)

    assert refusal([*parts, again]) == "shard-2.json and copy-of-shard-2.json are both shard 2/3"


def test_a_missing_shard_is_refused_with_its_cases() -> None:
    parts = shards(RUN)
    lost = [block.case_id for block in parts[2].evaluation.cases]
    shown = ", ".join(f"'{case_id}'" for case_id in lost[:10])
    more = f" (+{len(lost) - 10} more)" if len(lost) > 10 else ""

    assert refusal(parts[:2]) == (
        f"missing 1 shard artifact(s): shard 3/3 ({len(lost)} case(s): {shown}{more})"
    )


def test_every_missing_shard_is_named() -> None:
    parts = shards(RUN, 5)
    message = refusal([parts[0], parts[3]])

    assert message.startswith("missing 3 shard artifact(s): shard 2/5 (")
    assert "; shard 3/5 (" in message and "; shard 5/5 (" in message


def test_a_lone_shard_of_a_split_run_is_refused() -> None:
    one = ShardArtifact("s.json", shard_of_run(RUN, ShardSpec(1, 2)))

    assert refusal([one]).startswith("missing 1 shard artifact(s): shard 2/2 (")

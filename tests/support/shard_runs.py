"""A complete synthetic run cut into the artifacts its shards would write (``--taguru-shard``),
for the merge's unit tests: each shard holds its own cases' blocks and ``inputs.shard``, and is
otherwise the run itself (its metrics left as they are: the merge recomputes them)."""

import hashlib

from synthetic_run import synthetic_run

from pytest_taguru.artifact.evaluation import Evaluation, ShardInput
from pytest_taguru.run.merge import ShardArtifact
from pytest_taguru.run.shard import ShardSpec
from pytest_taguru.score.metrics import build_extra_metrics

EVAL_SHA256 = hashlib.sha256(b"synthetic.jsonl").hexdigest()


def whole_run(cases: int = 40) -> Evaluation:
    """The complete run the shards are cut from, with the extra metrics a live run adds."""
    run = synthetic_run(cases).evaluation
    return run.model_copy(update={"extra_metrics": build_extra_metrics(run.cases)})


def shard_of_run(run: Evaluation, spec: ShardSpec) -> Evaluation:
    """The artifact shard ``spec`` of ``run`` writes."""
    record = ShardInput(
        index=spec.index,
        count=spec.count,
        eval_sha256=EVAL_SHA256,
        case_ids=[block.case_id for block in run.cases],
    )
    return run.model_copy(
        update={
            "inputs": run.inputs.model_copy(update={"shard": record}),
            "cases": [block for block in run.cases if spec.holds(block.case_id)],
        }
    )


def shards(run: Evaluation, count: int = 3) -> list[ShardArtifact]:
    """Every shard's artifact of ``run``, named ``shard-I.json``."""
    return [
        ShardArtifact(f"shard-{index}.json", shard_of_run(run, ShardSpec(index, count)))
        for index in range(1, count + 1)
    ]

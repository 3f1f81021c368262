"""Shards (``--taguru-shard I/N``): which cases of the eval set one shard of a run holds.

A case belongs to shard ``1 + h mod N``, where ``h`` is the first 8 bytes of
``SHA-256(case_id as UTF-8)`` read as a big-endian unsigned integer. The rule looks at the
case's own id and nothing else, so inserting, removing or reordering other lines never moves
a case to another shard, every process (the controller and each pytest-xdist worker, on any
host) computes the same selection, and every case lies in exactly one shard.

A shard is a *planned* subset of the run (``run.partial``): its dataset is its own cases, its
artifact goes to ``--taguru-out`` as configured, case-scoped bounds and corpus stability are
judged as always, and aggregate bounds are left to ``taguru-evaluate merge``, which judges the
merged run (``run.merge``). The artifact records the shard in ``inputs.shard``
(:class:`~pytest_taguru.artifact.evaluation.ShardInput`): its index and count, the eval set's
SHA-256 and every case id of the set in dataset order, so the merge can prove the shards belong
to one run and name each missing case.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from pytest_taguru.artifact.evaluation import ShardInput


class HasCaseId(Protocol):
    @property
    def case_id(self) -> str: ...


Case = TypeVar("Case", bound=HasCaseId)


def shard_of(case_id: str, count: int) -> int:
    """The 1-based shard of ``case_id`` among ``count`` shards (the rule above)."""
    digest = hashlib.sha256(case_id.encode("utf-8", "surrogatepass")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True)
class ShardSpec:
    """``--taguru-shard I/N``: shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, case_id: str) -> bool:
        return shard_of(case_id, self.count) == self.index


@dataclass(frozen=True)
class ShardPlan:
    """One shard of one eval set: what the run collects and what its artifact records."""

    spec: ShardSpec
    eval_sha256: str
    """SHA-256 (lowercase hex) of the eval file's bytes: the eval set's identity."""
    case_ids: tuple[str, ...]
    """Every case id of the eval set, in dataset order."""
    selected: frozenset[str]
    """The case ids of this shard."""

    @classmethod
    def of(cls, spec: ShardSpec, case_ids: Sequence[str], eval_bytes: bytes) -> "ShardPlan":
        ids = tuple(case_ids)
        return cls(
            spec,
            hashlib.sha256(eval_bytes).hexdigest(),
            ids,
            frozenset(case_id for case_id in ids if spec.holds(case_id)),
        )

    def select(self, cases: Sequence[Case]) -> list[Case]:
        """The shard's cases among ``cases``, in their given order."""
        return [case for case in cases if case.case_id in self.selected]

    def describe(self) -> str:
        """``shard 1/3 (12 of 36 cases)``."""
        return f"shard {self.spec} ({len(self.selected)} of {len(self.case_ids)} cases)"

    def record(self) -> ShardInput:
        """``inputs.shard`` of the shard's artifact."""
        return ShardInput(
            index=self.spec.index,
            count=self.spec.count,
            eval_sha256=self.eval_sha256,
            case_ids=list(self.case_ids),
        )

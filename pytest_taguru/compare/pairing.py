"""Which cases two runs share, for the paired statistics: pairs, and what was left out and why.

A case is *paired* when it is in both runs (by ``case_id``; on one side a repeated id keeps its
last occurrence, as ``compare`` does), with the same ``expectations_sha256`` on both sides, and
no lane call of it failed on either side (``artifact.extras.PairingFacts``). Every other case
is *excluded*, counted and listed under one reason, the first that applies:

* ``missing in HEAD`` / ``missing in BASE``: on one side only;
* ``relabelled``: both sides carry a hash and the hashes differ;
* ``errored in HEAD``, ``errored in BASE`` or ``errored in both``: a lane call of the case failed
  on that side (only a failure new in HEAD can hide a regression: ``verdicts`` holds it
  against the run).

When a side carries no hashes at all (a run written by taguru, or before pytest-taguru wrote
them) relabelled cases cannot be told apart: they are paired by ``case_id`` alone, and a note
says so. Per metric, a paired case contributes only when both sides have a value for it.

Pure: plain data in, arrays out.
"""

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from pytest_taguru.artifact.view import CaseView, LoadedRun
from pytest_taguru.score.registry import METRICS_BY_NAME, PAIRED_METRICS, case_value


@dataclass(frozen=True)
class Exclusions:
    """The excluded cases by reason, each in case_id byte order."""

    missing_in_head: tuple[str, ...] = ()
    missing_in_base: tuple[str, ...] = ()
    relabelled: tuple[str, ...] = ()
    errored_in_head: tuple[str, ...] = ()
    errored_in_base: tuple[str, ...] = ()
    errored_in_both: tuple[str, ...] = ()

    def by_reason(self) -> list[tuple[str, tuple[str, ...]]]:
        """``(reason, case_ids)`` in the order above, for display."""
        return [
            ("missing in HEAD", self.missing_in_head),
            ("missing in BASE", self.missing_in_base),
            ("relabelled", self.relabelled),
            ("errored in HEAD", self.errored_in_head),
            ("errored in BASE", self.errored_in_base),
            ("errored in both", self.errored_in_both),
        ]

    @property
    def total(self) -> int:
        return sum(len(cases) for _, cases in self.by_reason())

    def within(self, members: Collection[str]) -> "Exclusions":
        """Only the excluded cases of a slice."""
        members = frozenset(members)

        def kept(cases: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(case for case in cases if case in members)

        return Exclusions(*(kept(cases) for _, cases in self.by_reason()))


@dataclass(frozen=True)
class PairedCases:
    """The paired cases and their per-metric deltas ``head − base`` (``NaN``: a side has no
    value), one column per metric of ``metrics`` (``registry.PAIRED_METRICS``)."""

    case_ids: tuple[str, ...]
    deltas: NDArray[np.float64]
    exclusions: Exclusions
    metrics: tuple[str, ...] = PAIRED_METRICS
    unhashed: tuple[str, ...] = field(default=())
    """The sides (``BASE``, ``HEAD``) without expectation hashes: relabelling undetectable."""

    def oriented(self) -> NDArray[np.float64]:
        """The deltas with lower-is-better metrics negated: positive is always better."""
        signs = [1.0 if METRICS_BY_NAME[name].better == "higher" else -1.0 for name in self.metrics]
        oriented: NDArray[np.float64] = self.deltas * np.array(signs)
        return oriented

    def within(self, members: Collection[str]) -> "PairedCases":
        """The pairs and exclusions of a slice (``members``: its case ids)."""
        members = frozenset(members)
        keep = np.array([case in members for case in self.case_ids], dtype=bool)
        return PairedCases(
            tuple(case for case, kept in zip(self.case_ids, keep, strict=True) if kept),
            self.deltas[keep],
            self.exclusions.within(members),
            self.metrics,
            self.unhashed,
        )


def _index(cases: Iterable[CaseView]) -> dict[str, CaseView]:
    return {case.case_id: case for case in cases}  # the last occurrence wins (B.3)


def _deltas(
    pairs: Sequence[tuple[CaseView, CaseView]], metrics: Sequence[str]
) -> NDArray[np.float64]:
    deltas = np.full((len(pairs), len(metrics)), np.nan)
    for column, metric in enumerate(metrics):
        for row, (base, head) in enumerate(pairs):
            b, h = case_value(base, metric), case_value(head, metric)
            if b is not None and h is not None:
                deltas[row, column] = h - b
    return deltas


def pair_cases(base: LoadedRun, head: LoadedRun) -> PairedCases:
    """Pair the cases of two runs and sort out the rest (module docstring)."""
    base_cases, head_cases = _index(base.view.cases), _index(head.view.cases)
    unhashed = tuple(
        side
        for side, cases in (("BASE", base_cases), ("HEAD", head_cases))
        if cases and all(case.pairing.expectations_sha256 is None for case in cases.values())
    )
    reasons: dict[str, list[str]] = {name: [] for name in Exclusions.__dataclass_fields__}
    pairs: list[tuple[CaseView, CaseView]] = []
    case_ids: list[str] = []
    for case_id in sorted(base_cases.keys() | head_cases.keys()):
        b, h = base_cases.get(case_id), head_cases.get(case_id)
        if b is None or h is None:
            reasons["missing_in_base" if b is None else "missing_in_head"].append(case_id)
            continue
        b_hash, h_hash = b.pairing.expectations_sha256, h.pairing.expectations_sha256
        if b_hash is not None and h_hash is not None and b_hash != h_hash:
            reasons["relabelled"].append(case_id)
        elif h.pairing.errored or b.pairing.errored:
            both = h.pairing.errored and b.pairing.errored
            side = "both" if both else "head" if h.pairing.errored else "base"
            reasons[f"errored_in_{side}"].append(case_id)
        else:
            pairs.append((b, h))
            case_ids.append(case_id)
    exclusions = Exclusions(**{name: tuple(cases) for name, cases in reasons.items()})
    return PairedCases(
        tuple(case_ids), _deltas(pairs, PAIRED_METRICS), exclusions, PAIRED_METRICS, unhashed
    )

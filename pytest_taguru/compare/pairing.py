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

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from pytest_taguru.artifact.extras import PairingFacts
from pytest_taguru.artifact.view import CaseView, LoadedRun
from pytest_taguru.score.metric_kind import read_path
from pytest_taguru.score.registry import METRICS_BY_NAME, PAIRED_METRICS


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


def _index(run: LoadedRun) -> dict[str, tuple[CaseView, PairingFacts]]:
    """case_id → the case and its pairing facts; the last occurrence wins (B.3)."""
    view = run.view
    pairs = zip(view.cases, view.extras.cases, strict=True)
    return {case.case_id: (case, facts) for case, facts in pairs}


def _values(cases: Sequence[CaseView], path: tuple[str, ...]) -> NDArray[np.float64]:
    """Each case's value at ``path`` (``registry.read_path``), ``NaN`` where it has none."""
    return np.array(
        [math.nan if (value := read_path(case, path)) is None else value for case in cases],
        dtype=np.float64,
    )


def _deltas(
    pairs: Sequence[tuple[CaseView, CaseView]], metrics: Sequence[str]
) -> NDArray[np.float64]:
    bases, heads = [base for base, _ in pairs], [head for _, head in pairs]
    deltas = np.full((len(pairs), len(metrics)), np.nan)
    for column, metric in enumerate(metrics):
        path = METRICS_BY_NAME[metric].case_path
        assert path is not None, f"{metric} has no per-case value"
        deltas[:, column] = _values(heads, path) - _values(bases, path)  # NaN stays NaN
    return deltas


def _relabelled(base: PairingFacts, head: PairingFacts) -> bool:
    """Both sides carry a hash, and they differ."""
    hashes = base.expectations_sha256, head.expectations_sha256
    return None not in hashes and hashes[0] != hashes[1]


def pair_cases(base: LoadedRun, head: LoadedRun) -> PairedCases:
    """Pair the cases of two runs and sort out the rest (module docstring)."""
    base_cases, head_cases = _index(base), _index(head)
    base_facts = {case_id: facts for case_id, (_, facts) in base_cases.items()}
    head_facts = {case_id: facts for case_id, (_, facts) in head_cases.items()}
    unhashed = tuple(
        side
        for side, facts in (("BASE", base_facts), ("HEAD", head_facts))
        if facts and all(fact.expectations_sha256 is None for fact in facts.values())
    )
    reasons: dict[str, list[str]] = {name: [] for name in Exclusions.__dataclass_fields__}
    case_ids: list[str] = []
    for case_id in sorted(base_facts.keys() | head_facts.keys()):
        b, h = base_facts.get(case_id), head_facts.get(case_id)
        if b is None or h is None:
            reasons["missing_in_base" if b is None else "missing_in_head"].append(case_id)
        elif _relabelled(b, h):
            reasons["relabelled"].append(case_id)
        elif b.errored or h.errored:
            side = "both" if b.errored and h.errored else "head" if h.errored else "base"
            reasons[f"errored_in_{side}"].append(case_id)
        else:
            case_ids.append(case_id)
    pairs = [(base_cases[case_id][0], head_cases[case_id][0]) for case_id in case_ids]
    exclusions = Exclusions(**{name: tuple(cases) for name, cases in reasons.items()})
    return PairedCases(
        tuple(case_ids), _deltas(pairs, PAIRED_METRICS), exclusions, PAIRED_METRICS, unhashed
    )

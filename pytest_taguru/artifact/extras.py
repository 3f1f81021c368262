"""What pytest-taguru reads of an artifact beyond taguru's compare view (``view``): a case's
pairing facts and a run's shape, for the paired statistics against a baseline.

Read leniently from the raw JSON, never refusing a document taguru's compare accepts: a key of
the wrong type reads as absent. The view keeps only these few facts of each case
(``EvaluationView.extras``), not the raw case (a 100,000-case artifact would otherwise stay in
memory whole).
"""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PairingFacts:
    """A case's ``expectations_sha256`` (``None``: not recorded, e.g. a taguru artifact) and
    whether one of its lane calls failed.

    *Errored* means the case's numbers record a failure rather than retrieval quality: its
    passage or evidence call ``failed``, a coverage cue's resolve carries an ``error``, an
    association position or its query ``errored``, or a citation check is ``unresolved``
    without a 404 code (the call failed; a ``no_source``/``no_paragraph`` answer is a result).
    """

    expectations_sha256: str | None = None
    errored: bool = False


NO_FACTS = PairingFacts()


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _structural_errored(structural: Any) -> bool:
    if any(_get(cue, "error") is not None for cue in _list(_get(structural, "cues"))):
        return True
    for probe in _list(_get(structural, "associations")):
        positions = [_get(probe, key) for key in ("subject", "label", "object", "query")]
        if any(_get(position, "outcome") == "errored" for position in positions):
            return True
    return False


def _citations_errored(citations: Any) -> bool:
    return any(
        _get(check, "outcome") == "unresolved" and _get(check, "code") is None
        for check in _list(_get(citations, "checks"))
    )


def pairing_facts(case: Any) -> PairingFacts:
    """The pairing facts of one raw case block (anything but an object has none)."""
    if not isinstance(case, dict):
        return NO_FACTS
    digest = case.get("expectations_sha256")
    errored = (
        _get(case.get("passage"), "outcome") == "failed"
        or _get(case.get("evidence"), "outcome") == "failed"
        or _structural_errored(case.get("structural"))
        or _citations_errored(case.get("citations"))
    )
    return PairingFacts(digest if isinstance(digest, str) else None, errored)


@dataclass(frozen=True)
class RunShapeFacts:
    """What a run asked, beyond taguru's compare view, that two runs must share to be judged
    against each other: ``inputs.mode``, ``inputs.rerank``, ``inputs.default_limit`` and
    ``inputs.resolve_limit``, as written (``None`` when absent)."""

    mode: Any = None
    rerank: Any = None
    default_limit: Any = None
    resolve_limit: Any = None


def run_shape_facts(inputs: Any) -> RunShapeFacts:
    """The shape facts of a raw ``inputs`` object; only scalars are kept."""

    def scalar(key: str) -> Any:
        value = _get(inputs, key)
        return value if isinstance(value, str | int | float | bool) else None

    return RunShapeFacts(
        scalar("mode"), scalar("rerank"), scalar("default_limit"), scalar("resolve_limit")
    )


@dataclass(frozen=True)
class RunExtras:
    """A whole artifact's extras: its shape, and each case's pairing facts in ``cases``
    order (one per case the view read)."""

    shape: RunShapeFacts = RunShapeFacts()
    cases: tuple[PairingFacts, ...] = ()


NO_EXTRAS = RunExtras()


def run_extras(document: Any, cases: int) -> RunExtras:
    """The extras of a raw ``evaluation.json`` document whose view read ``cases`` cases (a
    document given as an array, taguru's positional quirk, has none: every case gets
    ``NO_FACTS``)."""
    if not isinstance(document, dict):
        return RunExtras(cases=(NO_FACTS,) * cases)
    facts = tuple(map(pairing_facts, _list(document.get("cases"))))
    return RunExtras(run_shape_facts(document.get("inputs")), facts)

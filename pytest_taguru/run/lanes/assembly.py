"""The passage lane under a budget: evidence assembly, or baseline search truncated client-side.

A run has one of three shapes (``assembly.md`` §1.3), chosen once from the settings by
:class:`RunShape`:

* baseline without ``--max-*``: ``POST sources/search``, every hit kept, no extra blocks;
* baseline with a ``--max-*`` flag: the same search, its hits truncated with the server's own
  accounting over one simulated evidence item per hit (§1.6), plus a ``budget`` block;
* ``--assembly``: ``POST evidence`` instead of the search (§1.4); ``hits[]`` are derived from
  the admitted items (§1.5), plus the ``evidence`` and ``budget`` blocks (§1.8).

Each shape is an :class:`OutcomeLane`: the lanes module's ``PassageLane`` signature returning
a :class:`PassageOutcome` (the recorded passage and the case's evidence/budget blocks).
Structural and citation lanes are untouched. Corpus text never leaves this module.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from pytest_taguru.artifact.assembly import (
    BudgetBlock,
    BudgetInput,
    CitationRefRecord,
    Evidence,
    EvidenceAssembled,
    EvidenceFailed,
    EvidenceItemRecord,
    RerankerRecord,
    SelectionRecord,
)
from pytest_taguru.artifact.case import HitLocator, Passage, PassageFailed, PassageSearched
from pytest_taguru.core.budget import Limits, Usage, admit_items, item_cost, passage_item
from pytest_taguru.core.wire_evidence import EvidenceItem, EvidencePackage
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.envelope import decode_error_text
from pytest_taguru.run.eval_models import EvalCase
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.run.lanes import clock
from pytest_taguru.run.lanes.case import run_lanes
from pytest_taguru.run.lanes.passage import fetch_passage_hits, search_passage_lane
from pytest_taguru.run.lanes.request_bodies import semantic_floor
from pytest_taguru.run.settings import Settings
from pytest_taguru.score.case import LaneResults

NO_PACKAGE = "response carries no recognizable evidence package ({detail})"
FILTER_WARNING = (
    "case '{case_id}': options.tags/since/until are not applied under --assembly "
    "(POST /contexts/{{name}}/evidence has no such request fields)"
)
"""§1.10, without the ``taguru: evaluate: `` prefix that the stderr copy carries."""

Locator = tuple[str, int]


@dataclass(frozen=True)
class PassageOutcome:
    """One case's passage-or-evidence result: the passage outcome scoring reads, and the
    ``evidence``/``budget`` blocks of the case (``None`` where the run shape has none)."""

    passage: Passage
    evidence: Evidence | None = None
    budget: BudgetBlock | None = None


class OutcomeLane(Protocol):
    """A passage-lane strategy that also yields the case's evidence and budget blocks."""

    def __call__(self, client: TaguruClient, context: str, case: EvalCase) -> PassageOutcome: ...


def run_case_lanes(
    client: TaguruClient, context: str, case: EvalCase, lane: OutcomeLane
) -> tuple[LaneResults, PassageOutcome]:
    """All lanes of one case in the fixed order: ``lane`` first, then structural, citation.

    The structural and citation lanes are ``case.run_lanes`` unchanged; they read the passage
    outcome ``lane`` recorded (its hits are the served set of citation recall).
    """
    outcome = lane(client, context, case)

    def recorded(client: TaguruClient, context: str, case: EvalCase) -> Passage:
        return outcome.passage

    return run_lanes(client, context, case, passage_lane=recorded), outcome


def budget_block(usage: Usage, limits: BudgetInput, omitted_total: int) -> BudgetBlock:
    return BudgetBlock(
        items_used=usage.items_used,
        bytes_used=usage.bytes_used,
        tokens_used=usage.tokens_used,
        limits=limits,
        omitted_total=omitted_total,
    )


def limits_input(limits: Limits) -> BudgetInput:
    """The resolved ceilings as the artifact records them."""
    return BudgetInput.model_validate(limits.as_json())


# --- baseline (§1.6) -------------------------------------------------------------------------


def baseline_lane(client: TaguruClient, context: str, case: EvalCase) -> PassageOutcome:
    """The untouched baseline: ``sources/search``, every hit, no evidence or budget block."""
    return PassageOutcome(search_passage_lane(client, context, case))


def simulated_item(context: str, hit: HitLocator, rank: int) -> dict[str, Any]:
    """The evidence item a search hit is measured as: hit number ``rank`` (1-based, in
    response order) is both its ``fused_rank`` and its lane rank; score and sub-lanes are the
    hit's own, as 32-bit floats; ``text`` is the hit's text (``""`` when none was sent)."""
    return passage_item(
        context,
        source=hit.source,
        paragraph=hit.paragraph,
        score=hit.score,
        text=hit.text or "",
        lanes=hit.lanes,
        fused_rank=rank,
        lane_rank=rank,
    )


def truncate_hits(
    context: str, hits: Sequence[HitLocator], limits: Limits
) -> tuple[list[HitLocator], BudgetBlock]:
    """Skip-and-continue admission of the hits' simulated items under ``limits`` (§1.6).

    The package measured has an always-empty ``citations`` array, so
    ``bytes_used = overhead(n) + B + 2`` and ``tokens_used = ceil((overhead(n) + Q + 2) / 4)``.
    Kept hits stay in their original order; ``omitted_total`` counts the skipped ones.
    """
    costs = [item_cost(simulated_item(context, hit, rank)) for rank, hit in enumerate(hits, 1)]
    admission = admit_items(hits, costs, limits)
    block = budget_block(admission.usage, limits_input(limits), len(admission.omitted))
    return admission.admitted, block


@dataclass(frozen=True)
class TruncatingLane:
    """Baseline with a ``--max-*`` flag: the search, then client-side truncation."""

    limits: Limits

    def __call__(self, client: TaguruClient, context: str, case: EvalCase) -> PassageOutcome:
        fetched = fetch_passage_hits(client, context, case)
        if isinstance(fetched, PassageFailed):
            return PassageOutcome(fetched)
        kept, block = truncate_hits(context, fetched.hits, self.limits)
        passage = PassageSearched(
            plan=fetched.plan,
            hits=kept,
            latency_ms=fetched.latency_ms,
        )
        return PassageOutcome(passage, budget=block)


# --- assembly (§1.4, §1.5, §1.8) -------------------------------------------------------------


def evidence_body(case: EvalCase, limits: Limits, rerank: str | None) -> dict[str, Any]:
    """The ``POST evidence`` body of a case (§1.4).

    ``origins`` = the cues, or ``[query]`` without any; ``text_fallback_query`` = the query;
    ``search_limit`` = the case limit, unclamped; ``semantic_floor`` = the 32-bit floor widened,
    or ``null``; ``budget`` = all three resolved limits; ``rerank`` only with a model. No tags,
    since or until, whatever the case says.
    """
    body: dict[str, Any] = {
        "origins": list(case.cues) or [case.query],
        "text_fallback_query": case.query,
        "search_limit": case.effective_limit,
        "semantic_floor": semantic_floor(case.options),
        "budget": limits.as_json(),
    }
    if rerank is not None:
        body["rerank"] = {"model": rerank}
    return body


def own_locator(item: EvidenceItem) -> Locator | None:
    """An item's own locator, by payload (not ``kind``): a passage's ``(source, paragraph)``,
    a community's ``("community:" + id, paragraph)``, none for anything else."""
    if item.passage is not None:
        return item.passage.source, item.passage.paragraph
    if item.community is not None:
        return f"community:{item.community.community}", item.community.paragraph
    return None


def evidence_locators(items: Sequence[EvidenceItem]) -> list[Locator]:
    """Per item in array order: its own locator if any, then its ``citation_refs`` in order.

    No de-duplication: a locator named twice is listed twice.
    """
    locators: list[Locator] = []
    for item in items:
        locator = own_locator(item)
        if locator is not None:
            locators.append(locator)
        locators.extend((ref.source, ref.paragraph) for ref in item.citation_refs)
    return locators


def hits_from_items(items: Sequence[EvidenceItem], case_limit: int) -> list[HitLocator]:
    """``hits[]`` of an assembled case (§1.5): the first ``case_limit`` evidence locators, each
    ``{"source", "paragraph", "score": 0.0, "lanes": {}}``."""
    return [
        HitLocator(source=source, paragraph=paragraph, score=0.0)
        for source, paragraph in evidence_locators(items)[:case_limit]
    ]


def item_record(item: EvidenceItem) -> EvidenceItemRecord:
    """What the artifact keeps of an admitted item: ids, rank, locators; never a payload."""
    locator = own_locator(item)
    return EvidenceItemRecord(
        candidate_id=item.candidate_id,
        kind=item.kind,
        fused_rank=item.fused_rank,
        source=None if locator is None else locator[0],
        paragraph=None if locator is None else locator[1],
        citation_refs=[
            CitationRefRecord(source=ref.source, paragraph=ref.paragraph)
            for ref in item.citation_refs
        ],
    )


def assembled_outcome(package: EvidencePackage, case_limit: int, latency_ms: int) -> PassageOutcome:
    """The passage, evidence and budget blocks one evidence package yields (§1.4, §1.8)."""
    plan = package.plan
    evidence = EvidenceAssembled(
        latency_ms=latency_ms,
        items=[item_record(item) for item in package.items],
        omitted_by_reason=dict(package.omitted_by_reason),
        selection=SelectionRecord.model_validate(plan.selection.model_dump()),
        reranker=RerankerRecord.model_validate(plan.reranker.model_dump()),
    )
    usage = package.budget
    block = budget_block(
        Usage(usage.items_used, usage.bytes_used, usage.tokens_used),
        BudgetInput.model_validate(usage.limits.model_dump()),
        package.omitted_total,
    )
    passage = PassageSearched(
        hits=hits_from_items(package.items, case_limit), latency_ms=latency_ms
    )
    return PassageOutcome(passage, evidence, block)


def failed_outcome(message: str, latency_ms: int) -> PassageOutcome:
    """A failed evidence lane: the same message in ``passage`` and ``evidence``, no budget."""
    return PassageOutcome(
        PassageFailed(message=message, latency_ms=latency_ms),
        EvidenceFailed(message=message, latency_ms=latency_ms),
    )


@dataclass(frozen=True)
class AssemblyLane:
    """``--assembly``: ``POST /contexts/{ctx}/evidence`` in place of the passage search."""

    limits: Limits
    rerank: str | None = None

    def __call__(self, client: TaguruClient, context: str, case: EvalCase) -> PassageOutcome:
        """One evidence call. HTTP and envelope failures are cut to 200 bytes; a package that
        does not decode is reported in full. Latency stops once the body is parsed as JSON."""
        body = evidence_body(case, self.limits, self.rerank)
        started = clock.monotonic_ns()
        try:
            result = client.post_json(["contexts", context, "evidence"], body)
        except CallFailed as failure:
            return failed_outcome(failure.truncated(), clock.call_ms(client, started))
        latency_ms = clock.call_ms(client, started)
        try:
            package = EvidencePackage.model_validate(result)
        except ValidationError as error:
            return failed_outcome(NO_PACKAGE.format(detail=decode_error_text(error)), latency_ms)
        return assembled_outcome(package, case.effective_limit, latency_ms)


# --- the run's shape (§1.3, §1.9, §1.10) -----------------------------------------------------


@dataclass(frozen=True)
class RunShape:
    """Which passage lane a run uses and what its ``inputs`` record about it."""

    assembly: bool = False
    budget_given: bool = False
    limits: Limits = field(default_factory=Limits)
    rerank: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "RunShape":
        """Limits resolve even without a flag (§1.2); ``rerank`` only counts under assembly."""
        return cls(
            assembly=settings.assembly,
            budget_given=settings.has_budget,
            limits=Limits.resolve(settings.max_items, settings.max_bytes, settings.max_tokens),
            rerank=settings.rerank if settings.assembly else None,
        )

    @property
    def mode(self) -> Literal["assembly", "baseline"]:
        """``inputs.mode``."""
        return "assembly" if self.assembly else "baseline"

    @property
    def budget_input(self) -> BudgetInput | None:
        """``inputs.budget``: the resolved limits under assembly or any ``--max-*`` flag."""
        return limits_input(self.limits) if self.assembly or self.budget_given else None

    @property
    def rerank_requested(self) -> bool:
        """Whether ``rerank.ran`` has a population (``build_metrics(rerank_requested=…)``)."""
        return self.rerank is not None

    def passage_lane(self) -> OutcomeLane:
        if self.assembly:
            return AssemblyLane(self.limits, self.rerank)
        if self.budget_given:
            return TruncatingLane(self.limits)
        return baseline_lane

    def filter_warnings(self, cases: Sequence[EvalCase]) -> list[str]:
        """One §1.10 warning per case with tags, since or until, in case order (assembly only)."""
        return filter_warnings(self.assembly, cases)


def filter_warnings(assembly: bool, cases: Sequence[EvalCase]) -> list[str]:
    """One §1.10 warning per case declaring tags, since or until, in case order, when the run
    uses ``--assembly`` (the evidence endpoint has no such request fields)."""
    if not assembly:
        return []
    return [
        FILTER_WARNING.format(case_id=case.case_id)
        for case in cases
        if case.options.tags or case.options.since is not None or case.options.until is not None
    ]

"""The metric registry: each of the 31 metrics declared once, everything else derived from it.

One :class:`Metric` per metric (after ir_measures' one definition per measure): its name, unit,
``definitions`` prose and source, and how its value is drawn from the case blocks. The
statistic follows from how it is drawn (a distribution of samples, or a ratio of counts) and
the scopes from the statistic (§6.3). A metric drawn :class:`PerCase` has a single value per
case, read at a path of the case block (or of compare's tolerant case view); exactly those are
the case-scoped threshold names (``thresholds-and-compare.md`` A.3.2), and those marked
``compared`` are ``compare``'s classification metrics (B.4).

Declaration order is the record order: the families below are listed so that the case-scoped
metrics come in A.3.2's order and the compared ones in B.4's, which is also the order of the
entries of every ``changes.jsonl`` record. The artifact's blocks are in byte order instead
(:mod:`.metrics`). Specification: ``evaluate-run.md`` §5–§6, ``assembly.md`` §1.11.
"""


from pytest_taguru.artifact.case import (
    CaseBlock,
    CheckResolved,
    CheckUnresolved,
    PassageFailed,
    SectionMatched,
    SectionNotChecked,
)
from pytest_taguru.artifact.view import CaseView
from pytest_taguru.score.metric_kind import (
    HIGHER,
    LOWER,
    Counted,
    Metric,
    PerCase,
    Samples,
    read_path,
)
from pytest_taguru.score.populations import (
    both_hit,
    evidence_latencies,
    neither_hit,
    omitted_counts,
    query_latencies,
    rerank_attempts,
    resolve_latencies,
    unresolved_code,
)
from pytest_taguru.score.shapes import share

SEARCH = "POST /contexts/{name}/sources/search"
_RESOLVE = "POST /contexts/{name}/resolve"
_RESOLVE_LABEL = "POST /contexts/{name}/resolve_label"
_QUERY = "POST /contexts/{name}/query"
_CITATIONS = "POST /contexts/{name}/citations"
_EVIDENCE = "POST /contexts/{name}/evidence"
_BUDGET = "crate::api::evidence::budget"
_LANES = "derived from coverage.* and recall.recall_at_k"

_NO_RECALL = "Only cases that searched successfully and declared a relevance-1+ source count."
_NO_CITATIONS = "Cases without expected_citations contribute no sample."
_NO_BUDGET = "Empty unless a --max-* flag or --assembly put a budget on the evidence."
_CROSS_TAB = (
    "Only cases declaring both a structural and a graded source expectation whose passage "
    "lane searched are counted."
)

RECALL = (
    Metric("recall.recall_at_k", "ratio", PerCase(("recall", "recall_at_k")),
           f"eval.jsonl expected_sources, {SEARCH}",
           "For each case, the fraction of its graded expected sources matched by any hit.",
           _NO_RECALL, better=HIGHER),
    Metric("recall.mrr", "ratio", PerCase(("recall", "mrr")),
           f"eval.jsonl expected_sources, {SEARCH}",
           "For each case, one over the 1-based rank of the first hit matching any "
           "expected source, or 0 when none does.", _NO_RECALL, better=HIGHER),
    Metric("recall.ndcg", "ratio", PerCase(("recall", "ndcg")),
           f"eval.jsonl expected_sources.relevance, {SEARCH}",
           "For each case, discounted gain of the graded expectations at their first "
           "matching hits, relative to the ideal ordering.", _NO_RECALL, better=HIGHER),
)  # fmt: skip
"""Ranking quality per case (§5.2), one sample per case with a ``recall`` block.

With hits ``h₀, h₁, …`` in server order and ``E`` the ``m`` expected sources of relevance ≥ 1,
``first(e)`` the smallest rank whose hit satisfies ``e``: ``recall_at_k = matched / m``;
``mrr = 1 / (r* + 1)`` for the first rank satisfying any ``e`` (0 when none);
``ndcg = min(DCG / IDCG, 1)`` with ``DCG = Σ rel(e) / log2(first(e) + 2)`` over matched ``e``
and ``IDCG = Σⱼ rel₍ⱼ₎ / log2(j + 2)`` over all of ``E`` sorted by relevance, descending.
"""

COVERAGE = (
    Metric("coverage.concepts", "ratio", PerCase(("coverage", "concepts", "value")),
           f"eval.jsonl expected_concepts, {_RESOLVE}",
           "For each case, the fraction of its expected concepts that some cue resolved "
           "to, compared after folding.",
           "Cases without expected_concepts contribute no sample.", better=HIGHER),
    Metric("coverage.labels", "ratio", PerCase(("coverage", "labels", "value")),
           f"eval.jsonl expected_labels, {_RESOLVE_LABEL}",
           "For each case, the fraction of its expected labels that some cue resolved "
           "to, compared after folding.",
           "Cases without expected_labels contribute no sample.", better=HIGHER),
    Metric("coverage.associations", "ratio", PerCase(("coverage", "associations", "value")),
           f"eval.jsonl expected_associations, {_QUERY}",
           "For each case, the fraction of its expected associations that a query on the "
           "pinned names found at least once.",
           "Cases without expected_associations contribute no sample; a position that "
           "did not resolve to exactly one name leaves its association uncovered.", better=HIGHER),
)  # fmt: skip
"""Structural coverage per case (§5.3): ``value = matched / expected`` for each category.

A concept (label) is matched when ``normalize_entry(trim(n)) == normalize_entry(trim(c))`` for
some name ``n`` resolved from a cue of that kind; an association when its pinned query was
``queried`` with ``total ≥ 1``. One sample per case with that coverage sub-block.
"""

CITATIONS = (
    Metric("citations.recall", "ratio", PerCase(("citations", "recall", "value")),
           f"eval.jsonl expected_citations, {SEARCH}, {_QUERY}",
           "For each case, the fraction of its expected citation locators that appeared "
           "among its passage hits or query attributions.", _NO_CITATIONS, better=HIGHER),
    Metric("citations.locator_validity", "ratio", PerCase(("citations", "validity", "value")),
           _CITATIONS,
           "For each case, the fraction of its expected citations that resolved and passed "
           "any declared section and quote check.", _NO_CITATIONS, better=HIGHER),
    Metric("citations.resolved", "ratio",
           Counted(lambda run: share(run.checks, lambda c: isinstance(c, CheckResolved))),
           _CITATIONS,
           "Fraction of all citation checks whose locator resolved to a paragraph.", better=HIGHER),
    Metric("citations.no_source", "ratio",
           Counted(lambda run: share(run.checks, lambda c: unresolved_code(c) == "no_source")),
           _CITATIONS, "Fraction of all citation checks answered 404 with code no_source.",
           better=LOWER),
    Metric("citations.no_paragraph", "ratio",
           Counted(lambda run: share(run.checks, lambda c: unresolved_code(c) == "no_paragraph")),
           _CITATIONS, "Fraction of all citation checks answered 404 with code no_paragraph.",
           better=LOWER),
    Metric("citations.other", "ratio",
           Counted(lambda run: share(run.checks, lambda c: isinstance(c, CheckUnresolved)
                                     and c.code not in ("no_source", "no_paragraph"))),
           _CITATIONS,
           "Fraction of all citation checks that failed for any other reason, so that "
           "resolved, no_source, no_paragraph and other add up to the whole.", better=LOWER),
    Metric("citations.section_match", "ratio",
           Counted(lambda run: share(
               [c.section for c in run.resolved_checks
                if not isinstance(c.section, SectionNotChecked)],
               lambda section: isinstance(section, SectionMatched))),
           f"eval.jsonl expected_citations.section, {_CITATIONS}",
           "Among resolved checks with a declared section (null included), the fraction "
           "whose section label was the declared one.",
           "n is 0 when no resolved check declared a section.", better=HIGHER),
    Metric("citations.quote_match", "ratio",
           Counted(lambda run: share(
               [c.quote for c in run.resolved_checks if c.quote is not None],
               lambda quote: quote.matched)),
           f"eval.jsonl expected_citations.quote, {_CITATIONS}",
           "Among resolved checks with a declared quote, the fraction whose folded "
           "paragraph text contains the folded quote.",
           "n is 0 when no resolved check declared a quote.", better=HIGHER),
)  # fmt: skip
"""Citations (§5.5, §6.2). Per case, with ``n`` checks: ``recall = served / n`` and
``locator_validity = valid / n``, a check being valid iff it resolved, its section check is not
``mismatched`` and any declared quote matched. Run-wide, over all checks of all cases:
``resolved``, ``no_source``, ``no_paragraph`` and ``other`` (any other code, or none) add up
to ``n``; ``section_match`` is over resolved checks with a checked section, ``quote_match`` over
resolved checks that declared a quote.
"""

LATENCY = (
    Metric("latency.passage_ms", "ms", PerCase(("passage", "latency_ms"), compared=False),
           SEARCH,
           "Milliseconds taken by each case's passage call, failed ones included.", better=LOWER),
    Metric("latency.resolve_ms", "ms", Samples(resolve_latencies),
           f"{_RESOLVE}, {_RESOLVE_LABEL}",
           "Milliseconds taken by each resolve or resolve_label call, for coverage cues "
           "and association positions alike.", better=LOWER),
    Metric("latency.query_ms", "ms", Samples(query_latencies), _QUERY,
           "Milliseconds taken by each association query, errored ones included.",
           "Empty unless some association resolved all three positions to one name.", better=LOWER),
    Metric("latency.citation_ms", "ms",
           Samples(lambda run: (check.latency_ms for check in run.checks)), _CITATIONS,
           "Milliseconds taken by each citation check, from request to computed outcome.",
           "Empty when no case declared expected_citations.", better=LOWER),
    Metric("latency.evidence_ms", "ms", Samples(evidence_latencies), _EVIDENCE,
           "Milliseconds taken by each assembly-mode evidence call, failed ones included.",
           "Empty unless the run used --assembly.", better=LOWER),
)  # fmt: skip
"""Call times in whole milliseconds, truncated (§4.5). ``latency.passage_ms`` has one sample per
case, failed calls included, and is case-scoped, but ``compare`` leaves it out (B.4): a plain
rerun's noise would flag most cases. The others sample every call of their kind, so a case has
no single value of them (A.3.2): resolve (each cue, and the three positions of each probe),
query (each probe whose query ran or errored), citation (each check), evidence (each case with
an ``evidence`` block).
"""

DIVERSITY = (
    Metric("diversity.sources", "source", PerCase(("diversity_sources",)),
           f"{SEARCH}, {_EVIDENCE}",
           "For each case, how many different sources its scored hits came from.",
           "Cases whose passage or evidence call failed contribute no sample.", better=HIGHER),
)  # fmt: skip
"""Distinct ``source`` strings among a searched case's hits (§5.8), an integer used as a double;
absent when the lane failed. The only evidence-related metric that is case-scoped and compared
(assembly.md §1.11).
"""

RUN_RATES = (
    Metric("lanes.both", "ratio", Counted(lambda run: share(run.lane_crosses, both_hit)), _LANES,
           "Fraction of cross-tab cases where the structural and the passage lane both "
           "found something expected.", better=HIGHER),
    Metric("lanes.neither", "ratio", Counted(lambda run: share(run.lane_crosses, neither_hit)),
           _LANES, "Fraction of cross-tab cases where neither lane found anything expected.",
           better=LOWER),
    Metric("lanes.passage_hit", "ratio",
           Counted(lambda run: share(run.lane_crosses, lambda cross: cross.passage_hit)), _LANES,
           "Fraction of cross-tab cases whose hits matched at least one expected source.",
           _CROSS_TAB, better=HIGHER),
    Metric("lanes.structural_hit", "ratio",
           Counted(lambda run: share(run.lane_crosses, lambda cross: cross.structural_hit)),
           _LANES,
           "Fraction of cross-tab cases whose structural coverage matched at least one "
           "expectation.", _CROSS_TAB, better=HIGHER),
    Metric("passage.failure_rate", "ratio",
           Counted(lambda run: share(run.blocks, lambda case: isinstance(case.passage,
                                                                         PassageFailed))),
           SEARCH,
           "Fraction of cases whose passage call failed or answered in an unusable shape.",
           better=LOWER),
    Metric("structural.case_rate", "ratio",
           Counted(lambda run: share(run.blocks, lambda case: case.structural is not None)),
           "eval.jsonl case fields",
           "Fraction of cases that declared a concept, label or association expectation "
           "and so ran the structural lane."),
)  # fmt: skip
"""Shares of cases (§5.4, §6.2). The ``lanes.*`` population is the cross-tab: cases declaring a
structural expectation and a relevance-1+ source whose passage lane searched, with
``structural_hit`` = some coverage sub-block matched and ``passage_hit`` = ``recall.matched > 0``.
``passage.failure_rate`` and ``structural.case_rate`` are over all cases.
"""

EVIDENCE = (
    Metric("budget.items_used", "item",
           Samples(lambda run: (budget.items_used for budget in run.budgets)), _BUDGET,
           "Number of evidence items each budgeted case kept.", _NO_BUDGET),
    Metric("budget.bytes_used", "byte",
           Samples(lambda run: (budget.bytes_used for budget in run.budgets)), _BUDGET,
           "UTF-8 bytes of the evidence each budgeted case kept.", _NO_BUDGET),
    Metric("budget.tokens_used", "token",
           Samples(lambda run: (budget.tokens_used for budget in run.budgets)), _BUDGET,
           "Estimated tokens of the evidence each budgeted case kept.", _NO_BUDGET),
    Metric("budget.omitted_rate", "ratio", Counted(omitted_counts), f"{_BUDGET}, {_EVIDENCE}",
           "Fraction of candidates considered across budgeted cases that were left out "
           "because a budget ceiling was reached.", _NO_BUDGET),
    Metric("rerank.ran", "ratio",
           Counted(lambda run: share(rerank_attempts(run), lambda reranker: reranker.ran)),
           f"{_EVIDENCE} plan.reranker",
           "Fraction of assembled --rerank cases with a non-empty pool whose reranker "
           "actually reordered it.", "Empty unless the run used --rerank."),
)  # fmt: skip
"""Budgets and reranking (assembly.md §1.11), aggregate-only; ``n = 0`` in a plain baseline.
``budget.*_used`` sample each case with a ``budget`` block. ``budget.omitted_rate`` =
Σ budget-only omitted / Σ (``omitted_total`` + ``items_used``), budget-only omitted being
``omitted_by_reason[budget_exceeded] + [contradiction_group_exceeds_budget]`` for an assembled
case and ``omitted_total`` for a baseline one. ``rerank.ran`` is over the assembled cases of a
``--rerank`` run whose reranker ``reason`` is not ``empty_pool``, counting ``ran``.
"""

METRICS: tuple[Metric, ...] = (
    *RECALL, *COVERAGE, *CITATIONS, *LATENCY, *DIVERSITY, *RUN_RATES, *EVIDENCE
)
"""All 31 metrics, in record order (the module docstring says why the order matters)."""

_LABELS = f"eval.jsonl expected_sources, {SEARCH}"
_BOUNDED = {"recall_at_k": "recall@k", "mrr": "MRR", "ndcg": "nDCG"}
EXTRA_METRICS: tuple[Metric, ...] = (
    Metric("label_coverage.judged_at_k", "ratio",
           PerCase(("label_coverage", "judged_at_k"), compared=False), _LABELS,
           "For each case, the share of its hits that some expected source (any relevance, 0 "
           "included) labels.", "Only cases that searched, got hits and declared an "
           "expected source count.", better=HIGHER),
    *(Metric(f"label_coverage.{name}_{side}", "ratio",
             PerCase(("label_coverage", name, side), compared=False), _LABELS,
             f"For each case, the {'least' if side == 'low' else 'greatest'} {shown} over every "
             "relevance (0-3) its unjudged hits could be labelled with.", _NO_RECALL)
      for name, shown in _BOUNDED.items() for side in ("low", "high")),
)  # fmt: skip
"""pytest-taguru's own metrics, OUTSIDE the 31: written to the artifact's ``extra_metrics``
block (never ``metrics``), never gated, compared or listed with the 31. Label coverage
(``score.label_coverage``): judged@k, and the bounds of recall@k, MRR and nDCG over every
labelling of the unjudged hits (the run's mean of the lows ≤ the official mean ≤ the mean of
the highs, over the same cases)."""

_CASE_SCOPED = {metric.name: metric for metric in METRICS if metric.case_path is not None}

CASE_SCOPED_METRICS = tuple(_CASE_SCOPED)
"""The ten names legal in ``cases.default`` and override maps, in A.3.2's order."""

COMPARISON_METRICS = tuple(metric.name for metric in METRICS if metric.compared)
"""The nine classification metrics of ``compare``, in record order (B.4)."""

PAIRED_METRICS = tuple(metric.name for metric in METRICS if metric.paired)
"""The metrics with paired statistics against a baseline, in record order."""

METRICS_BY_NAME = {metric.name: metric for metric in METRICS}

CASE_SCORES = tuple(metric.name for metric in _CASE_SCOPED.values() if metric.unit == "ratio")
"""The case-scoped scores (values in 0..1), in record order: what verbose output and JUnit XML
show of a case."""


def case_value(case: CaseBlock | CaseView, metric: str) -> float | None:
    """A case's own value for a case-scoped metric (A.3.2, B.4); ``None`` = not applicable.

    ``citations.locator_validity`` reads ``citations.validity.value``; ``diversity.sources``
    the top-level ``diversity_sources``; ``latency.passage_ms`` always applies to a case block
    (a case view has no passage, and ``compare`` never asks for it).
    """
    found = _CASE_SCOPED.get(metric)
    if found is None or found.case_path is None:
        raise ValueError(f"not a case-scoped metric: {metric}")
    return read_path(case, found.case_path)

"""Every run-level number of a run, gathered one case block at a time.

The controller reads its cases back one by one at the finish (``run.received``): folding them
here in case order gives the same ``metrics``, ``extra_metrics``, slices' scorecards and
stdout summary as the batch functions over a list of all of them (``score.metrics``,
``score.slices``, ``score.summary``), without holding 100,000 blocks at once.
"""

from collections.abc import Iterable, Mapping, Sequence

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.artifact.evaluation import ExtraMetrics, MetricValue, SliceCard
from pytest_taguru.score.metrics import extra_metric_tallies, extra_metrics_block, metric_tallies
from pytest_taguru.score.populations import RunCases
from pytest_taguru.score.slices import SliceTally
from pytest_taguru.score.summary import RunSummary, SummaryTally


class RunFold:
    """The run-level numbers of the cases added so far (add them in case order: the summary's
    means and its first invalid locators follow it).

    ``rerank_requested``: the run was given ``--rerank`` (``build_metrics``); ``slices``: name
    → globs of the slices to score, in declaration order.
    """

    def __init__(
        self,
        *,
        rerank_requested: bool = False,
        slices: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self._rerank_requested = rerank_requested
        self._metrics = metric_tallies()
        self._extras = extra_metric_tallies()
        self._summary = SummaryTally()
        self._slices = (
            None if slices is None else {name: SliceTally(globs) for name, globs in slices.items()}
        )

    @classmethod
    def of(
        cls,
        cases: Iterable[CaseBlock],
        *,
        rerank_requested: bool = False,
        slices: Mapping[str, Sequence[str]] | None = None,
    ) -> "RunFold":
        fold = cls(rerank_requested=rerank_requested, slices=slices)
        for case in cases:
            fold.add(case)
        return fold

    def add(self, case: CaseBlock) -> None:
        run = RunCases((case,), self._rerank_requested)
        for tally in self._metrics.values():
            tally.add(run)
        for tally in self._extras.values():
            tally.add(run)
        self._summary.add(case)
        for slice_tally in (self._slices or {}).values():
            if slice_tally.matcher.match(case.case_id):
                slice_tally.add(run)

    def metrics(self) -> dict[str, MetricValue]:
        """The ``metrics`` block, keys in byte-wise order."""
        return {name: tally.value() for name, tally in self._metrics.items()}

    def extra_metrics(self) -> ExtraMetrics:
        return extra_metrics_block({name: tally.value() for name, tally in self._extras.items()})

    def summary(self) -> RunSummary:
        return self._summary.result()

    def slice_cards(self) -> dict[str, SliceCard] | None:
        """The ``slices`` block (``None`` when no slices were asked for)."""
        if self._slices is None:
            return None
        return {name: tally.card() for name, tally in self._slices.items()}

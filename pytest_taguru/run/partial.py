"""The partial-run policy: whether a run covered its dataset, and what that means for the gate
and the artifact. Declared once here; the controller, the gate result and the README follow it.

A run is *complete* when every dataset case came back with a block; otherwise it is *partial*
(``-k``, node ids, ``--deselect``, ``--lf``, ``-x``, a skipped or errored case, a crashed worker),
and *empty* when no case came back at all. Then:

* aggregate bounds are judged only on a complete run, unless ``--taguru-gate-partial`` asks for
  the subset to be judged; case-scoped bounds and the corpus-stability rule always apply to the
  cases that ran (nothing applies to an empty run);
* a complete run writes the configured artifact; a partial one writes
  ``<stem>.partial<suffix>`` beside it (``evaluation.partial.json``) unless ``--taguru-out`` was
  typed on the command line, so a debugging run never replaces a complete baseline (every
  other output, the HTML report included, follows the same rule); an empty run writes nothing
  and exits 5 (pytest's "no tests ran");
* a shard (``--taguru-shard I/N``, ``run.shard``) is a *planned* subset: its dataset is the
  shard's own cases, so a shard that ran them all is complete and writes the configured
  artifact, exactly at ``--taguru-out`` (it replaces no complete run: ``taguru-evaluate merge``
  makes that one); case-scoped bounds and corpus stability are judged as always, but its
  aggregate bounds are left to the merge, which judges the whole set, unless
  ``--taguru-gate-partial`` asks for the shard's subset to be judged. A shard that leaves some
  of its own cases out is partial by the rules above;
* a session that exits 1 whatever the gate says (:func:`session_failure`: a crashed or killed
  worker, an errored case, a failing ordinary test) writes no artifact at all, so a file already
  there is left untouched, as taguru writes none on exit 1. The HTML report is still written,
  by the rule above, and says so.

Pure: the caller counts the cases and writes the files.
"""

from dataclasses import dataclass
from pathlib import PurePath

PARTIAL_MARK = ".partial"
EMPTY_RUN_STATUS = 5
"""pytest's "no tests ran": a run in which no dataset case ran exits with it, whatever else."""


def session_failure(other_failures: int, regressions: int, *, pytest_failed: bool) -> str | None:
    """Why a completed session exits 1 whatever the gate says, or ``None``: a failure that is
    no case regression (an ordinary test, an errored case, a crashed worker, a collection
    error), or a failure pytest counted that no case bound explains."""
    if other_failures:
        return (
            f"{other_failures} test(s) or collection error(s) other than case regressions "
            "failed (an ordinary test, an errored case, a crashed worker)"
        )
    if pytest_failed and not regressions:
        return "pytest counted a failure that no case bound explains"
    return None


def partial_path(out: str) -> str:
    """``evaluation.json`` → ``evaluation.partial.json``, in the same directory (a name without
    a suffix gets ``.partial`` appended)."""
    path = PurePath(out)
    return str(path.with_name(f"{path.stem}{PARTIAL_MARK}{path.suffix}"))


@dataclass(frozen=True)
class RunCoverage:
    """How much of the dataset a run covered."""

    dataset_cases: int
    ran_cases: int
    shard: str | None = None
    """``shard 1/3 (12 of 36 cases)`` when the dataset is one shard of the eval set."""

    @property
    def complete(self) -> bool:
        return self.ran_cases >= self.dataset_cases

    @property
    def empty(self) -> bool:
        return self.ran_cases == 0

    def describe(self) -> str:
        """``partial run (2 of 36 cases)``, ``no case ran (0 of 36 cases)`` or
        ``complete run (36 cases)``; a shard's ends ``of shard 1/3 (12 of 36 cases)``."""
        if self.empty:
            described = f"no case ran ({self.ran_cases} of {self.dataset_cases} cases)"
        elif self.complete:
            described = f"complete run ({self.dataset_cases} cases)"
        else:
            described = f"partial run ({self.ran_cases} of {self.dataset_cases} cases)"
        return described if self.shard is None else f"{described} of {self.shard}"

    def subset(self) -> str | None:
        """What part of the eval set the run judged, when not all of it: ``a partial run (2
        of 36 cases)``, ``shard 1/3 (12 of 36 cases)``; None for a complete, unsharded run."""
        if not self.complete:
            return f"a {self.describe()}"
        return self.shard


@dataclass(frozen=True)
class PartialRunPolicy:
    """The rule, applied to one run's settings."""

    out: str
    """The configured artifact path (``--taguru-out``, ini ``taguru_out``, or the default)."""
    typed: frozenset[str] = frozenset()
    """The flags typed on the command line (``out``, ``html`` …): a partial run writes to a
    path typed there as given."""
    gate_partial: bool = False
    """``--taguru-gate-partial``: judge aggregate bounds on a partial run's subset."""

    def output_path(self, configured: str | None, flag: str, coverage: RunCoverage) -> str | None:
        """Where an output configured at ``configured`` by ``--taguru-<flag>`` goes: as given
        for a complete run or a path typed on the command line, beside it for a partial run,
        nowhere for an empty run (or when it is not configured)."""
        if configured is None or coverage.empty:
            return None
        if coverage.complete or flag in self.typed:
            return configured
        return partial_path(configured)

    def artifact_path(
        self, coverage: RunCoverage, *, session_failure: str | None = None
    ) -> str | None:
        """Where the run's artifact goes; ``None`` for an empty run, or for a session that
        exits 1 anyway (``session_failure`` says why): nothing is written."""
        if session_failure is not None:
            return None
        return self.output_path(self.out, "out", coverage)

    def aggregate_skip_reason(self, coverage: RunCoverage) -> str | None:
        """Why aggregate bounds are not checked against this run's metrics (the gate's
        ``aggregate_skipped``), or None when they are."""
        if coverage.empty:
            return coverage.describe()
        if self.gate_partial:
            return None
        if not coverage.complete:
            return coverage.describe()
        if coverage.shard is not None:
            return f"{coverage.shard}: judged on the merged run (taguru-evaluate merge)"
        return None

    def judges_aggregates(self, coverage: RunCoverage) -> bool:
        """Whether aggregate bounds are checked against this run's metrics."""
        return self.aggregate_skip_reason(coverage) is None

    def judges_anything(self, coverage: RunCoverage) -> bool:
        """Whether the gate runs at all (case-scoped bounds, corpus stability)."""
        return not coverage.empty

    def exit_status(self, coverage: RunCoverage) -> int | None:
        """The status this policy imposes (5 for an empty run), or ``None``."""
        return EMPTY_RUN_STATUS if coverage.empty else None

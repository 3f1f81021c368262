"""From the ``--taguru-*`` values to a validated run: every input checked before any network call.

The values arrive as plain strings (``flag_values.RawOptions``) and are validated here, so that
a bad value or file ends the session with taguru's exit 2 (pytest's own option errors exit 4).
The order is taguru's start-up order (``evaluate-run.md`` §1.3): flag values, eval.jsonl,
``options.limit``, thresholds file, config file and URL; then what this version cannot do yet
(assembly, budgets) and the ``--taguru-serve`` file; then pytest-taguru's own inputs, the slices
and the slice thresholds file, and the baseline file (``--taguru-baseline``: read, then checked
against the run's settings and eval set).
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_taguru.artifact.view import LoadedRun
from pytest_taguru.errors import PREFIX, UsageError
from pytest_taguru.flags import OPTIONS
from pytest_taguru.gate.baseline import check_comparable, load_baseline
from pytest_taguru.gate.slice_file import load_slice_thresholds
from pytest_taguru.gate.thresholds import Thresholds, load_thresholds, read_input
from pytest_taguru.run.dataset import check_limits, load_eval_set
from pytest_taguru.run.eval_models import EvalSet
from pytest_taguru.run.flag_values import RawOptions, check_flags, flag_value, parse_shard
from pytest_taguru.run.lanes.assembly import filter_warnings
from pytest_taguru.run.settings import Settings, resolve_settings
from pytest_taguru.run.shard import ShardPlan
from pytest_taguru.run.slices import (
    SliceDefinitions,
    Slicing,
    empty_slice_warnings,
    load_slices_file,
)
from pytest_taguru.score.metrics import definitions


@dataclass(frozen=True)
class PreparedRun:
    """Validated inputs of a run: settings, the eval set, the thresholds (or None), and the
    start-up lines for stderr (assembly filter warnings, config-file notes), in taguru's order;
    the baseline run (or None)."""

    settings: Settings
    eval_set: EvalSet
    thresholds: Thresholds | None
    startup_lines: tuple[str, ...] = ()
    baseline: LoadedRun | None = None
    slicing: Slicing | None = None
    shard: ShardPlan | None = None
    """``--taguru-shard``: the run collects only this shard's cases."""

    @property
    def run_set(self) -> EvalSet:
        """The eval set this run collects: the shard's cases, or all of them."""
        if self.shard is None:
            return self.eval_set
        return self.eval_set.model_copy(update={"cases": self.shard.select(self.eval_set.cases)})


def load_slicing(raw: RawOptions, case_ids: list[str]) -> tuple[Slicing | None, list[str]]:
    """The slices (``--taguru-slices`` or ``--taguru-slices-file``) and the slice thresholds
    file, checked; and the start-up warnings (a slice matching no case, a ratio bound outside
    0..1). Raises ``UsageError``."""
    definitions = None
    if raw.slices is not None:
        parsed = flag_value(OPTIONS["slices"], raw.slices, raw.flag("slices"))
        assert isinstance(parsed, SliceDefinitions)
        definitions = parsed
    elif raw.slices_file is not None:
        definitions = load_slices_file(raw.slices_file)
    if definitions is None:
        if raw.slice_thresholds is not None:
            raise UsageError(
                f"{raw.flag('slice-thresholds')} needs slices: {raw.flag('slices')} or "
                f"{raw.flag('slices-file')}"
            )
        return None, []
    warnings = empty_slice_warnings(definitions, case_ids)
    thresholds = None
    if raw.slice_thresholds is not None:
        thresholds = load_slice_thresholds(raw.slice_thresholds, slice_names=definitions.globs)
        warnings += thresholds.warnings
    return Slicing(definitions, thresholds), warnings


def prepare_run(
    raw: RawOptions, environ: Mapping[str, str] | None = None, *, with_baseline: bool = True
) -> PreparedRun:
    """Validate flags and files in taguru's start-up order; raise ``UsageError`` (exit 2).

    ``with_baseline=False`` (a pytest-xdist worker) leaves the baseline file to the controller,
    which alone judges the run."""
    check_flags(raw, require_context=False)
    assert raw.eval_path is not None
    eval_set = load_eval_set(raw.eval_path)
    check_limits(eval_set)
    cases, shard = eval_set.cases, None
    if raw.shard is not None:
        shard = ShardPlan.of(
            parse_shard(raw.shard, raw.flag("shard")),
            [case.case_id for case in cases],
            read_input(raw.eval_path),
        )
        cases = shard.select(cases)
    warnings = [
        f"{PREFIX}{warning}" for warning in filter_warnings(raw.assembly, cases)
    ]
    case_ids = [case.case_id for case in eval_set.cases]
    try:
        thresholds = None
        if raw.thresholds is not None:
            thresholds = load_thresholds(
                raw.thresholds, metric_names=definitions().keys(), case_ids=case_ids
            )
        settings = resolve_settings(
            raw,
            os.environ if environ is None else environ,
            default_context=eval_set.default_context,
        )
        if settings.serve_import is not None and not Path(settings.serve_import).is_file():
            raise UsageError(f"cannot read {settings.serve_import}: no such file")
        slicing, slice_warnings = load_slicing(raw, case_ids)
        baseline = None
        if settings.baseline is not None and with_baseline:
            baseline = load_baseline(settings.baseline)
            check_comparable(settings.baseline, baseline, settings, eval_set)
    except UsageError as error:
        error.preceding = [*warnings, *error.preceding]
        raise
    notes = [*(thresholds.warnings if thresholds is not None else ()), *slice_warnings]
    warnings += [f"{PREFIX}warning: {warning}" for warning in notes]
    return PreparedRun(
        settings,
        eval_set,
        thresholds,
        startup_lines=(*warnings, *settings.config_notes),
        baseline=baseline,
        slicing=slicing,
        shard=shard,
    )

"""Whether two runs may be gated against each other — one rule for ``--taguru-baseline`` and
``compare --stats --fail-on-regression``.

Two runs are comparable when they asked the same question of their server:

* the same context (``inputs.context``);
* the same mode (``inputs.mode``; an artifact without one is a ``baseline`` run, as taguru
  wrote before assembly existed);
* the same budget (``inputs.budget``: all three ceilings, or none on both sides);
* the same limits (``inputs.default_limit`` and ``inputs.resolve_limit``, where both record
  them);
* and enough shared cases: at least half of the smaller run's cases (``MIN_SHARED_SHARE``) are
  in both runs under the same ``case_id`` with the same expectations (``run.expectations``;
  unknown on a side without hashes, then the id alone counts). That admits a grown or trimmed
  eval set and refuses an unrelated one or a wholesale relabelling.

The corpus revision, the reranker and the thresholds file may differ: they are what a baseline
comparison measures, or not part of the question. Pure.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_taguru.artifact.view import LoadedRun

MIN_SHARED_SHARE = 0.5
Budget = tuple[int | None, int | None, int | None]


@dataclass(frozen=True)
class RunQuestion:
    """What a run asked (see the module docstring); ``None`` = not recorded."""

    context: str
    mode: Any
    budget: Budget | None
    default_limit: Any = None
    resolve_limit: Any = None
    cases: Mapping[str, str | None] | None = None
    """case_id → expectations hash (``None``: unknown)."""


def question_of(run: LoadedRun) -> RunQuestion:
    """What an artifact's run asked, as compare reads it."""
    view = run.view
    budget, shape = view.inputs.budget, view.extras.shape
    return RunQuestion(
        context=view.inputs.context,
        mode=shape.mode if shape.mode is not None else "baseline",
        budget=None if budget is None else (budget.max_items, budget.max_bytes, budget.max_tokens),
        default_limit=shape.default_limit,
        resolve_limit=shape.resolve_limit,
        cases={
            case.case_id: facts.expectations_sha256
            for case, facts in zip(view.cases, view.extras.cases, strict=True)
        },
    )


def budget_text(budget: Budget | None) -> str:
    if budget is None:
        return "none"
    items, size, tokens = budget
    return f"max_items={items} max_bytes={size} max_tokens={tokens}"


def shared_cases(base: Mapping[str, str | None], head: Mapping[str, str | None]) -> int:
    """Cases in both under the same id whose expectations are equal or not known."""
    return sum(
        1
        for case_id in base.keys() & head.keys()
        if base[case_id] is None or head[case_id] is None or base[case_id] == head[case_id]
    )


def comparability_problems(base: RunQuestion, head: RunQuestion) -> list[str]:
    """Why ``head`` cannot be gated against ``base``, in the module docstring's order (empty:
    comparable). Texts name the baseline first."""
    problems = []
    if base.context != head.context:
        problems.append(f"context differs (baseline '{base.context}', this run '{head.context}')")
    if base.mode != head.mode:
        problems.append(f"mode differs (baseline {base.mode}, this run {head.mode})")
    if base.budget != head.budget:
        problems.append(
            f"budget differs (baseline {budget_text(base.budget)}, this run "
            f"{budget_text(head.budget)})"
        )
    for name in ("default_limit", "resolve_limit"):
        b, h = getattr(base, name), getattr(head, name)
        if b is not None and h is not None and b != h:
            problems.append(f"{name} differs (baseline {b}, this run {h})")
    if base.cases is not None and head.cases is not None:
        shared = shared_cases(base.cases, head.cases)
        smaller = min(len(base.cases), len(head.cases))
        if shared == 0 or shared < MIN_SHARED_SHARE * smaller:
            problems.append(
                f"they share {shared} of {smaller} case(s) (same case_id and expectations; at "
                f"least {MIN_SHARED_SHARE:.0%} of the smaller run's cases are needed)"
            )
    return problems

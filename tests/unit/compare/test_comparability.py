"""``compare.comparability``: which runs may be gated against each other."""

import json
from typing import Any

from pytest_taguru.artifact.view import read_run
from pytest_taguru.compare.comparability import (
    RunQuestion,
    comparability_problems,
    question_of,
    shared_cases,
)


def question(**changes: Any) -> RunQuestion:
    fields: dict[str, Any] = {
        "context": "sake",
        "mode": "baseline",
        "budget": None,
        "default_limit": 10,
        "resolve_limit": 5,
        "cases": {f"c{i}": "h" for i in range(10)},
    }
    return RunQuestion(**{**fields, **changes})


def test_the_same_question_is_comparable() -> None:
    assert comparability_problems(question(), question()) == []


def test_every_difference_is_named_in_order() -> None:
    head = question(
        context="other",
        mode="assembly",
        budget=(40, 65536, 4000),
        default_limit=20,
        cases={"x": "h"},
    )
    assert comparability_problems(question(), head) == [
        "context differs (baseline 'sake', this run 'other')",
        "mode differs (baseline baseline, this run assembly)",
        "budget differs (baseline none, this run max_items=40 max_bytes=65536 max_tokens=4000)",
        "default_limit differs (baseline 10, this run 20)",
        "they share 0 of 1 case(s) (same case_id and expectations; at least 50% of the smaller "
        "run's cases are needed)",
    ]


def test_a_grown_eval_set_is_comparable_and_a_relabelled_one_is_not() -> None:
    grown = {**{f"c{i}": "h" for i in range(10)}, **{f"n{i}": "h" for i in range(30)}}
    assert comparability_problems(question(), question(cases=grown)) == []
    relabelled = {f"c{i}": ("h" if i < 4 else "other") for i in range(10)}
    (problem,) = comparability_problems(question(), question(cases=relabelled))
    assert problem.startswith("they share 4 of 10 case(s)")
    half = {f"c{i}": ("h" if i < 5 else "other") for i in range(10)}
    assert comparability_problems(question(), question(cases=half)) == []


def test_unknown_hashes_and_limits_do_not_refuse() -> None:
    assert shared_cases({"a": None, "b": "x"}, {"a": "y", "b": "x"}) == 2
    assert comparability_problems(question(default_limit=None), question(default_limit=20)) == []


def test_the_question_of_an_artifact() -> None:
    document = {
        "taguru_evaluation": 1,
        "inputs": {
            "context": "sake",
            "budget": {"max_items": 1, "max_bytes": 2, "max_tokens": 3},
            "default_limit": 10,
        },
        "cases": [{"case_id": "a", "expectations_sha256": "h"}, {"case_id": "b"}],
    }
    asked = question_of(read_run(json.dumps(document), "base.json"))
    assert asked.mode == "baseline"  # absent: a run from before assembly existed
    assert asked.budget == (1, 2, 3)
    assert (asked.default_limit, asked.resolve_limit) == (10, None)
    assert asked.cases == {"a": "h", "b": None}

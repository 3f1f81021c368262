"""The header of the data island: the run's target and inputs, its corpus, the gate verdict,
and the notices shown at the top of the page (a partial run, a failed gate, report-only).

Everything is read from the artifact, except ``session_notes``: what only the live pytest
session knows (ordinary tests that failed beside the cases), passed in by the controller.
"""

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from pytest_taguru.artifact.evaluation import Evaluation, RevisionRecord
from pytest_taguru.errors import PREFIX
from pytest_taguru.gate.thresholds import GateReport, Violation
from pytest_taguru.report.html.compact import figure
from pytest_taguru.report.summary import REPORT_ONLY_NOTICE

Notice = list[str]
"""``[level, text]``; level is ``error``, ``warning``, ``ok`` or ``info``."""



def read_gate(evaluation: Evaluation) -> tuple[GateReport | None, str | None]:
    """The artifact's ``thresholds`` block as a gate report, or why it could not be read."""
    if evaluation.thresholds is None:
        return None, None
    try:
        return GateReport.model_validate(evaluation.thresholds), None
    except ValidationError as error:
        count = error.error_count()
        return None, f"the artifact's thresholds block is not readable ({count} problem(s))"


def _sentence(line: str) -> str:
    """A terminal line of this tool as a sentence of the page."""
    text = line.removeprefix(PREFIX)
    return text[:1].upper() + text[1:] + "."


def _revision(revision: RevisionRecord) -> list[int]:
    return [revision.graph, revision.passages, revision.config]


def _violation(item: Violation) -> list[Any]:
    return [
        item.scope,
        item.metric,
        item.bound,
        figure(item.threshold),
        figure(item.actual),
        item.reason,
    ]


def notices(
    evaluation: Evaluation,
    gate: GateReport | None,
    gate_problem: str | None,
    session_notes: Sequence[str],
) -> list[Notice]:
    """What the top of the page must say first, most severe first."""
    out: list[Notice] = [["error", note] for note in session_notes]
    ran, declared = len(evaluation.cases), evaluation.inputs.eval.cases
    if ran < declared:
        partial = f"Partial run: {ran} of {declared} case(s) ran; the report shows those."
        out.append(["warning", partial])
    if gate_problem is not None:
        out.append(["warning", gate_problem[:1].upper() + gate_problem[1:] + "."])
    elif gate is None:
        out.append(["info", _sentence(REPORT_ONLY_NOTICE)])
    elif gate.passed:
        out.append(["ok", "The gate passed: every bound of the thresholds file held."])
    else:
        count = len(gate.violations or [])
        out.append(["error", f"The gate failed: {count} violation(s) of the thresholds file."])
    if not evaluation.corpus.stable and (gate is None or gate.allow_unstable_corpus):
        out.append(["warning", "The corpus changed during the run (revision before ≠ after)."])
    return out


def header_section(
    evaluation: Evaluation,
    gate: GateReport | None,
    *,
    gate_problem: str | None = None,
    session_notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The ``header`` key of the island."""
    inputs, corpus = evaluation.inputs, evaluation.corpus
    gate_block = None
    if gate is not None:
        violations = gate.violations or []
        case_violations = [item for item in violations if item.scope == "case"]
        gate_block = {
            "passed": gate.passed,
            "sha256": gate.sha256,
            "allow_unstable_corpus": gate.allow_unstable_corpus,
            "violations": [_violation(item) for item in violations if item.scope != "case"],
            "case_violations": len(case_violations),
            "failing_cases": len({item.case_id for item in case_violations}),
            "skipped": len(gate.skipped or []),
        }
    return {
        "title": inputs.eval.name or inputs.eval.path or "evaluation",
        "eval": {"path": inputs.eval.path, "name": inputs.eval.name, "cases": inputs.eval.cases},
        "ran": len(evaluation.cases),
        "context": inputs.context,
        "url": inputs.url,
        "out": inputs.out,
        "mode": inputs.mode,
        "budget": None if inputs.budget is None else inputs.budget.model_dump(),
        "rerank": inputs.rerank,
        "limits": [inputs.default_limit, inputs.resolve_limit],
        "generated_at": evaluation.generated_at,
        "corpus": {
            "before": _revision(corpus.revision_before),
            "after": _revision(corpus.revision_after),
            "stable": corpus.stable,
            "epochs": [corpus.last_write_epoch_before, corpus.last_write_epoch_after],
            "sources": corpus.sources_count,
            "embeddings": None if corpus.embeddings is None else corpus.embeddings.provider_model,
            "embeddings_read": corpus.embeddings is not None,
        },
        "gate": gate_block,
        "notices": notices(evaluation, gate, gate_problem, session_notes),
        "warnings": list(evaluation.warnings or []),
    }

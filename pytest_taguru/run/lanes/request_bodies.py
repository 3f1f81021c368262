"""The request bodies the lanes send (evaluate-run.md §4), built once.

The lanes send them, and the drill-down prints them as the reproduction of a failed case, so
that what a user re-runs is what the run asked.
"""

from typing import Any

from pytest_taguru.core.jsontext import to_f32
from pytest_taguru.run.eval_models import RESOLVE_LIMIT, CaseOptions, EvalCase

QUERY_LIMIT = 1
"""``limit`` of the pinned ``/query`` of an association probe: one match answers it."""


def semantic_floor(options: CaseOptions, floor_type: type[float] = float) -> float | None:
    """The case's ``options.floor`` as its 32-bit value, or ``None``.

    ``floor_type`` says how the writer spells it: ``float``, the widened double the lanes send
    (``0.4000000059604645``); ``Float32``, its shortest 32-bit text (``0.4``), as printed.
    """
    return None if options.floor is None else floor_type(to_f32(options.floor))


def search_body(case: EvalCase, floor_type: type[float] = float) -> dict[str, Any]:
    """The six-key ``sources/search`` body (§4.1), in its key order."""
    options = case.options
    return {
        "query": case.query,
        "limit": case.effective_limit,
        "semantic_floor": semantic_floor(options, floor_type),
        "tags": list(options.tags),
        "since": options.since,
        "until": options.until,
    }


def resolve_body(cue: str) -> dict[str, Any]:
    """A ``resolve``/``resolve_label`` body (§4.2, §4.3)."""
    return {"cue": cue, "limit": RESOLVE_LIMIT}


def query_body(subject: str, label: str, object_: str) -> dict[str, Any]:
    """The pinned ``/query`` body of an association probe (§4.3)."""
    return {"subject": subject, "label": label, "object": object_, "limit": QUERY_LIMIT}


def citation_body(source: str, paragraph: int) -> dict[str, Any]:
    """A ``citations`` body (§4.4)."""
    return {"source": source, "paragraph": paragraph}

"""The citation lane (evaluate-run.md §4.4): one ``POST citations`` per declared locator.

Section and quote checks are computed on the served paragraph; only a 404 carries a ``code``.
"""

from pydantic import ValidationError

from pytest_taguru.artifact.case import (
    CheckResolved,
    CheckUnresolved,
    CitationCheck,
    QuoteCheck,
    SectionCheck,
    SectionMatched,
    SectionMismatched,
    SectionNotChecked,
    ServedSection,
)
from pytest_taguru.core.text import normalize_entry, trim, truncate_message
from pytest_taguru.core.wire import Citation
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.envelope import decode_error_text
from pytest_taguru.run.eval_models import ExpectedCitation
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.run.lanes import clock
from pytest_taguru.run.lanes.request_bodies import citation_body


def section_check(expected: ExpectedCitation, served: str | None) -> SectionCheck:
    """Three-valued and exact: key absent → not checked; else ``expected == served``."""
    if not expected.section_declared:
        return SectionNotChecked()
    if expected.section == served:
        return SectionMatched(expected=expected.section)
    return SectionMismatched(expected=expected.section, served=ServedSection(name=served))


def quote_matches(quote: str, text: str) -> bool:
    """``normalize_entry(trim(quote))`` is a substring of ``normalize_entry(trim(text))``."""
    return normalize_entry(trim(quote)) in normalize_entry(trim(text))


def check_citation(
    client: TaguruClient,
    context: str,
    expected: ExpectedCitation,
    served: set[tuple[str, int]],
) -> CitationCheck:
    """``POST citations`` for one declared locator, its outcome and checks.

    Only a 404 carries a ``code``; every message is truncated. Latency runs until the outcome,
    checks included, is computed.
    """
    is_served = (expected.source, expected.paragraph) in served
    body = citation_body(expected.source, expected.paragraph)
    started = clock.monotonic_ns()
    code: str | None = None
    try:
        result = client.post_json(["contexts", context, "citations"], body)
        citation = Citation.model_validate(result)
    except CallFailed as failure:
        message = failure.truncated()
        code = failure.code if failure.not_found else None
    except ValidationError as error:
        message = truncate_message(f"citation response did not parse: {decode_error_text(error)}")
    else:
        section = section_check(expected, citation.section)
        quote = (
            None
            if expected.quote is None
            else QuoteCheck(
                declared=expected.quote, matched=quote_matches(expected.quote, citation.text)
            )
        )
        return CheckResolved(
            source=expected.source,
            paragraph=expected.paragraph,
            served=is_served,
            section=section,
            quote=quote,
            latency_ms=clock.call_ms(client, started),
        )
    return CheckUnresolved(
        source=expected.source,
        paragraph=expected.paragraph,
        served=is_served,
        code=code,
        message=message,
        latency_ms=clock.call_ms(client, started),
    )

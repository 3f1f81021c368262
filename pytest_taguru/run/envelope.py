"""The envelope rule and the failure texts of an answer that is not a success.

Every call except the two ``/health`` reads succeeds only with status exactly 200 and a JSON
object carrying a ``result`` key, whose value is the call's result. Anything else is a
:class:`CallFailed` with the exact message form of the specification, the status and, for a
404, the body's ``code``. Specification: ``evaluate-run.md`` §3.5; ``server-wire.md`` §1.3.
"""

from typing import Any

import httpx
from pydantic import ValidationError

from pytest_taguru.core.serde import SerdeError, read_json
from pytest_taguru.core.text import trim
from pytest_taguru.run.exchange import Answer, CallFailed


def decode_error_text(error: ValidationError) -> str:
    """One line naming the first problem, as serde reports only its first error.

    Form: ``<dotted location>: <message>`` (location omitted at the top level).
    """
    first = error.errors(include_url=False)[0]
    location = ".".join(
        f"[{part}]" if isinstance(part, int) else str(part) for part in first["loc"]
    ).replace(".[", "[")
    return f"{location}: {first['msg']}" if location else str(first["msg"])


def _parse_body(text: str) -> Any:
    """The answer's JSON, ``None`` when it is not JSON to taguru's reader (a body nested past
    serde's limit included: taguru reads it as ``Value::Null`` too)."""
    try:
        # The wire models read any object as a map (a repeated key's last value).
        return read_json(text, exact_wide_integers=True, objects="last_wins")
    except SerdeError:
        return None


def visible_header(headers: httpx.Headers, name: str) -> str | None:
    """A header's first raw value, or ``None`` when absent or not visible ASCII (``to_str``)."""
    wanted = name.encode("ascii")
    for key, value in headers.raw:
        if key.lower() == wanted:
            if all(byte == 0x09 or 0x20 <= byte < 0x7F for byte in value):
                return value.decode("ascii")
            return None
    return None


def status_failure(url: str, answer: Answer) -> CallFailed:
    """``<url> answered <status>: <detail>`` plus `` (Retry-After: <value>)`` when sent."""
    parsed = _parse_body(answer.text)
    error = parsed.get("error") if isinstance(parsed, dict) else None
    detail = error if isinstance(error, str) else trim(answer.text)
    message = f"{url} answered {answer.status}: {detail}"
    retry_after = visible_header(answer.headers, "retry-after")
    if retry_after is not None:
        message += f" (Retry-After: {retry_after})"
    code = parsed.get("code") if isinstance(parsed, dict) and answer.status == 404 else None
    return CallFailed(message, answer.status, code if isinstance(code, str) else None)


def unwrap(url: str, answer: Answer) -> Any:
    """The envelope rule: status 200 and a JSON object with ``result``, else :class:`CallFailed`."""
    if answer.status != 200:
        raise status_failure(url, answer)
    parsed = _parse_body(answer.text)
    if not isinstance(parsed, dict) or "result" not in parsed:
        raise CallFailed(f"{url}: not a taguru response: {trim(answer.text)}", answer.status)
    return parsed["result"]

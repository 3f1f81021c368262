"""A taguru failure text as pytest's failure representation.

A drill-down (or a gate result's violations) is shown verbatim, but pytest also gets a
*crash line*: the first violation, which the short test summary (``FAILED … - recall.mrr
0.333333 < min 0.500000``), ``--tb=line`` and JUnit's ``message`` attribute use. pytest's own
exception representation is used because it survives pytest-xdist's report serialization
(a custom ``TerminalRepr`` would reach the controller as plain text, without the crash line).
"""

from _pytest._code.code import ReprEntryNative, ReprExceptionInfo, ReprFileLocation, ReprTraceback


def failure_repr(text: str, headline: str, *, path: str, line: int) -> ReprExceptionInfo:
    """``text`` printed as is; ``headline`` as the crash message at ``path:line`` (1-based)."""
    body = ReprTraceback([ReprEntryNative([text.rstrip("\n") + "\n"])], None, "native")
    return ReprExceptionInfo(reprtraceback=body, reprcrash=ReprFileLocation(path, line, headline))

"""How the data island writes numbers and repeated strings: the report's display precision.

The island must stay small at 100,000 cases (≤ 25 MB for the page), so per-case numbers are
written at the precision a person reads and every source name once. The table's value columns,
read at load to filter and sort, are packed integer sequences: source-map style base64 VLQ
(each character carries five bits and a continuation bit; the lowest bit of a number is its
sign), decoded by ``unpackIntegers`` (``assets/util.js``). The case details, read only when a
case is opened, travel in gzip-compressed chunks, inflated by the browser's own
``DecompressionStream``. Run-level metric values and everything the gate decided (verdicts,
violations, failing cases) are taken from the artifact exactly; only what is displayed per
case and per hit is rounded here.
"""

import base64
import gzip
import json
import math
from collections.abc import Iterable, Sequence

CASE_VALUE_DECIMALS = 4
"""Decimals of a case's own ratio values in the table (the artifact has them exact)."""

SCORE_DIGITS = 4
"""Significant digits of the largest hit score of a case (the others keep as many decimals)."""

FIGURE_DIGITS = 9
"""Significant digits of a run-level number (a metric's value, a bound, a violation's actual
value). The page shows fewer; fewer than a double's 17 also make the page the same whether its
numbers were taken from the run in memory or read back from the artifact's text, whose reader
(serde's, not correctly rounded) may differ from the writer in the last bit."""

NOT_APPLICABLE = -1
"""A packed case value that does not apply (case values are never negative)."""

DETAIL_CHUNK = 500
"""Case details per compressed chunk: opening a case inflates only its chunk."""

VLQ_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _tight(value: float) -> float | int:
    """An integral value as an integer (``1`` rather than ``1.0``): fewer bytes, same number."""
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def case_number(value: float | None) -> float | int | None:
    """A case's metric value (or a change of one) rounded for display; ``None`` stays."""
    if value is None or not math.isfinite(value):
        return None
    return _tight(round(value, CASE_VALUE_DECIMALS))


def figure(value: float | None) -> float | int | None:
    """A run-level number at ``FIGURE_DIGITS`` significant digits; ``None`` stays ``None``."""
    if value is None or not math.isfinite(value):
        return None
    return _tight(float(f"{value:.{FIGURE_DIGITS}g}"))


def score(value: float) -> float | int | None:
    """A 32-bit number (a floor) at ``SCORE_DIGITS`` significant digits; non-finite is
    ``None``, as the artifact writes it."""
    if not math.isfinite(value):
        return None
    return _tight(float(f"{value:.{SCORE_DIGITS}g}"))


def scaled_scores(values: Sequence[float]) -> tuple[int, list[int | None]]:
    """``(exponent, mantissas)`` with ``value ≈ mantissa · 10^exponent``: one exponent for a
    case's hits, chosen to give its largest score ``SCORE_DIGITS`` significant digits (the
    smaller ones keep as many decimals); a non-finite score is ``None``, as the artifact
    writes it."""
    finite = [abs(value) for value in values if math.isfinite(value) and value != 0]
    exponent = 0
    if finite:
        largest = max(finite)
        exponent = math.floor(math.log10(largest)) - (SCORE_DIGITS - 1)
        if round(largest / 10.0**exponent) >= 10**SCORE_DIGITS:  # 9999.5 rounds to 10000
            exponent += 1
    return exponent, [
        round(value / 10.0**exponent) if math.isfinite(value) else None for value in values
    ]


def value_scale(unit: str) -> int:
    """What a case value of ``unit`` is multiplied by before packing: ratios keep
    ``CASE_VALUE_DECIMALS`` decimals, milliseconds and counts are whole numbers."""
    return 10**CASE_VALUE_DECIMALS if unit == "ratio" else 1


def scaled_value(value: float | None, scale: int) -> int:
    """A case value as the integer packed for it (``NOT_APPLICABLE`` when it does not apply)."""
    if value is None or not math.isfinite(value):
        return NOT_APPLICABLE
    return abs(round(value * scale))  # abs: a -0.0 nDCG is 0


def pack_integers(values: Iterable[int]) -> str:
    """Signed integers as base64 VLQ: ``0`` → ``A``, ``1`` → ``C``, ``-1`` → ``D``, ``16`` →
    ``gB``."""
    out = []
    for value in values:
        rest = (-value << 1) | 1 if value < 0 else value << 1
        while True:
            digit, rest = rest & 31, rest >> 5
            out.append(VLQ_ALPHABET[digit | (32 if rest else 0)])
            if not rest:
                break
    return "".join(out)


def compact_json(value: object) -> str:
    """JSON without white space, non-ASCII written as is, non-finite numbers refused."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def packed_details(details: Sequence[object]) -> list[str]:
    """``details`` in chunks of ``DETAIL_CHUNK``: each a JSON array, gzip-compressed with no
    time stamp (the same details always give the same bytes), in base64."""
    return [
        base64.b64encode(
            gzip.compress(compact_json(details[start : start + DETAIL_CHUNK]).encode(), mtime=0)
        ).decode("ascii")
        for start in range(0, len(details), DETAIL_CHUNK)
    ]


class StringTable:
    """Strings written once in the island and referred to by index (source names, plans)."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}

    def ref(self, text: str) -> int:
        """The index of ``text``, adding it on first use."""
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self._index)
        return found

    def strings(self) -> list[str]:
        """Every string, in index order."""
        return list(self._index)

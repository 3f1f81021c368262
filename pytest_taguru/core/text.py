"""Text rules shared by the plugin and the reference server.

taguru is written in Rust; these functions reproduce Rust's ``str::trim`` and
taguru's ``normalize_entry`` exactly, where Python's built-ins differ
(``str.strip`` and ``str.isspace`` also treat U+001C..U+001F as white space,
``str.lower`` applies the final-sigma rule).
"""

import unicodedata

# The Unicode White_Space property (Unicode 15/16), which Rust's str::trim uses.
WHITE_SPACE = frozenset(
    "\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_WHITE_SPACE_TEXT = "".join(sorted(WHITE_SPACE))

_KATAKANA_TO_HIRAGANA = {code: code - 0x60 for code in range(0x30A1, 0x30F7)}  # ァ..ヶ

MESSAGE_LIMIT = 200
"""Bytes a recorded error message keeps before it is cut and ``…`` appended."""


def is_white_space(ch: str) -> bool:
    """True when ``ch`` has the Unicode White_Space property."""
    return ch in WHITE_SPACE


def trim(text: str) -> str:
    """Strip leading and trailing White_Space characters, as Rust's ``str::trim``."""
    return text.strip(_WHITE_SPACE_TEXT)


def _lower_each(text: str) -> str:
    # Per code point, so that no context rule applies. Final sigma is the only context rule
    # of Python's str.lower, so the whole-string call is exact (and fast) without a Σ.
    if "Σ" not in text:
        return text.lower()
    return "".join(ch.lower() for ch in text)


def normalize_entry(text: str) -> str:
    """taguru's folding: lowercase per code point → NFKC → lowercase → katakana to hiragana.

    No trimming: callers that compare user-declared names trim first.
    """
    folded = _lower_each(unicodedata.normalize("NFKC", _lower_each(text)))
    return folded.translate(_KATAKANA_TO_HIRAGANA)


def truncate_message(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """Cut ``message`` at the last UTF-8 character boundary ≤ ``limit`` bytes and add ``…``.

    Messages of at most ``limit`` bytes are returned unchanged.
    """
    encoded = message.encode("utf-8")
    if len(encoded) <= limit:
        return message
    return encoded[:limit].decode("utf-8", errors="ignore") + "…"

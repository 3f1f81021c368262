"""Suggestions for a mistyped name (by difflib's similarity ratio, closest first) or a
mis-saved file.

One rule for every "did you mean" the package prints (metric names, sources, concepts,
labels): a candidate is close when difflib's ratio reaches :data:`CUTOFF` (difflib's own
default); ties keep the candidates' order.
"""

from collections.abc import Iterable
from difflib import SequenceMatcher, get_close_matches

CUTOFF = 0.6


def ranked(word: str, candidates: Iterable[str]) -> list[str]:
    """Every distinct candidate, the most similar to ``word`` first (stable on ties)."""
    unique = list(dict.fromkeys(candidates))
    return sorted(unique, key=lambda item: -SequenceMatcher(None, word, item).ratio())


def closest(word: str, candidates: Iterable[str], count: int = 1) -> list[str]:
    """Up to ``count`` candidates other than ``word`` itself, close to it, closest first
    (``difflib.get_close_matches``, whose quick pre-checks keep a long list cheap)."""
    others = [item for item in dict.fromkeys(candidates) if item != word]
    return get_close_matches(word, others, n=count, cutoff=CUTOFF)


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``did you mean 'x'?`` for the closest candidate, or an empty string."""
    found = closest(word, candidates)
    return f"did you mean '{found[0]}'?" if found else ""


BOM = "\ufeff"


def bom_hint(path: str) -> str:
    """What to do about a byte-order mark that taguru refuses (eval.jsonl, thresholds)."""
    return (
        f"{path} starts with a UTF-8 byte-order mark (BOM), which taguru does not accept: "
        "save it as UTF-8 without a BOM"
    )

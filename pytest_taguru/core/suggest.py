"""Suggestions for a mistyped name (by difflib's similarity ratio, closest first) or a
mis-saved file.

One rule for every "did you mean" the package prints (metric names, sources, concepts,
labels): a candidate is close when difflib's ratio reaches :data:`CUTOFF` (difflib's own
default), two paths being compared past the folder they share; ties keep the candidates' order.
"""

from collections.abc import Iterable
from difflib import SequenceMatcher

CUTOFF = 0.6


def ranked(word: str, candidates: Iterable[str]) -> list[str]:
    """Every distinct candidate, the most similar to ``word`` first (stable on ties)."""
    unique = list(dict.fromkeys(candidates))
    return sorted(unique, key=lambda item: -SequenceMatcher(None, word, item).ratio())


def _beyond_shared_folder(word: str, candidate: str) -> tuple[str, str]:
    """Both names without the folder they share (``corpus/``), which would otherwise make
    any two files of one folder look alike."""
    pairs = zip(word, candidate, strict=False)
    shared = next((at for at, (a, b) in enumerate(pairs) if a != b), min(len(word), len(candidate)))
    cut = word.rfind("/", 0, shared) + 1
    return word[cut:], candidate[cut:]


def closest(word: str, candidates: Iterable[str], count: int = 1) -> list[str]:
    """Up to ``count`` candidates other than ``word`` itself whose ratio to it (past a shared
    folder) reaches :data:`CUTOFF`, closest first; difflib's quick upper bounds first, as
    ``get_close_matches`` does, so that a long list stays cheap."""
    scored: list[tuple[float, str]] = []
    for candidate in dict.fromkeys(candidates):
        if candidate == word:
            continue
        matcher = SequenceMatcher(None, *_beyond_shared_folder(word, candidate))
        if matcher.real_quick_ratio() >= CUTOFF and matcher.quick_ratio() >= CUTOFF:
            ratio = matcher.ratio()
            if ratio >= CUTOFF:
                scored.append((ratio, candidate))
    scored.sort(key=lambda pair: -pair[0])
    return [candidate for _, candidate in scored[:count]]


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

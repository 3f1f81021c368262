"""Deterministic Japanese-like synthetic corpus for the reference-server benchmarks.

Words are 1–4 characters drawn from a kanji/kana/katakana alphabet, chosen with a Zipf-like
distribution (so a few bigrams are everywhere and most are rare, as in real text), joined by
particles into sentences ending in ``。``, with occasional ASCII numbers and camelCase words.
Everything derives from one seed: the same arguments always give the same corpus.
"""

import random
from dataclasses import dataclass
from itertools import accumulate

_KANJI = [chr(c) for c in range(0x4E00, 0x4E00 + 1800)]
_HIRAGANA = [chr(c) for c in range(0x3041, 0x3097)]
_KATAKANA = [chr(c) for c in range(0x30A1, 0x30F7)] + ["ー"]
_PARTICLES = ["の", "は", "が", "を", "に", "で", "と", "も", "から", "まで", "より"]
_ENDINGS = ["である。", "した。", "する。", "という。", "だった。", "。"]
_ASCII_WORDS = ["AppState", "HTTPServer", "U64Max", "sake", "rice", "koji", "v2", "API"]


@dataclass(frozen=True, slots=True)
class SyntheticCorpus:
    """Sources (name → paragraphs), concept names and cues, all deterministic."""

    sources: dict[str, list[str]]
    concepts: list[str]
    queries: list[str]
    cues: list[str]

    @property
    def paragraph_count(self) -> int:
        return sum(len(paragraphs) for paragraphs in self.sources.values())


class _Vocabulary:
    def __init__(self, rng: random.Random, size: int) -> None:
        self._rng = rng
        self.words = [self._word() for _ in range(size)]
        self._cumulative = list(accumulate(1.0 / (rank + 1) for rank in range(size)))

    def _word(self) -> str:
        rng = self._rng
        script = rng.random()
        if script < 0.6:
            return "".join(rng.choices(_KANJI, k=rng.choice((1, 2, 2, 2, 3))))
        if script < 0.85:
            return "".join(rng.choices(_KATAKANA, k=rng.randint(2, 5)))
        return "".join(rng.choices(_HIRAGANA, k=rng.randint(2, 4)))

    def pick(self, count: int) -> list[str]:
        return self._rng.choices(self.words, cum_weights=self._cumulative, k=count)


def _sentence(rng: random.Random, vocabulary: _Vocabulary) -> str:
    parts: list[str] = []
    for word in vocabulary.pick(rng.randint(4, 9)):
        parts.append(word)
        if rng.random() < 0.06:
            parts.append(
                str(rng.randint(1, 2030)) if rng.random() < 0.7 else rng.choice(_ASCII_WORDS)
            )
        parts.append(rng.choice(_PARTICLES))
    parts[-1] = rng.choice(_ENDINGS)
    return "".join(parts)


def generate(
    paragraphs: int = 100_000,
    concepts: int = 10_000,
    seed: int = 20261130,
    max_sentences: int = 3,
) -> SyntheticCorpus:
    """``paragraphs`` paragraphs of 1–``max_sentences`` sentences in sources of 1–20 paragraphs,
    plus ``concepts`` concept names, 200 queries and 1000 resolve cues."""
    rng = random.Random(seed)
    vocabulary = _Vocabulary(rng, 30_000)
    sources: dict[str, list[str]] = {}
    made = 0
    while made < paragraphs:
        count = min(rng.randint(1, 20), paragraphs - made)
        sources[f"corpus/doc{len(sources):06d}.md"] = [
            "".join(_sentence(rng, vocabulary) for _ in range(rng.randint(1, max_sentences)))
            for _ in range(count)
        ]
        made += count
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < concepts:
        name = "".join(rng.sample(vocabulary.words[:5000], rng.randint(1, 3)))
        if rng.random() < 0.05:
            name = rng.choice(_ASCII_WORDS) + " " + name
        if name not in seen:
            seen.add(name)
            names.append(name)
    queries = [
        f"{a}の{b}は{c}ですか" if rng.random() < 0.7 else f"{a}{b}"
        for a, b, c in (vocabulary.pick(3) for _ in range(200))
    ]
    return SyntheticCorpus(sources=sources, concepts=names, queries=queries, cues=_cues(rng, names))


def _cues(rng: random.Random, names: list[str], count: int = 1000) -> list[str]:
    """A mix of exact names, substrings, one-character edits, longer phrases and 1-char cues."""
    cues: list[str] = []
    for _ in range(count):
        name = rng.choice(names)
        kind = rng.random()
        if kind < 0.3:
            cues.append(name)
        elif kind < 0.5 and len(name) > 2:
            start = rng.randrange(len(name) - 1)
            cues.append(name[start : start + rng.randint(2, len(name) - start)])
        elif kind < 0.75:
            position = rng.randrange(len(name))
            cues.append(name[:position] + rng.choice(_KANJI) + name[position + 1 :])
        elif kind < 0.95:
            cues.append(f"{name}について{rng.choice(names)}の")
        else:
            cues.append(rng.choice(name))
    return cues

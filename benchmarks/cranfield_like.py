"""A deterministic English collection shaped like Cranfield: 1,398 abstracts, 225 queries.

Cranfield (aerodynamics abstracts) has ≈1,400 one-paragraph documents of ≈130 words and
225 queries of ≈9 words, most of them starting with function words ("what are the …") that
half the collection holds — which is what makes a deep (``limit`` 1000) search serve nearly
every document. Words here are made of syllables and drawn with a Zipf-like distribution,
behind a fixed set of English function words; each query is built from one document (its
relevant source) plus a second, less relevant one. Everything derives from one seed.
"""

import random
from dataclasses import dataclass
from itertools import accumulate

_FUNCTION_WORDS = (
    "the", "of", "and", "a", "in", "to", "is", "for", "on", "are", "with", "by", "an", "that",
    "as", "at", "be", "from", "this", "it", "which", "was", "were", "what", "how", "can",
    "has", "been", "or", "its", "these", "have", "not", "when",
)
_ONSETS = ["b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "st", "tr"]
_VOWELS = ["a", "e", "i", "o", "u", "io", "ea"]
_CODAS = ["", "", "n", "r", "s", "t", "l", "nd", "ct"]


@dataclass(frozen=True, slots=True)
class Query:
    """One query and the sources it was drawn from (graded: 3 = drawn from, 1 = borrowed)."""

    text: str
    relevant: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Collection:
    """Sources (name → its one paragraph) and queries."""

    documents: dict[str, str]
    queries: list[Query]


def _word(rng: random.Random) -> str:
    return "".join(
        rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
        for _ in range(rng.randint(1, 4))
    )


def generate(documents: int = 1398, queries: int = 225, seed: int = 1968) -> Collection:
    """``documents`` abstracts of 40–220 words and ``queries`` queries of 6–14 words."""
    rng = random.Random(seed)
    vocabulary = list(dict.fromkeys(_word(rng) for _ in range(12_000)))
    weights = list(accumulate(1.0 / (rank + 1) ** 0.9 for rank in range(len(vocabulary))))
    texts: dict[str, str] = {}
    for number in range(1, documents + 1):
        words = [
            rng.choice(_FUNCTION_WORDS) if rng.random() < 0.45 else content
            for content in rng.choices(vocabulary, cum_weights=weights, k=rng.randint(40, 220))
        ]
        texts[f"cranfield/{number:04d}.txt"] = " ".join(words).capitalize() + " ."
    names = list(texts)
    made: list[Query] = []
    for _ in range(queries):
        main, other = rng.sample(names, 2)
        content = [w for w in texts[main].lower().split() if w not in _FUNCTION_WORDS]
        picked = rng.sample(content, min(len(content), rng.randint(3, 7)))
        picked.append(rng.choice(texts[other].split()))
        lead = rng.sample(_FUNCTION_WORDS, rng.randint(3, 6))
        made.append(Query(" ".join([*lead, *picked]) + " ?", ((main, 3), (other, 1))))
    return Collection(documents=texts, queries=made)

"""The BM25 formula of the reference server's lexical lane (server-wire.md §3.9).

Scoring, in float32 as taguru does (every intermediate rounded to the nearest float32)::

    idf(t)     = ln(((N − df) + 0.5) / (df + 0.5) + 1)
    norm(len)  = k1 × ((1 − b) + (b × len) / avgdl)          k1 = 1.2, b = 0.75
    contrib    = (idf × (tf × (k1 + 1))) / (tf + norm(len))
    score      = Σ contrib over the deduplicated query terms, added in query-term order

with ``N`` the number of slots (paragraphs) of the whole context, ``df`` the number of slots
holding the term and ``avgdl = max(Σ len / N, 1.0)`` computed in 64-bit, then narrowed.

Rounding a 64-bit result of one +, −, × or ÷ of two float32 values to float32 gives exactly the
float32 operation's result (53 ≥ 2 × 24 + 2 bits), so plain Python floats rounded after each
step reproduce the server's digits. Why not a library such as ``bm25s``: it scores with numpy,
precomputing per-document term weights eagerly in its own formula variants, precision and
summation order, so it cannot promise this exact sequence of float32 roundings (nor the sum in
query-term order); it also brings its own tokenization rather than taguru's, knows nothing of
the score-then-source-then-paragraph ranking, and would add numpy to the ``server`` extra. The
fixture digits (``0.28768212``, ``0.86304635``) need the exact steps above, so the index is
written here.

A deep search needs the contributions of a thousand shapes at once: :func:`contributions`
takes each step over whole lists, rounding them to float32 through ``array('f')`` (a C cast
per item: round to nearest, ties to even, as ``struct`` rounds).
"""

import math
import struct
from array import array
from collections.abc import Iterable, Sequence
from itertools import repeat
from operator import add, mul, truediv

F32_STRUCT = struct.Struct("<f")
"""A little-endian float32: packing and unpacking a Python float rounds it to float32."""
_pack_f32 = F32_STRUCT.pack
_unpack_f32 = F32_STRUCT.unpack


def f32(x: float) -> float:
    """Round ``x`` to the nearest float32 (ties to even), returned as a Python float.

    Values beyond the float32 range become ±inf, as a float32 cast would.
    """
    try:
        return float(_unpack_f32(_pack_f32(x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


K1 = f32(1.2)
B = 0.75
_K1_PLUS_ONE = f32(K1 + 1.0)  # 2.2 in float32
_ONE_MINUS_B = 0.25  # exact in float32
_FIRST_POOL = 50


def pool_size(limit: int) -> int:
    """Slots a BM25 lane list keeps: ``max(4 × limit, 50)``."""
    return max(4 * limit, _FIRST_POOL)


def idf(slots: int, df: int) -> float:
    """``ln(((N − df) + 0.5) / (df + 0.5) + 1)`` in float32 steps (N = ``slots``)."""
    ratio = f32(f32(float(slots - df) + 0.5) / f32(df + 0.5))
    return f32(math.log(f32(ratio + 1.0)))


def average_length(total_length: int, slots: int) -> float:
    """``avgdl = max(Σ len ÷ N, 1.0)`` in 64-bit, narrowed to float32 (1.0 when N is 0)."""
    return f32(max(total_length / slots, 1.0)) if slots else 1.0


def length_norm(length: int, avgdl: float) -> float:
    """``k1 × ((1 − b) + (b × len) / avgdl)`` in float32 steps."""
    return f32(K1 * f32(_ONE_MINUS_B + f32(f32(B * length) / avgdl)))


def contributions(term_idf: float, tfs: Sequence[int], norms: Sequence[float]) -> list[float]:
    """``(idf × (tf × (k1 + 1))) / (tf + norm)`` in float32 steps for each ``tf`` and its
    ``norm`` (= norm(len)), pairwise."""
    scaled = _f32_each(map(mul, tfs, repeat(_K1_PLUS_ONE)))
    numerators = _f32_each(map(mul, repeat(term_idf), scaled))
    return _f32_each(map(truediv, numerators, _f32_each(map(add, tfs, norms))))


def contribution(term_idf: float, tf: int, norm: float) -> float:
    """:func:`contributions` of one ``tf`` and ``norm``."""
    return contributions(term_idf, (tf,), (norm,))[0]


def _f32_each(values: Iterable[float]) -> list[float]:
    """Each value rounded to the nearest float32 (all finite and within range here)."""
    return array("f", values).tolist()

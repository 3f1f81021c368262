"""Rust's integer ranges, declared once: the bounds taguru's types put on a number.

``U8``/``U32``/``U64`` are the pydantic field types for a non-negative integer that must fit
Rust's ``u8``/``u32``/``u64`` (a larger one is a range error, a negative one a sign error).
"""

from typing import Annotated

from pydantic import Field

U8_MAX = 2**8 - 1
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
I64_MIN = -(2**63)
"""serde keeps an integer exact when it fits ``i64`` or ``u64``: ``I64_MIN..=U64_MAX``."""

MAX_SHARDS = 10_000
"""The most shards ``--taguru-shard I/N`` splits a run into (a CI matrix is far smaller)."""

U8 = Annotated[int, Field(ge=0, le=U8_MAX)]
U32 = Annotated[int, Field(ge=0, le=U32_MAX)]
U64 = Annotated[int, Field(ge=0, le=U64_MAX)]

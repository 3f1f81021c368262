"""Rust's integer ranges, declared once: the bounds taguru's types put on a number.

``U8``/``U16``/``U32``/``U64`` are the pydantic field types for a non-negative integer that
must fit Rust's ``u8``/``u16``/``u32``/``u64`` (a larger one is a range error, a negative one a
sign error).
"""

from typing import Annotated

from pydantic import Field

U8_MAX = 2**8 - 1
U16_MAX = 2**16 - 1
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
I64_MIN = -(2**63)
"""serde keeps an integer exact when it fits ``i64`` or ``u64``: ``I64_MIN..=U64_MAX``."""

MAX_SHARDS = 10_000
"""The most shards ``--taguru-shard I/N`` splits a run into (a CI matrix is far smaller)."""

U8 = Annotated[int, Field(ge=0, le=U8_MAX)]
U16 = Annotated[int, Field(ge=0, le=U16_MAX)]
U32 = Annotated[int, Field(ge=0, le=U32_MAX)]
U64 = Annotated[int, Field(ge=0, le=U64_MAX)]

RECORDING_FILE_MAX_BYTES = 512 * 1024 * 1024
"""The largest recording file (``--taguru-replay``) read: a case's answers, each of them at
most the client's 256 MiB response cap, together at most twice that."""
MAX_SLICES = 256
"""The most slices a run may define (``taguru_slices``, a slices file): each is matched against
every case id and gated on every per-case metric."""
MAX_SLICE_NAME_CHARS = 64
MAX_SLICE_FILE_BYTES = 2**20
"""The largest slices or slice thresholds file read (1 MiB): both are small, hand-written files."""

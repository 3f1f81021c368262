"""A context's settings: the fields of ``PUT``/``PATCH /contexts/{name}`` (server-wire §2.3).

Floors are clamped to [0, 1]; ``semantic_floor`` is a 32-bit float in taguru, so it is also
narrowed to float32 and written as the shortest float32 decimal (§1.3).
"""

from dataclasses import dataclass
from typing import Any

from pytest_taguru.core.jsontext import Float32, to_f32

MAX_CONTEXT_NAME_BYTES = 64
MAX_DESCRIPTION_BYTES = 4096


def clamp_unit(value: float | None) -> float | None:
    """A floor clamped to [0, 1]; ``None`` (the default) stays ``None``."""
    return None if value is None else min(max(value, 0.0), 1.0)


def semantic_floor_f32(value: float | None) -> Float32 | None:
    """taguru holds ``semantic_floor`` as a 32-bit float: clamped to [0, 1], narrowed to f32
    (and so printed as the shortest float32 decimal, §1.3)."""
    clamped = clamp_unit(value)
    return None if clamped is None else Float32(to_f32(clamped))


@dataclass(frozen=True)
class ContextOptions:
    """The create fields of ``PUT /contexts/{name}`` (floors already clamped to [0, 1];
    ``semantic_floor`` from :func:`semantic_floor_f32`)."""

    description: str = ""
    pinned: bool = False
    dice_floor: float | None = None
    semantic_floor: float | None = None

    def as_json(self) -> dict[str, Any]:
        """The metadata object ``PATCH /contexts/{name}`` answers (§2.3)."""
        return {
            "description": self.description,
            "pinned": self.pinned,
            "dice_floor": self.dice_floor,
            "semantic_floor": self.semantic_floor,
        }

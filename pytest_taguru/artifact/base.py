"""The base of every ``evaluation.json`` model, in ``artifact``, ``artifact_case`` and
``artifact_assembly``, and the reading rule of pytest-taguru's own extension keys."""

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, ValidatorFunctionWrapHandler
from pydantic.functional_validators import WrapValidator


class ArtifactModel(BaseModel):
    """Base of every artifact shape: lenient on read, explicit about absence on write."""

    model_config = ConfigDict(extra="ignore")


def _absent_when_malformed(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    try:
        return handler(value)
    except ValidationError:
        return None


OWN_EXTENSION = WrapValidator(_absent_when_malformed)
"""On a field of pytest-taguru's own (a key taguru's readers ignore): a malformed value reads
as absent, so that our extension never makes an artifact unreadable that taguru reads."""

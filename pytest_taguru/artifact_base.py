"""The base of every ``evaluation.json`` model, shared by ``artifact`` and ``artifact_assembly``."""

from pydantic import BaseModel, ConfigDict


class ArtifactModel(BaseModel):
    """Base of every artifact shape: lenient on read, explicit about absence on write."""

    model_config = ConfigDict(extra="ignore")

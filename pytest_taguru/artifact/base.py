"""The base of every ``evaluation.json`` model, in ``artifact``, ``artifact_case`` and
``artifact_assembly``."""

from pydantic import BaseModel, ConfigDict


class ArtifactModel(BaseModel):
    """Base of every artifact shape: lenient on read, explicit about absence on write."""

    model_config = ConfigDict(extra="ignore")

"""Writing ``evaluation.json``: the models' written members (the absent/null and f32 rules of
``artifact/evaluation``), a case block's exact text, the whole document streamed piece by
piece, and a finished run's artifact kept as its parts until it is written."""

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from json.encoder import encode_basestring
from types import NoneType
from typing import Any

from pydantic import BaseModel

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.core.atomic_file import write_atomic
from pytest_taguru.core.jsontext import (
    F32_FIELD,
    SCALAR_TEXTS,
    WRITE_NULL,
    Float32,
    Rendered,
    format_f32,
    write_pretty,
)
from pytest_taguru.core.serde import read_json

_FieldPlan = tuple[tuple[str, bool, bool], ...]
_PLANS: dict[type[BaseModel], _FieldPlan] = {}


def _field_plan(model: type[BaseModel]) -> _FieldPlan:
    """``(name, is_f32, writes_null)`` of each written field of ``model``, in writer order."""
    plan = _PLANS.get(model)
    if plan is None:
        plan = _PLANS[model] = tuple(
            (name, F32_FIELD in field.metadata, WRITE_NULL in field.metadata)
            for name, field in model.model_fields.items()
            if not field.exclude  # in-process only (e.g. a hit's text), never written
        )
    return plan


def written_members(value: Any) -> list[tuple[str, Any]] | None:
    """The written key/value pairs of a model in writer order, applying the absent/null and
    f32 rules of its fields (``None`` for a value that is not a model)."""
    if not isinstance(value, BaseModel):
        return None
    pairs: list[tuple[str, Any]] = []
    fields = value.__dict__
    for name, is_f32, writes_null in _field_plan(type(value)):
        item = fields[name]
        if item is None:
            if writes_null:
                pairs.append((name, None))
        elif is_f32 and isinstance(item, float):
            pairs.append((name, Float32(item)))
        else:
            pairs.append((name, item))
    return pairs


def to_jsonable(value: Any) -> Any:
    """Plain JSON data in writer order, applying the absent/null and f32 rules of the models."""
    pairs = written_members(value)
    if pairs is not None:
        return {name: to_jsonable(item) for name, item in pairs}
    if isinstance(value, dict):
        return {key: to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    return value


CASE_PAD = "    "
"""A case block's indentation in ``evaluation.json`` (an item of the top-level ``cases``)."""


def case_text(block: CaseBlock) -> str:
    """A case block's exact text in ``evaluation.json``, for its place in ``cases``: what
    ``write_pretty`` writes, through the writers of :func:`_model_writer`."""
    return _model_writer(type(block), CASE_PAD)(block)


_ModelWriter = Callable[[Any], str]
_WRITERS: dict[tuple[type[BaseModel], str], _ModelWriter] = {}


def _model_writer(model: type[BaseModel], pad: str) -> _ModelWriter:
    """The text of a ``model`` instance at indentation ``pad``, as ``write_pretty`` writes it
    with :func:`written_members`. Made once per model and indentation: every case renders the
    same few shapes, so the field plan and each member's key text are worked out once (a case
    block's text is rendered for every case, on the run's hot path)."""
    writer = _WRITERS.get((model, pad))
    if writer is None:
        writer = _WRITERS[(model, pad)] = _compiled_writer(model, pad)
    return writer


def _compiled_writer(model: type[BaseModel], pad: str) -> _ModelWriter:
    inner = pad + "  "
    # Each member's scalar texts by exact type: a 32-bit float member writes a float as
    # ``format_f32``; a ``None`` member it leaves out maps to ``None``.
    members = [
        (
            name,
            f"{inner}{encode_basestring(name)}: ",
            {
                **SCALAR_TEXTS,
                **({float: format_f32} if is_f32 else {}),
                **({} if writes_null else {NoneType: None}),
            },
            is_f32,
        )
        for name, is_f32, writes_null in _field_plan(model)
    ]
    closing = "\n" + pad + "}"

    def write(value: Any) -> str:
        fields = value.__dict__
        parts: list[str] = []
        for name, head, texts, is_f32 in members:
            item = fields[name]
            scalar = texts.get(type(item), _NESTED)
            if scalar is _NESTED:
                if is_f32 and isinstance(item, float):
                    item = Float32(item)
                parts.append(head + _text_at(item, inner))
            elif scalar is not None:
                parts.append(head + scalar(item))
        return "{\n" + ",\n".join(parts) + closing if parts else "{}"

    return write


def _nested(value: Any) -> str:
    raise AssertionError("a marker, never called")


_NESTED: Callable[[Any], str] = _nested
"""A member that is not a scalar of an exact scalar type."""


def _text_at(value: Any, pad: str) -> str:
    """``write_pretty``'s text of a model member at indentation ``pad``."""
    scalar = SCALAR_TEXTS.get(type(value))
    if scalar is not None:
        return scalar(value)
    if isinstance(value, BaseModel):
        return _model_writer(type(value), pad)(value)
    if type(value) is list:
        if not value:
            return "[]"
        inner = pad + "  "
        items = (",\n" + inner).join(_text_at(item, inner) for item in value)
        return "[\n" + inner + items + "\n" + pad + "]"
    pieces: list[str] = []  # anything else (a dict, a subclass of a scalar) as it comes
    write_pretty(value, pieces.append, pad, written_members)
    return "".join(pieces)


def read_case_text(text: str) -> CaseBlock:
    """A case block read back from :func:`case_text` as the artifact reader reads it (a
    ``null`` score is NaN)."""
    return CaseBlock.model_validate(read_json(text, exact_wide_integers=True, objects="last_wins"))


def render_pieces(
    evaluation: Evaluation, emit: Callable[[str], object], case_texts: Iterable[str] = ()
) -> None:
    """The exact text of ``evaluation.json`` (no trailing newline), handed to ``emit`` piece by
    piece, straight from the models: nothing of the whole document is built in memory.

    ``case_texts``, when given, are the cases' :func:`case_text`, in order, written in place
    of ``evaluation.cases`` (read one at a time, as they are written).
    """
    members = written_members
    if case_texts != ():
        texts = (Rendered(text) for text in case_texts)

        def members(value: Any) -> list[tuple[str, Any]] | None:
            pairs = written_members(value)
            if value is not evaluation or pairs is None:
                return pairs
            return [(key, texts if key == "cases" else item) for key, item in pairs]

    write_pretty(evaluation, emit, members=members)


def render(evaluation: Evaluation) -> str:
    """The exact text of ``evaluation.json`` (no trailing newline)."""
    pieces: list[str] = []
    render_pieces(evaluation, pieces.append)
    return "".join(pieces)


def write_evaluation(
    path: str | os.PathLike[str], evaluation: Evaluation, case_texts: Iterable[str] = ()
) -> None:
    """Write :func:`render_pieces`' text to ``path`` as :func:`write_atomic` does, streamed."""
    write_atomic(path, lambda emit: render_pieces(evaluation, emit, case_texts))


@dataclass(frozen=True)
class ArtifactSource:
    """A finished run's artifact, kept as its parts (the evaluation with its cases' summaries,
    and a way to read the cases' exact texts again) so it is only built whole on demand."""

    evaluation: Evaluation
    case_texts: Callable[[], Iterable[str]]

    def text(self) -> str:
        """The exact text of ``evaluation.json``."""
        pieces: list[str] = []
        render_pieces(self.evaluation, pieces.append, self.case_texts())
        return "".join(pieces)

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write it to ``path``, streamed (:func:`write_evaluation`)."""
        write_evaluation(path, self.evaluation, self.case_texts())

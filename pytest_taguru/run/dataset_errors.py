"""How an eval.jsonl line's problem is worded: the first pydantic error as
``<field path>: <problem>, got <value>`` (evaluate-run.md §2.4 keeps the shape, not the words).
"""

import json
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails


def describe_error(error: ValidationError, root: Any) -> str:
    """The first pydantic error as ``<field path>: <problem>, got <value>``."""
    detail: ErrorDetails = error.errors(include_url=False)[0]
    location = tuple(detail["loc"])
    kind = detail["type"]
    if kind in ("missing", "extra_forbidden"):
        parent, key = location[:-1], str(location[-1])
        if kind == "missing":
            problem = f"missing field `{key}`"
        else:
            model = _model_at(root, parent)
            known = tuple(model.model_fields) if model is not None else ()
            problem = unknown_field(key, tuple(k for k in known if k != "line"))
        return f"{_path(parent)}: {problem}" if parent else problem
    message = detail["msg"]
    problem = _PROBLEMS.get(kind, message[:1].lower() + message[1:])
    if kind == "less_than_equal":
        problem = problem.format(**detail.get("ctx", {}))
    text = f"{problem}, got {show(detail['input'])}"
    return f"{_path(location)}: {text}" if location else text


_PROBLEMS = {
    "int_type": "expected an integer",
    "string_type": "expected a string",
    "list_type": "expected an array",
    "tuple_type": "expected an array",  # an array held as a tuple (``eval_models.Array``)
    "model_type": "expected an object",
    "dict_type": "expected an object",
    "greater_than_equal": "expected an unsigned integer",
    "less_than_equal": "expected an integer at most {le}",
}


def unknown_field(key: str, known: tuple[str, ...]) -> str:
    listing = ", ".join(f"`{name}`" for name in known)
    return f"unknown field `{key}`, expected one of {listing}"


def _path(location: tuple[int | str, ...]) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def show(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def _model_at(root: Any, location: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model whose object sits at ``location`` below ``root`` (a model or a field type)."""
    current = root
    for part in (*location, None):
        while True:  # unwrap Annotated[...] and X | None
            origin = get_origin(current)
            if origin is Annotated:
                current = get_args(current)[0]
            elif origin in (Union, UnionType):
                current = next(arg for arg in get_args(current) if arg is not type(None))
            else:
                break
        if part is None:
            break
        if isinstance(part, int):
            current = get_args(current)[0]
        elif isinstance(current, type) and issubclass(current, BaseModel):
            current = current.model_fields[part].annotation
        else:
            return None
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None

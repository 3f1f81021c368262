"""The test oracle of the artifact's text: the renderer the package used before it streamed
(every model turned into plain data first, then the whole document built as one string)."""

import json
from typing import Any

from pydantic import BaseModel

from pytest_taguru.core.jsontext import F32_FIELD, WRITE_NULL, Float32, format_f32, format_f64


def old_to_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        out: dict[str, Any] = {}
        for name, field in type(value).model_fields.items():
            if field.exclude:
                continue
            item = getattr(value, name)
            if item is None:
                if WRITE_NULL in field.metadata:
                    out[name] = None
                continue
            if F32_FIELD in field.metadata and isinstance(item, float):
                out[name] = Float32(item)
            else:
                out[name] = old_to_jsonable(item)
        return out
    if isinstance(value, dict):
        return {key: old_to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [old_to_jsonable(item) for item in value]
    return value


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, Float32):
        return format_f32(value)
    if isinstance(value, float):
        return format_f64(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _pretty(value: Any, pad: str, out: list[str]) -> None:
    inner = pad + "  "
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        out.append("{\n")
        for index, (key, item) in enumerate(value.items()):
            out.append(f"{inner}{json.dumps(key, ensure_ascii=False)}: ")
            _pretty(item, inner, out)
            out.append(",\n" if index < len(value) - 1 else "\n")
        out.append(pad + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        out.append("[\n")
        for index, item in enumerate(value):
            out.append(inner)
            _pretty(item, inner, out)
            out.append(",\n" if index < len(value) - 1 else "\n")
        out.append(pad + "]")
    else:
        out.append(_scalar(value))


def old_render(value: Any) -> str:
    out: list[str] = []
    _pretty(old_to_jsonable(value), "", out)
    return "".join(out)

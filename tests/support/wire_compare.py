"""Helpers for comparing live responses with taguru's golden wire fixtures."""

import json
import math
from typing import Any

from paths import WIRE_FIXTURES

FIXTURE_DIR = WIRE_FIXTURES
HTTP_FIXTURES = FIXTURE_DIR / "http"

# The README's volatile fields with their placeholders; ``footprint_bytes`` is added because
# server-wire §2.4 calls it implementation-specific ("do not compare").
PLACEHOLDERS: dict[str, Any] = {
    "time": 0.0,
    "server": "0.0.0",
    "version": "0.0.0",
    "last_read_epoch": 0,
    "last_write_epoch": 0,
    "footprint_bytes": 0,
}


def load_fixture(name: str) -> dict[str, Any]:
    fixture: dict[str, Any] = json.loads((HTTP_FIXTURES / f"{name}.json").read_text("utf-8"))
    return fixture


def load_shapes() -> dict[str, Any]:
    shapes: dict[str, Any] = json.loads((FIXTURE_DIR / "shapes.json").read_text("utf-8"))
    return shapes


def blank_volatile(value: Any) -> Any:
    """Replace every volatile member, at any depth, by its placeholder."""
    if isinstance(value, dict):
        return {
            k: PLACEHOLDERS[k] if k in PLACEHOLDERS else blank_volatile(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [blank_volatile(v) for v in value]
    return value


def assert_wire_equal(actual: Any, expected: Any, path: str = "response") -> None:
    """Parsed-JSON equality; floats within 1e-6 relative (float32 scores may differ by an ulp)."""
    if isinstance(expected, float) and isinstance(actual, int | float):
        assert not isinstance(actual, bool), path
        assert math.isclose(actual, expected, rel_tol=1e-6, abs_tol=1e-9), (path, actual, expected)
        return
    assert type(actual) is type(expected), (path, actual, expected)
    if isinstance(expected, dict):
        assert sorted(actual) == sorted(expected), (path, sorted(actual), sorted(expected))
        for key in expected:
            assert_wire_equal(actual[key], expected[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert len(actual) == len(expected), (path, actual, expected)
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_wire_equal(a, e, f"{path}[{index}]")
    else:
        assert actual == expected, (path, actual, expected)


def enum_values(document: Any, dotted: str) -> list[Any]:
    """Values at a shapes.json enum path such as ``response.result.contexts[].schema_mode``."""
    values = [document]
    for part in dotted.split("."):
        is_array = part.endswith("[]")
        key = part.removesuffix("[]")
        values = [v[key] for v in values if isinstance(v, dict) and key in v]
        if is_array:
            values = [item for v in values if isinstance(v, list) for item in v]
    return values


def assert_enums(response: Any) -> None:
    """Every closed enum-like field present in ``response`` holds a known value."""
    for dotted, known in load_shapes()["enums"].items():
        for value in enum_values({"response": response}, dotted):
            if value is not None:
                assert value in known, (dotted, value)

"""A scripted taguru server for lane tests: the exact request sequence and canned answers."""

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.core.serde import read_json
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.eval_models import EvalCase

BASE = "http://localhost:8248"


def ok(result: Any) -> httpx.Response:
    return httpx.Response(200, json={"result": result, "status": "ok", "time": 0.0})


def error(status: int, code: str, message: str) -> httpx.Response:
    body = {"status": "error", "code": code, "error": message, "time": 0.0}
    return httpx.Response(status, json=body)


@dataclass
class Step:
    """One expected request (path below the base, JSON body or None) and its answer."""

    method: str
    path: str
    body: Any
    answer: httpx.Response


@dataclass
class Script:
    """Serves the steps in order and fails on any request out of sequence."""

    steps: list[Step] = field(default_factory=list)
    seen: list[httpx.Request] = field(default_factory=list)

    def post(self, path: str, body: Any, answer: httpx.Response) -> "Script":
        self.steps.append(Step("POST", path, body, answer))
        return self

    def get(self, path: str, answer: httpx.Response) -> "Script":
        self.steps.append(Step("GET", path, None, answer))
        return self

    def handler(self, request: httpx.Request) -> httpx.Response:
        index = len(self.seen)
        self.seen.append(request)
        assert index < len(self.steps), f"unexpected request {request.method} {request.url}"
        step = self.steps[index]
        target = str(request.url).removeprefix(BASE)
        assert (request.method, target) == (step.method, step.path), f"request #{index + 1}"
        if step.body is not None:
            assert json.loads(request.content) == step.body, f"body of request #{index + 1}"
        return step.answer

    def client(self) -> TaguruClient:
        return TaguruClient(BASE, None, transport=httpx.MockTransport(self.handler))

    def done(self) -> bool:
        return len(self.seen) == len(self.steps)


def search_hit(
    source: str, paragraph: int, score: float, text: str = "…", **lanes: tuple[int, float]
) -> dict[str, Any]:
    """One ``sources/search`` hit as the server sends it; each lane given as ``(rank, score)``."""
    by_lane = {name: {"rank": rank, "score": value} for name, (rank, value) in lanes.items()}
    return {
        "source": source,
        "paragraph": paragraph,
        "score": score,
        "text": text,
        "lanes": by_lane,
    }


def case(**fields: Any) -> EvalCase:
    """An eval case from its JSON fields (``case_id`` and ``query`` defaulted)."""
    data = {"case_id": "c1", "query": "q", **fields}
    return EvalCase.model_validate(data)


def written(model: Any) -> Any:
    """A recorded shape as the artifact writes it (32-bit floats in their short spelling), read
    back as plain JSON data."""
    return read_json(dumps_compact(to_jsonable(model)))

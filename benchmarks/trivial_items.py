"""pytest plugin for the benchmark's floor: each eval.jsonl line with a ``case_id`` becomes an
item that does nothing (``pytest -p trivial_items eval.jsonl``, with ``benchmarks/`` on the
path). What pytest itself costs per item, collected from the very file the plugin runs."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.File | None:
    if file_path.suffix == ".jsonl":
        return JsonlFile.from_parent(parent, path=file_path)
    return None


class JsonlFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        with self.path.open(encoding="utf-8") as lines:
            for line in lines:
                case_id = json.loads(line).get("case_id")
                if case_id is not None:
                    yield TrivialItem.from_parent(self, name=case_id)


class TrivialItem(pytest.Item):
    def runtest(self) -> None:
        pass

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.name

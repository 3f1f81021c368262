"""``python -m pytest_taguru.server``: address, token, --import, ready line, clean shutdown."""

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pytest_taguru.server.serve import parse_addr

IMPORT = [
    {"taguru_batch": 1, "context": "c", "source": "doc.md", "create": {"description": "d"}},
    {"passage": "杜氏は高瀬である。"},
    {"subject": "a", "label": "r", "object": "b", "weight": 1.0},
]


def launch(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pytest_taguru.server", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.ndjson"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in IMPORT), "utf-8")
    return path


@pytest.fixture
def served(corpus: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = launch(
        ["--import", str(corpus)], {"TAGURU_ADDR": "127.0.0.1:0", "TAGURU_API_TOKEN": "tok"}
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("listening on 127.0.0.1:"), line
    yield process, "http://" + line.split()[-1]
    if process.poll() is None:
        process.kill()
        process.wait()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_serves_the_import_and_stops_cleanly(
    served: tuple[subprocess.Popen[str], str], stop: signal.Signals
) -> None:
    process, url = served
    assert httpx.get(url + "/health").json()["status"] == "ok"
    assert httpx.get(url + "/contexts/c").status_code == 401
    entry = httpx.get(url + "/contexts/c", headers={"authorization": "Bearer tok"}).json()
    assert entry["result"]["revision"] == {"graph": 1, "passages": 1, "config": 0}
    process.send_signal(stop)
    assert process.wait(timeout=15) == 0
    _, stderr = process.communicate()
    assert "杜氏" not in stderr and "tok" not in stderr


def test_malformed_import_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ndjson"
    bad.write_text(json.dumps(IMPORT[0]) + "\n{oops\n", "utf-8")
    process = launch(["--import", str(bad)], {"TAGURU_ADDR": "127.0.0.1:0"})
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 2
    assert stdout == ""
    assert str(bad) in stderr and "line 2" in stderr


def test_missing_import_file_exits_2(tmp_path: Path) -> None:
    process = launch(["--import", str(tmp_path / "none")], {"TAGURU_ADDR": "127.0.0.1:0"})
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 2 and "none" in stderr


def test_parse_addr() -> None:
    assert parse_addr("127.0.0.1:8248") == ("127.0.0.1", 8248)
    assert parse_addr("[::1]:0") == ("::1", 0)
    for bad in ("8248", "host:", ":80", "h:99999"):
        with pytest.raises(ValueError):
            parse_addr(bad)


def test_what_the_import_dropped_is_said_before_serving(tmp_path: Path) -> None:
    lossy = tmp_path / "lossy.ndjson"
    records = [*IMPORT[:2], {"paragraph": 3, "section": "Late"}, {**IMPORT[2], "paragraph": 5}]
    lossy.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records), "utf-8")
    process = launch(["--import", str(lossy)], {"TAGURU_ADDR": "127.0.0.1:0"})
    try:
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.readline().startswith("listening on 127.0.0.1:")
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    lines = stderr.splitlines()
    assert lines[:3] == [
        f"warning: {lossy}: the import dropped 1 section marker, 1 association paragraph "
        "(taguru drops and counts them the same way)",
        f"warning: {lossy}:3: section marker for paragraph 3 dropped: source 'doc.md' has "
        "1 paragraph (0-0)",
        f"warning: {lossy}:4: association paragraph for paragraph 5 stored as null: source "
        "'doc.md' has 1 paragraph (0-0)",
    ]


def test_a_context_without_create_exits_2_saying_what_to_add(tmp_path: Path) -> None:
    bare = tmp_path / "bare.ndjson"
    header = {"taguru_batch": 1, "context": "bikes", "source": "doc.md"}
    bare.write_text(json.dumps(header) + '\n{"passage": "x"}\n', "utf-8")
    process = launch(["--import", str(bare)], {"TAGURU_ADDR": "127.0.0.1:0"})
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 2
    assert stderr.strip() == (
        f"error: {bare}: line 1: context 'bikes' not found — a batch naming a context that "
        'does not exist yet needs "create" in its header, e.g. {"taguru_batch": 1, "context": '
        '"bikes", "source": "doc.md", "create": {}}'
    )


def test_without_the_server_extra_it_says_which_extra_to_install() -> None:
    # The server's dependencies made unimportable: what a plain `pip install pytest-taguru` has.
    code = (
        "import runpy, sys; sys.modules['uvicorn'] = None; "
        "runpy.run_module('pytest_taguru.server', run_name='__main__')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)

    assert done.returncode == 2
    assert done.stderr == (
        "python -m pytest_taguru.server needs the reference server's dependencies: "
        "pip install 'pytest-taguru[server]' (missing: uvicorn)\n"
    )
    assert "Traceback" not in done.stderr

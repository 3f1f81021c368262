"""``--taguru-serve``'s server process: it serves, says what its import dropped or why it
refused, ignores Ctrl-C, and ends with the run."""

import os
import signal
from pathlib import Path

import httpx
import pytest

from pytest_taguru.errors import RunError, UsageError
from pytest_taguru.run import embedded_server
from pytest_taguru.run.embedded_server import start_embedded_server
from pytest_taguru.server.runner import ImportFileError, ReferenceServer

CORPUS = (
    '{"taguru_batch":1,"context":"c","source":"a.md","create":{}}\n'
    '{"passage":"One.\\n\\nTwo."}\n'
    '{"paragraph":5,"section":"Gone"}\n'
)


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "corpus.ndjson"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_it_serves_with_the_token_says_what_was_dropped_and_ends_with_stop(
    tmp_path: Path,
) -> None:
    server = start_embedded_server(write(tmp_path, CORPUS), "s3cret")
    try:
        assert httpx.get(server.url + "/contexts/c").status_code == 401
        answer = httpx.get(server.url + "/contexts/c", headers={"Authorization": "Bearer s3cret"})
        assert answer.status_code == 200
        # The same notes the in-process server gives.
        in_process = ReferenceServer.from_import_files([write(tmp_path, CORPUS)])
        assert server.import_notes == in_process.import_notes != []
    finally:
        server.stop()
    assert server._process.returncode == 0
    with pytest.raises(httpx.TransportError):
        httpx.get(server.url + "/health")


def test_ctrl_c_is_the_runs_to_handle(tmp_path: Path) -> None:
    server = start_embedded_server(write(tmp_path, CORPUS), None)
    try:
        os.kill(server._process.pid, signal.SIGINT)
        assert httpx.get(server.url + "/health").status_code == 200
    finally:
        server.stop()


def test_a_refused_import_file_is_a_usage_error_in_the_in_process_words(tmp_path: Path) -> None:
    no_create = '{"taguru_batch":1,"context":"nope","source":"a.md"}\n{"passage":"x"}\n'
    broken = write(tmp_path, no_create)
    with pytest.raises(ImportFileError) as in_process:
        ReferenceServer.from_import_files([broken])
    with pytest.raises(UsageError) as refused:
        start_embedded_server(broken, None)
    assert refused.value.message == str(in_process.value)


def test_a_missing_server_extra_says_which_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hidden = tmp_path / "hidden" / "uvicorn"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text('raise ImportError("No module named \'uvicorn\'")\n')
    monkeypatch.setenv("PYTHONPATH", str(hidden.parent))
    with pytest.raises(UsageError) as refused:
        start_embedded_server(write(tmp_path, CORPUS), None)
    assert refused.value.message == (
        "--taguru-serve needs the reference server's dependencies: "
        "pip install 'pytest-taguru[server]' (No module named 'uvicorn')"
    )


def test_a_server_process_that_dies_at_once_is_a_run_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedded_server, "SERVER_MODULE", "pytest_taguru.no_such_module")
    with pytest.raises(RunError, match=r"^the embedded server did not start \(exit status 1\)$"):
        start_embedded_server(write(tmp_path, CORPUS), None)

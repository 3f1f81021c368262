"""Settings resolution: evaluate-run.md §1.2-§1.6, pitfalls 15 and 20 (flags, config file,
environment and URL resolved together)."""

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pytest_taguru.errors import ConfigFileError, UsageError
from pytest_taguru.flags import CLI_FLAG_PREFIX
from pytest_taguru.run.flag_values import RawOptions
from pytest_taguru.run.server_access import USERINFO_MESSAGE
from pytest_taguru.run.settings import Settings, resolve_settings

RAW = RawOptions(eval_path="eval.jsonl", context="sake")
PORT_ZERO = (
    "TAGURU_ADDR ({}) binds to port 0 (OS-assigned) — the actual port can't be discovered "
    "from here; pass the server's real URL explicitly: 'taguru health http://host:PORT'"
)


def resolve(raw: RawOptions = RAW, **environ: str) -> Settings:
    return resolve_settings(raw, environ)


def usage_message(raw: RawOptions = RAW, **environ: str) -> str:
    with pytest.raises(UsageError) as raised:
        resolve(raw, **environ)
    assert raised.value.exit_code == 2
    return raised.value.message


def with_(**changes: Any) -> RawOptions:
    return dataclasses.replace(RAW, **changes)


def test_regression_exit_code() -> None:
    assert resolve().regression_exit_code == 3
    assert resolve(with_(regression_exit_code="5")).regression_exit_code == 5
    for bad in ("256", "-1", "x", ""):
        assert usage_message(with_(regression_exit_code=bad)) == (
            "--taguru-regression-exit-code needs an exit status 0..=255"
        )


# ---------------------------------------------------------------- Settings


def test_defaults() -> None:
    settings = resolve()
    assert settings.eval_path == "eval.jsonl" and settings.context == "sake"
    assert settings.base_url == "http://127.0.0.1:8248"
    assert settings.masked_url == "http://127.0.0.1:8248"
    assert settings.out == "evaluation.json" and settings.thresholds_path is None
    assert not settings.assembly and settings.rerank is None and not settings.has_budget
    assert settings.token_value is None and settings.config_notes == ()


def test_flag_values_are_carried() -> None:
    settings = resolve(
        with_(
            out="out/e.json",
            thresholds="t.json",
            assembly=True,
            max_items="+2",
            max_tokens="300",
            rerank="model-x",
        )
    )
    assert (settings.out, settings.thresholds_path) == ("out/e.json", "t.json")
    assert (settings.max_items, settings.max_bytes, settings.max_tokens) == (2, None, 300)
    assert settings.assembly and settings.rerank == "model-x" and settings.has_budget


def test_settings_are_frozen() -> None:
    settings = resolve()
    with pytest.raises(ValidationError):
        settings.context = "other"  # type: ignore[misc]


def test_context_falls_back_to_the_eval_header() -> None:
    raw = with_(context=None)
    assert resolve_settings(raw, {}, default_context="from-header").context == "from-header"
    assert resolve_settings(RAW, {}, default_context="from-header").context == "sake"
    with pytest.raises(UsageError) as raised:
        resolve_settings(raw, {})
    assert raised.value.message == (
        "--taguru-context NAME is required (or a default_target.context in the eval header)"
    )


def test_token_never_shows() -> None:
    settings = resolve(TAGURU_API_TOKEN="s3cret-token")
    assert settings.token_value == "s3cret-token"
    for text in (repr(settings), str(settings), settings.model_dump_json()):
        assert "s3cret-token" not in text


# ---------------------------------------------------------------- URL resolution (§1.4)


@pytest.mark.parametrize(
    ("url", "base_url", "masked"),
    [
        ("http://h:9/x///", "http://h:9/x", "http://h:9"),
        ("http://h/", "http://h", "http://h"),
        ("http://h:0", "http://h:0", "http://h:0"),  # --url is used as-is
        ("localhost:8248", "localhost:8248", "localhost://"),  # fails later, at /health
        ("ftp://h", "ftp://h", "ftp://h"),
    ],
)
def test_url_flag_is_used_as_is(url: str, base_url: str, masked: str) -> None:
    settings = resolve(with_(url=url), TAGURU_ADDR="127.0.0.1:0")
    assert (settings.base_url, settings.masked_url) == (base_url, masked)


@pytest.mark.parametrize(
    ("address", "base_url"),
    [
        ("127.0.0.1:9000", "http://127.0.0.1:9000"),
        ("0.0.0.0:9000", "http://127.0.0.1:9000"),
        ("0.0.0.0:09000", "http://127.0.0.1:9000"),
        ("[::]:9000", "http://[::1]:9000"),
        ("[0:0::0]:9000", "http://[::1]:9000"),
        ("[::1]:9000", "http://[::1]:9000"),
        ("localhost:8248", "http://localhost:8248"),
        ("00.0.0.0:9000", "http://00.0.0.0:9000"),
        ("my-host", "http://my-host"),
    ],
)
def test_taguru_addr(address: str, base_url: str) -> None:
    assert resolve(TAGURU_ADDR=address).base_url == base_url


@pytest.mark.parametrize(
    "address", ["127.0.0.1:0", "0.0.0.0:0", "[::]:0", "host:0", "[::]:000", "[::%3]:0"]
)
def test_taguru_addr_port_zero(address: str) -> None:
    assert usage_message(TAGURU_ADDR=address) == PORT_ZERO.format(address)


@pytest.mark.parametrize(
    ("raw", "environ"),
    [
        (with_(url="https://user:tok@Host:8443/x?y=1"), {}),
        (with_(url="http://u@h"), {}),
        (with_(url="http://:p@h"), {}),
        (RAW, {"TAGURU_ADDR": "u:p@h:80"}),
    ],
)
def test_userinfo_is_refused(raw: RawOptions, environ: dict[str, str]) -> None:
    assert usage_message(raw, **environ) == USERINFO_MESSAGE


def test_empty_userinfo_is_no_userinfo() -> None:
    assert resolve(with_(url="http://:@h/")).masked_url == "http://h"


@pytest.mark.parametrize(
    ("raw", "environ", "message"),
    [
        (with_(url="127.0.0.1:8248"), {}, "the --taguru-url value could not be parsed as a URL"),
        (with_(url="not a url"), {}, "the --taguru-url value could not be parsed as a URL"),
        (with_(url=""), {}, "the --taguru-url value could not be parsed as a URL"),
        (RAW, {"TAGURU_ADDR": ""}, "the --taguru-url value could not be parsed as a URL"),
        (RAW, {"TAGURU_ADDR": "bad host:1"}, "the --taguru-url value could not be parsed as a URL"),
        # not a socket address, so kept as written: http://0.0.0.0:70000 has a bad port
        (
            RAW,
            {"TAGURU_ADDR": "0.0.0.0:70000"},
            "the --taguru-url value could not be parsed as a URL",
        ),
        # a scope id survives the loopback swap (http://[::1%3]:9000), as in Rust
        (
            RAW,
            {"TAGURU_ADDR": "[::%3]:9000"},
            "the --taguru-url value could not be parsed as a URL",
        ),
        (
            RawOptions(eval_path="e", context="c", url="x y", flag_prefix=CLI_FLAG_PREFIX),
            {},
            "the --url value could not be parsed as a URL",
        ),
    ],
)
def test_unparsable_url(raw: RawOptions, environ: dict[str, str], message: str) -> None:
    assert usage_message(raw, **environ) == message


def test_embedded_server_url_is_decided_later() -> None:
    settings = resolve(with_(serve_import="corpus.ndjson"), TAGURU_ADDR="127.0.0.1:0")
    assert (settings.base_url, settings.masked_url) == (None, None)
    served = settings.with_base_url("http://127.0.0.1:54321/")
    assert (served.base_url, served.masked_url) == (
        "http://127.0.0.1:54321",
        "http://127.0.0.1:54321",
    )
    assert served.serve_import == "corpus.ndjson" and settings.base_url is None
    with pytest.raises(UsageError):
        settings.with_base_url("http://u:p@127.0.0.1:1")


# ---------------------------------------------------------------- config file (§1.4)


def config(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "taguru.env"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return str(path)


def test_config_file_supplies_address_and_token(tmp_path: Path) -> None:
    path = config(tmp_path, "TAGURU_ADDR=0.0.0.0:7000\nTAGURU_API_TOKENS=ci:from-file\n")
    settings = resolve(with_(config=path))
    assert settings.base_url == "http://127.0.0.1:7000"
    assert settings.token_value == "from-file"
    assert "TAGURU_API_TOKENS" not in os.environ


def test_config_file_is_loaded_even_with_url(tmp_path: Path) -> None:
    path = config(tmp_path, "TAGURU_ADDR=127.0.0.1:0\nTAGURU_API_TOKEN=tok\n")
    settings = resolve(with_(url="http://h:1/", config=path))
    assert (settings.base_url, settings.token_value) == ("http://h:1", "tok")


def test_real_environment_wins_over_the_file(tmp_path: Path) -> None:
    path = config(tmp_path, "TAGURU_ADDR=127.0.0.1:7000\n")
    settings = resolve(with_(config=path), TAGURU_ADDR="127.0.0.1:8000")
    assert settings.base_url == "http://127.0.0.1:8000"
    assert settings.config_notes == (
        "taguru: config: TAGURU_ADDR set in the environment; the file value is ignored",
    )


def test_taguru_config_names_the_file(tmp_path: Path) -> None:
    from_env = config(tmp_path, "TAGURU_ADDR=127.0.0.1:7001\n")
    assert resolve(TAGURU_CONFIG=from_env).base_url == "http://127.0.0.1:7001"
    flag = str(tmp_path / "flag.env")
    Path(flag).write_text("TAGURU_ADDR=127.0.0.1:7002\n", encoding="utf-8")
    assert resolve(with_(config=flag), TAGURU_CONFIG=from_env).base_url == "http://127.0.0.1:7002"
    with pytest.raises(ConfigFileError, match=r"^cannot read config : "):
        resolve(TAGURU_CONFIG="")


def test_config_error_comes_before_url_errors(tmp_path: Path) -> None:
    path = config(tmp_path, "oops\n")
    with pytest.raises(ConfigFileError, match=r"line 1: expected KEY=VALUE, got 'oops'$"):
        resolve(with_(config=path, url="not a url"), TAGURU_ADDR="127.0.0.1:0")


def test_port_zero_from_the_config_file(tmp_path: Path) -> None:
    path = config(tmp_path, "TAGURU_ADDR=[::]:0\n")
    assert usage_message(with_(config=path)) == PORT_ZERO.format("[::]:0")

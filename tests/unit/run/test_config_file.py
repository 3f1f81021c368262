"""The config file: the docker ``--env-file`` dialect and how it applies (evaluate-run.md §1.4)."""

from pathlib import Path

import pytest

from pytest_taguru.errors import ConfigFileError
from pytest_taguru.run.config_file import apply_config, load_config_file, parse_config_text

# ---------------------------------------------------------------- config file (§1.4)


def test_config_dialect() -> None:
    text = (
        "\ufeffTAGURU_ADDR=127.0.0.1:9\r\n"
        "# a comment\n"
        "   # an indented comment\n"
        "\n"
        " \t\n"
        "TAGURU_API_TOKEN = a=b=c \n"
        '  QUOTED="x y"  \n'
        "EMPTY=\n"
        "TAB\t=\tv"
    )
    assert parse_config_text(text, "c.env") == [
        ("TAGURU_ADDR", "127.0.0.1:9"),
        ("TAGURU_API_TOKEN", "a=b=c"),
        ("QUOTED", '"x y"'),
        ("EMPTY", ""),
        ("TAB", "v"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A=1\n  not a pair  \n", "config c.env: line 2: expected KEY=VALUE, got '  not a pair  '"),
        ("A=1\r\nnope\r\n", "config c.env: line 2: expected KEY=VALUE, got 'nope'"),
        ("TAGURU WAL=1\n", "config c.env: line 1: 'TAGURU WAL' is not a variable name"),
        ("\n=value\n", "config c.env: line 2: '' is not a variable name"),
        ("A\u3000B=1\n", "config c.env: line 1: 'A\u3000B' is not a variable name"),
    ],
)
def test_config_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigFileError) as raised:
        parse_config_text(text, "c.env")
    assert raised.value.message == message and raised.value.exit_code == 2


def test_config_notes_in_file_order() -> None:
    pairs = [
        ("TAGURU_ADR", "1"),
        ("TAGURU_API_TOKEN", "file"),
        ("TAGURU_ADDR", "h:1"),
        ("TAGURU_TYPO", "x"),
        ("TAGURU_ADDR", "h:2"),
        ("TAGURU_TYPO", "y"),
        ("OTHER", "z"),
        ("TAGURU_API_TOKEN", "again"),
    ]
    environ = {"TAGURU_API_TOKEN": "", "TAGURU_TYPO": "shell"}
    applied = apply_config(pairs, environ)
    assert applied.notes == (
        "taguru: config: TAGURU_ADR is not a variable taguru reads (typo?)",
        "taguru: config: TAGURU_API_TOKEN set in the environment; the file value is ignored",
        "taguru: config: TAGURU_TYPO is not a variable taguru reads (typo?)",
        "taguru: config: TAGURU_TYPO set in the environment; the file value is ignored",
        "taguru: config: TAGURU_ADDR appears more than once in the file; the last value wins",
        "taguru: config: TAGURU_TYPO is not a variable taguru reads (typo?)",
        "taguru: config: TAGURU_TYPO set in the environment; the file value is ignored",
        "taguru: config: TAGURU_API_TOKEN set in the environment; the file value is ignored",
    )
    assert dict(applied.environ) == {
        "TAGURU_API_TOKEN": "",
        "TAGURU_TYPO": "shell",
        "TAGURU_ADR": "1",
        "TAGURU_ADDR": "h:2",
        "OTHER": "z",
    }
    assert environ == {"TAGURU_API_TOKEN": "", "TAGURU_TYPO": "shell"}


def test_config_unreadable(tmp_path: Path) -> None:
    missing = str(tmp_path / "none.env")
    with pytest.raises(ConfigFileError) as raised:
        load_config_file(missing, {})
    assert raised.value.message == (
        f"cannot read config {missing}: No such file or directory (os error 2)"
    )
    path = tmp_path / "taguru.env"
    path.write_bytes(b"A=\xff\n")
    with pytest.raises(ConfigFileError) as raised:
        load_config_file(str(path), {})
    assert raised.value.message == f"cannot read config {path}: stream did not contain valid UTF-8"

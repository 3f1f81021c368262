"""Flag collection (command line over ini, ini paths relative to the ini file) and the start-up
validation order of ``prepare_run`` (evaluate-run.md §1.3): the first failing step wins."""

from pathlib import Path

import pytest

from pytest_taguru.errors import ConfigFileError, UsageError
from pytest_taguru.flags import OPTION_SPECS, given_flags
from pytest_taguru.run.flag_values import RawOptions, raw_options
from pytest_taguru.run.prepare import prepare_run

EVAL = '{"taguru_eval":1,"default_target":{"context":"mini"}}\n{"case_id":"a","query":"q"}\n'


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    Path("eval.jsonl").write_text(EVAL, encoding="utf-8")
    Path("bad-eval.jsonl").write_text('{"taguru_eval":2}\n', encoding="utf-8")
    Path("thresholds.json").write_text('{"taguru_evaluate_thresholds":1}', encoding="utf-8")
    Path("bad-thresholds.json").write_text('{"taguru_evaluate_thresholds":7}', encoding="utf-8")
    Path("bad.env").write_text("garbage\n", encoding="utf-8")
    return tmp_path


def message(raw: RawOptions, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(UsageError) as raised:
        prepare_run(raw, environ or {})
    return raised.value.message


# --- flags -------------------------------------------------------------------------------------


def test_every_flag_has_an_ini_key_of_the_same_name() -> None:
    assert [spec.ini for spec in OPTION_SPECS] == [
        "taguru_" + spec.flag.removeprefix("--taguru-").replace("-", "_") for spec in OPTION_SPECS
    ]


def test_inert_without_eval_and_without_typed_flags(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntaguru_url = http://h\ntaguru_assembly = true\n")

    assert given_flags(pytester.parseconfig()) is None


def test_a_typed_flag_activates_the_plugin(pytester: pytest.Pytester) -> None:
    values = given_flags(pytester.parseconfig("--taguru-context", "c"))

    assert values is not None
    assert values["taguru_eval"] is None
    assert values["taguru_context"] == "c"
    with pytest.raises(UsageError, match=r"^--taguru-eval FILE is required$"):
        prepare_run(raw_options(values), {})


def test_command_line_over_ini_and_ini_paths_relative_to_the_ini_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini(
        "[pytest]\ntaguru_eval = suite/eval.jsonl\ntaguru_out = out.json\n"
        "taguru_context = from-ini\ntaguru_url = http://from-ini\ntaguru_assembly = true\n"
    )
    (pytester.path / "sub").mkdir()
    monkeypatch.chdir(pytester.path / "sub")

    values = given_flags(
        pytester.parseconfig("-c", str(pytester.path / "tox.ini"), "--taguru-context", "cli")
    )

    assert values is not None
    raw = raw_options(values)
    assert raw.eval_path == "../suite/eval.jsonl"
    assert raw.out == "../out.json"
    assert raw.context == "cli"
    assert raw.url == "http://from-ini"  # not a path: taken verbatim
    assert raw.assembly is True


# --- validation order --------------------------------------------------------------------------


def test_flag_values_before_the_eval_file(files: Path) -> None:
    raw = RawOptions(eval_path="missing.jsonl", max_items="0")

    assert message(raw) == "--taguru-max-items needs a positive integer"


def test_eval_file_before_the_thresholds_file(files: Path) -> None:
    raw = RawOptions(eval_path="bad-eval.jsonl", thresholds="bad-thresholds.json")

    assert message(raw).startswith("bad-eval.jsonl: line 1: ")


def test_thresholds_before_the_config_file(files: Path) -> None:
    raw = RawOptions(eval_path="eval.jsonl", thresholds="bad-thresholds.json", config="bad.env")

    assert message(raw) == "bad-thresholds.json: taguru_evaluate_thresholds must be 1, got 7"


def test_config_file_before_the_url(files: Path) -> None:
    raw = RawOptions(eval_path="eval.jsonl", config="bad.env", url="not a url")

    with pytest.raises(ConfigFileError, match=r"^config bad\.env: line 1: "):
        prepare_run(raw, {})


def test_the_url_before_unsupported_features(files: Path) -> None:
    raw = RawOptions(eval_path="eval.jsonl", url="not a url", assembly=True)

    assert message(raw) == "the --taguru-url value could not be parsed as a URL"


def test_assembly_budget_and_rerank_reach_the_settings(files: Path) -> None:
    raw = RawOptions(eval_path="eval.jsonl", max_bytes="+10", assembly=True, rerank="m")

    settings = prepare_run(raw, {}).settings

    assert (settings.assembly, settings.max_bytes, settings.rerank) == (True, 10, "m")
    assert settings.max_items is None and settings.max_tokens is None


def test_the_serve_file_must_exist(files: Path) -> None:
    raw = RawOptions(eval_path="eval.jsonl", serve_import="missing.ndjson")

    assert message(raw) == "cannot read missing.ndjson: no such file"


def test_a_valid_run(files: Path) -> None:
    raw = RawOptions(
        eval_path="eval.jsonl",
        thresholds="thresholds.json",
        serve_import="eval.jsonl",
        regression_exit_code="0",
    )

    prepared = prepare_run(raw, {"TAGURU_API_TOKEN": " t "})

    assert prepared.settings.context == "mini"
    assert prepared.settings.base_url is None  # the embedded server's URL comes later
    assert prepared.settings.token_value == "t"
    assert prepared.settings.regression_exit_code == 0
    assert prepared.thresholds is not None
    assert [case.case_id for case in prepared.eval_set.cases] == ["a"]


# --- start-up lines: an error loses nothing printed before it ----------------------------------

FILTERED = '{"case_id":"f","query":"q","options":{"tags":["x"]}}\n'
FILTER_LINE = (
    "taguru: evaluate: case 'f': options.tags/since/until are not applied under --assembly "
    "(POST /contexts/{name}/evidence has no such request fields)"
)


def test_assembly_filter_warnings_precede_a_thresholds_error(files: Path) -> None:
    Path("eval.jsonl").write_text(EVAL + FILTERED, encoding="utf-8")
    raw = RawOptions(eval_path="eval.jsonl", assembly=True, thresholds="bad-thresholds.json")

    with pytest.raises(UsageError) as raised:
        prepare_run(raw, {})

    assert raised.value.preceding == [FILTER_LINE]


def test_config_notes_precede_a_url_error(files: Path) -> None:
    Path("typo.env").write_text("TAGURU_ADRR=x\nTAGURU_ADDR=127.0.0.1:0\n", encoding="utf-8")
    raw = RawOptions(eval_path="eval.jsonl", config="typo.env")

    with pytest.raises(UsageError) as raised:
        prepare_run(raw, {})

    assert raised.value.message.startswith("TAGURU_ADDR (127.0.0.1:0) binds to port 0")
    assert raised.value.preceding == [
        "taguru: config: TAGURU_ADRR is not a variable taguru reads (typo?)"
    ]


def test_a_prepared_run_carries_its_start_up_lines_in_order(files: Path) -> None:
    Path("eval.jsonl").write_text(EVAL + FILTERED, encoding="utf-8")
    Path("typo.env").write_text("TAGURU_ADRR=x\n", encoding="utf-8")
    raw = RawOptions(eval_path="eval.jsonl", assembly=True, config="typo.env", url="http://h")

    prepared = prepare_run(raw, {})

    assert prepared.startup_lines == (
        FILTER_LINE,
        "taguru: config: TAGURU_ADRR is not a variable taguru reads (typo?)",
    )


def test_a_ratio_bound_outside_0_1_is_a_start_up_warning(files: Path) -> None:
    Path("pct.json").write_text(
        '{"taguru_evaluate_thresholds":1,"aggregate":{"recall.mrr":{"min":80}}}', encoding="utf-8"
    )
    raw = RawOptions(eval_path="eval.jsonl", thresholds="pct.json", url="http://h")

    prepared = prepare_run(raw, {})

    assert prepared.startup_lines == (
        "taguru: evaluate: warning: pct.json: aggregate: 'recall.mrr': min 80 is outside 0..1, "
        "the range of a ratio: it can never hold (a percentage? write 0.8)",
    )


# --- slices ------------------------------------------------------------------------------------


def test_slices_and_their_gate_are_prepared_with_their_warnings(files: Path) -> None:
    Path("st.json").write_text(
        '{"taguru_slice_thresholds": 1, "slices": {"all": {"aggregate": '
        '{"recall.mrr": {"min": 50}}}}}',
        encoding="utf-8",
    )
    raw = RawOptions(
        eval_path="eval.jsonl", slices="all: *\nnone: zzz", slice_thresholds="st.json"
    )
    prepared = prepare_run(raw, {})
    assert prepared.slicing is not None
    assert prepared.slicing.definitions.globs == {"all": ("*",), "none": ("zzz",)}
    assert prepared.slicing.thresholds is not None
    assert list(prepared.slicing.thresholds.file.slices) == ["all"]
    assert prepared.startup_lines == (
        "taguru: evaluate: warning: --taguru-slices: slice 'none' (zzz) matches no case id of "
        "the eval set",
        "taguru: evaluate: warning: st.json: slices.all.aggregate: 'recall.mrr': min 50 is "
        "outside 0..1, the range of a ratio: it can never hold (a percentage? write 0.5)",
    )
    assert prepare_run(RawOptions(eval_path="eval.jsonl"), {}).slicing is None


def test_slice_problems_come_after_the_thresholds_file(files: Path) -> None:
    raw = RawOptions(
        eval_path="eval.jsonl", thresholds="bad-thresholds.json", slices_file="missing.json"
    )
    assert message(raw).startswith("bad-thresholds.json: taguru_evaluate_thresholds must be 1")
    raw = RawOptions(eval_path="eval.jsonl", slices_file="missing.json")
    assert message(raw) == "cannot read missing.json: No such file or directory (os error 2)"

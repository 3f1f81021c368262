"""pytest-xdist: the same artifact as a plain run, one preflight, no artifact from a worker."""

from e2e import Suite, strip_volatile

# Each worker records whether it holds the controller's plugin object (it must not: only the
# controller aggregates and writes the artifact).
WORKER_PROBE_CONFTEST = """
from pathlib import Path


def pytest_collection_finish(session):
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput is not None:
        holds = session.config.pluginmanager.has_plugin("taguru-controller")
        Path(f"probe-{workerinput['workerid']}.txt").write_text(str(holds))
"""


def test_xdist_writes_the_same_artifact_as_a_plain_run(suite: Suite) -> None:
    plain = suite.run("--taguru-out", "plain.json")
    assert plain.ret == 0
    suite.pytester.makeconftest(WORKER_PROBE_CONFTEST)
    spread = suite.run("--taguru-out", "spread.json", "-n", "auto", "--maxprocesses", "2")
    assert spread.ret == 0

    assert strip_volatile(suite.artifact("spread.json")) == strip_volatile(
        suite.artifact("plain.json")
    )
    # Preflight (and the embedded server) once, on the controller.
    assert spread.stderr.str().count("evaluate → http://127.0.0.1:") == 1
    probes = sorted(path.read_text() for path in suite.path.glob("probe-gw*.txt"))
    assert probes
    assert set(probes) == {"False"}  # -n auto: as many workers as cores, at most 2
    assert sorted(path.name for path in suite.path.glob("*.json")) == ["plain.json", "spread.json"]

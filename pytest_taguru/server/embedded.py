"""The reference server of ``--taguru-serve``, in a process of its own.

``python -m pytest_taguru.server.embedded IMPORT_FILE``, started by the run
(``run.embedded_server``): it reads one JSON line from stdin (``{"token": …}``, so the token
never shows in a process listing), loads the import file as the in-process
``ReferenceServer`` does, and writes one JSON line to stdout: ``{"url": …, "notes": […]}``
once it accepts connections, else ``{"error": …}`` (the ``ImportFileError`` text) or
``{"missing": …}`` (the ``ImportError`` of a missing ``server`` extra) and exit status 2.
It then serves until stdin ends: the run closes it to stop the server, and a run that dies
closes it too, so the server never outlives it. Ctrl-C is the run's to handle: it is ignored
here.

Its own process: the server's request handling never competes with the run's threads for
one interpreter lock, and it has a core of its own.
"""

import json
import signal
import sys
from typing import Any

from pytest_taguru.core.bulk import collector_for_serving


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    [import_file] = argv
    token = json.loads(sys.stdin.buffer.readline() or b"{}").get("token")
    try:
        from pytest_taguru.server.runner import ImportFileError, ReferenceServer
    except ImportError as error:
        _say({"missing": str(error)})
        return 2
    try:
        server = ReferenceServer.from_import_files([import_file], token=token)
    except ImportFileError as error:
        _say({"error": str(error)})
        return 2
    collector_for_serving()  # this process is the server's alone
    server.start()
    try:
        _say({"url": server.url, "notes": server.import_notes})
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Stopping an in-process reference server while a client holds a request open."""

import socket
import threading

from pytest_taguru.server.runner import STOP_GRACE_S, STOP_TIMEOUT_S, ReferenceServer
from pytest_taguru.server.store import Store


def test_a_request_whose_body_never_comes_does_not_hold_up_stop() -> None:
    server = ReferenceServer(Store())
    server.start()
    # Headers announce a body the client never sends: the handler waits for it, and uvicorn's
    # own shutdown would wait for that handler for ever.
    client = socket.create_connection((server.host, server.port))
    client.sendall(
        b"POST /contexts/c/sources/search HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
    )
    stopper = threading.Thread(target=server.stop, daemon=True)
    try:
        stopper.start()
        stopper.join(STOP_GRACE_S + STOP_TIMEOUT_S)
        assert not stopper.is_alive(), "stop() waited on the open request"
    finally:
        client.close()

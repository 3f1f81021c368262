"""taguru-compatible reference server (retrieval subset), served from an NDJSON corpus.

Run it as ``python -m pytest_taguru.server --import corpus.ndjson`` (``TAGURU_ADDR``,
``TAGURU_API_TOKEN``; prints ``listening on HOST:PORT``), or in-process::

    from pytest_taguru.server.runner import ReferenceServer

    with ReferenceServer.from_import_files(["corpus.ndjson"], token=None) as server:
        ...  # server.url is http://127.0.0.1:<free port>

Modules: ``app`` (routes), ``transport`` (envelope, bodies, errors), ``requests`` and
``validate`` (request decoding), ``auth``, ``store`` (contexts, revisions, usage),
``graph``, ``passages``, ``search`` (result assembly), ``importer``/``import_lines``
(NDJSON import), ``runner`` (in-process start/stop), ``__main__``.
"""

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

Evidence assembly (``POST /contexts/{name}/evidence``): ``evidence`` (route and package),
``evidence_request`` (body decoding), ``evidence_lanes``, ``evidence_select`` (fusion,
near-duplicates, contradiction groups, tiers) and ``evidence_rerank``. The reranker is off
unless configured: ``TAGURU_RERANK_MODEL=lexical-cross`` switches on a deterministic lexical
cross-scorer for tests and demos (``plan.reranker`` then reports ``configured: true`` and, when
a request asks with ``rerank``, ``ran: true, model: "lexical-cross"`` or the degrade reason);
``TAGURU_RERANK_URL`` plus ``TAGURU_RERANK_MODEL`` (optional ``TAGURU_RERANK_API_KEY``,
``TAGURU_RERANK_TIMEOUT_SECS``) use a Cohere/Jina-shaped HTTP provider as taguru does. Without
them a request with ``rerank`` reports ``not_configured``. Read on every request.
"""

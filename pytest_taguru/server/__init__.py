"""taguru-compatible reference server (retrieval subset), served from an NDJSON corpus.

Run it as ``python -m pytest_taguru.server --import corpus.ndjson`` (``TAGURU_ADDR``,
``TAGURU_API_TOKEN``; prints ``listening on HOST:PORT``), or in-process::

    from pytest_taguru.server.runner import ReferenceServer

    with ReferenceServer.from_import_files(["corpus.ndjson"], token=None) as server:
        ...  # server.url is http://127.0.0.1:<free port>

Rooms: ``http/`` (``app`` routes, ``common`` checks the handlers share, ``explain`` the three
``*/explain`` routes, ``protocol`` ``GET /protocol``, ``transport`` envelope and query strings,
``bodies`` and ``validate`` request decoding, ``auth``), ``index/`` (``bm25`` and its formula
``bm25_score``, ``search`` result assembly, ``explain`` the search and resolve explanations,
``resolve``, ``graph``, ``passages``, ``text`` paragraphs and terms), ``ingest/`` (the NDJSON
import), ``evidence/`` (assembly); beside them ``store`` and ``context`` (state, revisions,
usage), ``graph_reads`` (resolve, query, aliases as served), ``compaction``, ``options``
(context settings), ``errors``, ``runner`` (in-process start/stop), ``serve`` (the command),
``embedded`` (the process ``--taguru-serve`` starts) and ``__main__`` (which first checks
the ``server`` extra is installed).

Evidence assembly (``POST /contexts/{name}/evidence``): ``evidence/assemble`` (route and
package), ``evidence/request`` (body decoding), ``evidence/gather`` (lanes), ``evidence/select``
(fusion, near-duplicates, contradiction groups, tiers) and ``evidence/rerank``. The reranker is off
unless configured: ``TAGURU_RERANK_MODEL=lexical-cross`` switches on a deterministic lexical
cross-scorer for tests and demos (``plan.reranker`` then reports ``configured: true`` and, when
a request asks with ``rerank``, ``ran: true, model: "lexical-cross"`` or the degrade reason);
``TAGURU_RERANK_URL`` plus ``TAGURU_RERANK_MODEL`` (optional ``TAGURU_RERANK_API_KEY``,
``TAGURU_RERANK_TIMEOUT_SECS``) use a Cohere/Jina-shaped HTTP provider as taguru does. Without
them a request with ``rerank`` reports ``not_configured``. Read on every request.
"""

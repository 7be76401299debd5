"""Public page latency at 100 req/s behind gunicorn on PostgreSQL, with 100k papers.

Builds a scratch PostgreSQL database (``test_<name>`` of ``DATABASE_URL``) with
``bench/search.py``'s corpus (100,000 papers whose titles and abstracts are drawn
from the real arXiv records, 30,000 researchers, four authors a paper, the search
vectors filled), plus one researcher holding 1,000 of those papers. Then, in
process, the cold (uncached) server time of that researcher's page; then gunicorn
(``--workers`` sync workers, by default gunicorn.conf.py's: 3 on 2 cores; Redis
as the cache as in production, on loopback) under an open-loop load of ``--rate``
requests a second for ``--seconds`` per scenario:

- ``/robots.txt`` (a template and no query: the baseline of the run),
- the 1,000-paper researcher's page as a visitor lands on it, and varied over 42
  pages x 4 sorts x 7 field filters (1,176 URLs, so most requests miss the
  cache),
- random researcher pages (of 30,000),
- random paper pages,
- the browse pages: ``/researchers/`` by letter, main field and order, pages 1
  to 20 (3,000 URLs); ``/papers/`` and ``/categories/<cat>/`` pages 1 to 200;
  ``/institutions/``,
- search (``/search/?q=``, one or two real title words, or a family name):
  2,000 distinct queries (every one ranked cold) in each mode (``hybrid``, the
  default, ``keyword`` and ``semantic``, each with its own queries), and 500
  queries asked with Zipf weights over pages 1 to 3 (as readers repeat and
  page).

The researcher figures the browse pages list are filled once
(:func:`add_researcher_stats`). Every paper has an embedding
(:func:`add_embeddings`: a real record's, with noise) in the HNSW index, whose
recall@10 against an exact scan is printed.

Prints p50, p99 and max in milliseconds, errors and the p99 ratio to the
baseline. The load generator shares the 2 cores with the server, so the figures
are an upper bound. Usage (about 6 minutes, 2 of them building):
``DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_bench_pages
.venv/bin/python bench/pages.py [--papers N] [--researchers N] [--rate R]
[--seconds S] [--workers N] [--only search] [--keep]``; ``--only`` runs the
baseline and the scenarios whose name holds the text, ``--keep`` keeps the
database and reuses it next time; ``--workers`` sets gunicorn's sync workers.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")

import django  # noqa: E402

django.setup()

from django.core.cache import cache  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402
from loadgen import (  # noqa: E402
    REDIS_CACHE,
    database_url,
    gunicorn,
    module_from,
    postgres_memory,
    production_workers,
    run_scenarios,
)

THOUSAND = 1000


def _search_bench():
    """bench/search.py as a module (its corpus builder and word lists)."""
    return module_from("bench_search", ROOT / "bench" / "search.py")


def add_prolific_researcher(rng: random.Random) -> int:
    """Give one new researcher the third slot of 1,000 random papers; its id.

    Also rewrites the papers' arXiv ids into the real new-style form first.
    """
    from wovepaper.models import Authorship, Researcher

    with connection.cursor() as cursor:
        # bench/search.py numbers papers past arXiv's id forms (``199501.000001``);
        # give them real new-style ids (yymm.nnnnn) so their pages resolve.
        cursor.execute(
            "UPDATE wovepaper_paper SET arxiv_id = "
            "lpad(((id % 30 + 95) % 100)::text, 2, '0') || "
            "lpad((id % 12 + 1)::text, 2, '0') || '.' || "
            "lpad((id % 100000)::text, 5, '0')"
        )
    r = Researcher.objects.create(
        display_name="Bench Thousand", name_variants=["B. Thousand"]
    )
    ids = list(Authorship.objects.filter(position=3).values_list("pk", flat=True))
    Authorship.objects.filter(pk__in=rng.sample(ids, THOUSAND)).update(
        researcher=r, raw_name="Bench Thousand"
    )
    with connection.cursor() as cursor:
        # The id rewrite left a dead version of every paper row and its new
        # entries in the GIN indexes' pending lists, where production's
        # autovacuum would not leave them: unvacuumed, a never-seen search's
        # statements took 30 ms a request in process, 17 ms vacuumed.
        cursor.execute("VACUUM ANALYZE")
    return r.pk


# Noise added to a real paper's embedding to make a bench paper's (per
# dimension, before normalising): its cosine to the real one is about 0.85, so
# the 100,000 vectors spread around the real records' topics as papers do.
EMBEDDING_NOISE = 0.03


def add_embeddings(rng: random.Random) -> dict:
    """Give every bench paper an embedding and build the HNSW index; the timings.

    The bench papers' texts are real sentences drawn at random
    (bench/search.py), which would take an hour to embed on two cores; each
    instead gets the embedding of a real record (the model run on its title and
    abstract) plus Gaussian noise (:data:`EMBEDDING_NOISE`), normalised. The
    HNSW index is dropped while the rows are copied in, then built once
    (pgvector README: "Index build time": faster than inserting into it).
    """
    import numpy as np

    from wovepaper import embeddings
    from wovepaper.models import Paper

    search_bench = _search_bench()
    records = search_bench.real_records()
    t0 = time.perf_counter()
    real = embeddings.embed(
        [embeddings.paper_text(r.title, r.abstract) for r in records]
    )
    embedded = time.perf_counter() - t0
    ids = list(Paper.objects.order_by("pk").values_list("pk", flat=True))
    np_rng = np.random.default_rng(rng.randrange(2**32))
    index = "wovepaper_paperembedding_vector_hnsw"
    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {index}")
        with cursor.cursor.copy(
            "COPY wovepaper_paperembedding "
            "(paper_id, vector, model, text_sha256, embedded_at) FROM STDIN"
        ) as copy:
            for start in range(0, len(ids), 5000):
                chunk = ids[start : start + 5000]
                picks = np_rng.integers(0, len(real), len(chunk))
                vectors = real[picks] + np_rng.normal(
                    0, EMBEDDING_NOISE, (len(chunk), real.shape[1])
                ).astype(np.float32)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                for pk, vector in zip(chunk, vectors, strict=True):
                    text = "[" + ",".join(f"{x:.6f}" for x in vector) + "]"
                    copy.write_row(
                        (pk, text, embeddings.model_name(), "bench", "2026-01-01")
                    )
    copied = time.perf_counter() - t0
    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '2GB'")
        cursor.execute(
            f"CREATE INDEX {index} ON wovepaper_paperembedding "
            "USING hnsw (vector vector_cosine_ops)"
        )
        cursor.execute("VACUUM ANALYZE wovepaper_paperembedding")
    built = time.perf_counter() - t0
    print(
        f"embeddings: {len(records)} real records embedded in {embedded:.0f} s "
        f"({len(records) / embedded:.1f} papers/s), {len(ids)} rows copied in "
        f"{copied:.0f} s, HNSW index built in {built:.0f} s"
    )
    return {"real": len(records)}


def hnsw_recall(words: dict, queries: int = 200) -> dict[int, tuple[float, float]]:
    """Recall@10 of the HNSW search against an exact scan of every vector, and
    the median time of one search, for ``queries`` search texts of the pages
    bench at several ``hnsw.ef_search`` values (the setting's among them).

    Returns:
        ``{ef_search: (recall@10 in [0, 1], median milliseconds)}``.
    """
    import numpy as np
    from django.conf import settings

    from wovepaper.models import PaperEmbedding
    from wovepaper.semantic import nearest, query_vector

    rows = PaperEmbedding.objects.filter(paper__hidden=False).values_list(
        "paper_id", "vector"
    )
    ids, vectors = [], []
    for pk, vector in rows.iterator(chunk_size=10_000):
        ids.append(pk)
        vectors.append(np.asarray(vector, dtype=np.float32))
    ids, matrix = np.array(ids), np.stack(vectors)
    rng = random.Random(23)
    texts = [
        " ".join(rng.sample(words["title_words"], rng.choice((1, 2, 3))))
        for _ in range(queries)
    ]
    asked = [(query_vector(t),) for t in texts]
    exact = [set(ids[np.argsort(-(matrix @ v))[:10]].tolist()) for (v,) in asked]
    out = {}
    for ef in sorted({40, 100, 200, 400, settings.SEMANTIC_EF_SEARCH}):
        with connection.cursor() as cursor:
            cursor.execute(f"SET hnsw.ef_search = {int(ef)}")
        found, spent = [], []
        for (vector,), truth in zip(asked, exact, strict=True):
            t = time.perf_counter()
            approximate = {pk for pk, _ in nearest(vector=vector, limit=10)}
            spent.append((time.perf_counter() - t) * 1000)
            found.append(len(truth & approximate) / 10)
        out[ef] = (statistics.mean(found), statistics.median(spent))
    with connection.cursor() as cursor:
        cursor.execute(f"SET hnsw.ef_search = {int(settings.SEMANTIC_EF_SEARCH)}")
    return out


def open_corpus(
    *, keep: bool, papers: int = 100_000, researchers: int = 30_000
) -> tuple[list, int, dict]:
    """Set up the scratch database and fill it, or reuse it when kept and built.

    The corpus is bench/search.py's (``papers`` papers, ``researchers``
    researchers) plus :func:`add_prolific_researcher`'s; bench/soak.py reads the
    same database.

    Args:
        keep: keep the database (``keepdb``) and reuse it if already built.

    Returns:
        ``(old database config for teardown_databases, the 1,000-paper
        researcher's id, bench/search.py's word pool)``.
    """
    from wovepaper.models import Paper, Researcher

    search_bench = _search_bench()
    old = setup_databases(
        verbosity=0,
        interactive=False,
        keepdb=keep,
        # A kept database is reused as is: serialising 100k papers for test
        # rollbacks (the default) would take many minutes.
        serialized_aliases=set(),
    )
    from wovepaper.models import PaperEmbedding, ResearcherStats

    words = search_bench.word_pool()
    built = Researcher.objects.filter(display_name="Bench Thousand").first()
    if built is not None:
        print(f"reusing {Paper.objects.count()} papers")
        if not PaperEmbedding.objects.exists():  # a database kept before issue 51
            add_embeddings(random.Random(29))
        if not ResearcherStats.objects.exists():  # kept before the browse pages
            add_researcher_stats()
        return old, built.pk, words
    t0 = time.perf_counter()
    rng = random.Random(13)
    search_bench.build(papers, researchers, words, rng)
    prolific = add_prolific_researcher(rng)
    add_embeddings(rng)
    add_researcher_stats()
    print(f"built in {time.perf_counter() - t0:.0f} s")
    return old, prolific, words


# The fields the browse scenarios visit (the corpus's commonest).
BROWSED_FIELDS = ("hep-th", "hep-ph", "gr-qc", "cs.LG")


def add_researcher_stats() -> None:
    """The figures the browse pages and search list (a bulk-built corpus wrote
    its authorships without the services that keep them)."""
    from wovepaper.stats import researcher_stats_refresh

    t0 = time.perf_counter()
    listed = researcher_stats_refresh()
    print(f"researcher figures: {listed} in {time.perf_counter() - t0:.0f} s")


def cold_page_ms(url: str, runs: int = 30) -> list[float]:
    """In-process server time of ``url`` with the cache cleared before each run."""
    client = Client(HTTP_HOST="127.0.0.1")
    client.get(url)
    out = []
    for _ in range(runs):
        cache.clear()
        t = time.perf_counter()
        response = client.get(url)
        out.append((time.perf_counter() - t) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--researchers", type=int, default=30_000)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    # As in production: gunicorn.conf.py's default, 1.5 workers a core.
    parser.add_argument("--workers", type=int, default=production_workers())
    parser.add_argument(
        "--only", default="", help="run only the scenarios whose name holds this"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the database, and reuse it if built"
    )
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("bench/pages.py needs DATABASE_URL to name a PostgreSQL database")
    search_bench = _search_bench()
    old, prolific, words = open_corpus(
        keep=args.keep, papers=args.papers, researchers=args.researchers
    )
    try:
        from wovepaper.models import Paper, Researcher

        rng = random.Random(17)

        r = Researcher.objects.get(pk=prolific)
        page = r.get_absolute_url()
        cold = cold_page_ms(page)
        print(
            f"in process, cache cleared: researcher page ({THOUSAND} papers) "
            f"p50 {statistics.median(cold):.1f} ms, max {max(cold):.1f} ms"
        )
        categories = [""] + search_bench.CATEGORIES
        thousand = [
            f"{page}?page={n}&sort={s}" + (f"&category={c}" if c else "")
            for n in range(1, THOUSAND // 24 + 2)
            for s in ("newest", "oldest", "cited", "title")
            for c in categories
        ]
        others = [
            Researcher(pk=pk, slug=slug).get_absolute_url()
            for pk, slug in Researcher.objects.order_by("?").values_list("pk", "slug")[
                :3000
            ]
        ]
        papers = [
            p.get_absolute_url()
            for p in Paper.objects.order_by("?").only("arxiv_id", "slug")[:3000]
        ]

        def distinct() -> list[str]:
            return [
                " ".join(rng.sample(words["title_words"], rng.choice((1, 2))))
                for _ in range(1500)
            ] + [rng.choice(words["families"]) for _ in range(500)]

        # Each search scenario asks its own queries, so none finds the heads or
        # the query embeddings another one cached.
        queries, by_words, by_meaning = distinct(), distinct(), distinct()
        for ef, (recall, ms) in hnsw_recall(words).items():
            print(
                f"HNSW recall@10 against the exact scan of {Paper.objects.count()} "
                f"vectors at ef_search {ef}: {recall:.3f} ({ms:.1f} ms a search)"
            )
        scenarios = {
            "robots.txt (baseline)": ["/robots.txt"],
            f"researcher, {THOUSAND} papers": [page],
            f"  varied ({len(thousand)} URLs)": thousand,
            "random researcher": others,
            "random paper": papers,
            # The browse pages: researchers by letter, field and order (a
            # count and a page each), papers newest first and by category.
            "browse researchers": [
                f"/researchers/?{urlencode(q)}"
                for q in (
                    {
                        "sort": rng.choice(("name", "papers", "recent", "cited")),
                        **rng.choice(
                            (
                                {"letter": rng.choice("ABCDEFGHKLMPSTWZ")},
                                {"field": rng.choice(BROWSED_FIELDS)},
                                {},
                            )
                        ),
                        "page": rng.randint(1, 20),
                    }
                    for _ in range(3000)
                )
            ],
            "browse papers and categories": [
                rng.choice(
                    (
                        f"/papers/?page={rng.randint(1, 200)}",
                        f"/categories/{rng.choice(BROWSED_FIELDS)}"
                        f"/?page={rng.randint(1, 200)}",
                    )
                )
                for _ in range(3000)
            ],
            "institutions": ["/institutions/"],
            # The default mode is hybrid: the keyword head, the query's
            # embedding (a few ms of one core) and the HNSW search.
            "search (hybrid), 2,000 distinct": [
                f"/search/?{urlencode({'q': q})}" for q in queries
            ],
            "search keyword, 2,000 distinct": [
                f"/search/?{urlencode({'q': q, 'mode': 'keyword'})}" for q in by_words
            ],
            "search semantic, 2,000 distinct": [
                f"/search/?{urlencode({'q': q, 'mode': 'semantic'})}"
                for q in by_meaning
            ],
            # Readers repeat queries: 500 of them drawn with Zipf weights (the
            # k-th most asked 1/k as often as the first), pages 1 to 3.
            "search, Zipf over 500": [
                f"/search/?{urlencode({'q': q, 'page': rng.choice((1, 1, 1, 2, 3))})}"
                for q in rng.choices(
                    queries[:500], weights=[1 / k for k in range(1, 501)], k=3000
                )
            ],
        }
        scenarios = {
            name: paths
            for index, (name, paths) in enumerate(scenarios.items())
            if index == 0 or args.only in name
        }
        import redis

        redis.Redis.from_url(REDIS_CACHE).flushdb()
        with gunicorn(
            database_url(), workers=args.workers, REDIS_URL=REDIS_CACHE
        ) as base:
            print(f"gunicorn {args.workers} workers, Redis cache")
            print(postgres_memory())
            run_scenarios(base, scenarios, rate=args.rate, seconds=args.seconds)
    finally:
        if not args.keep:
            teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()

"""Search latency in process on PostgreSQL with 100k papers.

Builds a scratch PostgreSQL database (``test_<name>`` of ``DATABASE_URL``) holding
100,000 papers whose titles and abstracts are drawn from the real arXiv records in
``WOVEPAPER_DATA_DIR/arxiv`` (a real title with a few words swapped for other
title words, an abstract of real abstract sentences), four authors each from real
given and family names, 30,000 researchers (the first two slots of each paper
curated), and the stored search vectors (wovepaper.search.search_vectors_refresh).
Then, over ``--queries`` search texts of one to three real title words (and
author family names):

- the search head the view reads (:func:`wovepaper.search.search_head`, at most
  ``SEARCH_SAMPLE`` matches read) against exact counting and ranking of every
  match, over all queries and over the broad ones alone;
- papers: :func:`wovepaper.search.paper_search`, its count and one page of 24
  rendered (``pages/search.html``'s paper rows, :func:`wovepaper.profile.paper_rows`);
- the whole ``/search/`` view (researchers, category facet, papers, template);
- researchers: :func:`wovepaper.search.researcher_search` on names with a typo;

printing p50, p99 and max in milliseconds, and the EXPLAIN (ANALYZE) of one
paper query and one researcher query (both should read their GIN index).

Usage (a few minutes, most of it building):
``DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_bench_search
.venv/bin/python bench/search.py [--papers N] [--queries Q] [--keep]``;
``--keep`` keeps the database (and reuses it when it is already filled).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import RequestFactory  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402

CATEGORIES = ["hep-th", "hep-ph", "gr-qc", "cond-mat.str-el", "math.AG", "cs.LG"]
BATCH = 5000
_WORD_RE = re.compile(r"[A-Za-z][a-z]{3,}")


def real_records() -> list:
    """Every parseable real arXiv record in the shared data (titles, abstracts)."""
    from harvest.records import RecordError
    from harvest.services import arxiv_files, arxiv_reader_for

    records = []
    for path in arxiv_files(Path(settings.WOVEPAPER_DATA_DIR) / "arxiv"):
        try:
            reader = arxiv_reader_for(path)
            for item in reader.split(path, None):
                try:
                    records.append(reader.parse(item))
                except RecordError:
                    continue
        except RecordError:
            continue
    return [r for r in records if r.title and r.abstract]


def word_pool() -> dict:
    """What the corpus and the queries are drawn from: the real records' words.

    Returns:
        ``{"titles": [[word]], "title_words": [word], "sentences": [sentence],
        "givens": [name], "families": [name]}``, in a fixed order (so a rerun on a
        kept database asks the same queries).
    """
    records = real_records()
    titles = [r.title.split() for r in records]
    people = [
        (a.given_name, a.family_name)
        for r in records
        for a in r.authors
        if a.given_name and a.family_name and not a.is_collaboration
    ]
    pool = {
        "titles": titles,
        "title_words": [w for t in titles for w in t if _WORD_RE.fullmatch(w)],
        "sentences": [
            s.strip() + "."
            for r in records
            for s in r.abstract.split(". ")
            if len(s.split()) > 4
        ],
        "givens": sorted({g for g, _ in people}),
        "families": sorted({f for _, f in people}),
    }
    print(
        f"drawing from {len(records)} real records: "
        f"{len(set(pool['title_words']))} title words, {len(pool['sentences'])} "
        f"abstract sentences, {len(pool['givens'])} given and "
        f"{len(pool['families'])} family names"
    )
    return pool


def build(papers: int, researchers: int, pool: dict, rng: random.Random) -> None:
    """Fill the scratch database in batches, search vectors included."""
    from wovepaper.models import Authorship, Paper, Researcher
    from wovepaper.search import search_vectors_refresh

    titles, title_words = pool["titles"], pool["title_words"]
    sentences, givens, families = pool["sentences"], pool["givens"], pool["families"]
    names = [(rng.choice(givens), rng.choice(families)) for _ in range(researchers)]
    Researcher.objects.bulk_create(
        (
            Researcher(
                display_name=f"{g} {f}",
                slug=f"r-{i}",
                name_variants=[f"{g[0]}. {f}"],
                block_key=f"{f.lower()}_{g[0].lower()}",
            )
            for i, (g, f) in enumerate(names)
        ),
        batch_size=BATCH,
    )
    rids = list(Researcher.objects.order_by("pk").values_list("pk", flat=True))
    start = date(1995, 1, 1)
    for base in range(0, papers, BATCH):
        batch = []
        for i in range(base, min(base + BATCH, papers)):
            title = list(rng.choice(titles))
            for _ in range(2):
                title[rng.randrange(len(title))] = rng.choice(title_words)
            batch.append(
                Paper(
                    arxiv_id=f"{1995 + i % 30}{i % 12 + 1:02d}.{i:06d}",
                    title=" ".join(title),
                    abstract=" ".join(rng.sample(sentences, 6)),
                    published=start + timedelta(days=i % 11000),
                    categories=[CATEGORIES[i % 6], CATEGORIES[(i + 1) % 6]],
                    primary_category=CATEGORIES[i % 6],
                    slug=f"paper-{i}",
                )
            )
        batch = Paper.objects.bulk_create(batch)
        slots = []
        for p in batch:
            for pos in range(1, 5):
                if pos <= 2:
                    k = rng.randrange(researchers)
                    g, f = names[k]
                    rid = rids[k]
                else:
                    g, f = rng.choice(givens), rng.choice(families)
                    rid = None
                slots.append(
                    Authorship(
                        paper=p,
                        position=pos,
                        raw_name=f"{g} {f}",
                        given_name=g,
                        family_name=f,
                        researcher_id=rid,
                    )
                )
        Authorship.objects.bulk_create(slots)
        search_vectors_refresh(paper_ids=[p.pk for p in batch])
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def typo(name: str, rng: random.Random) -> str:
    """The name with one letter dropped from its longest word (a typing slip)."""
    words = name.split()
    longest = max(range(len(words)), key=lambda i: len(words[i]))
    w = words[longest]
    if len(w) > 4:
        cut = rng.randrange(1, len(w) - 1)
        words[longest] = w[:cut] + w[cut + 1 :]
    return " ".join(words)


def timed(fn, inputs: list) -> list[float]:
    """Milliseconds of ``fn(x)`` for each input, after two warm-up calls."""
    for x in inputs[:2]:
        fn(x)
    out = []
    for x in inputs:
        t0 = time.perf_counter()
        fn(x)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(name: str, ms: list[float]) -> None:
    print(
        f"{name:<44} p50 {statistics.median(ms):7.1f} ms   p99 "
        f"{pct(ms, 0.99):7.1f} ms   max {max(ms):7.1f} ms",
        flush=True,
    )


def explain(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", params)
        return "\n".join(f"    {row[0]}" for row in cursor.fetchall())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--researchers", type=int, default=30_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("bench/search.py needs DATABASE_URL to name a PostgreSQL database")

    from wovepaper.models import Paper
    from wovepaper.profile import paper_rows
    from wovepaper.search import (
        SEARCH_SAMPLE,
        paper_search,
        researcher_matches,
        researcher_search,
        search_head,
        search_query_clean,
    )
    from wovepaper.selectors import paper_list
    from wovepaper.templatetags.wovepaper_text import paper_item
    from wovepaper.views.search import search

    old = setup_databases(
        verbosity=0,
        interactive=False,
        keepdb=args.keep,
        # A kept database is reused as is: serialising 100k papers for test
        # rollbacks (the default) would take many minutes.
        serialized_aliases=set(),
    )
    rng = random.Random(7)
    try:
        pool = word_pool()
        if Paper.objects.exists():
            print(f"reusing {Paper.objects.count()} papers")
        else:
            t0 = time.perf_counter()
            build(args.papers, args.researchers, pool, rng)
            print(
                f"built {args.papers} papers, {args.researchers} researchers, "
                f"{args.papers * 4} authorships with search vectors in "
                f"{time.perf_counter() - t0:.0f} s"
            )
        from wovepaper.models import Researcher

        rng = random.Random(11)
        display_names = list(
            Researcher.objects.order_by("pk").values_list("display_name", flat=True)
        )
        queries = []
        for i in range(args.queries):
            if i % 5 == 4:
                queries.append(rng.choice(pool["families"]))
            else:
                k = 1 + i % 3
                queries.append(" ".join(rng.sample(pool["title_words"], k)))
        hits = [paper_search(query=q).count() for q in queries[:50]]
        print(
            f"{len(queries)} queries, e.g. {queries[:4]}; results per query "
            f"(first 50): median {statistics.median(hits):.0f}, max {max(hits)}"
        )

        def papers_page(q: str) -> None:
            found = paper_search(query=q)
            count = found.count()
            rows = paper_rows(found[:24])
            html = "".join(paper_item(row) for row in rows)
            assert count >= len(rows)
            assert html.count("<li>") == len(rows)

        factory = RequestFactory()

        def page_view(q: str) -> None:
            response = search(factory.get("/search/", {"q": q}))
            assert response.status_code == 200

        name_queries = [typo(rng.choice(display_names), rng) for _ in queries]

        def researchers(q: str) -> None:
            researcher_search(query=q, limit=10)

        def bounded(q: str) -> None:
            search_head(query=search_query_clean(q), category=None, year=None)

        def exact(q: str) -> None:
            found = paper_search(query=q)
            found.count()
            list(found.values_list("pk", flat=True)[:240])

        broad = [
            q
            for q in queries
            if paper_search(query=q)[: SEARCH_SAMPLE + 1].count() > SEARCH_SAMPLE
        ]
        print(
            f"{len(broad)} of {len(queries)} queries match over {SEARCH_SAMPLE} papers"
        )
        report("exact: count + rank all (baseline)", timed(exact, queries))
        report("search_head: bounded (what /search/ reads)", timed(bounded, queries))
        report("  broad only: exact", timed(exact, broad))
        report("  broad only: bounded", timed(bounded, broad))
        report("paper_search: count + page of 24 + rows", timed(papers_page, queries))
        report("/search/ view (all of it, rendered)", timed(page_view, queries))
        report("researcher_search (name with a typo)", timed(researchers, name_queries))
        found = [len(researcher_search(query=q, limit=10)) for q in name_queries[:50]]
        print(
            f"researchers found per typo'd name (first 50): median "
            f"{statistics.median(found):.0f}, none for {found.count(0)}"
        )

        # What a stored vector costs every other Paper read: 100 rows with it,
        # and without it (deferred).
        with_vector = timed(lambda _: list(paper_list()[:100]), list(range(30)))
        without = timed(
            lambda _: list(paper_list().defer("search_vector")[:100]),
            list(range(30)),
        )
        report("paper_list()[:100] (vector loaded)", with_vector)
        report("paper_list()[:100] (vector deferred)", without)

        q = queries[0]
        page = paper_search(query=q)[:24]
        print(f"\nEXPLAIN ANALYZE paper page for {q!r}:\n{explain(page)}")
        name = name_queries[0]
        plan = explain(researcher_matches(query=name)[:10])
        print(f"\nEXPLAIN ANALYZE researcher search for {name!r}:\n{plan}")
    finally:
        if not args.keep:
            teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()

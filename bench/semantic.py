"""Search quality by words, by meaning and both, on the real arXiv records (issue 51).

Builds a scratch PostgreSQL database (``test_<name>`` of ``DATABASE_URL``),
harvests the bundled arXiv records (``WOVEPAPER_DATA_DIR/arxiv``, about 1,270
papers) through the product's harvest, and embeds them with
:func:`wovepaper.semantic.embeddings_refresh`, timing it (papers/s on this
machine's cores, the embedding issue's throughput figure; titles alone are timed
too, as the model README's figure is for titles).

Then, for each paper whose abstract has a second sentence that is not its title
(the issue's paraphrase-like query), that sentence is the query, cut to what
the search box accepts (:data:`api.search.MAX_SEARCH_TERMS` words and
:data:`api.search.MAX_SEARCH_CHARS` characters: a reader cannot ask more). Each
query goes through the product's own search (:func:`wovepaper.search.search_results`,
the page's path) in the three modes, in the same run:

- **recall@10**: the share of queries whose paper is among the first 10 results;
- **archive@10**: the share of the first 10 results whose primary arXiv archive
  (``cond-mat`` of ``cond-mat.mes-hall``, ``hep-th``) is the query paper's;
- **empty**: queries with no result at all.

It also prints the HNSW index's recall@10 against an exact scan of the same
vectors (:func:`wovepaper.semantic._nearest_exact`) for the queries.

Usage (about 2 minutes, most of it embedding):
``DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_bench_semantic
.venv/bin/python bench/semantic.py [--limit N] [--keep] [--json]``; ``--keep``
keeps the database and reuses it when filled.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")
# The queries are the bench's, not a reader's: a cache shared with a running
# site must not answer them.
os.environ.setdefault("REDIS_URL", "")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402

# A sentence ends at ". ", "? " or "! " before a capital letter or a digit, not
# after a lone initial or a common abbreviation (et al., e.g., Fig.).
_SENTENCE_END = re.compile(
    r"(?<!\bal)(?<!\be\.g)(?<!\bi\.e)(?<!\bFig)(?<!\bEq)(?<!\bRef)(?<!\b[A-Z])"
    r"[.?!]\s+(?=[A-Z0-9])"
)
MODES = ("keyword", "semantic", "hybrid")


def sentences(text: str) -> list[str]:
    """The sentences of an abstract (whitespace collapsed), in order."""
    text = " ".join(text.split())
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def query_of(paper) -> str | None:
    """The paper's abstract's second sentence, cut to the search box's bounds;
    None when there is none or it is the title."""
    from api.search import MAX_SEARCH_CHARS, MAX_SEARCH_TERMS

    parts = sentences(paper.abstract)
    if len(parts) < 2:
        return None
    second = parts[1].rstrip(".")
    if second.lower() in paper.title.lower() or len(second.split()) < 4:
        return None
    words = second.split()[:MAX_SEARCH_TERMS]
    text = " ".join(words)
    while len(text) > MAX_SEARCH_CHARS:
        words = words[:-1]
        text = " ".join(words)
    return text


def archive(category: str) -> str:
    """The arXiv archive of a category: ``cond-mat`` of ``cond-mat.mes-hall``."""
    return category.split(".", 1)[0]


def build() -> dict:
    """Harvest the real records and embed them; returns the timings."""
    from harvest.services import harvest_arxiv_files
    from wovepaper import embeddings
    from wovepaper.models import Paper
    from wovepaper.semantic import embeddings_refresh

    t = time.perf_counter()
    harvest_arxiv_files(root=Path(settings.WOVEPAPER_DATA_DIR) / "arxiv")
    harvested = time.perf_counter() - t
    papers = list(Paper.objects.values_list("title", "abstract"))
    embeddings.encoder()  # load the model outside the timing
    t = time.perf_counter()
    embeddings.embed([title for title, _ in papers])
    titles = time.perf_counter() - t
    t = time.perf_counter()
    counts = embeddings_refresh()
    seconds = time.perf_counter() - t
    tokens = [
        len(embeddings.encoder().tokenizer.encode(embeddings.paper_text(*p)).ids)
        for p in papers
    ]
    return {
        "papers": len(papers),
        "harvest_seconds": round(harvested, 1),
        "embedded": counts["embedded"],
        "embed_seconds": round(seconds, 1),
        "papers_per_second": round(counts["embedded"] / seconds, 1),
        "titles_per_second": round(len(papers) / titles, 1),
        "mean_word_pieces": round(statistics.mean(tokens), 1),
        "threads": int(settings.EMBEDDING_THREADS),
        "cores": os.cpu_count(),
    }


def measure(limit: int | None) -> dict:
    """Ask every query in the three modes; returns the figures."""
    import numpy as np

    from wovepaper.models import Paper
    from wovepaper.search import SearchQueryError, search_results
    from wovepaper.semantic import _nearest_exact, nearest, query_vector

    papers = [
        p
        for p in Paper.objects.filter(hidden=False).order_by("pk")
        if query_of(p) is not None
    ][:limit]
    archives = dict(Paper.objects.values_list("pk", "primary_category"))
    found = {mode: 0 for mode in MODES}
    same = {mode: [] for mode in MODES}
    empty = {mode: 0 for mode in MODES}
    refused = 0
    hnsw_recall = []
    seconds = {mode: [] for mode in MODES}
    candidates = Paper.objects.filter(hidden=False, embedding__isnull=False)
    for paper in papers:
        text = query_of(paper)
        for mode in MODES:
            t = time.perf_counter()
            try:
                ids = search_results(
                    query=text, category=None, year=None, number=1, size=10, mode=mode
                )["ids"]
            except SearchQueryError:
                refused += mode == "keyword"
                ids = []
            seconds[mode].append(time.perf_counter() - t)
            found[mode] += paper.pk in ids
            empty[mode] += not ids
            mine = archive(paper.primary_category)
            same[mode].extend(archive(archives[pk]) == mine for pk in ids)
        vector = query_vector(text)
        approximate = {pk for pk, _ in nearest(vector=vector, limit=10)}
        exact = {pk for pk, _ in _nearest_exact(candidates, vector, 10)}
        hnsw_recall.append(len(approximate & exact) / max(1, len(exact)))
    n = len(papers)
    return {
        "queries": n,
        "keyword_refused": refused,
        "modes": {
            mode: {
                "recall_at_10": round(found[mode] / n, 3),
                "archive_at_10": round(float(np.mean(same[mode])), 3)
                if same[mode]
                else None,
                "empty": empty[mode],
                "p50_ms": round(1000 * statistics.median(seconds[mode]), 1),
            }
            for mode in MODES
        },
        "hnsw_recall_at_10": round(statistics.mean(hnsw_recall), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="at most N queries")
    parser.add_argument("--keep", action="store_true", help="keep the database")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("bench/semantic.py needs DATABASE_URL to name a PostgreSQL database")
    old = setup_databases(
        verbosity=0, interactive=False, keepdb=args.keep, serialized_aliases=set()
    )
    try:
        from wovepaper.models import PaperEmbedding

        cache.clear()
        built = (
            build()
            if not PaperEmbedding.objects.exists()
            else {"papers": PaperEmbedding.objects.count(), "reused": True}
        )
        figures = measure(args.limit)
        result = {"corpus": built, **figures}
        if args.json:
            print(json.dumps(result, indent=2))
            return
        print(
            f"corpus: {built['papers']} real arXiv papers"
            + (
                f"; embedded {built['embedded']} in {built['embed_seconds']} s: "
                f"{built['papers_per_second']} papers/s (title and abstract, mean "
                f"{built['mean_word_pieces']} word pieces, {built['cores']} cores); "
                f"titles alone {built['titles_per_second']}/s"
                if "embedded" in built
                else " (reused)"
            )
        )
        print(
            f"{figures['queries']} queries (each paper's abstract's second sentence, "
            f"cut to the search box's bounds)"
        )
        print(
            f"{'mode':<10} {'recall@10':>10} {'archive@10':>11} {'empty':>6} {'p50':>8}"
        )
        for mode, row in figures["modes"].items():
            print(
                f"{mode:<10} {row['recall_at_10']:>10.3f} "
                f"{row['archive_at_10'] or 0:>11.3f} {row['empty']:>6} "
                f"{row['p50_ms']:>6.1f}ms"
            )
        gain = (
            figures["modes"]["hybrid"]["recall_at_10"]
            - figures["modes"]["keyword"]["recall_at_10"]
        )
        print(f"hybrid - keyword recall@10: {gain:+.3f}")
        print(f"HNSW recall@10 against the exact scan: {figures['hnsw_recall_at_10']}")
    finally:
        if not args.keep:
            teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()

"""Semantic search, hybrid search and similar papers on real arXiv records (issue 51).

The corpus is real ``.abs`` files of April 2007 (read in place from the shared
data folder through symlinks): the first 80 papers of 0704 and two papers about
graphene on silicon carbide. Embeddings are memoised across the tests by text,
so the model runs once per text in the session.
"""

from __future__ import annotations

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from django.test import override_settings

from curation.matching import features
from harvest import services
from harvest.tasks import harvest_arxiv_files_task
from wovepaper import embeddings, semantic
from wovepaper.models import Paper, PaperEmbedding
from wovepaper.tasks import embeddings_refresh_task

pytestmark = pytest.mark.django_db

PAPERS = "abs_files/ftp/arxiv/papers/0704"
GRAPHENE = ("0704.0216", "0704.0285")  # "Ab initio Study of Graphene on SiC", ...
CORPUS = tuple(f"0704.{n:04d}" for n in range(1, 81)) + GRAPHENE
# No paper of the corpus holds every word: keyword search finds nothing.
PARAPHRASE = "two-dimensional carbon crystals for electronics"

# The model README's reference vectors (first 8 of 384 dimensions).
REFERENCE = {
    "Author name disambiguation in digital libraries.": [
        -0.04532,
        0.010034,
        -0.039744,
        -0.011164,
        -0.035876,
        -0.031285,
        0.056551,
        0.013229,
    ],
    "Ping Li": [
        0.010612,
        -0.022552,
        -0.012159,
        -0.000136,
        0.006283,
        -0.009828,
        0.086296,
        -0.045351,
    ],
}

_MEMO: dict[str, np.ndarray] = {}


def _memo_embed(texts):
    missing = [t for t in dict.fromkeys(texts) if t not in _MEMO]
    if missing:
        for text, vector in zip(
            missing, embeddings.encoder().encode(missing), strict=True
        ):
            _MEMO[text] = vector
    return np.stack([_MEMO[t] for t in texts]) if texts else embeddings.embed([])


@pytest.fixture
def memo(monkeypatch):
    monkeypatch.setattr(semantic, "embed", _memo_embed)


@pytest.fixture
def corpus(arxiv_dir, tmp_path, memo):
    for arxiv_id in CORPUS:
        source = arxiv_dir / PAPERS / f"{arxiv_id}.abs"
        if source.exists():
            (tmp_path / f"{arxiv_id}.abs").symlink_to(source.resolve())
    services.harvest_arxiv_files(root=tmp_path)
    counts = semantic.embeddings_refresh()
    return {p.arxiv_id: p for p in Paper.objects.all()}, counts


def test_embedding_matches_the_model_readmes_reference_vectors(settings):
    # Run as the model README runs it: fp32 weights, 256 word pieces.
    settings.EMBEDDING_QUANTIZED = False
    settings.EMBEDDING_MAX_TOKENS = 256
    assert embeddings.model_name() == "all-MiniLM-L6-v2"
    vectors = embeddings.embed(list(REFERENCE))
    for vector, expected in zip(vectors, REFERENCE.values(), strict=True):
        assert np.abs(vector[:8] - np.array(expected)).max() < 1e-4
        assert vector.shape == (embeddings.DIMENSIONS,)
        assert abs(np.linalg.norm(vector) - 1.0) < 1e-5
    assert abs(float(vectors[0] @ vectors[1]) - 0.08396) < 1e-4


def test_the_int8_model_stays_near_the_readmes_vectors(settings):
    texts = [*REFERENCE, PARAPHRASE, "Ab initio study of graphene on SiC."]
    settings.EMBEDDING_QUANTIZED = False
    settings.EMBEDDING_MAX_TOKENS = 256
    exact = embeddings.embed(texts)
    settings.EMBEDDING_QUANTIZED = True
    settings.EMBEDDING_MAX_TOKENS = 128
    quick = embeddings.embed(texts)
    # Short texts: truncation plays no part, quantization only.
    assert ((exact * quick).sum(axis=1) > 0.98).all()
    assert abs(float(quick[0] @ quick[1]) - 0.08396) < 0.03
    assert (np.abs(np.linalg.norm(quick, axis=1) - 1.0) < 1e-5).all()


def test_the_int8_copy_is_made_once_and_a_place_it_cannot_go_is_named(
    settings, tmp_path
):
    settings.EMBEDDING_CACHE_DIR = tmp_path / "cache"
    folder = settings.EMBEDDING_MODEL_DIR
    made = embeddings.quantized_model(folder)
    assert made.parent == tmp_path / "cache" / "models"
    assert made.stat().st_size < (folder / "model.onnx").stat().st_size / 3
    stamp = made.stat().st_mtime_ns
    assert embeddings.quantized_model(folder) == made
    assert made.stat().st_mtime_ns == stamp
    blocked = tmp_path / "file"
    blocked.write_text("a file, not a folder")
    settings.EMBEDDING_CACHE_DIR = blocked
    with pytest.raises(ImproperlyConfigured, match=str(blocked)) as caught:
        embeddings.quantized_model(folder)
    assert "EMBEDDING_QUANTIZED=0" in str(caught.value)
    assert not list(tmp_path.glob(".*.onnx"))


def test_an_empty_text_and_a_long_one_embed_alike_in_any_batch():
    long = "word " * 2000  # far past 256 word pieces: truncated
    alone = embeddings.embed([long])[0]
    batch = embeddings.embed(["", "Ping Li", long])
    assert np.abs(batch[2] - alone).max() < 1e-5
    assert abs(np.linalg.norm(batch[0]) - 1.0) < 1e-5


def test_a_missing_model_folder_is_named(tmp_path, settings):
    settings.EMBEDDING_MODEL_DIR = tmp_path / "nowhere"
    with pytest.raises(Exception, match="nowhere") as caught:
        embeddings.encoder()
    assert "EMBEDDING_MODEL_DIR" in str(caught.value)


def test_refresh_embeds_each_real_paper_once_and_again_when_its_text_changes(corpus):
    papers, counts = corpus
    assert counts == {
        "papers": len(papers),
        "embedded": len(papers),
        "unchanged": 0,
        "more": 0,
    }
    assert PaperEmbedding.objects.count() == len(papers) >= 80
    row = PaperEmbedding.objects.get(paper=papers["0704.0285"])
    assert row.model == embeddings.model_name() == "all-MiniLM-L6-v2-int8-128"
    assert row.vector.shape == (384,)
    assert semantic.embeddings_refresh() == {
        "papers": len(papers),
        "embedded": 0,
        "unchanged": len(papers),
        "more": 0,
    }
    Paper.objects.filter(pk=papers["0704.0285"].pk).update(abstract="Changed.")
    again = semantic.embeddings_refresh()
    assert (again["embedded"], again["unchanged"]) == (1, len(papers) - 1)
    changed = PaperEmbedding.objects.get(paper=papers["0704.0285"])
    assert not np.allclose(changed.vector, row.vector)


def test_another_way_of_running_the_model_embeds_every_paper_again(corpus, settings):
    papers, _ = corpus
    settings.EMBEDDING_MAX_TOKENS = 256
    assert embeddings.model_name() == "all-MiniLM-L6-v2-int8"
    again = semantic.embeddings_refresh()
    assert (again["embedded"], again["unchanged"]) == (len(papers), 0)
    assert set(PaperEmbedding.objects.values_list("model", flat=True)) == {
        "all-MiniLM-L6-v2-int8"
    }


def test_search_by_meaning_finds_what_keyword_search_misses(client, corpus):
    papers, _ = corpus
    keyword = client.get("/search/", {"q": PARAPHRASE, "mode": "keyword"})
    assert keyword.context["page"].paginator.count == 0

    semantic_page = client.get("/search/", {"q": PARAPHRASE, "mode": "semantic"})
    top = [p["arxiv_id"] for p in semantic_page.context["papers"][:3]]
    assert set(GRAPHENE) & set(top), top
    assert semantic_page.context["found_is"] == "nearest"

    hybrid = client.get("/search/", {"q": PARAPHRASE})
    assert hybrid.context["answered_by"] == "hybrid"
    assert set(GRAPHENE) & {p["arxiv_id"] for p in hybrid.context["papers"][:3]}
    assert "near in meaning" in hybrid.content.decode()


def test_hybrid_keeps_the_keyword_hit_first_and_adds_neighbours(corpus):
    papers, _ = corpus
    result = semantic_search("epitaxial graphene", mode="hybrid")
    assert result["ids"][0] == papers["0704.0285"].pk  # title and meaning agree
    keyword = semantic_search("epitaxial graphene", mode="keyword")
    assert result["count"] > keyword["count"]
    assert result["by_words"] == keyword["count"]
    assert set(keyword["ids"]) <= set(result["ids"])


def semantic_search(text: str, *, mode: str) -> dict:
    from wovepaper.search import search_results

    return search_results(
        query=text, category=None, year=None, number=1, size=1000, mode=mode
    )


def test_hnsw_answers_as_the_exact_scan_on_the_real_corpus(corpus):
    vector = semantic.query_vector(PARAPHRASE)
    approximate = semantic.nearest(vector=vector, limit=10)
    exact = semantic._nearest_exact(
        Paper.objects.filter(hidden=False, embedding__isnull=False), vector, 10
    )
    assert [pk for pk, _ in approximate] == [pk for pk, _ in exact]
    assert np.allclose([s for _, s in approximate], [s for _, s in exact], atol=1e-5)


def test_semantic_search_hides_hidden_papers_and_applies_filters(corpus):
    papers, _ = corpus
    vector = semantic.query_vector(PARAPHRASE)
    first = semantic.nearest(vector=vector, limit=1)[0][0]
    Paper.objects.filter(pk=first).update(hidden=True)
    assert first not in [pk for pk, _ in semantic.nearest(vector=vector, limit=50)]
    in_hep = semantic.nearest(vector=vector, limit=50, category="hep-ph")
    assert in_hep
    for pk, _ in in_hep:
        assert "hep-ph" in Paper.objects.get(pk=pk).categories
    assert semantic.nearest(vector=vector, limit=5, year=1990) == []


def test_similar_papers_leave_the_paper_out_on_the_page_and_in_the_api(client, corpus):
    papers, _ = corpus
    paper = papers["0704.0285"]
    similar = semantic.similar_papers(paper=paper, limit=3)
    assert paper.pk not in [p.pk for p in similar]
    assert similar[0].arxiv_id == "0704.0216"  # the other graphene-on-SiC paper
    body = client.get(paper.get_absolute_url()).content.decode()
    assert 'id="similar-heading"' in body
    assert similar[0].get_absolute_url() in body

    answer = client.get("/api/papers/0704.0285/similar/", {"limit": 3}).json()
    assert [row["arxiv_id"] for row in answer] == [p.arxiv_id for p in similar]
    assert 0 < answer[1]["similarity"] <= answer[0]["similarity"] <= 1
    doi = client.get(f"/api/papers/{paper.doi}/similar/", {"limit": 3}).json()
    assert doi == answer
    # fields= holds here as on every list (it was ignored).
    slim = client.get(
        "/api/papers/0704.0285/similar/", {"limit": 3, "fields": "arxiv_id"}
    )
    assert slim.json() == [{"arxiv_id": row["arxiv_id"]} for row in answer]


def test_similar_papers_api_refuses_bad_input(client, corpus):
    assert client.get("/api/papers/9999.9999/similar/").status_code == 404
    for limit in ("0", "51", "x", "-1"):
        response = client.get("/api/papers/0704.0285/similar/", {"limit": limit})
        assert response.status_code == 400, limit
        assert "limit" in response.json()["errors"]


def test_an_unembedded_paper_has_no_similar_papers(client, corpus):
    papers, _ = corpus
    PaperEmbedding.objects.filter(paper=papers["0704.0285"]).delete()
    assert client.get("/api/papers/0704.0285/similar/").json() == []
    body = client.get(papers["0704.0285"].get_absolute_url()).content.decode()
    assert 'id="similar-heading"' not in body


def test_search_api_answers_each_mode_and_refuses_bad_ones(client, corpus):
    for mode in ("keyword", "semantic", "hybrid"):
        answer = client.get("/api/search/papers/", {"q": PARAPHRASE, "mode": mode})
        assert answer.status_code == 200
        assert answer.json()["mode"] == mode
    semantic_answer = client.get(
        "/api/search/papers/", {"q": PARAPHRASE, "mode": "semantic"}
    ).json()
    assert semantic_answer["count_is"] == "nearest"
    assert set(GRAPHENE) & {r["arxiv_id"] for r in semantic_answer["results"][:3]}
    slim = client.get(
        "/api/search/papers/",
        {"q": PARAPHRASE, "mode": "semantic", "fields": "arxiv_id"},
    ).json()["results"]
    assert slim == [{"arxiv_id": r["arxiv_id"]} for r in semantic_answer["results"]]
    named = client.get("/api/search/papers/", {"q": "0704.0285", "fields": "title"})
    assert list(named.json()["results"][0]) == ["title"]
    assert client.get("/api/search/papers/", {"q": PARAPHRASE}).json()["mode"] == (
        "hybrid"
    )
    named = client.get("/api/search/papers/", {"q": "arXiv:0704.0285v1"}).json()
    assert [r["arxiv_id"] for r in named["results"]] == ["0704.0285"]
    assert named["count"] == 1
    bad = client.get("/api/search/papers/", {"q": "", "mode": "fuzzy", "page": "0"})
    assert bad.status_code == 400
    assert set(bad.json()["errors"]) == {"q", "mode", "page"}


def test_search_page_refuses_an_unknown_mode(client, corpus):
    response = client.get("/search/", {"q": "graphene", "mode": "fuzzy"})
    assert response.status_code == 400
    assert "The search mode must be hybrid, keyword or semantic." in (
        response.content.decode()
    )


def test_without_the_model_hybrid_answers_by_keyword_and_semantic_says_why(
    client, corpus, tmp_path, settings, monkeypatch
):
    monkeypatch.setattr(semantic, "embed", embeddings.embed)
    settings.EMBEDDING_MODEL_DIR = tmp_path / "no-model"
    hybrid = client.get("/search/", {"q": "graphene"})
    assert hybrid.status_code == 200
    assert hybrid.context["answered_by"] == "keyword"
    assert "Search by meaning is not available now" in hybrid.content.decode()
    assert hybrid.context["page"].paginator.count >= 2
    refused = client.get("/search/", {"q": "carbon sheets", "mode": "semantic"})
    assert refused.status_code == 503  # the site's fault, not the text's
    assert "Search by meaning is not available" in refused.content.decode()
    # Nothing changed, nothing to embed: the model is not needed.
    call_command("embed_papers", "--no-progress")
    PaperEmbedding.objects.all().delete()
    with pytest.raises(CommandError, match="no-model"):
        call_command("embed_papers", "--no-progress")


def test_rank_fusion_follows_reciprocal_ranks():
    # 1/(60+1) + 1/(60+3) for 7 beats 1/(60+1) + 0 for 5, and 1/(60+2)*2 for 9.
    assert semantic.rank_fusion([[7, 9, 5], [5, 9, 7]]) == [7, 5, 9]
    assert semantic.rank_fusion([[1, 2], [3]]) == [1, 3, 2]
    assert semantic.rank_fusion([[], []]) == []


def test_embed_papers_command_backfills_then_skips(arxiv_dir, tmp_path, memo):
    for arxiv_id in GRAPHENE:
        (tmp_path / f"{arxiv_id}.abs").symlink_to(
            (arxiv_dir / PAPERS / f"{arxiv_id}.abs").resolve()
        )
    services.harvest_arxiv_files(root=tmp_path)
    from io import StringIO

    out = StringIO()
    call_command("embed_papers", "--no-progress", stdout=out)
    assert "papers: 2, embedded: 2, unchanged: 0" in out.getvalue()
    out = StringIO()
    call_command("embed_papers", "--no-progress", stdout=out)
    assert "papers: 2, embedded: 0, unchanged: 2" in out.getvalue()


@override_settings(EMBED_AFTER_HARVEST=True)
def test_a_harvest_queues_the_embedding_of_its_papers(
    arxiv_dir, tmp_path, memo, django_capture_on_commit_callbacks
):
    for arxiv_id in GRAPHENE:
        (tmp_path / f"{arxiv_id}.abs").symlink_to(
            (arxiv_dir / PAPERS / f"{arxiv_id}.abs").resolve()
        )
    with django_capture_on_commit_callbacks(execute=True):
        counts = harvest_arxiv_files_task.delay(str(tmp_path), then_match=False).get()
    assert counts["embedding_task"]
    assert PaperEmbedding.objects.count() == 2
    with django_capture_on_commit_callbacks(execute=True) as queued:
        again = harvest_arxiv_files_task.delay(str(tmp_path), then_match=False).get()
    assert again["embedding_task"] == ""  # nothing created or changed
    assert not queued


def test_an_embedding_task_queues_the_rest_past_its_share(
    arxiv_dir, tmp_path, memo, settings, monkeypatch
):
    for arxiv_id in CORPUS[:40]:
        (tmp_path / f"{arxiv_id}.abs").symlink_to(
            (arxiv_dir / PAPERS / f"{arxiv_id}.abs").resolve()
        )
    services.harvest_arxiv_files(root=tmp_path)
    monkeypatch.setattr(semantic, "REFRESH_CHUNK", 8)
    settings.EMBED_TASK_MOST = 10
    # Two chunks of 8 pass the share of 10: the task stops and queues itself
    # (eagerly here), which embeds the other 24 and skips the first 16.
    first = embeddings_refresh_task.delay().get()
    assert (first["embedded"], first["more"]) == (16, 1)
    assert PaperEmbedding.objects.count() == Paper.objects.count() == 40


def test_an_embedding_task_without_the_model_leaves_the_harvest_standing(
    arxiv_dir, tmp_path, settings
):
    for arxiv_id in GRAPHENE:
        (tmp_path / f"{arxiv_id}.abs").symlink_to(
            (arxiv_dir / PAPERS / f"{arxiv_id}.abs").resolve()
        )
    services.harvest_arxiv_files(root=tmp_path)
    settings.EMBEDDING_MODEL_DIR = tmp_path / "gone"
    counts = embeddings_refresh_task.delay().get()
    assert counts["error"] == 1
    assert Paper.objects.count() == 2
    assert not PaperEmbedding.objects.exists()


def test_title_similarity_for_the_matching_engine(corpus):
    papers, _ = corpus
    vectors = semantic.paper_vectors(
        [papers["0704.0285"].pk, papers["0704.0216"].pk, papers["0704.0001"].pk]
    )
    same_topic = features.title_similarity(
        vectors[papers["0704.0285"].pk], vectors[papers["0704.0216"].pk]
    )
    other = features.title_similarity(
        vectors[papers["0704.0285"].pk], vectors[papers["0704.0001"].pk]
    )
    assert same_topic > 0 > other
    assert features.title_similarity(None, vectors[papers["0704.0001"].pk]) == 0.0


# --- found by the new-user and hostile trials -------------------------------


def test_a_text_about_nothing_finds_nothing_by_meaning(client, corpus):
    for text in ("asdfqwerzxcv", "???", "9999.99999"):
        semantic_page = client.get("/search/", {"q": text, "mode": "semantic"})
        assert semantic_page.context["found"] == "0", text
        assert "No paper is near enough in meaning" in semantic_page.content.decode()
        hybrid = client.get("/search/", {"q": text})
        assert hybrid.context["found"] == "0", text


def test_an_excluded_word_is_excluded_from_the_meaning_too(corpus):
    papers, _ = corpus
    graphene = {papers[a].pk for a in GRAPHENE}
    assert search_meaning("carbon crystals")["ids"][:3]  # found without the minus
    for mode in ("semantic", "hybrid"):
        ids = semantic_search("carbon crystals -graphene", mode=mode)["ids"]
        assert not graphene & set(ids), mode
        for pk in ids:
            text = Paper.objects.get(pk=pk)
            assert "graphene" not in f"{text.title} {text.abstract}".lower()


def search_meaning(text: str) -> dict:
    return semantic_search(text, mode="semantic")


def test_the_year_9999_is_no_server_error(client, corpus):
    for mode in ("hybrid", "semantic", "keyword"):
        response = client.get(
            "/search/", {"q": "graphene", "year": "9999", "mode": mode}
        )
        assert response.status_code == 200, mode
        api = client.get("/api/search/papers/", {"q": "graphene", "year": "9999"})
        assert api.status_code == 200


def test_hybrid_counts_each_paper_once_and_facets_do_not_move_with_the_filter(
    corpus,
):
    from wovepaper.search import _paper_matches

    result = semantic_search("quantum", mode="hybrid")
    words, _ = _paper_matches(query="quantum", category=None, year=None)
    meaning = set(semantic_search("quantum", mode="semantic")["ids"])
    union = set(words.values_list("pk", flat=True)) | meaning
    assert result["count"] == len(union)
    assert result["by_words"] == words.count()
    from wovepaper.search import search_results

    filtered = search_results(
        query="quantum",
        category="quant-ph",
        year=None,
        number=1,
        size=10,
        mode="hybrid",
    )
    assert filtered["categories"] == result["categories"]


def test_the_search_api_pages_end_hides_hidden_papers_and_names_bad_fields(
    client, corpus
):
    papers, _ = corpus
    asked = {"q": "quantum", "page_size": 5}
    first = client.get("/api/search/papers/", asked).json()
    assert len(first["results"]) == 5
    last = first["pages"]
    assert last > 1
    assert client.get("/api/search/papers/", {**asked, "page": last}).status_code == 200
    past = client.get("/api/search/papers/", {**asked, "page": last + 1})
    assert past.status_code == 404
    top = Paper.objects.get(arxiv_id=first["results"][0]["arxiv_id"])
    Paper.objects.filter(pk=top.pk).update(hidden=True)  # the head stays cached
    again = client.get("/api/search/papers/", asked).json()
    assert top.arxiv_id not in [r["arxiv_id"] for r in again["results"]]
    bad = client.get("/api/search/papers/", {"q": "x", "year": "0", "page_size": "500"})
    assert set(bad.json()["errors"]) == {"year", "page_size"}


def test_without_the_model_a_search_by_meaning_is_a_503(
    client, corpus, tmp_path, settings, monkeypatch
):
    monkeypatch.setattr(semantic, "embed", embeddings.embed)
    settings.EMBEDDING_MODEL_DIR = tmp_path / "no-model"
    assert client.get("/search/", {"q": "spin", "mode": "semantic"}).status_code == 503
    api = client.get("/api/search/papers/", {"q": "spin", "mode": "semantic"})
    assert api.status_code == 503


def test_a_text_changed_while_the_model_runs_keeps_the_newer_vector(
    arxiv_dir, tmp_path
):
    (tmp_path / "0704.0285.abs").symlink_to(
        (arxiv_dir / PAPERS / "0704.0285.abs").resolve()
    )
    services.harvest_arxiv_files(root=tmp_path)
    paper = Paper.objects.get()

    def edit_then_embed(texts):
        # A harvest (or a curator) rewrites the abstract while the model runs.
        Paper.objects.filter(pk=paper.pk).update(abstract="Rewritten meanwhile.")
        return _memo_embed(texts)

    semantic.embed, before = edit_then_embed, semantic.embed
    try:
        counts = semantic.embeddings_refresh()
    finally:
        semantic.embed = before
    assert counts["embedded"] == 0  # the older text's vector is not written
    assert not PaperEmbedding.objects.exists()
    assert semantic.embeddings_refresh(most=0)["embedded"] == 1  # 0 means 1


def test_embed_papers_names_unknown_ids_and_bad_values(corpus):
    with pytest.raises(CommandError, match="no paper has the id 99999999"):
        call_command("embed_papers", "--paper", "99999999", "--no-progress")
    with pytest.raises(CommandError, match="is not a whole number from 1"):
        call_command("embed_papers", "--paper", "99999999999999999999999")


def test_a_decomposed_query_is_read_composed():
    from wovepaper.search import search_query_clean

    assert search_query_clean("Bala\u0301zs") == "Balázs"


def test_an_operator_may_make_keyword_the_default_mode(client, corpus, settings):
    settings.SEARCH_DEFAULT_MODE = "keyword"
    page = client.get("/search/", {"q": "graphene"})
    assert page.context["answered_by"] == "keyword"
    assert (
        client.get("/api/search/papers/", {"q": "graphene"}).json()["mode"] == "keyword"
    )
    assert (
        client.get("/search/", {"q": "graphene", "mode": "hybrid"}).context[
            "answered_by"
        ]
        == "hybrid"
    )


def test_a_damaged_int8_copy_is_made_again(settings, tmp_path, caplog):
    settings.EMBEDDING_CACHE_DIR = tmp_path / "cache"
    folder = settings.EMBEDDING_MODEL_DIR
    made = embeddings.quantized_model(folder)
    made.write_bytes(made.read_bytes()[:1000])  # cut short, as by a full disk
    embeddings._encoder.cache_clear()
    try:
        vector = embeddings.embed(["Ab initio study of graphene on SiC."])[0]
    finally:
        embeddings._encoder.cache_clear()
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    assert "is unreadable" in caplog.text
    assert made.stat().st_size > 1_000_000


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("EMBEDDING_MAX_TOKENS", 0, "EMBEDDING_MAX_TOKENS is 0"),
        ("EMBEDDING_MAX_TOKENS", 100000, "from 3 to 512"),
        ("EMBEDDING_THREADS", -1, "EMBEDDING_THREADS is -1"),
    ],
)
def test_a_bad_embedding_setting_is_named(settings, name, value, said):
    setattr(settings, name, value)
    with pytest.raises(ImproperlyConfigured, match=said):
        embeddings.embed(["Ping Li"])


def test_vectors_of_another_model_are_not_read_until_embedded_again(corpus, settings):
    papers, _ = corpus
    pk = papers["0704.0285"].pk
    assert pk in semantic.paper_vectors([pk])
    settings.EMBEDDING_MAX_TOKENS = 256  # another name: the stored rows are stale
    assert semantic.paper_vectors([pk]) == {}
    assert semantic.nearest(of_paper=pk, limit=5) == []


def test_hybrid_reads_the_words_matches_from_an_exact_head_as_the_database_gives(
    corpus,
):
    from wovepaper import search

    shortcut = 0
    for text in ("quantum", "spin -graphene", '"dark matter"', "black hole"):
        head = search.search_head(query=text, category=None, year=None)
        chosen, primaries = search._semantic(text, category=None, year=None)
        nearest = set(chosen) | set(primaries)
        asked = search._matching_words(nearest, text)
        if search._every_match(head, category=None, year=None):
            shortcut += 1
            assert nearest & set(head["ids"]) == asked, text
        assert not search._every_match(head, category="hep-th", year=None)
    assert shortcut >= 3

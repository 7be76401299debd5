"""The title_similarity feature: how alike two papers' titles and abstracts are,
from the all-MiniLM-L6-v2 embeddings, in the engine, its labelled sets, matching
runs and training."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.conf import settings
from django.core.management import call_command

from curation import selectors, services
from curation.matching import features, labelled_pairs, scoring, training
from curation.matching.features import AuthorshipView, profile_of
from curation.models import Proposal
from harvest import services as harvest_services
from wovepaper import embeddings, semantic
from wovepaper.models import Authorship, Paper

FOLDER = "and/medline_vishnyakova_pairs"
# The first 24 data rows of the real train file, as they are (14 YES, 10 NO; one
# YES names an empty article):
# written here so a test embeds some 40 articles, not the set's 3,755.
ROWS = 24


@pytest.fixture
def text_evidence(settings, tmp_path):
    settings.MATCHING_TEXT_EVIDENCE = True
    settings.EMBEDDING_CACHE_DIR = tmp_path / "embedding-cache"
    return settings


@pytest.fixture
def small_medline(tmp_path):
    """A pair folder: the real articles, the train file's first rows as both
    train and test pairs."""
    source = settings.WOVEPAPER_DATA_DIR / FOLDER
    folder = tmp_path / "medline_small"
    folder.mkdir()
    (folder / labelled_pairs.ARTICLES).symlink_to(source / labelled_pairs.ARTICLES)
    lines = (source / "1500_pairs_train.csv").read_text("utf-8").splitlines()
    for kind in ("train", "test"):
        (folder / f"{ROWS}_pairs_{kind}.csv").write_text(
            "\n".join(lines[: ROWS + 1]) + "\n", "utf-8"
        )
    return folder


def test_real_pairs_of_one_person_write_about_nearer_things(small_medline):
    data = labelled_pairs.load_pairs(small_medline, embed=embeddings.embed)
    # Row 6 names an article the tarball holds as an empty file.
    assert len(data.train) == ROWS - 1
    assert "PMID 24814876 is unreadable" in data.skipped[0]
    for pair in data.train:
        for view in (pair.a, pair.b):
            assert view.text_vector is not None
            assert abs(float(np.linalg.norm(view.text_vector)) - 1.0) < 1e-4
    similarity = {
        same: [
            training.mention_pair_features(p.a, p.b).title_similarity
            for p in data.train
            if p.same == same
        ]
        for same in (True, False)
    }
    assert len(similarity[True]) == 13
    assert len(similarity[False]) == 10
    # One person's two articles lie above the neutral point on average, two
    # people's below it.
    assert np.mean(similarity[True]) > 0.0 > np.mean(similarity[False])
    # Stenkamp, Deborah L (row 3, YES): two papers on zebrafish retina.
    stenkamp = next(p for p in data.train if p.where.endswith(":3"))
    assert training.mention_pair_features(stenkamp.a, stenkamp.b).title_similarity > 0.2


def test_without_an_embedder_the_feature_says_nothing(small_medline):
    data = labelled_pairs.load_pairs(small_medline)
    assert all(p.a.text_vector is None and p.b.text_vector is None for p in data.train)
    assert {
        training.mention_pair_features(p.a, p.b).title_similarity for p in data.train
    } == {0.0}


def _view(pk: int, paper: int, vector) -> AuthorshipView:
    return AuthorshipView(
        id=pk,
        paper_id=paper,
        given="Deborah L",
        family="Stenkamp",
        block_key="d stenkamp",
        text_vector=vector,
    )


def test_a_profile_compares_by_the_centroid_of_what_it_writes():
    texts = [
        "Retinal regeneration in zebrafish. Muller glia re-enter the cell cycle.",
        "Photoreceptor development in the zebrafish retina.",
        "Dark energy constraints from type Ia supernovae.",
    ]
    retina, photoreceptors, cosmology = embeddings.embed(texts)
    profile = profile_of([_view(1, 1, retina), _view(2, 2, photoreceptors)])
    assert abs(float(np.linalg.norm(profile.text_vector)) - 1.0) < 1e-5
    near = features.authorship_profile_features(_view(3, 3, photoreceptors), profile)
    far = features.authorship_profile_features(_view(4, 4, cosmology), profile)
    assert near.title_similarity > 0.0 > far.title_similarity
    # A paper not embedded counts neither way; a profile of such papers has none.
    unknown = profile_of([_view(5, 5, None)])
    assert unknown.text_vector is None
    assert features.profile_profile_features(profile, unknown).title_similarity == 0.0
    # The scorer weighs it: the same names, nothing else in common.
    assert (
        scoring.score(near).pairwise_score
        > scoring.score(
            features.authorship_profile_features(_view(6, 6, None), profile)
        ).pairwise_score
        > scoring.score(far).pairwise_score
    )
    # Evidence keeps the value, and a decision reads it back for training.
    assert near.as_dict()["title_similarity"] == near.title_similarity
    examples, left_out = training.decision_pairs(
        [(1, {"features": far.as_dict()}, False)]
    )
    assert not left_out
    column = scoring.FEATURES.index("title_similarity")
    assert examples.x[0][column] == far.title_similarity < 0


def test_embed_cached_embeds_once_and_replaces_a_damaged_file(settings, tmp_path):
    settings.EMBEDDING_CACHE_DIR = tmp_path / "cache"
    texts = ["Graphene on SiC.", "Muon g-2 at Fermilab."]
    first = embeddings.embed_cached(texts)
    files = list((tmp_path / "cache").glob("*.npy"))
    assert len(files) == 1
    np.testing.assert_array_equal(first, embeddings.embed(texts))
    files[0].write_bytes(b"not an array")
    again = embeddings.embed_cached(texts)
    np.testing.assert_array_equal(again, first)
    np.testing.assert_array_equal(np.load(files[0]), first)
    # Another text is another file.
    embeddings.embed_cached(texts[:1])
    assert len(list((tmp_path / "cache").glob("*.npy"))) == 2


def test_the_embedder_is_off_when_the_model_is_missing(text_evidence, tmp_path, caplog):
    assert embeddings.text_embedder() is embeddings.embed_cached
    text_evidence.EMBEDDING_MODEL_DIR = tmp_path / "gone"
    assert embeddings.text_embedder() is None
    assert "title and abstract evidence off" in caplog.text
    assert str(tmp_path / "gone") in caplog.text
    text_evidence.MATCHING_TEXT_EVIDENCE = False
    text_evidence.EMBEDDING_MODEL_DIR = settings.EMBEDDING_MODEL_DIR
    assert embeddings.text_embedder() is None


# Two papers of F. Hiai and D. Petz (matrix analysis), harvested as they are.
HIAI_PETZ = ("0704.0046", "0704.0588")


@pytest.mark.django_db
def test_a_matching_run_reads_the_stored_embeddings(text_evidence, arxiv_dir, tmp_path):
    for arxiv_id in HIAI_PETZ:
        (tmp_path / f"{arxiv_id}.abs").symlink_to(
            (
                arxiv_dir / "abs_files/ftp/arxiv/papers/0704" / f"{arxiv_id}.abs"
            ).resolve()
        )
    harvest_services.harvest_arxiv_files(root=tmp_path)
    semantic.embeddings_refresh()
    slots = list(Authorship.objects.all())
    views = selectors.authorship_views(slots)
    vectors = semantic.paper_vectors(Paper.objects.values_list("pk", flat=True))
    assert len(vectors) == 2
    assert views
    assert all(np.array_equal(v.text_vector, vectors[v.paper_id]) for v in views)
    # Off, the views carry none, as for papers never embedded.
    text_evidence.MATCHING_TEXT_EVIDENCE = False
    assert all(v.text_vector is None for v in selectors.authorship_views(slots))
    text_evidence.MATCHING_TEXT_EVIDENCE = True
    services.matching_run()
    hiai = Proposal.objects.filter(kind="new", authorships__family_name="Hiai")
    hiai = hiai.distinct().get()
    assert hiai.authorships.count() == 2
    # The two papers' title evidence is among what the proposal shows.
    (pair,) = hiai.evidence["pairs"]
    value = pair["features"]["title_similarity"]
    hiai_views = [v for v in views if v.family == "Hiai"]
    assert value == training.mention_pair_features(*hiai_views).title_similarity > 0
    weight = pair["contributions"]["title_similarity"] / value
    in_use = selectors.active_weights().weights["title_similarity"]
    assert weight == pytest.approx(in_use, abs=1e-3)


def _ship(target, dataset) -> dict:
    """``train_matcher --ship`` on one set; the file it wrote, parsed."""
    call_command(
        "train_matcher",
        ship=True,
        ship_to=target,
        dataset=[dataset],
        stdout=io.StringIO(),
    )
    return json.loads(target.read_text())


def test_train_matcher_ship_learns_a_title_weight_from_the_texts(
    text_evidence, small_medline, tmp_path
):
    written = _ship(tmp_path / "model.json", small_medline)
    assert "title_similarity" in written["weights"]
    assert "title_similarity" not in written["training"]["defaults_kept"]
    # Without the texts, nothing varies it: it keeps its default.
    text_evidence.MATCHING_TEXT_EVIDENCE = False
    written = _ship(tmp_path / "model.json", small_medline)
    assert "title_similarity" in written["training"]["defaults_kept"]


def test_the_figures_and_the_shipped_file_say_which_embeddings_were_read(
    text_evidence, small_medline, tmp_path
):
    def evaluated() -> dict:
        out = io.StringIO()
        call_command(
            "evaluate_matching",
            dataset=[small_medline],
            json=True,
            folds=0,
            stdout=out,
            stderr=io.StringIO(),
        )
        return json.loads(out.getvalue())

    assert evaluated()["text_evidence"] == embeddings.model_name()
    written = _ship(tmp_path / "model.json", small_medline)
    assert written["training"]["text_evidence"] == "all-MiniLM-L6-v2-int8-128"
    text_evidence.MATCHING_TEXT_EVIDENCE = False
    assert evaluated()["text_evidence"] is None


def test_a_damaged_cache_file_is_embedded_again(text_evidence):
    texts = ["Graphene on SiC.", "Muon g-2 at Fermilab."]
    first = embeddings.embed_cached(texts)
    (path,) = text_evidence.EMBEDDING_CACHE_DIR.glob("*.npy")
    assert path.stat().st_mode & 0o777 == 0o644
    for damage in (b"", None):
        if damage is None:  # rows that are not of unit length: zeros
            np.save(path, np.zeros_like(first))
        else:
            path.write_bytes(damage)
        np.testing.assert_array_equal(embeddings.embed_cached(texts), first)
        np.testing.assert_array_equal(np.load(path), first)


def test_making_the_int8_copy_writes_nothing_beside_the_model(settings, tmp_path):
    settings.EMBEDDING_CACHE_DIR = tmp_path / "cache"
    folder = settings.EMBEDDING_MODEL_DIR
    before = sorted(p.name for p in folder.iterdir()), folder.stat().st_mtime_ns
    embeddings.quantized_model(folder)
    assert (
        sorted(p.name for p in folder.iterdir()),
        folder.stat().st_mtime_ns,
    ) == before

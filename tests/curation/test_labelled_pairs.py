"""The MEDLINE author-pair gold standard read from its real files, scored by
evaluate_matching and learned from by train_matcher."""

from __future__ import annotations

import io
import json
import shutil
import tarfile

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from curation.matching import evaluation, labelled_pairs
from curation.matching.labelled import DatasetError
from curation.models import MatcherModel

FOLDER = "and/medline_vishnyakova_pairs"


@pytest.fixture(scope="module")
def medline() -> labelled_pairs.PairSet:
    return labelled_pairs.load_pairs(settings.WOVEPAPER_DATA_DIR / FOLDER)


def _by_row(data: labelled_pairs.PairSet) -> dict[str, labelled_pairs.LabelledPair]:
    return {p.where: p for p in data.train + data.test}


def test_every_row_is_a_pair_or_left_out_with_its_reason(medline):
    assert (len(medline.train), len(medline.test)) == (1477, 397)
    # The 1,500 + 400 data rows of the two files.
    assert len(medline.train) + len(medline.test) + len(medline.skipped) == 1900
    reasons = "\n".join(medline.skipped)
    assert "400_pairs_test.csv:48: label 'N0' is neither YES nor NO" in reasons
    # The tarball's empty files cost only the pairs naming them.
    assert "the article of PMID 24814876 is unreadable" in reasons
    # Two authors "Guo, X" on one byline: which one is meant cannot be told.
    assert (
        "the byline of PMID 27881000 has no author, or several alike, for 'Guo X'"
        in reasons
    )
    # A row naming no second article says so.
    assert "400_pairs_test.csv:389: no PMID for mention 2" in reasons
    assert sum(p.same for p in medline.test) == 217


def test_a_mention_carries_what_its_article_says(medline):
    pair = _by_row(medline)["1500_pairs_train.csv:3"]  # Stenkamp, Deborah L: YES
    assert pair.same
    assert (pair.a.family, pair.a.given, pair.a.year) == ("Stenkamp", "Deborah L", 2006)
    assert pair.a.coauthor_keys == {"nickerson|jm", "frey|ra", "ciavatta|vt"}
    assert "journal:9605351" in pair.a.categories  # Molecular vision
    assert any(c.startswith("mesh:D") for c in pair.a.categories)
    assert {"idaho", "moscow"} <= pair.b.affiliation_tokens
    assert pair.b.year == 2011


def test_names_with_lost_letters_and_both_encodings_are_found(medline):
    rows = _by_row(medline)
    # "Ze?evi?" in the train file (UTF-8) is the article's "Zečević".
    assert rows["1500_pairs_train.csv:471"].a.family == "Zečević"
    # "Gălăţeanu" written "G?l??eanu".
    assert rows["1500_pairs_train.csv:849"].a.family == "Gălăţeanu"
    # The test file is Latin-1: "Dur\xe1n" is read as "Durán".
    assert rows["400_pairs_test.csv:104"].a.family == "Durán"


def test_labelled_pairs_prf_counts_decisions():
    prf, accuracy = evaluation.labelled_pairs_prf(
        [True, True, False, False], [True, False, True, False]
    )
    assert (prf.precision, prf.recall, accuracy) == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError, match="3 decisions for 4"):
        evaluation.labelled_pairs_prf([True] * 3, [True] * 4)


def test_evaluate_matching_scores_the_test_pairs_above_the_name_baselines(capsys):
    call_command(
        "evaluate_matching", dataset=[settings.WOVEPAPER_DATA_DIR / FOLDER], json=True
    )
    report = json.loads(capsys.readouterr().out)
    assert report["pairs"] == {
        "train": 1477,
        "test": 397,
        "skipped": 26,
        "shared_pmids": 15,
    }
    learned = report["learned"]["pairwise"]
    for name, baseline in report["baselines"].items():
        assert learned["f1"] > baseline["pairwise"]["f1"] + 0.1, name
        assert learned["accuracy"] > baseline["pairwise"]["accuracy"], name
    ours = report["ours"]["pairwise"]
    assert ours["f1"] > report["baselines"]["normalised full name"]["pairwise"]["f1"]


def test_evaluate_matching_without_folds_learns_no_model_on_pairs(capsys):
    call_command(
        "evaluate_matching",
        dataset=[settings.WOVEPAPER_DATA_DIR / FOLDER],
        folds=0,
        json=True,
    )
    report = json.loads(capsys.readouterr().out)
    assert "learned" not in report
    assert report["ours"]["pairwise"]["accuracy"] > 0.75


def test_train_matcher_learns_coauthors_and_fields_from_the_pairs(db, capsys):
    call_command("train_matcher", dataset=[settings.WOVEPAPER_DATA_DIR / FOLDER])
    out = capsys.readouterr().out
    assert "now the active model" in out
    assert "medline_vishnyakova_pairs 1448 (" in out
    assert "23 train rows of medline_vishnyakova_pairs left out" in out
    # No MEDLINE article here carries an OpenAlex or Semantic Scholar author id.
    assert (
        "kept at their default weight (no labelled pair varies them, nor 50 "
        "curator decisions): " in out
    )
    assert "source_id, source_id_conflict" in out
    model = MatcherModel.objects.get(active=True)
    assert model.training["datasets"]["medline_vishnyakova_pairs"]["pairs"] > 1400
    # Learned, not the defaults (1.5 and 2.0): these pairs vary both.
    assert model.weights["coauthors"] > 1.0
    assert model.weights["coauthors"] != 1.5
    assert model.weights["categories"] > 1.0
    assert model.weights["categories"] != 2.0


def _copy(tmp_path):
    folder = tmp_path / "pairs"
    shutil.copytree(settings.WOVEPAPER_DATA_DIR / FOLDER, folder)
    return folder


def test_a_broken_tarball_is_refused_naming_the_folder(tmp_path):
    folder = _copy(tmp_path)
    (folder / labelled_pairs.ARTICLES).write_bytes(b"not xz at all")
    with pytest.raises(
        DatasetError, match=r"pubmed_articles.tar.xz: unreadable \(ReadError"
    ):
        labelled_pairs.load_pairs(folder)


HEADER = (
    "PMID1;Last_name1;Initials1;First_name1;"
    "PMID2;Last_name2;Initials2;First_name2;Authorship\n"
)


def _article(pmid: str, year: str = "2001", family: str = "Duran") -> bytes:
    return (
        f"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>{pmid}</PMID>"
        f"<Article><Journal><JournalIssue><PubDate><Year>{year}</Year></PubDate>"
        f"</JournalIssue></Journal><AuthorList><Author><LastName>{family}</LastName>"
        "<ForeName>Rafael</ForeName><Initials>R</Initials></Author></AuthorList>"
        "</Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"
    ).encode()


def _pair_set(folder, members: dict[str, bytes], train: str, test: str):
    folder.mkdir()
    with tarfile.open(folder / labelled_pairs.ARTICLES, "w:xz") as tar:
        for name, body in members.items():
            info = tarfile.TarInfo(f"pubmed_articles/{name}")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    (folder / "2_pairs_train.csv").write_bytes(train.encode())
    (folder / "1_pairs_test.csv").write_bytes(test.encode())
    return folder


def test_an_article_declaring_entities_costs_only_its_pairs(tmp_path):
    evil = b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>'
    folder = _pair_set(
        tmp_path / "pairs",
        {"1.xml": _article("1"), "2.xml": _article("2"), "3.xml": evil},
        HEADER + "1;Duran;R;Rafael;2;Duran;R;Rafael;YES\n1;Duran;R;R;3;Duran;R;R;NO\n",
        HEADER + "1;Duran;R;Rafael;2;Duran;R;R\n",
    )
    data = labelled_pairs.load_pairs(folder)
    assert [p.where for p in data.train] == ["2_pairs_train.csv:2"]
    assert data.skipped == [
        "2_pairs_train.csv:3: the article of PMID 3 is unreadable (pubmed_articles"
        ".tar.xz:pubmed_articles/3.xml: refused XML with a DTD declaring entities)",
        "1_pairs_test.csv:2: 8 columns, not 9",
    ]


def test_odd_lines_quotes_years_and_sizes_cost_only_their_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(labelled_pairs, "MAX_ARTICLE", 2000)
    folder = _pair_set(
        tmp_path / "pairs",
        {
            "1.xml": _article("1", year="\u00b2"),  # "²": a digit to isdigit()
            "2.xml": _article("2"),
            "4.xml": _article("4") + b" " * 3000,  # over the (lowered) cap
        },
        # No header, old Mac line ends, and a stray quote that must not swallow
        # the rows after it.
        '1;Duran;R;"Rafael;2;Duran;R;Rafael;YES\r1;Duran;R;Rafael;2;Duran;R;R;NO\r'
        "1;Duran;R;R;4;Duran;R;R;NO\r",
        HEADER + "1;Duran;R;Rafael;2;Duran;R;Rafael;YES\n",
    )
    data = labelled_pairs.load_pairs(folder)
    assert [p.where for p in data.train] == [
        "2_pairs_train.csv:1",
        "2_pairs_train.csv:2",
    ]
    assert data.train[0].a.year is None
    assert data.train[0].b.year == 2001
    assert data.skipped == [
        "2_pairs_train.csv:3: the article of PMID 4 is unreadable "
        "(pubmed_articles.tar.xz:pubmed_articles/4.xml: over 0 MB)"
    ]


def test_no_usable_test_pair_is_an_error_not_a_perfect_score(tmp_path):
    folder = _pair_set(
        tmp_path / "pairs",
        {"1.xml": _article("1"), "2.xml": _article("2")},
        HEADER + "1;Duran;R;Rafael;2;Duran;R;Rafael;YES\n",
        HEADER + "1;Duran;R;Rafael;2;Duran;R;Rafael;maybe\n",
    )
    with pytest.raises(CommandError, match="no usable test pair to score"):
        call_command("evaluate_matching", dataset=[folder], json=True)


def test_train_pairs_of_one_class_leave_the_default_weights_scored(tmp_path, capsys):
    folder = _pair_set(
        tmp_path / "pairs",
        {"1.xml": _article("1"), "2.xml": _article("2")},
        HEADER + "1;Duran;R;Rafael;2;Duran;R;Rafael;YES\n",
        HEADER + "1;Duran;R;Rafael;2;Duran;R;Rafael;YES\n",
    )
    call_command("evaluate_matching", dataset=[folder], json=True)
    report = json.loads(capsys.readouterr().out)
    assert "learned" not in report
    assert report["untrained"].startswith("no model learned from the train pairs")
    # The default weights and the baselines are still scored.
    assert set(report["ours"]["pairwise"]) == {"precision", "recall", "f1", "accuracy"}
    assert report["baselines"]["exact name string"]["pairwise"]["recall"] == 1.0


def test_two_train_files_are_refused_by_name(tmp_path):
    folder = _pair_set(
        tmp_path / "pairs",
        {"1.xml": _article("1")},
        HEADER,
        HEADER,
    )
    (folder / "3_pairs_train.csv").write_text(HEADER)
    with pytest.raises(
        DatasetError, match="one \\*_pairs_train.csv wanted, found 2_pairs_train.csv, 3"
    ):
        labelled_pairs.load_pairs(folder)


def test_a_folder_without_a_pair_set_is_refused(tmp_path):
    with pytest.raises(DatasetError, match="no \\*_pairs_train.csv"):
        labelled_pairs.load_pairs(tmp_path)


def test_pair_files_of_headers_only_say_they_hold_no_row(tmp_path):
    folder = _pair_set(tmp_path / "pairs", {"1.xml": _article("1")}, HEADER, HEADER)
    with pytest.raises(
        DatasetError, match=r"no usable pair \(the pair files hold no row\)"
    ):
        labelled_pairs.load_pairs(folder)

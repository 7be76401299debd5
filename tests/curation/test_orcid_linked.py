"""The ORCID-linked labelled set built from the bundled Crossref and OpenAlex works."""

from __future__ import annotations

import functools
import io
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from curation import names
from curation.matching import labelled, orcid_linked, training
from wovepaper.identifiers import orcid_normalise

# Valid iDs (check digit right): ORCID's documented examples.
JOSIAH = "0000-0002-1825-0097"
OTHER = "0000-0001-5109-3700"


@functools.cache
def _bundled() -> labelled.LabelledSet:
    return orcid_linked.load(Path(settings.WOVEPAPER_DATA_DIR))


def test_orcid_linked_counts_on_the_bundled_corpora():
    data = _bundled()
    per_id = Counter(data.gold.values())
    assert data.name == "orcid-linked"
    assert len(data.views) == 1632
    assert len(per_id) == 1573
    several = {orcid: n for orcid, n in per_id.items() if n > 1}
    assert len(several) == 43
    assert sum(several.values()) == 102
    # Every label is a valid iD, and every mention has one.
    assert set(data.gold) == {v.id for v in data.views}
    assert all(orcid_normalise(orcid) == orcid for orcid in per_id)


def test_orcid_linked_hides_the_id_from_every_view():
    data = _bundled()
    for view in data.views:
        assert view.orcid == ""
        assert view.source_ids == frozenset()
        assert data.gold[view.id] not in repr(view)


def test_orcid_linked_fills_the_features_from_the_records():
    data = _bundled()
    assert all(v.year for v in data.views)
    assert sum(1 for v in data.views if v.coauthor_keys) > 700
    assert sum(1 for v in data.views if v.affiliation_tokens) > 500
    venues = {c for v in data.views for c in v.categories}
    assert len(venues) > 10
    assert all(c.startswith("venue:") for c in venues)


def test_orcid_linked_reads_a_work_in_several_files_once():
    data = _bundled()
    # doi:10.59350/7mtwq-q3661 is item 19 of three recorded Crossref pages.
    assert [
        m for m in data.mention_ids if m.startswith("doi:10.59350/7mtwq-q3661#")
    ] == ["doi:10.59350/7mtwq-q3661#1"]
    assert len(set(data.mention_ids)) == len(data.mention_ids)
    # No person is two mentions of one paper.
    papers = defaultdict(list)
    for view in data.views:
        papers[data.gold[view.id]].append(view.paper_id)
    assert all(len(set(p)) == len(p) for p in papers.values())


def test_orcid_linked_names_a_bundled_record_it_cannot_read():
    # A PLOS figure deposited without a title: the Crossref parser refuses it.
    assert any(
        "doi:10.1371/journal.pone.0248873.s003: work without a title; left out" in note
        for note in _bundled().left_out
    )


def _work(doi: str, authors: list) -> dict:
    return {"DOI": doi, "title": [f"Work {doi}"], "author": authors}


def _person(given: str, family: str, orcid: str = "") -> dict:
    return {"given": given, "family": family} | (
        {"ORCID": f"https://orcid.org/{orcid}"} if orcid else {}
    )


def _corpus(tmp_path: Path, items: list, *extra: tuple[str, str]) -> Path:
    folder = tmp_path / "crossref" / "habanero_decoded"
    folder.mkdir(parents=True)
    page = {"message-type": "work-list", "message": {"items": items}}
    (folder / "a_page.json").write_text(json.dumps(page))
    for name, text in extra:
        (folder / name).write_text(text)
    return tmp_path


def test_orcid_linked_leaves_out_an_unreadable_record_and_file_by_name(tmp_path):
    data_dir = _corpus(
        tmp_path,
        [
            _work("10.1000/good", [_person("Josiah", "Carberry", JOSIAH)]),
            _work("10.1000/broken", ["Josiah Carberry"]),  # an author not an object
            _work("10.1000/twice", [_person("J.", "Carberry", JOSIAH)]),
        ],
        ("b_cut.json", '{"message-type": "work-list", "message": {"ite'),
    )
    data = orcid_linked.load(data_dir)
    assert data.mention_ids == ["doi:10.1000/good#1", "doi:10.1000/twice#1"]
    assert data.gold == {0: JOSIAH, 1: JOSIAH}
    assert data.raw_names == {0: "Josiah Carberry", 1: "J. Carberry"}
    assert len(data.left_out) == 2
    assert "a_page.json#item-1" in data.left_out[0]
    assert "not a JSON object; left out" in data.left_out[0]
    assert data.left_out[1].startswith("crossref/habanero_decoded/b_cut.json")


def test_orcid_linked_leaves_out_one_id_on_two_slots(tmp_path):
    data_dir = _corpus(
        tmp_path,
        [
            _work(
                "10.1000/misplaced",
                [
                    _person("Wei", "Tan", OTHER),
                    _person("Dmitri", "Volkov", OTHER),
                    _person("Josiah", "Carberry", JOSIAH),
                ],
            )
        ],
    )
    data = orcid_linked.load(data_dir)
    assert data.mention_ids == ["doi:10.1000/misplaced#3"]
    assert data.left_out == (
        "doi:10.1000/misplaced: one ORCID iD on slots 1, 2; which is its holder "
        "cannot be told: left out",
    )
    # Its co-authors are still its co-authors.
    assert data.views[0].coauthor_keys == {
        names.name_key("Wei", "Tan"),
        names.name_key("Dmitri", "Volkov"),
    }


def test_orcid_linked_named_by_its_pseudo_path(tmp_path):
    data_dir = Path(settings.WOVEPAPER_DATA_DIR)
    assert labelled.not_a_folder(data_dir / "orcid-linked") == ""
    assert labelled.not_a_folder(Path("orcid-linked")) == ""
    assert "no folder" in labelled.not_a_folder(tmp_path / "none" / "orcid-linked")
    assert labelled.orcid_linked_corpora(Path("orcid-linked")) == data_dir
    assert labelled.orcid_linked_corpora(data_dir / "and") is None
    with pytest.raises(labelled.DatasetError, match="no Crossref or OpenAlex work"):
        labelled.load(tmp_path / "orcid-linked")


def test_orcid_linked_trains_with_both_classes():
    pairs = training.set_pairs(Path(settings.WOVEPAPER_DATA_DIR) / "orcid-linked")
    assert pairs.name == "orcid-linked"
    assert pairs.summary["mentions"] == 1632
    assert 0 < pairs.summary["positives"] < pairs.summary["pairs"]
    assert set(pairs.examples.y) == {0, 1}


def test_orcid_linked_in_the_commands(tmp_path):
    out = io.StringIO()
    call_command(
        "evaluate_matching",
        dataset=[Path("orcid-linked")],
        folds=0,
        json=True,
        stdout=out,
        stderr=io.StringIO(),
    )
    report = json.loads(out.getvalue())
    assert report["dataset"] == "orcid-linked"
    assert report["mentions"] == 1632
    target = tmp_path / "model.json"
    out = io.StringIO()
    call_command(
        "train_matcher",
        ship=True,
        ship_to=target,
        dataset=[Path("orcid-linked")],
        stdout=out,
    )
    written = json.loads(target.read_text())
    assert "orcid-linked (" in out.getvalue()
    assert "--dataset orcid-linked" in json.dumps(written)

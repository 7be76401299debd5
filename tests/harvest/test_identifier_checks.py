"""Every identifier a source brings passes the one validator of its kind at the
record boundary (issue 48): what fails is dropped, logged naming the record, and
the paper flagged for a curator; the rest of the record stands."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest
from django.conf import settings

from harvest.records import (
    REFUSED_IDENTIFIER,
    AuthorRecord,
    InstitutionRecord,
    clean_record,
)
from harvest.services.upsert import paper_upsert
from harvest.sources.crossref import parse_crossref_work, read_crossref_file
from harvest.sources.semanticscholar import parse_s2_paper, s2_page_read, split_s2_page
from wovepaper import identifiers
from wovepaper.models import Paper

S2_PAPER = (
    Path(settings.WOVEPAPER_DATA_DIR)
    / "semanticscholar"
    / "semanticscholar_py"
    / "json"
    / "Paper.json"
)
KANG = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "crossref"
    / "kang_2007_work.json"
)


def _s2(arxiv: str):
    """The real Semantic Scholar answer for Turing's 1950 paper, with an
    ``externalIds.ArXiv`` of our choosing."""
    paper = json.loads(S2_PAPER.read_text())
    paper["externalIds"]["ArXiv"] = arxiv
    [item] = split_s2_page(s2_page_read(json.dumps(paper), "Paper.json"))
    return clean_record(parse_s2_paper(item))


def _crossref(tmp_path, doi: str):
    """The Kang et al. (2007) Crossref work, with a DOI of our choosing."""
    work = json.loads(KANG.read_text())
    work["message"]["DOI"] = doi
    path = tmp_path / "work.json"
    path.write_text(json.dumps(work))
    [item] = read_crossref_file(path)
    return clean_record(parse_crossref_work(item))


@pytest.mark.django_db
def test_a_path_given_as_an_arxiv_id_is_dropped_and_the_paper_flagged(caplog):
    with caplog.at_level(logging.WARNING, logger="harvest.records"):
        record = _s2("../../admin/auth/user")

    assert record.arxiv_id == ""
    assert record.review_flags == (REFUSED_IDENTIFIER,)
    assert record.doi == "10.1093/mind/lix.236.433"  # the rest stands
    [said] = [r.getMessage() for r in caplog.records]
    assert said.startswith(f"semanticscholar:{record.external_id}: arxiv_id refused")
    assert "'../../admin/auth/user' is not an arXiv id" in said

    paper = Paper.objects.get(pk=paper_upsert(record=record).paper.pk)
    assert paper.arxiv_id is None
    assert paper.review_flags == [REFUSED_IDENTIFIER]
    assert ".." not in paper.get_absolute_url()


def test_a_good_arxiv_id_from_another_source_is_stored_in_arxivs_form():
    record = _s2("arXiv:2201.05500v2")
    assert (record.arxiv_id, record.review_flags) == ("2201.05500", ())
    assert _s2("hep-th/9901001").arxiv_id == "hep-th/9901001"
    assert _s2("2201.0550").arxiv_id == ""  # 4 digits after 1501: no arXiv id


def test_an_arxiv_doi_holding_no_arxiv_id_gives_none(tmp_path):
    hostile = _crossref(tmp_path, "10.48550/arXiv.x/admin")
    assert (hostile.doi, hostile.arxiv_id) == ("10.48550/arxiv.x/admin", "")

    real = _crossref(tmp_path, "10.48550/arXiv.2401.14040")
    assert (real.doi, real.arxiv_id) == ("10.48550/arxiv.2401.14040", "2401.14040")


def test_byline_identifiers_are_checked_too(tmp_path):
    record = _crossref(tmp_path, "10.1111/j.1365-2966.2007.12311.x")
    good = record.authors[0]
    bad = replace(
        good,
        orcid="0000-0002-1825-0098",  # wrong check digit
        openalex_author_id="../A1",
        s2_author_id="https://www.semanticscholar.org/author/2262347",
        institutions=(
            InstitutionRecord(ror_id="05dxps055", name="Caltech"),
            InstitutionRecord(ror_id="05dxps056", name="Not Caltech"),
        ),
    )

    checked = clean_record(replace(record, authors=[bad, *record.authors[1:]]))

    first: AuthorRecord = checked.authors[0]
    assert (first.orcid, first.openalex_author_id, first.s2_author_id) == (
        "",
        "",
        "2262347",  # a URL of a valid id is stored bare
    )
    assert [i.ror_id for i in first.institutions] == ["05dxps055"]
    assert checked.authors[1:] == record.authors[1:]
    assert checked.review_flags == (REFUSED_IDENTIFIER,)


@pytest.mark.parametrize(
    ("check", "value", "message"),
    [
        (identifiers.arxiv_id_normalise, "2201.05500/../x", "is not an arXiv id"),
        (identifiers.doi_check, "10.1234/../../admin", "is not a DOI"),
        (identifiers.openalex_work_normalise, "W12/../1", "is not an OpenAlex work"),
        (identifiers.s2_paper_normalise, "0f40b1f0/..", "is not a Semantic Scholar"),
    ],
)
def test_each_kind_refuses_what_it_is_not_naming_the_value(check, value, message):
    with pytest.raises(ValueError, match=message):
        check(value)


@pytest.mark.django_db
def test_a_doi_link_never_leaves_the_dois_own_path(client):
    from tests.factories import PaperFactory

    paper = PaperFactory(doi="10.1234/%2e%2e/%2e%2e/evil\\x")
    page = client.get(paper.get_absolute_url(), follow=True).content.decode()

    assert 'href="https://doi.org/10.1234/%252e%252e/%252e%252e/evil%5Cx"' in page
    assert "https://doi.org/10.1234/%252e%252e" in page  # the JSON-LD's too
    assert not identifiers.doi_valid("10.1234/\u200b")  # a zero-width space

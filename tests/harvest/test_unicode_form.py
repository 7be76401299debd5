"""Every source's text is stored in one Unicode form (NFC), whatever form it sent.

Issue 51: OpenAlex's ``raw_author_name`` came stored as sent, so "Kostic" + U+0301
(NFD) and "Kostić" (NFC) were two names to the name keys, search and display.
Each parser here reads a real record rewritten in NFD (every string decomposed,
and for arXiv the LaTeX accents of the byline written as decomposed Unicode, as
a source might send them); what is stored must be NFC and the same as what the
original record gives.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from django.conf import settings

from harvest import services
from wovepaper.models import Authorship, Institution, Paper

pytestmark = pytest.mark.django_db

DATA = Path(settings.WOVEPAPER_DATA_DIR)
# Real records holding accented text, one per parser.
RECORDS = {
    "crossref": "crossref/habanero_decoded/test-works__test_works_sample__0.json",
    "openalex": "openalex/openalex_python_entities/W2741809807.json",
    "semanticscholar": (
        "semanticscholar/semanticscholar_py/decoded/"
        "test_search_paper_publication_date_or_year__1.json"
    ),
    "ror": "ror/ror_v2_records_from_es_search.json",  # plus a name we wrote
}
# Rastislav Šrámek, Broňa Brejová, Tomáš Vinař, printed in LaTeX by arXiv.
ARXIV = "arxiv/abs_files/ftp/arxiv/papers/0704/0704.0062.abs"
LATEX_BYLINE = r"Rastislav \v{S}r\'amek, Bro\v{n}a Brejov\'a, Tom\'a\v{s} Vina\v{r}"
UNICODE_BYLINE = "Rastislav Šrámek, Broňa Brejová, Tomáš Vinař"


def _nfd(value):
    if isinstance(value, str):
        return unicodedata.normalize("NFD", value)
    if isinstance(value, list):
        return [_nfd(v) for v in value]
    if isinstance(value, dict):
        return {k: _nfd(v) for k, v in value.items()}
    return value


def _write(source: str, tmp_path: Path, form: str) -> Path:
    """The source's real record as a file in ``tmp_path``: as sent ("original")
    or with every string in NFD ("nfd")."""
    folder = tmp_path / form
    folder.mkdir()
    if source == "arxiv":
        text = (DATA / ARXIV).read_text()
        assert LATEX_BYLINE in text
        text = text.replace(LATEX_BYLINE, UNICODE_BYLINE)
        if form == "nfd":
            text = unicodedata.normalize("NFD", text)
        path = folder / "0704.0062.abs"
        path.write_text(text)
        return path
    document = json.loads((DATA / RECORDS[source]).read_text())
    if source == "ror":
        # The bundled ROR records print no accent; give the first one the
        # French name a ROR record carries for a bilingual university.
        document[0]["names"].append(
            {"value": "Université Monash", "types": ["label"], "lang": "fr"}
        )
    path = folder / "record.json"
    path.write_text(
        json.dumps(_nfd(document) if form == "nfd" else document, ensure_ascii=False)
    )
    return path


def _stored_text() -> list[str]:
    """Every text the harvest stored in papers, bylines and institutions."""
    out = []
    for row in Paper.objects.values_list("title", "abstract", "journal_ref"):
        out.extend(row)
    for row in Authorship.objects.values_list(
        "raw_name", "given_name", "family_name", "name_key", "affiliations"
    ):
        out.extend(row[:4])
        out.extend(row[4])
    for name, aliases in Institution.objects.values_list("name", "aliases"):
        out.append(name)
        out.extend(aliases)
    return [t for t in out if t]


def _state() -> list:
    return sorted(
        [
            *Paper.objects.values_list("title", "abstract"),
            *Authorship.objects.values_list("raw_name", "name_key", "block_key"),
            *Institution.objects.values_list("ror_id", "name"),
        ]
    )


@pytest.mark.parametrize("source", ["arxiv", *RECORDS])
def test_every_parser_stores_nfc_from_a_record_in_nfd(source, tmp_path):
    nfd = _write(source, tmp_path, "nfd")
    original = _write(source, tmp_path, "original")
    decomposed = nfd.read_text(encoding="utf-8")
    assert decomposed != unicodedata.normalize("NFC", decomposed)  # a real test

    run = services.harvest_files(source=source, root=nfd)
    assert run.records_seen > run.records_failed  # Crossref's sample: 1 untitled
    stored = _stored_text()
    assert stored
    assert all(unicodedata.is_normalized("NFC", t) for t in stored)
    # Accented text came through, composed.
    assert any(unicodedata.normalize("NFD", t) != t for t in stored)
    state = _state()

    # The record as the source first sent it changes nothing: one form.
    again = services.harvest_files(source=source, root=original)
    assert again.records_failed == run.records_failed
    assert again.papers_created == 0
    assert _state() == state


def test_arxiv_latex_and_decomposed_unicode_give_one_name_key(tmp_path, arxiv_dir):
    (tmp_path / "latex").mkdir()
    (tmp_path / "latex" / "0704.0062.abs").symlink_to(arxiv_dir.parent / ARXIV)
    services.harvest_files(source="arxiv", root=tmp_path / "latex")
    from_latex = list(
        Authorship.objects.order_by("position").values_list("raw_name", "name_key")
    )
    assert from_latex[0][0] == "Rastislav Šrámek"
    services.harvest_files(source="arxiv", root=_write("arxiv", tmp_path, "nfd"))
    assert (
        list(
            Authorship.objects.order_by("position").values_list("raw_name", "name_key")
        )
        == from_latex
    )

"""The arXiv API Atom parser on recorded responses (read in place from shared/data)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from django.conf import settings

from harvest.records import NotARecordFile, PaperRecord, RawItem, RecordError
from harvest.sources.arxiv_atom import (
    ATOM_NS,
    is_atom_file,
    parse_atom_entry,
    read_atom_file,
    split_atom_feed,
)

CASSETTES = "arxivpy_cassettes"
OLD_ATOM = "arxivpy_2016_atom"
SINGLE = f"{CASSETTES}/id_1605.08386_s0_m100_199195aa31ad.json"
OLD_STYLE = f"{CASSETTES}/id_astro-ph_0601001_s0_m100_3150dca9dc76.json"
VERSIONED = f"{CASSETTES}/id_quant-ph_0201082v1_s0_m100_86989fe779ef.json"
MULTI = f"{CASSETTES}/id_0808.05394_1707.08567_s0_m100_42e5aa0ec3af.json"
EMPTY = f"{CASSETTES}/id_0000.0000_s0_m100_8b51d9633a68.json"
ERROR = f"{CASSETTES}/id_abc_s0_m100_b79c8dcf6bc3.json"
PAGE_ALL = f"{CASSETTES}/q_testing_s0_m100_cfe7536492ca.json"
PAGE_2 = f"{CASSETTES}/q_testing_s10_m10_34e56e15aaac.json"
OLD_ID_LIST = f"{OLD_ATOM}/id_list-1111.2011v2.xml"

FEED_OPEN = (
    '<feed xmlns="http://www.w3.org/2005/Atom" '
    'xmlns:arxiv="http://arxiv.org/schemas/atom">'
)


@pytest.fixture
def data_dir() -> Path:
    """shared/data, the root every locator is relative to."""
    return Path(settings.WOVEPAPER_DATA_DIR)


def _items(data_dir: Path, relative: str) -> list[RawItem]:
    return list(read_atom_file(data_dir / "arxiv" / relative, data_dir))


def _paper(data_dir: Path, relative: str) -> PaperRecord:
    (item,) = _items(data_dir, relative)
    return parse_atom_entry(item)


def _feed_items(entry_xml: str) -> list[RawItem]:
    return list(split_atom_feed(f"{FEED_OPEN}{entry_xml}</feed>", "hand.xml"))


def test_read_atom_file_counts_over_all_recorded_files(data_dir: Path) -> None:
    counts = {}
    for group in (CASSETTES, OLD_ATOM):
        files = sorted((data_dir / "arxiv" / group).iterdir())
        papers: list[PaperRecord] = []
        errors = empties = 0
        for path in files:
            try:
                items = list(read_atom_file(path, data_dir))
            except RecordError:
                errors += 1
                continue
            empties += not items
            papers.extend(parse_atom_entry(item) for item in items)
        counts[group] = (
            len(files),
            len(papers),
            errors,
            empties,
            len({paper.external_id for paper in papers}),
            len({paper.arxiv_id for paper in papers}),
            sum(len(a.affiliations) for paper in papers for a in paper.authors),
        )
    # 222 <entry> in the cassettes: 221 papers plus the id_abc error entry, whose
    # id is the 106th "unique id" SOURCES.md counts. The 12 affiliations it counts
    # are 6 <arxiv:affiliation> elements (each tag written twice).
    assert counts[CASSETTES] == (20, 221, 1, 2, 105, 105, 6)
    assert counts[OLD_ATOM] == (5, 24, 0, 0, 12, 12, 0)


def test_read_atom_file_single_id_item(data_dir: Path) -> None:
    (item,) = _items(data_dir, SINGLE)
    assert item.external_id == "1605.08386v1"
    assert item.locator == f"arxiv/{SINGLE}#entry-0"
    assert item.payload.startswith("<entry")
    assert item.payload.rstrip().endswith("</entry>")


def test_parse_atom_entry_single_id(data_dir: Path) -> None:
    paper = _paper(data_dir, SINGLE)
    assert paper.source == "arxiv"
    assert paper.external_id == "1605.08386v1"
    assert paper.arxiv_id == "1605.08386"
    assert paper.title == "Heat-bath random walks with Markov bases"
    assert paper.version == 1
    published = datetime(2016, 5, 26, 17, 59, 46, tzinfo=UTC)
    assert [(v.version, v.submitted) for v in paper.versions] == [(1, published)]
    assert paper.published == paper.updated == date(2016, 5, 26)
    assert paper.categories == ["math.CO", "math.ST"]
    assert paper.primary_category == "math.CO"
    assert [(a.given_name, a.family_name) for a in paper.authors] == [
        ("Caprice", "Stanley"),
        ("Tobias", "Windisch"),
    ]
    assert all(a.affiliations == () for a in paper.authors)
    assert paper.comments == "20 pages, 3 figures"
    assert paper.abstract.startswith("Graphs on lattice points are studied")
    assert paper.doi == paper.journal_ref == ""
    assert not paper.withdrawn


def test_parse_atom_entry_old_style_id_with_affiliations(data_dir: Path) -> None:
    paper = _paper(data_dir, OLD_STYLE)
    assert paper.external_id == "astro-ph/0601001v1"
    assert paper.arxiv_id == "astro-ph/0601001"
    assert paper.categories == ["astro-ph"]
    assert paper.journal_ref == "ActaAstron.56:1-50,2006"
    assert [(a.raw_name, a.affiliations) for a in paper.authors] == [
        ("Andrew Gould", ("Ohio State",)),
        ("Susan Dorsher", ("Ohio State",)),
        ("B. Scott Gaudi", ("CfA",)),
        ("Andrzej Udalski", ("Warsaw University Observatory",)),
    ]
    # XML entities are decoded; the summary's leading spaces are gone.
    assert paper.abstract.startswith("We derive the frequencies of hot Jupiters")
    assert "Gould & Morgan (2003)" in paper.abstract
    assert "V_max<17.5" in paper.abstract


def test_parse_atom_entry_versioned_lookup(data_dir: Path) -> None:
    paper = _paper(data_dir, VERSIONED)
    assert paper.external_id == "quant-ph/0201082v1"
    assert paper.arxiv_id == "quant-ph/0201082"
    assert paper.version == 1
    assert paper.categories == ["quant-ph", "cs.PL"]
    assert [a.raw_name for a in paper.authors] == ["Stephen Blaha"]
    assert paper.published == date(2002, 1, 18)


def test_read_atom_file_multi_id_keeps_the_one_that_exists(data_dir: Path) -> None:
    # 0808.05394 is not a valid id (a 2008 id has 4 digits); arXiv returns only
    # 1707.08567, as the single-id lookup of 0808.05394 returns an empty feed.
    (item,) = _items(data_dir, MULTI)
    paper = parse_atom_entry(item)
    assert paper.external_id == "1707.08567v1"
    assert len(paper.authors) == 34
    # The cassette stored the UTF-8 body as Latin-1 text ("WÃ¼bben").
    assert paper.authors[32].raw_name == "Dirk Wübben"
    assert paper.authors[32].family_name == "Wübben"
    assert paper.authors[28].raw_name == "Joost van der Putten"


def test_read_atom_file_empty_feed_yields_nothing(data_dir: Path) -> None:
    assert _items(data_dir, EMPTY) == []


def test_read_atom_file_api_error_raises_with_file_and_text(data_dir: Path) -> None:
    with pytest.raises(RecordError, match=r"id_abc_s0_m100_b79c8dcf6bc3\.json") as exc:
        _items(data_dir, ERROR)
    message = str(exc.value)
    assert message.startswith(f"arxiv/{ERROR}#entry-0: ")
    assert "HTTP 400" in message
    assert message.endswith("incorrect id format for abc")


def test_split_atom_feed_error_entry_with_status_200() -> None:
    entry = (
        "<entry><id>http://arxiv.org/api/errors#start_must_be_an_integer</id>"
        "<title>Error</title><summary>start must be an integer</summary></entry>"
    )
    with pytest.raises(RecordError, match=r"^hand\.xml#entry-0: arXiv API error: "):
        _feed_items(entry)


def test_read_atom_file_pages_line_up(data_dir: Path) -> None:
    everything = [item.external_id for item in _items(data_dir, PAGE_ALL)]
    second_page = [item.external_id for item in _items(data_dir, PAGE_2)]
    assert len(everything) == 100
    assert second_page == everything[10:20]


def test_parse_atom_entry_2016_layout(data_dir: Path) -> None:
    paper = _paper(data_dir, OLD_ID_LIST)
    assert paper.external_id == "1111.2011v2"
    assert paper.version == 2
    assert [(v.version, v.submitted) for v in paper.versions] == [
        (1, datetime(2011, 11, 8, 18, 48, 36, tzinfo=UTC)),
        (2, datetime(2012, 4, 2, 12, 38, 54, tzinfo=UTC)),
    ]
    assert (paper.published, paper.updated) == (date(2011, 11, 8), date(2012, 4, 2))
    assert paper.title == (
        "Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large "
        "Connectivity Limit"
    )
    assert "\n" not in paper.abstract
    assert paper.abstract.startswith("Theoretical description of anisotropic")
    assert paper.doi == "10.1103/physrevb.85.115117"
    assert paper.journal_ref == "Phys. Rev. B 85, 115117 (2012)"
    assert paper.categories == ["cond-mat.str-el", "cond-mat.stat-mech"]
    assert [a.raw_name for a in paper.authors] == [
        "James M. Murray",
        "Adrian Del Maestro",
        "Zlatko Tesanovic",
    ]


def test_parse_atom_entry_later_version_has_two_version_records(
    data_dir: Path,
) -> None:
    papers = {
        paper.external_id: paper
        for paper in map(parse_atom_entry, _items(data_dir, PAGE_ALL))
    }
    paper = papers["2409.05654v9"]
    assert paper.version == 9
    assert [(v.version, v.submitted) for v in paper.versions] == [
        (1, datetime(2024, 9, 9, 14, 21, 19, tzinfo=UTC)),
        (9, datetime(2025, 5, 8, 20, 52, 40, tzinfo=UTC)),
    ]
    assert (paper.published, paper.updated) == (date(2024, 9, 9), date(2025, 5, 8))


def test_parse_atom_entry_title_zero_is_kept(data_dir: Path) -> None:
    paper = _paper(data_dir, f"{CASSETTES}/id_2104.12255v1_s0_m100_6ae69987ffe1.json")
    assert paper.title == "0"


def test_parse_atom_entry_categories_collaborations_and_latex() -> None:
    entry = (
        "<entry><id>http://arxiv.org/abs/hep-ex/0101001v3</id>"
        "<title>  A\n  title </title>"
        "<updated>2001-03-01T00:00:00-05:00</updated>"
        "<published>2001-01-02T10:00:00Z</published>"
        '<category term="hep-ph"/><category term="hep-ex"/><category term="hep-ph"/>'
        '<arxiv:primary_category term="hep-ex"/>'
        "<arxiv:doi>10.1000/ABC 10.1000/def</arxiv:doi>"
        "<arxiv:comment>This paper has been withdrawn</arxiv:comment>"
        "<author><name>C. Bal\\'azs</name>"
        "<arxiv:affiliation>CERN</arxiv:affiliation>"
        "<arxiv:affiliation>for the ATLAS Collaboration</arxiv:affiliation></author>"
        "<author><name>The ATLAS Collaboration</name></author>"
        "<author><name>CMS Collaboration</name></author></entry>"
    )
    (item,) = _feed_items(entry)
    paper = parse_atom_entry(item)
    assert paper.title == "A title"
    assert paper.categories == ["hep-ex", "hep-ph"]
    assert paper.doi == "10.1000/abc"
    assert paper.withdrawn
    assert paper.version == 3
    assert paper.updated == date(2001, 3, 1)  # 05:00 UTC
    slots = [(a.raw_name, a.affiliations, a.is_collaboration) for a in paper.authors]
    assert slots == [
        ("C. Balázs", ("CERN",), False),
        ("ATLAS Collaboration", (), True),
        ("CMS Collaboration", (), True),
    ]


def test_parse_atom_entry_without_title_raises() -> None:
    (item,) = _feed_items(
        "<entry><id>http://arxiv.org/abs/1605.08386v1</id><title> </title></entry>"
    )
    with pytest.raises(RecordError, match=r"^hand\.xml#entry-0: no <title>"):
        parse_atom_entry(item)


def test_parse_atom_entry_without_id_raises() -> None:
    (item,) = _feed_items("<entry><title>T</title></entry>")
    assert item.external_id == "hand.xml#entry-0"
    with pytest.raises(RecordError, match=r"^hand\.xml#entry-0: no <id>"):
        parse_atom_entry(item)


def test_parse_atom_entry_bad_time_raises() -> None:
    (item,) = _feed_items(
        "<entry><id>http://arxiv.org/abs/1605.08386v1</id><title>T</title>"
        "<published>yesterday</published></entry>"
    )
    with pytest.raises(RecordError, match=r"bad <published> time 'yesterday'"):
        parse_atom_entry(item)


def test_split_atom_feed_refuses_billion_laughs() -> None:
    body = (
        '<?xml version="1.0"?>\n'
        '<!DOCTYPE feed [<!ENTITY lol "lol">'
        '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
        '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>\n'
        f"{FEED_OPEN}<entry><id>http://arxiv.org/abs/1605.08386v1</id>"
        "<title>&lol3;</title></entry></feed>"
    )
    with pytest.raises(RecordError, match=r"^bomb\.xml: refused XML with a DTD"):
        list(split_atom_feed(body.encode(), "bomb.xml"))


def test_split_atom_feed_truncated_gives_line_and_column() -> None:
    body = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n{FEED_OPEN}\n'
        "  <entry>\n    <id>http://arxiv.org/abs/1605.08386v1</id>\n    <title>Heat"
    )
    (item,) = split_atom_feed(body.encode(), "cut.xml")
    assert item.external_id == "file:cut.xml"
    assert re.match(r"^cut\.xml: malformed XML at line \d+, column \d+", item.problem)
    assert "(0 whole <entry> elements read one by one)" in item.problem


def test_read_atom_file_rejects_other_files(data_dir: Path) -> None:
    with pytest.raises(NotARecordFile, match=r"abs_files/reasons\.json"):
        _items(data_dir, "abs_files/reasons.json")
    with pytest.raises(NotARecordFile, match=r"arxiv-single\.xml: not an Atom"):
        _items(data_dir, "hepcrawl_oai/arxiv-single.xml")


def test_is_atom_file(data_dir: Path) -> None:
    arxiv = data_dir / "arxiv"
    recorded = [*(arxiv / CASSETTES).glob("*.json"), *(arxiv / OLD_ATOM).glob("*.xml")]
    assert len(recorded) == 25
    assert all(is_atom_file(path) for path in recorded)
    assert not is_atom_file(arxiv / "hepcrawl_oai" / "arxiv-single.xml")
    assert not is_atom_file(arxiv / "abs_files" / "reasons.json")
    assert not is_atom_file(arxiv / "no-such-file.json")


def _prefixed_real_feed(data_dir: Path, into: Path) -> Path:
    import xml.etree.ElementTree as ET

    original = data_dir / "arxiv" / OLD_ATOM / "search_query-au_del_maestro.xml"
    prefixed = into / original.name
    ET.parse(original).write(prefixed, xml_declaration=True, encoding="utf-8")
    return prefixed


def test_a_feed_written_with_namespace_prefixes_reads_as_the_original(
    data_dir: Path, tmp_path: Path
) -> None:
    # ElementTree writes the real 2016 author-search feed back as
    # <ns0:feed xmlns:ns0="http://www.w3.org/2005/Atom">: the same document,
    # which was passed over as "no records in it" (the sniff sought "<feed").
    original = data_dir / "arxiv" / OLD_ATOM / "search_query-au_del_maestro.xml"
    prefixed = _prefixed_real_feed(data_dir, tmp_path)
    assert b"<ns0:feed " in prefixed.read_bytes()[:200]

    assert is_atom_file(prefixed)
    rewritten = [parse_atom_entry(i) for i in read_atom_file(prefixed, tmp_path)]
    real = [parse_atom_entry(i) for i in read_atom_file(original, data_dir)]
    assert len(rewritten) == len(real) == 10

    def read(papers):
        return [(p.arxiv_id, p.title, [a.raw_name for a in p.authors]) for p in papers]

    assert read(rewritten) == read(real)


def test_the_root_element_not_the_first_bytes_tells_a_feed(
    data_dir: Path, tmp_path: Path
) -> None:
    feed = (
        data_dir / "arxiv" / OLD_ATOM / "search_query-au_del_maestro.xml"
    ).read_text(encoding="utf-8")
    body = feed.split("?>", 1)[1]
    # A comment of 3 KB before the root: the feed is a feed all the same.
    padded = tmp_path / "padded.xml"
    padded.write_text(f"<?xml version='1.0'?>\n<!-- {'x' * 3000} -->{body}", "utf-8")
    # UTF-16, as its byte-order mark says.
    wide = tmp_path / "wide.xml"
    wide.write_bytes(
        ("<?xml version='1.0' encoding='UTF-16'?>" + body).encode("utf-16")
    )
    # A real OAI-PMH record whose comment quotes an Atom root is no feed.
    oai = (data_dir / "arxiv" / "hepcrawl_oai" / "arxiv-single.xml").read_text("utf-8")
    quoting = tmp_path / "quoting.xml"
    declaration, rest = oai.split("?>", 1)
    quoting.write_text(
        f'{declaration}?><!-- mirrored from <feed xmlns="{ATOM_NS}"> -->{rest}',
        "utf-8",
    )

    assert is_atom_file(padded)
    assert is_atom_file(wide)
    assert not is_atom_file(quoting)
    for path in (padded, wide):
        read = [parse_atom_entry(i).arxiv_id for i in read_atom_file(path, tmp_path)]
        assert len(read) == 10
        assert read[0] == "1201.4869"


def test_a_damaged_prefixed_feed_salvages_its_whole_entries(
    data_dir: Path, tmp_path: Path
) -> None:
    # The real feed written with prefixes, its last entry cut mid-way: the
    # nine whole entries are read one by one, as from an unprefixed feed.
    prefixed = _prefixed_real_feed(data_dir, tmp_path)
    text = prefixed.read_text("utf-8")
    cut = text.rindex("<ns0:entry>") + len("<ns0:entry><ns0:id>")
    damaged = tmp_path / "damaged.xml"
    damaged.write_text(text[:cut], "utf-8")

    items = list(read_atom_file(damaged, tmp_path))

    whole = [i for i in items if not i.problem]
    assert len(whole) == 9
    assert [i.external_id for i in whole][:2] == ["1201.4869v1", "cond-mat/0412498v1"]
    assert parse_atom_entry(whole[0]).title.startswith("A Luttinger Liquid")
    (broken,) = [i for i in items if i.problem]
    assert "9 whole <entry> elements read one by one" in broken.problem


def test_a_live_answer_written_with_prefixes_reads_whole(
    data_dir: Path, tmp_path: Path
) -> None:
    from harvest.sources.arxiv_atom import atom_page_read
    from harvest.sources.polite_http import UnusableBody

    body = _prefixed_real_feed(data_dir, tmp_path).read_text("utf-8")
    assert body.rstrip().endswith("</ns0:feed>")
    page = atom_page_read(body, "http://127.0.0.1:9/api/query", 200, 0)
    assert (len(page.items), page.total) == (10, 31)
    with pytest.raises(UnusableBody, match="feed cut short"):
        atom_page_read(body[: body.rindex("</ns0:feed>")], "u", 200, 0)


def _cut_in_last_entry(feed: str) -> str:
    return feed[: feed.rindex("<entry>") + len("<entry><id>")]


# Written by hand for the Latin-1 case: the real feed prints no letter
# outside ASCII (its accents are LaTeX).
ACCENTED = ("Adrian Del Maestro", "Adrián Del Maestro")


@pytest.mark.parametrize(
    ("name", "head", "codec"),
    [
        # A comment before the root quoting a tag (and a whole <entry>): the
        # root's namespaces are the root's, and a quoted entry is no record.
        (
            "quoting.xml",
            "<?xml version='1.0' encoding='utf-8'?>\n<!-- saved from "
            "<https://export.arxiv.org/api/query> <entry><id>x</id></entry> -->",
            "utf-8",
        ),
        # UTF-16 and Latin-1, as their mark or declaration says.
        ("wide.xml", "<?xml version='1.0' encoding='UTF-16'?>", "utf-16"),
        ("latin.xml", "<?xml version='1.0' encoding='ISO-8859-1'?>", "latin-1"),
    ],
)
def test_a_damaged_feed_salvages_as_its_encoding_and_prolog_say(
    data_dir: Path, tmp_path: Path, name: str, head: str, codec: str
) -> None:
    real = data_dir / "arxiv" / OLD_ATOM / "search_query-au_del_maestro.xml"
    body = real.read_text(encoding="utf-8").split("?>", 1)[1].replace(*ACCENTED)
    cut = body[: body.rindex("<entry>") + len("<entry><id>")]
    path = tmp_path / name
    path.write_bytes((head + cut).encode(codec))

    items = list(read_atom_file(path, tmp_path))

    def read(papers):
        return [
            (p.arxiv_id, p.title, [a.raw_name.replace(*ACCENTED) for a in p.authors])
            for p in papers
        ]

    whole = [parse_atom_entry(i) for i in items if not i.problem]
    intact = [parse_atom_entry(i) for i in read_atom_file(real, data_dir)]
    assert len(whole) == 9
    assert read(whole) == read(intact[:9])
    assert "Adrián Del Maestro" in [a.raw_name for a in whole[0].authors]
    (broken,) = [i for i in items if i.problem]
    assert "9 whole <entry> elements read one by one" in broken.problem

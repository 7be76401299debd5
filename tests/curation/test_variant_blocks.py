"""Blocks that meet: a name read another way (swapped order, one of two
surnames, particles joined) is compared with the block it lands in.

Real names from ``shared/data``: S2AND Qian-partial prints Ping Zhang of the
Beijing University of Posts and Telecommunications both ways ("Zhang Ping" as
first "Zhang", last "Ping"; and "Ping Zhang"), and Martin Hofmann-Apitius of
the Fraunhofer Society as "Hofmann-Apitius" and as "Hofmann".
"""

from __future__ import annotations

import json
from collections import Counter
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.db import connection
from django.urls import reverse

from curation import names, selectors, services
from curation.matching import labelled, pipeline, training, variants
from curation.matching.features import (
    AuthorshipView,
    affiliation_tokens,
    profile_of,
)
from curation.models import Proposal
from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from wovepaper import profile

QIAN = "and/s2and/qian_partial"
ORCID = "0000-0002-1825-0097"


def _qian_signatures() -> dict:
    path = settings.WOVEPAPER_DATA_DIR / QIAN / "signatures.json"
    return json.loads(path.read_text())


def _printed(signatures: dict, first: str, last: str, at: str = "") -> list[dict]:
    """The author_info of every Qian signature printing this first and last
    name, with an affiliation (one naming ``at``, when given), in signature
    order."""
    return [
        s["author_info"]
        for s in signatures.values()
        if (s["author_info"]["first"], s["author_info"]["last"]) == (first, last)
        and s["author_info"]["affiliations"]
        and at in s["author_info"]["affiliations"][0]
    ]


# --- readings (names.block_key_readings) ---------------------------------------


def test_every_reading_of_every_real_name_lands_in_its_key():
    signatures = _qian_signatures()
    wang = json.loads(
        (
            settings.WOVEPAPER_DATA_DIR / "and/beard_inspire_wang/wang_signatures.json"
        ).read_text()
    )
    printed = {
        (s["author_info"]["first"] or "", s["author_info"]["last"] or "")
        for s in signatures.values()
    }
    for s in wang:
        parsed = names.parse_name(s["author_name"])
        printed.add((parsed.given, parsed.family))
    read = 0
    for given, family in printed:
        primary = names.block_key(given, family)
        keys = [r.key for r in names.block_key_readings(given, family)]
        assert len(keys) == len(set(keys)), (given, family)
        for r in names.block_key_readings(given, family):
            read += 1
            assert r.key != primary, (given, family, r)
            assert names.block_key(r.given, r.family) == r.key, (given, family, r)
            assert r.kind in names.READING_KINDS
        assert names.block_key_variants(given, family) == [primary, *keys]
    assert read > 100


def test_reading_real_chinese_order_swaps_the_names():
    (reading,) = names.block_key_readings("Zhang", "Ping")
    assert reading == names.Reading("zhang p", "Ping", "Zhang", "order")


def test_reading_real_double_surname_gives_each_surname():
    readings = names.block_key_readings("Martin", "Hofmann-Apitius")
    assert [(r.key, r.family, r.kind) for r in readings] == [
        ("hofmann m", "Hofmann", "surname"),
        ("apitius m", "Apitius", "surname"),
    ]


def test_reading_compound_keeps_the_inner_particle():
    # "G. Hamel de Monchenault" (CMS, in the bundled arXiv bylines) printed
    # without a comma reaches the comma form's block, particle and all.
    comma = names.parse_name("Hamel de Monchenault, G.")
    assert names.block_key(comma.given, comma.family) in [
        r.key for r in names.block_key_readings("G. Hamel", "de Monchenault")
    ]


def test_reading_that_drops_back_to_the_primary_key_is_left_out():
    # "En" is a particle: "Chao" with "En Wang" is block "wang c" again.
    assert names.block_key_readings("Chao En", "Wang") == ()
    assert names.block_key_readings("Jean-Pierre", "Serre") == ()


# --- variants: profiles and views read into another block ------------------------


def _view(i: int, given: str, family: str, **kw) -> AuthorshipView:
    return AuthorshipView(
        id=i,
        paper_id=100 + i,
        given=given,
        family=family,
        block_key=names.block_key(given, family),
        **kw,
    )


def test_read_into_swaps_a_profile_and_claims_no_rarity_for_it():
    # "Wang" read as a given name is rare only by being a family name (the
    # hostile trial: "Wei Wang" read as "Wang Wei" scored 0.989, 0.909 in
    # one block): a swapped reading claims none.
    profile = profile_of([_view(1, "Zhang", "Ping", given_rarity=0.7)])
    read, reading = variants.read_into(profile, "zhang p")
    assert (read.given_names, read.family, read.given_rarity) == (
        ("Ping",),
        "Zhang",
        0.0,
    )
    assert reading.kind == "order"
    assert variants.read_into(profile, "zhang q") is None
    # A reading that keeps the given names keeps their rarity.
    hofmann = profile_of([_view(2, "Martin", "Hofmann-Apitius", given_rarity=0.4)])
    assert variants.read_into(hofmann, "hofmann m")[0].given_rarity == 0.4


def test_meetings_pair_a_profile_with_the_block_its_reading_names():
    zhang_ping = profile_of([_view(1, "Zhang", "Ping")])
    ping_zhang = profile_of([_view(2, "Ping", "Zhang")])
    serre = profile_of([_view(3, "Jean-Pierre", "Serre")])
    found = variants.meetings(
        {"ping z": [zhang_ping], "zhang p": [ping_zhang], "serre j": [serre]}
    )
    assert [(m.block, m.index, m.other_block, m.printed) for m in found] == [
        ("ping z", 0, "zhang p", ("Zhang", "Ping"))
    ]
    # No block of that key: no meeting.
    assert variants.meetings({"ping z": [zhang_ping]}) == []


@pytest.mark.parametrize(
    ("given", "family", "block", "home", "expected"),
    [
        # Its own reading: "Zhang Ping" in a researcher of block "zhang p".
        ("Zhang", "Ping", "zhang p", "Zhang", ("Ping", "Zhang")),
        # Swapped back: "Ping Zhang" in a researcher of block "ping z".
        ("Ping", "Zhang", "ping z", "Ping", ("Zhang", "Ping")),
        # The researcher's family: "Hofmann" in "Hofmann-Apitius".
        ("Martin", "Hofmann", "hofmannapitius m", "Hofmann-Apitius", None),
        # Nothing reads it there: as it was.
        ("Jean-Pierre", "Serre", "zhang p", "Zhang", ("Jean-Pierre", "Serre")),
    ],
)
def test_view_in_block_reads_an_authorship_in_its_researchers_frame(
    given, family, block, home, expected
):
    view = _view(1, given, family)
    read = variants.view_in_block(view, block, home)
    if expected is None:
        expected = (given, home)
    assert (read.given, read.family) == expected
    if expected != (given, family):
        assert read.block_key == block


# --- clustering a labelled set: clusters of two blocks join ----------------------


@pytest.fixture(scope="module")
def qian():
    return labelled.load(settings.WOVEPAPER_DATA_DIR / QIAN)


@pytest.mark.parametrize(
    ("blocks", "swapped", "together"),
    [
        # Bin Zeng: nine "Bin Zeng" (six at the Naval University of
        # Engineering, two with no affiliation, one at Huazhong, a move
        # clustering keeps apart) and one "Zeng Bin" at the Naval University.
        (("zeng b", "bin z"), ("Zeng", "Bin"), 9),
        # Jing Wang of Beihang University: once each way, among 84 other
        # mentions of "Jing Wang" (13 other people) in block "wang j".
        (("wang j", "jing w"), ("Wang", "Jing"), 2),
    ],
)
def test_real_qian_person_printed_in_both_orders_is_one_cluster(
    qian, blocks, swapped, together
):
    views = [v for v in qian.views if v.block_key in blocks]
    (odd,) = [v for v in views if (v.given, v.family) == swapped]
    person = qian.gold[odd.id]
    his = [v for v in views if qian.gold[v.id] == person]
    assert {v.block_key for v in his} == set(blocks)
    # Scored by a model trained on the other blocks, as evaluate_matching's
    # folds score them.
    weights = training.fit(
        training.labelled_pairs(
            [v for v in qian.views if v.block_key not in blocks], qian.gold
        ),
        version="test",
    )
    labels = pipeline.cluster_all(views, threshold=0.4, weights=weights)
    label = labels[odd.id]
    assert Counter(labels[v.id] for v in his).most_common(1) == [(label, together)]
    assert {qian.gold[v.id] for v in views if labels[v.id] == label} == {person}


def test_join_across_blocks_never_puts_one_paper_twice_in_a_cluster():
    bupt = frozenset({"beijing", "posts", "telecommunications"})
    a = pipeline.Cluster([_view(1, "Zhang", "Ping", affiliation_tokens=bupt)], [])
    b = pipeline.Cluster([_view(2, "Ping", "Zhang", affiliation_tokens=bupt)], [])
    same_paper = pipeline.Cluster(
        [AuthorshipView(3, 101, "Ping", "Zhang", "zhang p", affiliation_tokens=bupt)],
        [],
    )
    joined = pipeline.join_across_blocks(
        {"ping z": [a], "zhang p": [b, same_paper]}, threshold=0.0
    )
    assert joined == {("ping z", 0): ("ping z", 0), ("zhang p", 0): ("ping z", 0)}


# --- matching runs: merges proposed across blocks --------------------------------


def _researcher_of(infos: list[dict], display: str):
    """A researcher holding one real Qian mention per paper (name and
    affiliations as S2AND prints them)."""
    r = ResearcherFactory(
        display_name=display,
        block_key=names.block_key(infos[0]["first"], infos[0]["last"]),
    )
    for info in infos:
        AuthorshipFactory(
            paper=PaperFactory(categories=["cs.IT"], primary_category="cs.IT"),
            given_name=info["first"],
            family_name=info["last"],
            affiliations=info["affiliations"],
            researcher=r,
        )
    return r


@pytest.fixture
def ping_zhang(db):
    signatures = _qian_signatures()
    chinese_order = _researcher_of(_printed(signatures, "Zhang", "Ping"), "Zhang Ping")
    # Qian's 64 "Ping Zhang" mentions at the Beijing University of Posts and
    # Telecommunications are all his (gold cluster 828), as are the eight
    # printed "Zhang Ping" there.
    western = _researcher_of(
        _printed(signatures, "Ping", "Zhang", at="Posts")[:6], "Ping Zhang"
    )
    return chinese_order, western


def test_full_run_proposes_merge_of_one_person_printed_in_both_orders(ping_zhang):
    chinese_order, western = ping_zhang
    assert (chinese_order.block_key, western.block_key) == ("ping z", "zhang p")
    services.matching_run()
    p = Proposal.objects.get(kind="merge")
    assert {p.researcher_id, p.other_researcher_id} == {chinese_order.pk, western.pk}
    assert p.block_key == "zhang p"
    assert p.evidence["reading"] == {
        "researcher": chinese_order.pk,
        "printed": "Ping, Zhang",
        "read_as": "Zhang, Ping",
        "rule": "given and family names swapped",
        "block": "zhang p",
    }
    assert p.evidence["features"]["same_given"] == 1.0
    assert p.evidence["features"]["affiliation"] > 0
    assert p.score >= settings.CURATION_MERGE_THRESHOLD
    # Idempotent: a second run proposes nothing new.
    assert services.matching_run().get("proposed_merge", 0) == 0


def test_block_run_proposes_no_merge_across_blocks(ping_zhang):
    services.matching_run(block_keys=["ping z", "zhang p"])
    assert not Proposal.objects.filter(kind="merge").exists()


def test_rejected_merge_across_blocks_is_not_proposed_again(ping_zhang, curator):
    services.matching_run()
    p = Proposal.objects.get(kind="merge")
    services.proposal_reject(proposal=p, actor=curator)
    services.matching_run()
    assert Proposal.objects.filter(kind="merge").count() == 1


def test_merged_researcher_reads_its_papers_in_one_frame(ping_zhang, curator):
    chinese_order, western = ping_zhang
    services.matching_run()
    services.proposal_apply(proposal=Proposal.objects.get(kind="merge"), actor=curator)
    survivor = min(chinese_order.pk, western.pk)
    block = chinese_order.block_key if survivor == chinese_order.pk else "zhang p"
    (profile,) = selectors.researcher_snapshot([block]).profiles[block]
    assert profile.id == survivor
    # Survivor of block "ping z": every authorship reads "Zhang Ping" (given
    # "Zhang"); its "Ping Zhang" ones are read back in that order.
    assert profile.given_names == (("Zhang",) if block == "ping z" else ("Ping",))
    assert services.matching_run().get("proposed_merge", 0) == 0


def test_proposal_page_says_how_the_name_was_read(client, curator, ping_zhang):
    services.matching_run()
    p = Proposal.objects.get(kind="merge")
    client.force_login(curator)
    page = client.get(reverse("admin:curation_proposal_change", args=[p.pk]))
    text = page.content.decode()
    assert "Met across blocks:" in text
    assert (
        f"researcher #{p.evidence['reading']['researcher']} prints "
        "&ldquo;<bdi>Ping, Zhang</bdi>&rdquo;, read as "
        "&ldquo;<bdi>Zhang, Ping</bdi>&rdquo;" in text
    )
    assert "(<bdi>given and family names swapped</bdi>)" in text


def test_full_run_proposes_no_merge_across_blocks_on_the_name_alone(db):
    # Qian's Ping Zhang of Syracuse University (gold cluster 827) shares
    # nothing but the name, read swapped, with the "Zhang Ping" of the
    # Beijing University of Posts and Telecommunications: a reading is a
    # guess, so it needs more than the name (variants.corroborated).
    signatures = _qian_signatures()
    _researcher_of(_printed(signatures, "Zhang", "Ping"), "Zhang Ping")
    _researcher_of(
        _printed(signatures, "Ping", "Zhang", at="Syracuse")[:6], "Ping Zhang"
    )
    services.matching_run()
    assert not Proposal.objects.filter(kind="merge").exists()


def test_corroborated_needs_evidence_beyond_the_name():
    def one(i: int, **kw) -> object:
        return profile_of([_view(i, "Ping", "Zhang", **kw)])

    assert not variants.corroborated(one(1), one(2))
    assert variants.corroborated(
        one(1, coauthor_keys=frozenset({"liu|w"})),
        one(2, coauthor_keys=frozenset({"liu|w"})),
    )
    assert variants.corroborated(one(1, orcid=ORCID), one(2, orcid=ORCID))
    ids = frozenset({"openalex:A5023888391"})
    assert variants.corroborated(one(1, source_ids=ids), one(2, source_ids=ids))


@pytest.mark.parametrize(
    ("mine", "theirs", "expected"),
    [
        # One word in common, a country: a coincidence (hostile trial).
        (
            "Sichuan University, Chengdu, China",
            "Tsinghua University, Beijing, China",
            False,
        ),
        # Two words: Qian's BUPT printed two ways.
        (
            "Wireless Technol. Innovation Inst., Beijing Univ. of Posts & "
            "Telecommun., Beijing",
            "Beijing University of Posts and Telecommunications",
            True,
        ),
        # Every word one side prints.
        ("Syracuse University", "Syracuse University, Syracuse, NY", True),
    ],
)
def test_corroborated_by_affiliation_needs_two_words_or_all_of_one(
    mine, theirs, expected
):
    def at(i: int, affiliation: str) -> object:
        tokens = affiliation_tokens([affiliation])
        return profile_of([_view(i, "Ping", "Zhang", affiliation_tokens=tokens)])

    assert variants.corroborated(at(1, mine), at(2, theirs)) is expected


# --- attaches across blocks --------------------------------------------------------

# What "Why is this paper here?" says first of an attach met across blocks,
# each name isolated (U+2068 ... U+2069).
READ_WORDS = (
    "printed \u201c\u2068Ping, Zhang\u2069\u201d, read as "
    "\u201c\u2068Zhang, Ping\u2069\u201d; "
)


@pytest.fixture
def western_with_new_chinese_order(db):
    """Ping Zhang of BUPT as a researcher (six real mentions printed "Ping
    Zhang"), and his eight real "Zhang Ping" mentions there, unassigned."""
    signatures = _qian_signatures()
    western = _researcher_of(
        _printed(signatures, "Ping", "Zhang", at="Posts")[:6], "Ping Zhang"
    )
    rows = [
        AuthorshipFactory(
            paper=PaperFactory(categories=["cs.IT"], primary_category="cs.IT"),
            given_name=info["first"],
            family_name=info["last"],
            affiliations=info["affiliations"],
        )
        for info in _printed(signatures, "Zhang", "Ping")
    ]
    return western, rows


@pytest.mark.parametrize("blocks", [None, ["ping z"]])
def test_run_proposes_attach_of_a_name_printed_the_other_way(
    western_with_new_chinese_order, blocks
):
    # A harvest's run matches the blocks it touched ("ping z" only): the
    # researcher of block "zhang p" is read for it too.
    western, rows = western_with_new_chinese_order
    services.matching_run(block_keys=blocks, merges=False)
    attaches = Proposal.objects.filter(kind="attach")
    # All but the one printed with "Minist. of Educ., Beijing": one word,
    # "beijing", is no evidence of its own (variants.corroborated).
    (ministry,) = [r for r in rows if r.affiliations == ["Minist. of Educ., Beijing"]]
    assert {a for p in attaches for a in p.authorships.all()} == set(rows) - {ministry}
    assert Proposal.objects.get(authorships=ministry).kind == "new"
    for p in attaches:
        (row,) = p.authorships.all()
        assert p.researcher == western
        assert p.evidence["reading"] == {
            "authorship": row.pk,
            "printed": "Ping, Zhang",
            "read_as": "Zhang, Ping",
            "rule": "given and family names swapped",
            "block": "zhang p",
        }
        assert p.evidence["features"]["same_given"] == 1.0
    # What is pending for him is his name printed "Zhang Ping" in block
    # "ping z"; read in his frame it is "Ping", no clash with his own.
    pending = selectors.pending_attach_names(["zhang p"])[western.pk]
    assert set(pending) == {("Zhang", "Ping", "ping z")}
    assert not variants.names_clash(("Ping", "Zhang", "zhang p"), pending[0], "zhang p")
    assert variants.names_clash(("Wei", "Zhang", "zhang p"), pending[0], "zhang p")


def test_no_attach_across_blocks_on_the_name_alone(db):
    signatures = _qian_signatures()
    _researcher_of(
        _printed(signatures, "Ping", "Zhang", at="Syracuse")[:6], "Ping Zhang"
    )
    (info, *_) = _printed(signatures, "Zhang", "Ping")
    row = AuthorshipFactory(
        paper=PaperFactory(categories=["cs.IT"], primary_category="cs.IT"),
        given_name=info["first"],
        family_name=info["last"],
        affiliations=info["affiliations"],
    )
    services.matching_run(block_keys=["ping z"], merges=False)
    assert Proposal.objects.get(authorships=row).kind == "new"


def test_approved_attach_across_blocks_reads_in_the_researchers_frame(
    western_with_new_chinese_order, curator
):
    western, rows = western_with_new_chinese_order
    services.matching_run(block_keys=["ping z"], merges=False)
    for p in Proposal.objects.filter(kind="attach").order_by("pk"):
        services.proposal_apply(proposal=p, actor=curator)
        words = profile._evidence_words(p, p.authorships.get().pk)
        assert words.startswith(READ_WORDS)
    for row in rows:
        row.refresh_from_db()
    # All but the one with "Minist. of Educ., Beijing" (see above).
    assert Counter(row.researcher_id for row in rows) == {
        western.pk: len(rows) - 1,
        None: 1,
    }
    (read,) = selectors.researcher_snapshot(["zhang p"]).profiles["zhang p"]
    assert read.id == western.pk
    assert len(read.paper_ids) == 6 + len(rows) - 1
    assert read.given_names == ("Ping",)
    # Now he holds seven authorships printed "Zhang Ping" in block "ping z":
    # the ministry one is compared with him there as in one block (no reading
    # is guessed), and proposed; Qian's gold has it his too.
    (ministry,) = [row for row in rows if row.researcher_id is None]
    assert services.matching_run().get("proposed_attach") == 1
    p = Proposal.objects.get(authorships=ministry, status="pending")
    assert (p.kind, p.researcher_id) == ("attach", western.pk)
    assert p.evidence["frame"]["holds"] == len(rows) - 1
    # Idempotent: nothing left to propose, in either block.
    assert not services.matching_run().get("proposed_attach")
    assert not services.matching_run().get("proposed_merge")


def test_attach_page_says_the_authorships_name_was_read(
    client, curator, western_with_new_chinese_order
):
    services.matching_run(block_keys=["ping z"], merges=False)
    p = Proposal.objects.filter(kind="attach").first()
    client.force_login(curator)
    text = client.get(
        reverse("admin:curation_proposal_change", args=[p.pk])
    ).content.decode()
    row = p.authorships.get()
    assert (
        f"Met across blocks:</strong> authorship #{row.pk} prints "
        "&ldquo;<bdi>Ping, Zhang</bdi>&rdquo;, read as "
        "&ldquo;<bdi>Zhang, Ping</bdi>&rdquo;" in text
    )


@pytest.mark.parametrize(
    "reading",
    [
        "zhang p",
        ["Zhang Ping"],
        {"researcher": True, "printed": "a", "read_as": "b", "rule": "c", "block": "d"},
        {"researcher": 1, "printed": 5, "read_as": "b", "rule": "c", "block": "d"},
        {"researcher": 1, "printed": " ", "read_as": "b", "rule": "c", "block": "d"},
        # Someone the proposal does not hold.
        {
            "researcher": 999999,
            "printed": "a",
            "read_as": "b",
            "rule": "c",
            "block": "d",
        },
        {
            "authorship": 999999,
            "printed": "a",
            "read_as": "b",
            "rule": "c",
            "block": "d",
        },
    ],
)
def test_hand_edited_reading_is_passed_over(client, curator, ping_zhang, reading):
    services.matching_run()
    p = Proposal.objects.get(kind="merge")
    p.evidence = {**p.evidence, "reading": reading}
    p.save()
    client.force_login(curator)
    page = client.get(reverse("admin:curation_proposal_change", args=[p.pk]))
    assert page.status_code == 200
    assert "Met across blocks" not in page.content.decode()


def test_reading_on_the_page_is_escaped(client, curator, ping_zhang):
    services.matching_run()
    p = Proposal.objects.get(kind="merge")
    p.evidence["reading"]["printed"] = "<script>alert(1)</script>"
    p.save()
    client.force_login(curator)
    text = client.get(
        reverse("admin:curation_proposal_change", args=[p.pk])
    ).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<script>alert(1)" not in text


def test_no_order_reading_of_a_family_name_with_particles():
    # "Li" leads the given names, but "Van Der Waals" is no given name.
    assert [r.kind for r in names.block_key_readings("Li", "Van Der Waals")] == [
        "particles"
    ]


def test_surname_reading_keeps_the_apostrophe_word_as_printed():
    assert [r.family for r in names.block_key_readings("Patrick", "O'Brien-Smith")] == [
        "O'Brien",
        "Smith",
    ]


def test_view_in_block_takes_the_home_family_only_when_its_own_is_part_of_it():
    # A researcher "Marie Curie" holding a "Marie Skłodowska" a curator moved
    # there: not a reading of hers, left as printed.
    view = _view(1, "Marie", "Skłodowska")
    assert variants.view_in_block(view, "curie m", "Curie") is view


def test_join_across_blocks_never_joins_conflicting_given_names_through_a_third():
    # "José García Márquez" and "Juan García Lorca" (blocks "garciamarquez j"
    # and "garcialorca j") each read as a "García, J.": one of them joins
    # that cluster, never both, since "José" and "Juan" are two people's.
    ugr = frozenset({"granada"})
    jose = pipeline.Cluster(
        [_view(1, "José", "García Márquez", affiliation_tokens=ugr)], []
    )
    juan = pipeline.Cluster(
        [_view(2, "Juan", "García Lorca", affiliation_tokens=ugr)], []
    )
    j = pipeline.Cluster([_view(3, "J.", "García", affiliation_tokens=ugr)], [])
    found = {"garciamarquez j": [jose], "garcialorca j": [juan], "garcia j": [j]}
    joined = pipeline.join_across_blocks(found, threshold=0.0)
    groups = {}
    for item, head in joined.items():
        groups.setdefault(head, set()).add(item)
    assert list(groups.values()) in (
        [{("garciamarquez j", 0), ("garcia j", 0)}],
        [{("garcialorca j", 0), ("garcia j", 0)}],
    )


def test_join_across_blocks_obeys_cannot_links():
    bupt = frozenset({"beijing", "posts", "telecommunications"})
    a = pipeline.Cluster([_view(1, "Zhang", "Ping", affiliation_tokens=bupt)], [])
    b = pipeline.Cluster([_view(2, "Ping", "Zhang", affiliation_tokens=bupt)], [])
    found = {"ping z": [a], "zhang p": [b]}
    assert pipeline.join_across_blocks(found, threshold=0.0)
    cannot = pipeline.Constraints.of(cannot_link=[(1, 2)])
    assert pipeline.join_across_blocks(found, threshold=0.0, constraints=cannot) == {}


def test_a_swapped_reading_is_confirmed_only_by_a_full_given_name():
    (swap,) = names.block_key_readings("Zhang", "Ping")
    (surname, _) = names.block_key_readings("Martin", "Hofmann-Apitius")
    assert variants.confirms(swap, ["Ping"])
    assert not variants.confirms(swap, ["P.", "P"])
    assert variants.confirms(surname, ["M."])


def test_join_across_blocks_reads_no_swap_against_initials_alone():
    # "Lu Wang" printed in Chinese order (given "Lu"... family "Wang" read
    # as given "Wang", family "Lu") and a "W. Lu" of the same institution:
    # nothing but initials to confirm the swap.
    ihep = frozenset({"beijing", "energy", "high", "phys"})
    swapped = pipeline.Cluster([_view(1, "Lu", "Wang", affiliation_tokens=ihep)], [])
    initials = pipeline.Cluster([_view(2, "W.", "Lu", affiliation_tokens=ihep)], [])
    full = pipeline.Cluster([_view(3, "Wang", "Lu", affiliation_tokens=ihep)], [])
    assert names.block_key_readings("Lu", "Wang")[0].key == "lu w"
    assert (
        pipeline.join_across_blocks(
            {"wang l": [swapped], "lu w": [initials]}, threshold=0.0
        )
        == {}
    )
    assert pipeline.join_across_blocks(
        {"wang l": [swapped], "lu w": [full]}, threshold=0.0
    ) == {("wang l", 0): ("wang l", 0), ("lu w", 0): ("wang l", 0)}


def _slots(*people: tuple[str, str], affiliation: str = ""):
    """One cs.IT paper whose byline is these (given, family) slots."""
    paper = PaperFactory(categories=["cs.IT"], primary_category="cs.IT")
    return [
        AuthorshipFactory(
            paper=paper,
            position=n,
            given_name=given,
            family_name=family,
            affiliations=[affiliation] if affiliation else [],
        )
        for n, (given, family) in enumerate(people, start=1)
    ]


BUPT = "Beijing University of Posts and Telecommunications"


@pytest.mark.parametrize("blocks", [None, ["zhang p", "ping z"], ["ping z", "zhang p"]])
def test_one_paper_never_gives_one_researcher_two_slots_across_blocks(db, blocks):
    # One paper printing Ping Zhang's name both ways (two slots, blocks
    # "zhang p" and "ping z"), beside his co-author: one slot is proposed
    # to him, the better scored, never both (hostile trial).
    signatures = _qian_signatures()
    western = _researcher_of(
        _printed(signatures, "Ping", "Zhang", at="Posts")[:6], "Ping Zhang"
    )
    for row in _slots(("Ping", "Zhang"), ("Wei", "Liu"), affiliation=BUPT)[:1]:
        row.researcher = western
        row.save()
    slots = _slots(
        ("Ping", "Zhang"), ("Zhang", "Ping"), ("Wei", "Liu"), affiliation=BUPT
    )
    services.matching_run(block_keys=blocks, merges=False)
    proposed = [
        a
        for p in Proposal.objects.filter(kind="attach", researcher=western)
        for a in p.authorships.all()
    ]
    assert [a.paper_id for a in proposed] == [slots[0].paper_id]


@pytest.mark.parametrize("across_first", [True, False])
def test_a_clash_of_given_names_across_blocks_is_won_by_score(db, across_first):
    # "J. García" of Granada; "José García Márquez" (block "garciamarquez j",
    # read as "García, José") shares his co-author, "Juan García" (his own
    # block) only the affiliation: José's attach scores higher and is
    # proposed, whichever was harvested first; Juan's is clustered apart.
    granada = "Universidad de Granada"
    holder = ResearcherFactory(display_name="J. García", block_key="garcia j")
    for row in _slots(("J.", "García"), ("Federico", "Lorca"), affiliation=granada)[:1]:
        row.researcher = holder
        row.save()
    jose = [("José", "García Márquez"), ("Federico", "Lorca")]
    juan = [("Juan", "García")]
    first, second = (jose, juan) if across_first else (juan, jose)
    rows = {
        tuple(people[0]): _slots(*people, affiliation=granada)[0]
        for people in (first, second)
    }
    services.matching_run(block_keys=["garcia j", "garciamarquez j"], merges=False)
    (attach,) = Proposal.objects.filter(kind="attach", researcher=holder)
    assert list(attach.authorships.all()) == [rows["José", "García Márquez"]]
    assert attach.evidence["reading"]["read_as"] == "García, José"
    assert Proposal.objects.get(authorships=rows["Juan", "García"]).kind == "new"


def test_why_is_this_paper_here_says_the_reading_on_both_paths(
    western_with_new_chinese_order, curator, monkeypatch
):
    # PostgreSQL reads the researcher page through wovepaper_paper_rows_v3
    # (migration 0017), SQLite through the ORM: both say how it was read.
    western, rows = western_with_new_chinese_order
    services.matching_run(block_keys=["ping z"], merges=False)
    for p in Proposal.objects.filter(kind="attach").order_by("pk"):
        services.proposal_apply(proposal=p, actor=curator)
    assert connection.vendor == "postgresql"
    by_sql = profile.researcher_papers_page(western)["papers"]
    monkeypatch.setattr(profile, "connection", SimpleNamespace(vendor="sqlite"))
    by_orm = profile.researcher_papers_page(western)["papers"]
    assert by_sql == by_orm
    read = [paper["why"] for paper in by_sql if READ_WORDS in paper["why"]]
    assert len(read) == len(rows) - 1  # all but the ministry one


@pytest.mark.parametrize("named", [None, "self", 10**6])
def test_why_says_a_reading_only_of_its_own_authorship(
    western_with_new_chinese_order, curator, named
):
    services.matching_run(block_keys=["ping z"], merges=False)
    p = Proposal.objects.filter(kind="attach").first()
    own = p.authorships.get().pk
    if named is None:
        del p.evidence["reading"]["authorship"]
    else:
        p.evidence["reading"]["authorship"] = own if named == "self" else named
    assert profile._evidence_words(p, own).startswith(READ_WORDS) is (named == "self")


# --- a researcher holding authorships printed in another block ----------------


@pytest.fixture
def merged_in_chinese_order(ping_zhang, curator):
    """The merge of the two Ping Zhangs applied, the survivor being the one
    of block "ping z" (created first: the lower id survives)."""
    chinese_order, western = ping_zhang
    assert chinese_order.pk < western.pk
    services.matching_run()
    services.proposal_apply(proposal=Proposal.objects.get(kind="merge"), actor=curator)
    return chinese_order


def _new_mention(info: dict):
    return AuthorshipFactory(
        paper=PaperFactory(categories=["cs.IT"], primary_category="cs.IT"),
        given_name=info["first"],
        family_name=info["last"],
        affiliations=info["affiliations"],
    )


@pytest.mark.parametrize("blocks", [None, ["zhang p"]])
def test_survivor_of_another_block_gets_new_papers_printed_as_it_holds_them(
    merged_in_chinese_order, blocks
):
    # The survivor lives in "ping z" and holds six "Ping Zhang" of BUPT. A
    # seventh (a real mention) has no reading into "ping z" ("Ping" is not a
    # frequent family name): before, its run proposed it as a new person.
    survivor = merged_in_chinese_order
    info = _printed(_qian_signatures(), "Ping", "Zhang", at="Posts")[10]
    row = _new_mention(info)
    assert not [
        r for r in names.block_key_readings("Ping", "Zhang") if r.key == "ping z"
    ]
    services.matching_run(block_keys=blocks, merges=False)
    p = Proposal.objects.get(authorships=row)
    assert (p.kind, p.researcher_id, p.block_key) == ("attach", survivor.pk, "zhang p")
    assert p.evidence["frame"] == {
        "researcher": survivor.pk,
        "block": "zhang p",
        "home": "ping z",
        "holds": 6,
    }
    assert p.evidence["features"]["same_given"] == 1.0
    assert p.score >= settings.CURATION_ATTACH_THRESHOLD
    # Pending for him, as printed; read in his own block's frame, "Zhang".
    assert selectors.pending_attach_names(["ping z"])[survivor.pk] == [
        ("Ping", "Zhang", "zhang p")
    ]
    assert variants.name_in_block("Ping", "Zhang", "ping z") == ("Zhang", "Ping")
    assert not services.matching_run().get("proposed_attach")


def test_a_rejected_attach_to_the_survivor_is_not_proposed_again(
    merged_in_chinese_order, curator
):
    row = _new_mention(_printed(_qian_signatures(), "Ping", "Zhang", at="Posts")[10])
    services.matching_run(block_keys=["zhang p"], merges=False)
    services.proposal_reject(
        proposal=Proposal.objects.get(authorships=row), actor=curator
    )
    services.matching_run(block_keys=["zhang p"], merges=False)
    services.matching_run()
    assert Proposal.objects.get(authorships=row, status="pending").kind == "new"


def test_attach_page_says_the_researcher_is_held_across_blocks(
    client, curator, merged_in_chinese_order
):
    row = _new_mention(_printed(_qian_signatures(), "Ping", "Zhang", at="Posts")[10])
    services.matching_run(block_keys=["zhang p"], merges=False)
    p = Proposal.objects.get(authorships=row)
    client.force_login(curator)
    url = reverse("admin:curation_proposal_change", args=[p.pk])
    assert (
        f"Held across blocks:</strong> researcher #{p.researcher_id} lives in "
        "block &ldquo;<bdi>ping z</bdi>&rdquo; and holds 6 authorships printed "
        "in this one, &ldquo;<bdi>zhang p</bdi>&rdquo;"
    ) in client.get(url).content.decode()
    # A frame edited by hand into another shape, or naming someone else, is
    # passed over.
    for frame in (
        {**p.evidence["frame"], "researcher": 10**6},
        {**p.evidence["frame"], "block": "a", "home": "b"},
        {**p.evidence["frame"], "home": "zhang p"},
        "x",
        {"holds": True},
    ):
        Proposal.objects.filter(pk=p.pk).update(evidence={**p.evidence, "frame": frame})
        text = client.get(url).content.decode()
        assert "Held across blocks" not in text


def test_a_visitors_attach_is_read_in_its_own_frame_against_a_clash(
    merged_in_chinese_order,
):
    # In one run, a "Zhang Ping" attach in his own block reads "Zhang"; a
    # "Ping Zhang" scored in block "zhang p" as a visitor reads "Zhang" in his
    # frame too: no clash of given names, both proposed. Read as printed
    # ("Ping" against "Zhang"), one of them was dropped.
    signatures = _qian_signatures()
    chinese = _new_mention(_printed(signatures, "Zhang", "Ping")[0])
    western = _new_mention(_printed(signatures, "Ping", "Zhang", at="Posts")[10])
    services.matching_run(block_keys=["ping z", "zhang p"], merges=False)
    assert {
        a.pk
        for p in Proposal.objects.filter(
            kind="attach", researcher=merged_in_chinese_order
        )
        for a in p.authorships.all()
    } == {chinese.pk, western.pk}


def test_an_initial_pending_for_a_visitor_does_not_block_its_own_full_names(
    merged_in_chinese_order,
):
    # "P. Zhang" (written here from a real BUPT mention; Qian prints none)
    # cannot be read into his block "ping z"; read as printed against
    # "Zhang" it clashed, and his next "Zhang Ping" paper was not proposed.
    signatures = _qian_signatures()
    info = _printed(signatures, "Ping", "Zhang", at="Posts")[10]
    initial = _new_mention({**info, "first": "P."})
    chinese = _new_mention(_printed(signatures, "Zhang", "Ping")[0])
    services.matching_run(block_keys=["zhang p"], merges=False)
    assert Proposal.objects.get(authorships=initial).researcher_id == (
        merged_in_chinese_order.pk
    )
    services.matching_run(block_keys=["ping z"], merges=False)
    p = Proposal.objects.get(authorships=chinese)
    assert (p.kind, p.researcher_id) == ("attach", merged_in_chinese_order.pk)
    # In one frame, names that cannot be one person's still clash.
    home = "ping z"
    assert variants.names_clash(
        ("Zhang", "Ping", "ping z"), ("Wei", "Zhang", "zhang p"), home
    )
    assert not variants.names_clash(
        ("P.", "Zhang", "zhang p"), ("Zhang", "Ping", "ping z"), home
    )


def test_a_visitor_is_read_from_what_it_holds_in_that_block_only(
    merged_in_chinese_order,
):
    # In "zhang p" the survivor is his "Ping Zhang" papers and his "Zhang
    # Ping" ones read so: given name "Ping", not "Zhang" and "Ping".
    (visitor,) = selectors.visiting_profiles(
        ["zhang p"], selectors.corpus_given_rarities()
    )["zhang p"]
    assert (visitor.profile.id, visitor.home, visitor.holds) == (
        merged_in_chinese_order.pk,
        "ping z",
        6,
    )
    assert (visitor.profile.given_names, visitor.profile.family) == (("Ping",), "Zhang")
    chinese_order = _printed(_qian_signatures(), "Zhang", "Ping")
    assert len(visitor.profile.paper_ids) == 6 + len(chinese_order)


def test_one_paper_of_a_name_it_never_meets_makes_no_visitor(
    merged_in_chinese_order, curator
):
    # A curator moves the real BUPT "Chao Liu" paper onto the survivor (a
    # slip, or a paper of his printed so): no name of his reads into "liu
    # c", so the next "Chao Liu" papers of BUPT are not drawn to him.
    from curation import edits

    (info,) = _printed(_qian_signatures(), "Chao", "Liu", at="Posts")
    row = _new_mention(info)
    edits.authorship_move(authorship=row, to=merged_in_chinese_order, actor=curator)
    rarities = selectors.corpus_given_rarities()
    assert "liu c" not in selectors.visiting_profiles(["liu c"], rarities)
    again = _new_mention(info)
    services.matching_run(block_keys=["liu c"], merges=False)
    assert Proposal.objects.get(authorships=again).kind == "new"


def test_a_visitor_emptied_while_a_run_reads_it_is_left_out(
    merged_in_chinese_order, curator, monkeypatch
):
    # A curator detaches its papers of "zhang p" between the run's two reads
    # (curators take no matching lock): the run goes on without it.
    from curation import edits
    from curation.selectors import profiles

    row = _new_mention(_printed(_qian_signatures(), "Ping", "Zhang", at="Posts")[10])
    heads = profiles._heads

    def detach_then_read(rows):
        for held in list(
            merged_in_chinese_order.authorships.filter(block_key="zhang p")
        ):
            edits.authorship_detach(authorship=held, actor=curator)
        return heads(rows)

    monkeypatch.setattr(profiles, "_heads", detach_then_read)
    services.matching_run(block_keys=["zhang p"], merges=False)
    assert not Proposal.objects.filter(
        authorships=row, researcher=merged_in_chinese_order
    ).exists()


def test_a_visitors_attach_goes_stale_when_the_merge_behind_it_is_undone(
    ping_zhang, curator
):
    from curation.history import event_undo
    from curation.models import CurationEvent

    chinese_order, western = ping_zhang
    services.matching_run()
    services.proposal_apply(proposal=Proposal.objects.get(kind="merge"), actor=curator)
    row = _new_mention(_printed(_qian_signatures(), "Ping", "Zhang", at="Posts")[10])
    services.matching_run(block_keys=["zhang p"], merges=False)
    attach = Proposal.objects.get(authorships=row)
    assert attach.evidence["frame"]["home"] == "ping z"
    assert services.proposal_no_longer_fits(attach) == ""
    event_undo(event=CurationEvent.objects.get(kind="proposal_applied"), actor=curator)

    reason = services.proposal_no_longer_fits(attach)
    assert reason == (
        f"researcher {chinese_order.pk} no longer holds an authorship printed in "
        "block 'zhang p', as it did when this was proposed"
    )
    services.matching_run()
    attach.refresh_from_db()
    assert attach.status == "stale"
    # The Ping Zhang of "zhang p" is live again: the paper is proposed to him.
    p = Proposal.objects.get(authorships=row, status="pending")
    assert (p.kind, p.researcher_id) == ("attach", western.pk)


def test_names_clash_is_symmetric_on_real_names():
    # Pairs of real Qian and INSPIRE "Wang" names of a block (up to 20 names
    # a block), with the block's and a reading's key as the researcher's:
    # the answer never depends on which slot came first (a hostile trial
    # found "José García Márquez" and "José Luis García Márquez" clash one
    # way only).
    printed = {
        (s["author_info"]["first"] or "", s["author_info"]["last"] or "")
        for s in _qian_signatures().values()
    }
    wang = json.loads(
        (
            settings.WOVEPAPER_DATA_DIR / "and/beard_inspire_wang/wang_signatures.json"
        ).read_text()
    )
    for s in wang:
        parsed = names.parse_name(s["author_name"])
        printed.add((parsed.given, parsed.family))
    by_block: dict[str, set] = {}
    for given, family in printed:
        key = names.block_key(given, family)
        by_block.setdefault(key, set()).add((given, family, key))
        for r in names.block_key_readings(given, family):
            by_block.setdefault(r.key, set()).add((given, family, key))
    compared = clashes = 0
    for home, slots in by_block.items():
        slots = sorted(slots)[:20]
        for n, a in enumerate(slots):
            for b in slots[n + 1 :]:
                compared += 1
                one_way = variants.names_clash(a, b, home)
                assert one_way == variants.names_clash(b, a, home), (a, b, home)
                clashes += one_way
    assert compared > 2000
    assert 0 < clashes < compared


def test_two_slots_of_two_other_blocks_compare_in_the_researchers_own():
    home = "garcia j"
    luis = ("José Luis", "García Márquez", "garciamarquez j")
    antonio = ("José Antonio", "García López", "garcialopez j")
    assert variants.names_clash(luis, antonio, home)
    assert not variants.names_clash(luis, ("J.", "García", "garcia j"), home)
    # Read into "garciamarquez j", "José García, Márquez" is "José": no clash
    # with "José Luis" in the researcher's frame, whichever comes first.
    a = ("José García", "Márquez", "marquez j")
    b = ("José Luis", "García Márquez", "garciamarquez j")
    assert not variants.names_clash(a, b, "garciamarquez j")
    assert not variants.names_clash(b, a, "garciamarquez j")


def test_two_people_of_two_other_blocks_are_not_both_attached(db):
    # "José García" of Granada holds his papers with Lorca; "José Luis García
    # Márquez" and "José Antonio García López" arrive, both read into his
    # block, both with Lorca and Granada: one person cannot be both.
    granada = "Universidad de Granada"
    holder = ResearcherFactory(display_name="José García", block_key="garcia j")
    for _ in range(3):
        row = _slots(("José", "García"), ("Federico", "Lorca"), affiliation=granada)[0]
        row.researcher = holder
        row.save()
    luis = _slots(
        ("José Luis", "García Márquez"), ("Federico", "Lorca"), affiliation=granada
    )[0]
    antonio = _slots(
        ("José Antonio", "García López"), ("Federico", "Lorca"), affiliation=granada
    )[0]
    services.matching_run(merges=False)
    attached = {
        a.pk
        for p in Proposal.objects.filter(kind="attach", researcher=holder)
        for a in p.authorships.all()
    }
    assert len(attached & {luis.pk, antonio.pk}) == 1


@pytest.mark.usefixtures("default_weights")
def test_evidence_free_mentions_count_a_visitors_share_of_the_name(db, curator):
    # Real Qian "Jing Wang": 18 mentions at Tsinghua, 8 at the Chinese
    # Academy of Sciences. A curator merges the Tsinghua one into "Wang
    # Jing" (block "jing w", created first, so it survives). A mention
    # printing the name alone is not then given by rule to the holder of 8:
    # the visitor's 18 still count, and the new names it as likeliest.
    from curation import edits

    signatures = _qian_signatures()
    jing = [i for i in _printed(signatures, "Jing", "Wang")]
    chinese = _researcher_of(_printed(signatures, "Wang", "Jing"), "Wang Jing")
    tsinghua = _researcher_of(
        [i for i in jing if "Tsinghua" in i["affiliations"][0]], "Jing Wang"
    )
    cas = _researcher_of(
        [i for i in jing if "Chinese Academy" in i["affiliations"][0]], "Jing Wang"
    )
    edits.researcher_merge(researchers=[chinese, tsinghua], actor=curator)
    row = AuthorshipFactory(
        paper=PaperFactory(categories=[], primary_category=""),
        given_name="Jing",
        family_name="Wang",
        affiliations=[],
    )
    services.matching_run(block_keys=["wang j"], merges=False)
    p = Proposal.objects.get(authorships=row, status="pending")
    assert p.kind == "new"
    # He holds 19 of the name's 27 (his "Wang Jing" read as "Jing Wang" too).
    assert p.evidence["likeliest"] == {"researcher": chinese.pk, "holds": 19, "of": 27}
    assert not Proposal.objects.filter(researcher=cas, status="pending").exists()


def test_a_frame_of_another_block_or_researcher_never_makes_an_attach_stale(
    merged_in_chinese_order,
):
    row = _new_mention(_printed(_qian_signatures(), "Ping", "Zhang", at="Posts")[10])
    services.matching_run(block_keys=["zhang p"], merges=False)
    p = Proposal.objects.get(authorships=row)
    for frame in (
        {**p.evidence["frame"], "block": "liu w"},
        {**p.evidence["frame"], "block": ""},
        {**p.evidence["frame"], "researcher": 10**6},
    ):
        Proposal.objects.filter(pk=p.pk).update(evidence={**p.evidence, "frame": frame})
        p.refresh_from_db()
        assert services.proposal_no_longer_fits(p) == ""
    services.matching_run()
    p.refresh_from_db()
    assert p.status == "pending"

"""Source author ids (OpenAlex, Semantic Scholar) as matching evidence, on the real
OpenAlex works of TU9 universities (2022 schema) in shared/data."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from django.conf import settings

from curation import selectors, services
from curation.matching import scoring
from curation.matching.features import (
    AuthorshipView,
    ProfileView,
    authorship_profile_features,
    profile_of,
    profile_profile_features,
    source_ids_of,
)
from curation.models import Proposal
from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from wovepaper.models import Authorship

# Inputs built around the hand-set default weights' scores: the rules are
# under test here, not the model (tests/conftest.py, default_weights).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("default_weights")]

OPENALEX = Path(settings.WOVEPAPER_DATA_DIR) / "openalex"
TU9 = OPENALEX / "diophila_tu9_works_2022"
SCHOMMERS = "A2711670117"  # OpenAlex's Wolfram Schommers: two works in the file
MAINZER = "A1982331699"  # one of OpenAlex's Klaus Mainzers


@pytest.fixture
def tu9():
    """The real works of the file that name Schommers or Mainzer, stored."""
    from harvest.services import paper_upsert
    from harvest.sources.openalex import parse_openalex_work, read_openalex_file

    works = [
        parse_openalex_work(item)
        for item in read_openalex_file(TU9 / "tu9_works_diophila_2022.json")
    ]
    chosen = [
        w
        for w in works
        if {a.family_name for a in w.authors} & {"Schommers", "Mainzer"}
    ]
    for work in chosen:
        paper_upsert(record=work)
    assert len(chosen) == 6


def _views(**filters):
    return selectors.authorship_views(
        Authorship.objects.filter(**filters).order_by("id"),
        selectors.corpus_given_rarities(),
    )


def test_source_ids_agree_conflict_or_are_absent_on_the_real_slots(tu9):
    schommers = _views(openalex_author_id=SCHOMMERS)
    assert [v.source_ids for v in schommers] == [{f"openalex:{SCHOMMERS}"}] * 2
    one, other = (profile_of([v]) for v in schommers)
    agree = profile_profile_features(one, other)
    assert (agree.source_id, agree.source_id_conflict) == (1.0, 0.0)

    # OpenAlex split Klaus Mainzer (TU München) over more than one id: the
    # conflict is recorded, weaker evidence than an agreement.
    mainzers = _views(family_name="Mainzer", given_name="Klaus")
    ids = {v.source_ids for v in mainzers}
    assert len(ids) > 1
    assert frozenset({f"openalex:{MAINZER}"}) in ids
    split = next(v for v in mainzers if v.source_ids != {f"openalex:{MAINZER}"})
    kept = profile_of([v for v in mainzers if v.source_ids == {f"openalex:{MAINZER}"}])
    conflict = authorship_profile_features(split, kept)
    assert (conflict.source_id, conflict.source_id_conflict) == (0.0, 1.0)

    # A slot without a source id says nothing.
    bare = ProfileView(id=None, given_names=("Wolfram",), family="Schommers")
    absent = profile_profile_features(one, bare)
    assert (absent.source_id, absent.source_id_conflict) == (0.0, 0.0)
    assert source_ids_of("", "1741101") == {"s2:1741101"}


def _schommers_moved(
    *, coauthor: bool = True, **second_fields
) -> tuple[Authorship, Authorship]:
    """The real Schommers pair, the second printed as "W. Schommers" at another
    institution (as a later paper of a moved researcher prints it), and, with
    ``coauthor``, one co-author added to both works: a shared OpenAlex id is
    weak evidence that counts only beside evidence beyond the name (issue
    46), and a co-author alone does not join an initial at another
    institution."""
    first, second = Authorship.objects.filter(openalex_author_id=SCHOMMERS).order_by(
        "id"
    )
    Authorship.objects.filter(pk=second.pk).update(
        given_name="W.",
        raw_name="W. Schommers",
        affiliations=["Universität Bremen"],
        **second_fields,
    )
    if coauthor:
        for slot in (first, second):
            AuthorshipFactory(
                paper=slot.paper, position=2, given_name="Hans", family_name="Haken"
            )
    return first, second


def _attached_by_source_id(second: Authorship) -> int:
    """Run matching; the researcher ``second`` is proposed to, checking the
    proposal's evidence holds the shared source id."""
    services.matching_run()
    attach = Proposal.objects.get(kind="attach", authorships=second)
    assert attach.evidence["features"]["source_id"] == 1.0
    return attach.researcher_id


def test_a_shared_openalex_id_alone_joins_no_initial_at_another_institution(tu9):
    first, _ = _schommers_moved(coauthor=False)
    services.matching_run()
    alone = Proposal.objects.filter(kind="new", authorships=first).get()
    assert list(alone.authorships.values_list("id", flat=True)) == [first.pk]


def test_a_shared_openalex_id_joins_what_the_names_and_affiliations_do_not(tu9):
    first, second = _schommers_moved()
    services.matching_run()
    together = Proposal.objects.filter(kind="new", authorships=first).get()
    assert set(together.authorships.values_list("id", flat=True)) == {
        first.pk,
        second.pk,
    }
    pair = together.evidence["pairs"][0]
    assert pair["features"]["source_id"] == 1.0
    assert pair["contributions"]["source_id"] > 0


def test_without_the_shared_id_the_initial_and_the_other_institution_stay_apart(tu9):
    first, _ = _schommers_moved(openalex_author_id="")
    services.matching_run()
    alone = Proposal.objects.filter(kind="new", authorships=first).get()
    assert list(alone.authorships.values_list("id", flat=True)) == [first.pk]


def test_an_authorship_attaches_to_the_researcher_its_openalex_profile_holds(tu9):
    first, second = _schommers_moved()
    researcher = ResearcherFactory(
        display_name="Wolfram Schommers", block_key=first.block_key
    )
    Authorship.objects.filter(pk=first.pk).update(researcher=researcher)
    assert _attached_by_source_id(second) == researcher.pk


def test_the_researchers_own_openalex_id_counts_as_its_authorships_do(tu9):
    first, second = _schommers_moved()
    # A curator recorded the OpenAlex id on the researcher; its one authorship
    # came from a source that gave none.
    researcher = ResearcherFactory(
        display_name="Wolfram Schommers",
        block_key=first.block_key,
        openalex_author_id=SCHOMMERS,
    )
    Authorship.objects.filter(pk=first.pk).update(
        researcher=researcher, openalex_author_id=""
    )
    assert _attached_by_source_id(second) == researcher.pk


def test_an_orcid_only_the_openalex_profile_carries_links_the_slot():
    """OpenAlex's profile A5023888391 (Jason Priem) carries ORCID iD
    0000-0001-6187-6610. A work record that prints him without the iD (as many
    2022-schema records do: here the real work W2741809807 with the iD removed)
    still meets a slot of another paper that prints it, through the profile."""
    from harvest import services as harvest

    harvest.harvest_files(source="openalex", root=OPENALEX / "openalex_python_entities")
    priem = Authorship.objects.get(openalex_author_id="A5023888391")
    Authorship.objects.filter(pk=priem.pk).update(orcid="")
    printed = AuthorshipFactory(
        paper=PaperFactory(),
        given_name="Jason",
        family_name="Priem",
        orcid="0000-0001-6187-6610",
        affiliations=["Our Research"],
    )
    (view,) = _views(pk=priem.pk)
    assert view.source_ids == {"openalex:A5023888391", "orcid:0000-0001-6187-6610"}
    services.matching_run()
    together = Proposal.objects.get(kind="new", authorships=printed)
    assert set(together.authorships.values_list("id", flat=True)) == {
        priem.pk,
        printed.pk,
    }
    features = together.evidence["pairs"][0]["features"]
    assert (features["orcid"], features["source_id"]) == (0.0, 1.0)
    # The iD came from a source's profile, not a byline: no automatic apply.
    assert together.status == "pending"
    assert not together.identifier_proven


def _schommers_researcher(first: Authorship, **fields) -> int:
    researcher = ResearcherFactory(
        display_name="Wolfram Schommers", block_key=first.block_key, **fields
    )
    Authorship.objects.filter(pk=first.pk).update(researcher=researcher)
    return researcher.pk


def _openalex_merges_schommers_into(survivor: str) -> None:
    from harvest.records import AuthorProfileRecord
    from harvest.services import source_author_upsert

    source_author_upsert(
        AuthorProfileRecord(
            source="openalex", external_id=SCHOMMERS, merged_into=survivor
        )
    )


def test_an_openalex_merge_reaches_the_profiles_an_incremental_run_remembers(tu9):
    first, second = _schommers_moved(openalex_author_id="")
    researcher = _schommers_researcher(first)
    # A harvest's incremental run remembers the researcher's profile...
    services.matching_run(block_keys=[first.block_key])
    assert not Proposal.objects.filter(kind="attach").exists()
    # ...then OpenAlex merges the profile: the slot moves to the survivor, and a
    # new slot arrives with it.
    _openalex_merges_schommers_into("A9999999999")
    assert Authorship.objects.get(pk=first.pk).openalex_author_id == "A9999999999"
    Authorship.objects.filter(pk=second.pk).update(openalex_author_id="A9999999999")
    services.matching_run(block_keys=[first.block_key])
    attach = Proposal.objects.get(kind="attach", authorships=second)
    assert attach.researcher_id == researcher


def test_a_researchers_own_openalex_id_is_read_as_its_survivor(tu9):
    first, second = _schommers_moved()
    Authorship.objects.filter(pk=first.pk).update(openalex_author_id="")
    researcher = _schommers_researcher(first, openalex_author_id=SCHOMMERS)
    _openalex_merges_schommers_into("A9999999999")
    # The slot moved to the survivor; the curated id on the researcher did not.
    assert Authorship.objects.get(pk=second.pk).openalex_author_id == "A9999999999"
    assert _attached_by_source_id(second) == researcher


def test_a_profile_that_gains_an_orcid_refreshes_the_researchers_behind_it(tu9):
    from harvest.records import AuthorProfileRecord
    from harvest.services import source_author_upsert
    from wovepaper.models import Researcher

    first, _ = _schommers_moved()
    researcher = _schommers_researcher(first)
    before = Researcher.objects.get(pk=researcher).revision
    profile = AuthorProfileRecord(
        source="openalex", external_id=SCHOMMERS, name="Wolfram Schommers"
    )
    source_author_upsert(profile)  # created without an ORCID iD: nothing to read
    assert Researcher.objects.get(pk=researcher).revision == before
    source_author_upsert(dataclasses.replace(profile, orcid="0000-0002-1825-0097"))
    assert Researcher.objects.get(pk=researcher).revision == before + 1
    (view,) = _views(pk=first.pk)
    assert "orcid:0000-0002-1825-0097" in view.source_ids


def _min_chen_works() -> list[Authorship]:
    """Four works printing "Min Chen" (issue 46): soil science, optics and two
    in cardiology, in different journals, at different institutions, with no
    co-author in common, all under one OpenAlex author id (OpenAlex's own
    conflation, as its "Jun Li" of 34,000 works). OpenAlex works carry no
    arXiv categories."""
    works = [
        ("Soil Biology and Biochemistry", "Nanjing Agricultural University", "Hu"),
        ("Optics Express", "Zhejiang University, Hangzhou", "Zhang"),
        ("Journal of the American College of Cardiology", "Fuwai Hospital", "Liu"),
        ("European Heart Journal", "Peking Union Medical College", "Zhao"),
    ]
    slots = []
    for n, (journal, affiliation, coauthor) in enumerate(works):
        paper = PaperFactory(
            categories=[], primary_category="", journal_ref=journal, arxiv_id=None
        )
        slots.append(
            AuthorshipFactory(
                paper=paper,
                given_name="Min",
                family_name="Chen",
                affiliations=[affiliation],
                openalex_author_id="A5100000001",
            )
        )
        AuthorshipFactory(
            paper=paper, position=2, given_name=f"Q{n}", family_name=coauthor
        )
    return slots


def test_a_shared_openalex_id_alone_joins_no_works_that_share_nothing_else():
    slots = _min_chen_works()
    services.matching_run()
    for slot in slots:
        proposal = Proposal.objects.get(authorships=slot)
        assert proposal.kind == "new"
        assert list(proposal.authorships.values_list("id", flat=True)) == [slot.pk]
        assert proposal.evidence["pairs"] == []
    # Nor does a researcher holding one of them take the others on the id.
    researcher = ResearcherFactory(
        display_name="Min Chen", block_key=slots[0].block_key
    )
    Authorship.objects.filter(pk=slots[0].pk).update(researcher=researcher)
    services.matching_run()
    assert not Proposal.objects.filter(kind="attach").exists()


def test_a_shared_source_id_counts_only_beside_evidence_beyond_the_name():
    def view(n: int, **fields) -> ProfileView:
        fields.setdefault("source_ids", frozenset({"openalex:A5100000001"}))
        return profile_of(
            [
                AuthorshipView(
                    id=n,
                    paper_id=n,
                    given="Min",
                    family="Chen",
                    block_key="chen m",
                    **fields,
                )
            ]
        )

    alone = profile_profile_features(
        view(1, affiliation_tokens=frozenset({"nanjing"})),
        view(2, affiliation_tokens=frozenset({"fuwai"})),
    )
    assert (alone.source_id, alone.source_id_conflict) == (0.0, 0.0)
    assert scoring.score(alone).pairwise_score < settings.CURATION_ATTACH_THRESHOLD
    # The same pair sharing a co-author: the id counts, beside it.
    coauthor = frozenset({"liu|q"})
    helped = profile_profile_features(
        view(1, coauthor_keys=coauthor), view(2, coauthor_keys=coauthor)
    )
    assert helped.source_id == 1.0
    # An ORCID iD a source's profile links (Priem's) stays strong alone.
    linked = frozenset({"orcid:0000-0001-6187-6610"})
    assert (
        profile_profile_features(
            view(1, source_ids=linked), view(2, source_ids=linked)
        ).source_id
        == 1.0
    )

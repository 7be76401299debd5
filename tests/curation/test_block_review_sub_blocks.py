"""A name block that matching clustered in sub-blocks is reviewed whole, and
papers ticked on a profile move together.

Matching files the proposals of an oversized block under sub-block keys
(``"wang b/wang|bs"``) while researchers keep the name block's (``"wang
b"``). The review page of a sub-block showed none of the block's profiles,
so a person left on two profiles by a sub-block's clustering could never be
merged there (bench/curator_effort.py stalled at B³ F1 0.956 on INSPIRE Wang).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from curation import block_review, services
from curation.matching import blocking, labelled
from curation.models import CurationEvent, Proposal
from harvest.records import AuthorRecord, PaperRecord
from harvest.services.upsert import paper_upsert
from tests.curation.test_block_review import BLOCK, _del_maestro, two_waiting
from tests.factories import AuthorshipFactory
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db

NAME_BLOCK = "wang b"  # 232 real INSPIRE mentions of 17 people


def _ingest(block_key: str) -> dict[int, str]:
    """The real INSPIRE Wang mentions of one block, each a paper of one
    author through the harvest's upsert; ``{authorship id: gold person}``."""
    data = labelled.load(Path(settings.WOVEPAPER_DATA_DIR) / "and/beard_inspire_wang")
    views = [v for v in data.views if v.block_key == block_key]
    assert len(views) > blocking.MAX_BLOCK, "the block is sub-blocked"
    person = {}
    for view in views:
        key = f"wang:{data.mention_ids[view.id]}"
        s2_id = hashlib.sha1(key.encode()).hexdigest()  # noqa: S324 - an id
        paper_upsert(
            record=PaperRecord(
                source="labelled",
                external_id=key,
                s2_id=s2_id,
                title=f"Wang mention {data.mention_ids[view.id]}",
                authors=[
                    AuthorRecord(
                        raw_name=data.raw_names[view.id],
                        given_name=view.given,
                        family_name=view.family,
                        affiliations=data.affiliations.get(view.id, ()),
                    )
                ],
            )
        )
        person[s2_id] = data.gold[view.id]
    return {
        pk: person[s2]
        for pk, s2 in Authorship.objects.values_list("pk", "paper__s2_id")
    }


def test_a_sub_blocked_name_block_is_queued_read_and_merged_whole(client, curator):
    gold = _ingest(NAME_BLOCK)
    services.matching_run()
    pending = list(Proposal.objects.filter(status="pending"))
    keys = {p.block_key for p in pending}
    assert len(keys) > 1
    assert all(k.startswith(f"{NAME_BLOCK}/") for k in keys)

    queue = block_review.block_queue(limit=None)
    assert [b.block_key for b in queue] == [NAME_BLOCK]
    assert queue[0].proposals == len(pending)
    assert {i.proposal.pk for i in block_review.block_of(NAME_BLOCK).pending} == {
        p.pk for p in pending
    }

    block_review.review_apply(
        block_key=NAME_BLOCK,
        review=block_review.Review(decisions={p.pk: True for p in pending}),
        actor=curator,
    )
    profiles = [d.researcher for d in block_review.block_of(NAME_BLOCK).profiles]
    assert len(profiles) == Researcher.objects.live().count() > 1
    assert not block_review.block_queue(limit=None)

    # A person whose papers the clustering of a sub-block left on two
    # profiles: researchers carry the name block's key, so only its page
    # shows them.
    held = defaultdict(set)
    for pk, researcher in Authorship.objects.values_list("pk", "researcher_id"):
        held[gold[pk]].add(researcher)
    apart = [sorted(profiles) for profiles in held.values() if len(profiles) > 1]
    assert apart, "some person is on two profiles"
    assert {r.block_key for r in Researcher.objects.all()} == {NAME_BLOCK}
    keep, other = apart[0][:2]

    client.force_login(curator)
    sub_url = reverse("admin:curation_proposal_block", args=[pending[0].block_key])
    url = reverse("admin:curation_proposal_block", args=[NAME_BLOCK])
    assert client.get(sub_url)["Location"] == url
    page = client.get(url).content.decode()
    assert f'data-researcher="{keep}"' in page
    assert f'data-researcher="{other}"' in page
    response = client.post(
        url, {"merge-a-1": str(keep), "merge-b-1": str(other), "then": "stay"}
    )
    assert response.status_code == 302
    assert Researcher.objects.get(pk=other).merged_into_id == keep


def test_papers_ticked_on_a_profile_move_together(client, curator):
    profiles = _del_maestro(curator)
    keep, other = profiles[0], profiles[1]
    two = list(other.authorships.order_by("pk").values_list("pk", flat=True)[:2])
    assert len(two) == 2
    client.force_login(curator)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])
    page = client.get(url).content.decode()
    assert f'name="tick-{two[0]}" value="{other.pk}"' in page
    assert f'name="move-ticked-{other.pk}"' in page

    # A paper moved by its own menu and by its tick to two places: refused.
    twice = client.post(
        url,
        {
            f"tick-{two[0]}": str(other.pk),
            f"move-{two[0]}": "new",
            f"move-ticked-{other.pk}": str(keep.pk),
        },
    )
    assert twice.status_code == 400
    assert set(
        Authorship.objects.filter(pk__in=two).values_list("researcher_id", flat=True)
    ) == {other.pk}

    response = client.post(
        url,
        {
            f"tick-{two[0]}": str(other.pk),
            f"tick-{two[1]}": str(other.pk),
            f"move-ticked-{other.pk}": str(keep.pk),
            "then": "stay",
        },
    )
    assert response.status_code == 302
    assert set(
        Authorship.objects.filter(pk__in=two).values_list("researcher_id", flat=True)
    ) == {keep.pk}


def test_a_stale_or_forged_page_moves_nothing(client, curator):
    profiles = _del_maestro(curator)
    keep, other = profiles[0], profiles[1]
    paper = other.authorships.order_by("pk").first().pk
    client.force_login(curator)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])
    page = client.get(url).content.decode()
    assert f'name="on-{paper}" value="{other.pk}"' in page
    # The page showed the paper on `keep` (another curator moved it since,
    # or the form was forged): by its tick and by its own menu, refused.
    for form in (
        {f"tick-{paper}": str(keep.pk), f"move-ticked-{keep.pk}": "new"},
        {f"move-{paper}": "new", f"on-{paper}": str(keep.pk)},
    ):
        response = client.post(url, {**form, "then": "stay"}, follow=True)
        assert "read the block again" in response.content.decode()
        assert Authorship.objects.get(pk=paper).researcher_id == other.pk
    # A tick and the paper's own menu naming two profiles: refused outright.
    both = client.post(
        url,
        {
            f"tick-{paper}": str(other.pk),
            f"move-ticked-{other.pk}": str(keep.pk),
            f"move-{paper}": str(keep.pk),
            f"on-{paper}": str(keep.pk),
        },
    )
    assert both.status_code == 400
    assert Authorship.objects.get(pk=paper).researcher_id == other.pk


def test_ids_written_two_ways_half_merges_and_empty_keys_are_refused(client, curator):
    profiles = _del_maestro(curator)
    keep, other = profiles[0], profiles[1]
    client.force_login(curator)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])
    paper = other.authorships.order_by("pk").first().pk
    # "0<id>" would be a second field for one paper, the later one winning.
    twice = client.post(url, {f"move-{paper}": "new", f"move-0{paper}": str(keep.pk)})
    assert twice.status_code == 400
    half = client.post(url, {"merge-b-1": str(other.pk), "then": "stay"})
    assert half.status_code == 400
    assert Authorship.objects.get(pk=paper).researcher_id == other.pk
    assert Researcher.objects.get(pk=other.pk).merged_into_id is None
    assert client.get("/admin/curation/proposal/blocks//x/").status_code == 404


def test_skipping_blocks_walks_the_whole_queue():
    from tests.factories import AuthorshipFactory, ResearcherFactory

    keys = ["ana a", "bell b", "cruz c"]
    for n, key in enumerate(keys):
        researcher = ResearcherFactory(block_key=key)
        for m in range(3 - n):  # the queue's order: most papers first
            proposal = Proposal.objects.create(
                kind="attach",
                score=0.6,
                model_version="t",
                fingerprint=f"walk-{n}-{m}",
                researcher=researcher,
                block_key=key,
            )
            proposal.authorships.set([AuthorshipFactory()])
    assert [b.block_key for b in block_review.block_queue()] == keys
    assert block_review.next_block("ana a") == "bell b"
    assert block_review.next_block("bell b") == "cruz c"
    assert block_review.next_block("cruz c") is None
    assert block_review.next_block("gone g") == "ana a"


def test_a_merge_on_the_page_makes_the_pairs_merge_proposal_stale(curator):
    profiles = _del_maestro(curator)
    keep, other = profiles[0], profiles[1]
    waiting = Proposal.objects.create(
        kind="merge",
        score=0.8,
        model_version="t",
        fingerprint="merge-on-page",
        researcher=keep,
        other_researcher=other,
        block_key=BLOCK,
    )
    block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(merges=[(keep.pk, other.pk)]),
        actor=curator,
    )
    waiting.refresh_from_db()
    assert waiting.status == "stale"
    # Nothing of the pair waits any more on the block's page.
    assert waiting.pk not in {
        i.proposal.pk for i in block_review.block_of(BLOCK).pending
    }


# The "approve the waiting ones" button and the "one person" ticks, as a
# hostile trial of them found them.


def _merge_proposal(keep: Researcher, other: Researcher) -> Proposal:
    return Proposal.objects.create(
        kind="merge",
        score=0.8,
        model_version="t",
        fingerprint=f"merge-{keep.pk}-{other.pk}",
        researcher=keep,
        other_researcher=other,
        researcher_revisions={
            str(keep.pk): keep.revision,
            str(other.pk): other.revision,
        },
        block_key=BLOCK,
    )


def test_enter_in_a_field_never_approves_what_was_left_waiting(client, curator):
    url = two_waiting(client, curator)[2]
    html = client.get(url).content.decode()
    form = html[html.index('id="block-review"') :]
    # A browser submits a form on Enter with its first submit button.
    first = form.index('type="submit"')
    assert form.index('id="apply-next"') < form.index('id="approve-next"')
    assert 'id="apply-next"' in form[first : first + 200]


def test_approving_the_waiting_merge_of_profiles_also_ticked_one_person(
    client, curator
):
    keep, other = _del_maestro(curator)[:2]
    waiting = _merge_proposal(keep, other)
    client.force_login(curator)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])
    response = client.post(
        url,
        {
            f"decision-{waiting.pk}": "wait",
            "one-person": [str(keep.pk), str(other.pk)],
            "then": "approve-next",
        },
    )
    assert response.status_code == 302
    waiting.refresh_from_db()
    assert waiting.status == "applied"
    survivor, gone = sorted([keep.pk, other.pk])
    assert Researcher.objects.get(pk=gone).merged_into_id == survivor


def test_a_waiting_one_decided_elsewhere_is_passed_over_not_refused(client, curator):
    first, second, url = two_waiting(client, curator)
    # Another tab rejected the first after this page was read.
    services.proposal_reject(proposal=first, actor=curator, reason="other tab")
    response = client.post(
        url,
        {
            f"decision-{first.pk}": "wait",
            f"decision-{second.pk}": "reject",
            "then": "approve-next",
        },
    )
    assert response.status_code == 302
    assert Proposal.objects.get(pk=first.pk).reason == "other tab"
    assert Proposal.objects.get(pk=second.pk).status == "rejected"
    # Nothing left to approve: said, and no empty audit entry.
    response = client.post(
        url, {f"decision-{first.pk}": "wait", "then": "approve-next"}, follow=True
    )
    assert "decided since the page was read" in response.content.decode()
    # An explicit approval of what was decided elsewhere is still refused.
    client.post(url, {f"decision-{second.pk}": "approve", "then": "stay"})
    assert Proposal.objects.get(pk=second.pk).status == "rejected"
    assert CurationEvent.objects.filter(kind="batch").count() == 1


def test_the_page_offers_a_decide_only_curator_no_move_or_merge(client, curator):
    from django.contrib.auth.models import Permission

    from tests.factories import UserFactory

    _del_maestro(curator)
    decider = UserFactory(is_staff=True)
    decider.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_proposal", "decide_proposal"])
    )
    client.force_login(decider)
    page = client.get(reverse("admin:curation_proposal_block", args=[BLOCK]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="apply-next"' in html
    for control in (
        'name="one-person"',
        'name="merge-a-1"',
        'name="tick-',
        'name="move-',
    ):
        assert control not in html, control
    client.force_login(curator)
    html = client.get(reverse("admin:curation_proposal_block", args=[BLOCK])).content
    for control in (
        'name="one-person"',
        'name="merge-a-1"',
        'name="tick-',
        'value="new"',
    ):
        assert control in html.decode(), control


def test_a_proposal_a_review_merge_makes_stale_is_in_its_audit_entry(curator):
    keep, other = _del_maestro(curator)[:2]
    survivor, gone = sorted([keep.pk, other.pk])
    attach = Proposal.objects.create(
        kind="attach",
        score=0.7,
        model_version="t",
        fingerprint="attach-to-the-merged-away",
        researcher_id=gone,
        block_key=BLOCK,
    )
    attach.authorships.set([AuthorshipFactory(given_name="A.", family_name="Maestro")])
    batch = block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(merges=[(survivor, gone)]),
        actor=curator,
    )
    stale = CurationEvent.objects.get(kind="proposal_stale", proposal=attach)
    assert stale.batch_id == batch.pk
    assert batch.extra["done"] == 2


def test_a_retired_profile_is_refused_in_words(curator):
    from curation import edits
    from curation.exceptions import ResearcherGone

    keep, other = _del_maestro(curator)[:2]
    Researcher.objects.filter(pk=other.pk).update(retired=True)
    with pytest.raises(ResearcherGone) as refused:
        edits.researcher_merge(researchers=[keep, other], actor=curator)
    assert str(refused.value) == (
        f"researcher {other.pk} was retired and holds no paper"
    )


def test_papers_ticked_with_no_place_chosen_are_named_in_the_message(client, curator):
    keep = _del_maestro(curator)[0]
    paper = keep.authorships.order_by("pk").first()
    client.force_login(curator)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])
    response = client.post(
        url,
        {f"tick-{paper.pk}": str(keep.pk), f"move-ticked-{keep.pk}": ""},
        follow=True,
    )
    assert "no place was chosen" in response.content.decode()
    assert Authorship.objects.get(pk=paper.pk).researcher_id == keep.pk
    assert not CurationEvent.objects.filter(kind="batch").exists()

"""Followers of the researchers a merge, split or undo changed are told, once."""

from __future__ import annotations

import pytest
from django.core import mail

from curation import edits
from curation.history import event_undo
from curation.models import CurationEvent
from curation.notify import followers_notify
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory
from wovepaper.models import Follow, Notification

pytestmark = pytest.mark.django_db(transaction=True)


def test_merge_notifies_followers_of_both_researchers_once_each():
    a, b = ResearcherFactory(), ResearcherFactory(display_name="J. Serre")
    AuthorshipFactory(researcher=a)
    AuthorshipFactory(researcher=b)
    fan_a = UserFactory(email="a@example.org")
    fan_b = UserFactory(email="b@example.org")
    fan_both = UserFactory(email="")
    for user, r in [(fan_a, a), (fan_b, b), (fan_both, a), (fan_both, b)]:
        Follow.objects.create(user=user, researcher=r)

    edits.researcher_merge(researchers=[a, b], actor=UserFactory())

    notes = Notification.objects.order_by("user_id")
    assert [n.user for n in notes] == [fan_a, fan_b, fan_both]
    assert {n.subject for n in notes} >= {"Jean-Pierre Serre: profiles merged"}
    b_note = notes.get(user=fan_b)
    assert f"merged into researcher {a.pk}" in b_note.body
    assert sorted(m.to[0] for m in mail.outbox) == ["a@example.org", "b@example.org"]
    assert [n.emailed for n in notes] == [True, True, False]


def test_notification_task_is_idempotent_and_undo_notifies_again():
    a, b = ResearcherFactory(), ResearcherFactory()
    AuthorshipFactory(researcher=a)
    moved = AuthorshipFactory(researcher=b)
    fan = UserFactory(email="fan@example.org")
    Follow.objects.create(user=fan, researcher=b)
    user = UserFactory()

    edits.researcher_merge(researchers=[a, b], actor=user)

    event = CurationEvent.objects.get(kind="merged")
    assert followers_notify(event_id=event.pk) == 0  # redelivery writes nothing
    event_undo(event=event, actor=user)

    assert Notification.objects.filter(user=fan).count() == 2
    moved.refresh_from_db()
    assert moved.researcher_id == b.pk
    assert len(mail.outbox) == 2


def test_an_approved_split_proposal_tells_followers_of_a_split_with_links(settings):
    """Followers were told "papers added or profiles merged" of an approved
    split proposal, with bare ids and no link (new-user trial)."""
    from curation import services
    from curation.models import Proposal

    settings.SITE_URL = "https://wovepaper.example/"
    r = ResearcherFactory(display_name="Jacob L. Bourjaily")
    AuthorshipFactory(researcher=r)
    leaving = AuthorshipFactory(researcher=r)
    fan = UserFactory(email="fan@example.org")
    Follow.objects.create(user=fan, researcher=r)
    proposal = Proposal.objects.create(
        kind="split", score=0.9, model_version="test", researcher=r
    )
    proposal.authorships.set([leaving])

    services.proposal_apply(proposal=proposal, actor=UserFactory())

    proposal.refresh_from_db()
    note = Notification.objects.get(user=fan)
    assert note.subject == "Jacob L. Bourjaily: profile split"
    assert f"The profile: https://wovepaper.example/researchers/{r.pk}" in note.body
    assert (
        "Papers that left it are now at: https://wovepaper.example/researchers/"
        f"{proposal.other_researcher_id}"
    ) in note.body
    assert mail.outbox[0].subject == note.subject


def test_followers_hear_where_a_merged_in_profile_went_and_of_a_retired_one():
    """A follower of a profile merged away and sent on by a split read "The
    profile was merged into researcher T"; after the split's undo, the
    split-off profile's followers got a link to it as if it lived (hostile
    re-trial)."""
    a, b = (
        ResearcherFactory(display_name="Jacob L. Bourjaily"),
        ResearcherFactory(display_name="G. Ghisellini"),
    )
    AuthorshipFactory(researcher=a)
    his = [AuthorshipFactory(researcher=b).pk for _ in range(2)]
    fan = UserFactory(email="fan@example.org")
    Follow.objects.create(user=fan, researcher=b)
    curator = UserFactory()
    edits.researcher_merge(researchers=[a, b], actor=curator)
    split_off = edits.researcher_split(researcher=a, authorship_ids=his, actor=curator)
    told = Notification.objects.filter(user=fan).latest("pk")
    assert told.subject == "G. Ghisellini: profile split"
    assert f"Its papers went to researcher {split_off.pk}" in told.body
    assert "was merged into" not in told.body

    newcomer = UserFactory(email="new@example.org")
    Follow.objects.create(user=newcomer, researcher=split_off)
    event_undo(event=CurationEvent.objects.get(kind="split"), actor=curator)

    retired = Notification.objects.get(user=newcomer)
    assert "The profile was retired" in retired.body


def test_followers_hear_that_a_review_retired_the_profile_it_emptied():
    from curation import block_review
    from tests.curation.test_block_review import BLOCK

    curator = UserFactory(is_staff=True)
    keep = ResearcherFactory(display_name="A. Maestro", block_key=BLOCK)
    gone = ResearcherFactory(display_name="A. Maestro", block_key=BLOCK)
    AuthorshipFactory(researcher=keep)
    only = AuthorshipFactory(researcher=gone)
    fan = UserFactory(email="fan@example.org")
    Follow.objects.create(user=fan, researcher=gone)

    block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(moves={only.pk: keep.pk}),
        actor=curator,
    )

    told = Notification.objects.get(user=fan)
    assert told.subject == "A. Maestro: profile retired"
    assert (
        "The profile was retired (a curator took every paper it held off it)"
        in told.body
    )

"""The proposal queue in the admin: approve and reject through the real admin views."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation import services
from curation.models import CurationEvent, Proposal
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:curation_proposal_changelist")


def _attach(authorship, researcher, score=0.9):
    p = Proposal.objects.create(
        kind="attach",
        score=score,
        model_version="test",
        evidence={
            "features": {"name": 1.0, "coauthors": 1.0},
            "contributions": {"name": 3.0, "coauthors": 1.5},
        },
        fingerprint=f"fp-{authorship.pk}-{researcher.pk}",
        researcher=researcher,
    )
    p.authorships.set([authorship])
    return p


def _split(researcher, score, evidence=None):
    """A pending split of one of ``researcher``'s authorships at ``score``."""
    p = Proposal.objects.create(
        kind="split",
        score=score,
        model_version="test",
        evidence=evidence or {},
        fingerprint=f"split-{researcher.pk}-{score}",
        researcher=researcher,
    )
    p.authorships.set([AuthorshipFactory(researcher=researcher)])
    return p


def _act(client, action, proposals):
    return client.post(
        CHANGELIST,
        {"action": action, "_selected_action": [p.pk for p in proposals]},
        follow=True,
    )


def test_admin_approve_moves_authorships_and_writes_event(client, curator):
    r = ResearcherFactory()
    a1, a2 = AuthorshipFactory(), AuthorshipFactory()
    p1, p2 = _attach(a1, r), _attach(a2, r)
    client.force_login(curator)

    response = _act(client, "approve_selected", [p1, p2])

    assert response.status_code == 200
    assert "2 applied, 0 skipped" in response.content.decode()
    a1.refresh_from_db()
    a2.refresh_from_db()
    assert a1.researcher_id == a2.researcher_id == r.pk
    events = CurationEvent.objects.filter(kind="proposal_applied").order_by("id")
    assert [e.proposal_id for e in events] == [p1.pk, p2.pk]
    assert all(e.actor == curator for e in events)


def test_admin_approve_reports_skipped_with_reason(client, curator):
    r = ResearcherFactory()
    a = AuthorshipFactory()
    p = _attach(a, r)
    client.force_login(curator)
    _act(client, "approve_selected", [p])

    response = _act(client, "approve_selected", [p])

    text = response.content.decode()
    assert "0 applied, 1 skipped" in text
    assert "not pending" in text
    assert CurationEvent.objects.filter(proposal=p).count() == 1


def test_admin_reject_marks_rejected(client, curator):
    p = _attach(AuthorshipFactory(), ResearcherFactory())
    client.force_login(curator)
    response = _act(client, "reject_selected", [p])
    assert "1 rejected, 0 skipped" in response.content.decode()
    p.refresh_from_db()
    assert p.status == "rejected"
    assert p.decided_by == curator


def test_admin_staff_without_curator_permission_cannot_decide(client):
    staff = UserFactory(is_staff=True)
    a = AuthorshipFactory()
    p = _attach(a, ResearcherFactory())
    client.force_login(staff)

    response = _act(client, "approve_selected", [p])

    assert response.status_code == 403
    a.refresh_from_db()
    p.refresh_from_db()
    assert a.researcher_id is None
    assert p.status == "pending"


def test_admin_review_page_shows_evidence_and_authorships(client, curator):
    a = AuthorshipFactory()
    p = _attach(a, ResearcherFactory())
    client.force_login(curator)
    response = client.get(reverse("admin:curation_proposal_change", args=[p.pk]))
    text = response.content.decode()
    assert response.status_code == 200
    assert "Jean-Pierre Serre" in text
    assert "<td>coauthors</td><td>1.0</td><td>1.5</td>" in text
    assert "<td>bias</td>" in text


def test_admin_queue_filters_by_kind_and_score_band(client, curator):
    low = _attach(AuthorshipFactory(), ResearcherFactory(), score=0.3)
    high = _attach(AuthorshipFactory(), ResearcherFactory(), score=0.95)
    client.force_login(curator)
    response = client.get(CHANGELIST, {"kind": "attach", "score_band": "high"})
    ids = [p.pk for p in response.context["cl"].result_list]
    assert ids == [high.pk]
    assert low.pk not in ids


def test_the_score_bands_follow_the_trained_models_threshold(client, curator):
    from curation import selectors
    from curation.models import MatcherModel

    MatcherModel.objects.create(
        version="logreg-t", bias=-1.0, weights={}, threshold=0.4, active=True
    )
    selectors.active_weights()  # read afresh, as a new process would
    weak = _attach(AuthorshipFactory(), ResearcherFactory(), score=0.45)
    below = _attach(AuthorshipFactory(), ResearcherFactory(), score=0.3)
    client.force_login(curator)

    def band(name):
        response = client.get(CHANGELIST, {"score_band": name})
        return [p.pk for p in response.context["cl"].result_list]

    assert band("mid") == [weak.pk]
    assert band("low") == [below.pk]
    assert "0.4 – 0.9" in client.get(CHANGELIST, follow=True).content.decode()


def test_admin_superuser_approves_through_admin_client(admin_client, admin_user):
    r = ResearcherFactory()
    a = AuthorshipFactory()
    p = _attach(a, r)

    response = _act(admin_client, "approve_selected", [p])

    assert "1 applied, 0 skipped" in response.content.decode()
    a.refresh_from_db()
    assert a.researcher_id == r.pk
    event = CurationEvent.objects.get(proposal=p)
    assert event.actor == admin_user
    assert event.moves == [{"authorship": a.pk, "before": None, "after": r.pk}]


def _decide_url(p):
    return reverse("admin:curation_proposal_decide", args=[p.pk])


def test_admin_review_page_approve_button_applies(client, curator):
    a = AuthorshipFactory()
    r = ResearcherFactory()
    p = _attach(a, r)
    client.force_login(curator)
    page = client.get(reverse("admin:curation_proposal_change", args=[p.pk]))
    assert "Approve and apply" in page.content.decode()
    assert 'name="_save"' not in page.content.decode()

    response = client.post(_decide_url(p), {"decision": "approve"}, follow=True)

    assert f"Proposal {p.pk} applied." in response.content.decode()
    a.refresh_from_db()
    assert a.researcher_id == r.pk
    assert "Approve and apply" not in response.content.decode()


def test_admin_review_page_reject_keeps_reason(client, curator):
    p = _attach(AuthorshipFactory(), ResearcherFactory())
    client.force_login(curator)
    client.post(_decide_url(p), {"decision": "reject", "reason": "different field"})
    p.refresh_from_db()
    assert p.status == "rejected"
    assert p.reason == "different field"
    assert CurationEvent.objects.get(proposal=p).extra == {"reason": "different field"}


def test_admin_review_page_decide_refuses_get_and_non_curators(client):
    p = _attach(AuthorshipFactory(), ResearcherFactory())
    staff = UserFactory(is_staff=True)
    client.force_login(staff)
    assert client.post(_decide_url(p), {"decision": "approve"}).status_code == 403
    p.refresh_from_db()
    assert p.status == "pending"


def test_admin_review_page_decide_twice_shows_the_error(client, curator):
    p = _attach(AuthorshipFactory(), ResearcherFactory())
    client.force_login(curator)
    assert client.get(_decide_url(p)).status_code == 405
    client.post(_decide_url(p), {"decision": "approve"})
    response = client.post(_decide_url(p), {"decision": "reject"}, follow=True)
    assert "is applied, not pending" in response.content.decode()


def test_admin_queue_query_count_does_not_grow_with_rows(
    client, curator, django_assert_max_num_queries
):
    for _ in range(30):
        _attach(AuthorshipFactory(), ResearcherFactory())
    client.force_login(curator)
    with django_assert_max_num_queries(15):
        response = client.get(CHANGELIST, {"status__exact": "pending"})
    assert response.status_code == 200
    assert len(response.context["cl"].result_list) == 30


def test_admin_review_page_explains_a_split(client, curator):
    r = ResearcherFactory()
    a = AuthorshipFactory(researcher=r)
    p = Proposal.objects.create(
        kind="split",
        score=0.99,
        model_version="test",
        fingerprint="fp-split",
        researcher=r,
        evidence={"flag": "several ORCID iDs on one researcher"},
    )
    p.authorships.set([a])
    client.force_login(curator)
    text = client.get(reverse("admin:curation_proposal_change", args=[p.pk])).content
    assert b"<th>flag</th><td>several ORCID iDs on one researcher</td>" in text


def test_admin_queue_puts_high_impact_then_borderline_first(client, curator):
    r = ResearcherFactory()
    sure = _attach(AuthorshipFactory(), r, score=0.99)
    borderline = _attach(AuthorshipFactory(), ResearcherFactory(), score=0.62)
    big = Proposal.objects.create(
        kind="new", score=0.99, model_version="test", fingerprint="fp-big"
    )
    big.authorships.set([AuthorshipFactory(), AuthorshipFactory(), AuthorshipFactory()])
    client.force_login(curator)
    response = client.get(CHANGELIST, follow=True)
    ids = [p.pk for p in response.context["cl"].result_list]
    assert ids == [big.pk, borderline.pk, sure.pk]
    # The column headers mark the queue's real order, papers first.
    headers = response.context["cl"].get_ordering_field_columns()
    assert list(headers.values())[:1] == ["desc"]
    assert list(headers)[0] == list(response.context["cl"].list_display).index("impact")
    assert [p.impact for p in response.context["cl"].result_list] == [3, 1, 1]


def test_admin_queue_filters_by_field_and_searches_by_orcid(client, curator):
    from tests.factories import PaperFactory

    r = ResearcherFactory(orcid="0000-0002-1825-0097")
    math = AuthorshipFactory(
        paper=PaperFactory(primary_category="math.AG", categories=["math.AG"])
    )
    physics = AuthorshipFactory()  # hep-th
    p_math, p_physics = _attach(math, r), _attach(physics, r)
    client.force_login(curator)

    page = client.get(CHANGELIST, {"field": "math.AG"})
    shown = [p.pk for p in page.context["cl"].result_list]
    assert shown == [p_math.pk]

    found = client.get(CHANGELIST, {"q": "0000-0002-1825-0097"})
    assert sorted(p.pk for p in found.context["cl"].result_list) == sorted(
        [p_math.pk, p_physics.pk]
    )


def test_admin_queue_opens_on_pending_proposals(client, curator):
    r = ResearcherFactory()
    pending = _attach(AuthorshipFactory(), r)
    applied = _attach(AuthorshipFactory(), r)
    services.proposal_apply(proposal=applied, actor=curator)
    client.force_login(curator)

    response = client.get(CHANGELIST, follow=True)

    assert response.redirect_chain == [(f"{CHANGELIST}?status__exact=pending", 302)]
    assert [p.pk for p in response.context["cl"].result_list] == [pending.pk]


def test_admin_queue_filters_by_block(client, curator):
    r = ResearcherFactory()
    wang = _attach(AuthorshipFactory(), r)
    Proposal.objects.filter(pk=wang.pk).update(block_key="wang y")
    other = _attach(AuthorshipFactory(), r)
    Proposal.objects.filter(pk=other.pk).update(block_key="serre j")
    client.force_login(curator)

    page = client.get(CHANGELIST, {"block": "wang y", "status__exact": "pending"})

    assert [p.pk for p in page.context["cl"].result_list] == [wang.pk]
    assert "wang y (1)" in page.content.decode()


def test_admin_approves_a_new_researcher_named_past_its_300_characters(client, curator):
    """A source's run-on author string (a slot holds up to 500 characters)
    founds a researcher whose display name is cut to 300, with the rest of
    the batch applied."""
    long = AuthorshipFactory(given_name="Ann " * 60, family_name="Longname " * 20)
    assert len(f"{long.given_name} {long.family_name}") > 300
    new = Proposal.objects.create(
        kind="new", score=0.9, model_version="test", fingerprint=f"fp-new-{long.pk}"
    )
    new.authorships.set([long])
    other = _attach(AuthorshipFactory(), ResearcherFactory())
    client.force_login(curator)

    response = _act(client, "approve_selected", [new, other])

    assert "2 applied, 0 skipped" in response.content.decode()
    long.refresh_from_db()
    assert len(long.researcher.display_name) <= 300
    assert long.researcher.display_name.startswith("Ann Ann")


def test_a_proposal_the_database_refuses_is_skipped_with_its_reason(
    curator, monkeypatch
):
    from django.db import DataError

    from curation.deciding import bulk

    first, second = (_attach(AuthorshipFactory(), ResearcherFactory()) for _ in "ab")
    real_apply = services.proposal_apply

    def refuse_first(*, proposal, **kwargs):
        if proposal.pk == first.pk:
            raise DataError("value too long for type character varying(300)")
        return real_apply(proposal=proposal, **kwargs)

    # proposals_decide applies each through the bulk module's own name.
    monkeypatch.setattr(bulk, "proposal_apply", refuse_first)
    batch, done, skipped = services.proposals_decide(
        proposals=[first, second], approve=True, actor=curator
    )

    assert done == 1
    assert skipped == [
        f"proposal #{first.pk}: the database refused it (DataError: value too "
        "long for type character varying(300))"
    ]
    batch.refresh_from_db()
    # The batch tells the failed (refused by the database) from the skipped.
    assert (batch.extra["done"], batch.extra["skipped"], batch.extra["failed"]) == (
        1,
        [],
        skipped,
    )
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status) == ("pending", "applied")


def test_review_page_says_what_the_score_measures_for_each_kind(client, curator):
    from curation.services import matching_run

    AuthorshipFactory(given_name="Alex", family_name="Sergyeyev")
    matching_run()
    new = Proposal.objects.get(kind="new")
    attach = _attach(AuthorshipFactory(), ResearcherFactory())
    client.force_login(curator)

    def page(p):
        url = reverse("admin:curation_proposal_change", args=[p.pk])
        return client.get(url).content.decode()

    assert (
        f"{new.score:.3f}: the cluster&#x27;s cohesion, the mean of the pairwise scores"
        in page(new)
    )
    assert (
        f"{attach.score:.3f}: the pairwise score of the authorship and the researcher"
        in page(attach)
    )


def test_the_queue_ranks_a_split_borderline_where_its_parts_score_the_threshold():
    """A split's score is 1 - the pairwise score of its parts: at the default
    weights' threshold 0.6, a split at 0.41 is a hard case, one at 0.99 is not."""
    from curation.selectors import joining_threshold, proposal_queue

    threshold = joining_threshold()
    researcher = ResearcherFactory()
    made = {}
    for score in (0.99, 1.0 - threshold + 0.01):
        made[score] = _split(researcher, score)

    ranked = list(proposal_queue(Proposal.objects.filter(kind="split")))

    assert [p.pk for p in ranked] == [made[1.0 - threshold + 0.01].pk, made[0.99].pk]
    assert ranked[0].uncertainty == pytest.approx(0.01)


def test_a_split_review_page_shows_why_it_was_flagged(client, curator):
    """The flag and the veto are the evidence of a split whose parts were never
    scored: the page says them, not a table of zeros."""
    researcher = ResearcherFactory()
    p = _split(
        researcher,
        0.99,
        evidence={
            "features": {"name": 0.0, "affiliation": 0.0},
            "contributions": {},
            "veto": "names incompatible",
            "flag": "disjoint fields and co-author groups: 8 cond-mat, 2 astro-ph",
            "model_version": "test",
        },
    )
    client.force_login(curator)

    page = client.get(reverse("admin:curation_proposal_change", args=[p.pk]))

    text = page.content.decode()
    assert "<strong>flagged:</strong> disjoint fields and co-author groups" in text
    assert "<strong>not scored:</strong> names incompatible" in text
    assert "contribution (logit)" not in text


def test_a_proposals_authorships_are_listed_newest_paper_first(client, curator):
    """They were listed by row id, in no date order (new-user trial)."""
    import datetime as dt

    from tests.factories import PaperFactory

    dates = [dt.date(2019, 5, 1), None, dt.date(2021, 2, 1)]
    rows = [
        AuthorshipFactory(paper=PaperFactory(published=d, title=f"Dated {d}"))
        for d in dates
    ]
    p = Proposal.objects.create(
        kind="new", score=0.9, model_version="test", fingerprint="new-dates"
    )
    p.authorships.set(rows)
    client.force_login(curator)

    page = client.get(reverse("admin:curation_proposal_change", args=[p.pk]))

    html = page.content.decode()
    shown = [html.index(f"Dated {d}") for d in (dates[2], dates[0], None)]
    assert shown == sorted(shown)

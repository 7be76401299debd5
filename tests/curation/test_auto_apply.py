"""The auto-apply policy (issue 47): what the matcher is sure of is applied as
its own undoable decisions; merges, splits, flagged and locked things wait.

The suite runs with ``CURATION_AUTO_APPLY="identifiers"`` (wovepaper/settings/
test.py) so that curator-flow tests find their proposals pending; these tests
set the shipped default (:data:`curation.deciding.auto_apply.DEFAULT_THRESHOLD`) or
strict mode themselves.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from curation import selectors, services
from curation.deciding import auto_apply
from curation.history import event_undo
from curation.models import Constraint, CurationEvent, Proposal
from harvest.services import harvest_files
from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from wovepaper.models import Authorship, Researcher

ARXIV = Path(settings.WOVEPAPER_DATA_DIR) / "arxiv"
# Real records of "Adrian Del Maestro" / "A. Del Maestro" and their co-authors.
DEL_MAESTRO = ARXIV / "arxivpy_2016_atom" / "search_query-au_del_maestro.xml"
SHIPPED_DEFAULT = str(auto_apply.DEFAULT_THRESHOLD)


# --- the setting -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "mode", "threshold"),
    [
        ("off", auto_apply.OFF, None),
        ("none", auto_apply.OFF, None),
        ("Strict", auto_apply.OFF, None),
        ("identifiers", auto_apply.IDENTIFIERS, None),
        ("0.995", auto_apply.SCORE, 0.995),
        (" 1 ", auto_apply.SCORE, 1.0),
    ],
)
def test_the_setting_names_a_policy(value, mode, threshold):
    policy = auto_apply.policy(value)
    assert (policy.mode, policy.threshold) == (mode, threshold)


@pytest.mark.parametrize(
    "value",
    ["0", "-0.5", "1.5", "nan", "inf", "sure", "", "0.9_9", "1e-9", "٠.٩٩"],
)
def test_a_setting_that_names_no_policy_is_a_clear_error(value):
    with pytest.raises(ImproperlyConfigured, match="CURATION_AUTO_APPLY=") as err:
        auto_apply.policy(value)
    assert repr(value) in str(err.value)


def test_the_settings_default_is_the_measured_threshold(monkeypatch):
    """The setting a deployment gets when it sets nothing is the threshold
    evaluate_matching measured (curation.deciding.auto_apply.DEFAULT_THRESHOLD)."""
    import importlib

    from wovepaper.settings import base

    monkeypatch.delenv("CURATION_AUTO_APPLY", raising=False)
    fresh = importlib.reload(base)
    policy = auto_apply.policy(fresh.CURATION_AUTO_APPLY)
    assert policy.mode == auto_apply.SCORE
    assert math.isclose(policy.threshold, auto_apply.DEFAULT_THRESHOLD)


# --- which proposals clear it ------------------------------------------------

SCORE_POLICY = auto_apply.Policy(auto_apply.SCORE, 0.995)


@pytest.mark.parametrize(
    ("kind", "score", "evidence", "proven", "clears"),
    [
        ("attach", 0.996, {}, False, True),
        ("attach", 0.994, {}, False, False),
        ("new", 0.999, {"weakest": 0.996, "members": 3}, False, True),
        # A high mean hides one doubtful link: the weakest decides.
        ("new", 0.999, {"weakest": 0.97, "members": 3}, False, False),
        ("new", 1.0, {"members": 1}, False, True),
        # Made before the weakest link was recorded: a cluster waits.
        ("new", 1.0, {"members": 2}, False, False),
        ("attach", 0.2, {}, True, True),
        # Merges and splits wait whatever the score or the iD.
        ("merge", 1.0, {}, True, False),
        ("split", 1.0, {}, False, False),
        # Flagged (a misplaced iD) or a bare name a researcher holds most of.
        ("new", 1.0, {"members": 1, "flag": "a source's misplaced iD"}, True, False),
        ("new", 1.0, {"members": 1, "likeliest": {"researcher": 4}}, False, False),
    ],
)
def test_what_the_score_policy_clears(kind, score, evidence, proven, clears):
    assert (
        SCORE_POLICY.clears(
            kind=kind, score=score, evidence=evidence, identifier_proven=proven
        )
        is clears
    )


def test_identifiers_policy_clears_only_the_proven_and_off_clears_nothing():
    ids = auto_apply.policy("identifiers")
    off = auto_apply.policy("off")
    sure = {"kind": "attach", "score": 1.0, "evidence": {}}
    assert not ids.clears(**sure, identifier_proven=False)
    assert ids.clears(**sure, identifier_proven=True)
    assert not off.clears(**sure, identifier_proven=True)


# --- a matching run on real records ------------------------------------------


@pytest.mark.django_db
def test_the_matcher_applies_what_it_is_sure_of_as_its_own_undoable_events(
    settings, curator
):
    settings.CURATION_AUTO_APPLY = SHIPPED_DEFAULT
    harvest_files(source="arxiv", root=DEL_MAESTRO)
    counts = services.matching_run()

    applied = Proposal.objects.filter(status="applied")
    assert counts["auto_applied"] == applied.count() > 0
    assert Researcher.objects.live().count() == applied.filter(kind="new").count()
    policy = auto_apply.policy()
    for proposal in applied:
        assert proposal.kind in ("new", "attach")
        assert policy.clears(
            kind=proposal.kind,
            score=proposal.score,
            evidence=proposal.evidence,
            identifier_proven=proposal.identifier_proven,
        )
    # What waits is what the policy does not clear.
    waiting = Proposal.objects.filter(status="pending")
    for proposal in waiting:
        assert not policy.clears(
            kind=proposal.kind,
            score=proposal.score,
            evidence=proposal.evidence,
            identifier_proven=proposal.identifier_proven,
        )
    # Each decision is the matcher's event: no actor, the policy, the model.
    events = CurationEvent.objects.filter(kind="proposal_applied")
    assert events.count() == applied.count()
    for event in events:
        assert event.actor is None
        assert event.extra["by"] == "the matcher"
        assert event.extra["model_version"] == event.proposal.model_version
        assert "0.995" in event.extra["policy"]
    # A placement of the matcher is not a curator's word: no must-link.
    assert not Constraint.objects.exists()

    # A curator undoes one: its slots are free again, and the next run does
    # not apply the same cluster again.
    event = events.order_by("pk").first()
    moved = [m["authorship"] for m in event.moves]
    event_undo(event=event, actor=curator)
    assert not Authorship.objects.filter(pk__in=moved, researcher__isnull=False)
    services.matching_run()
    assert not Authorship.objects.filter(pk__in=moved, researcher__isnull=False)


@pytest.mark.django_db
def test_strict_mode_applies_nothing(settings):
    settings.CURATION_AUTO_APPLY = "off"
    harvest_files(source="arxiv", root=DEL_MAESTRO)
    counts = services.matching_run()
    assert counts.get("auto_applied", 0) == 0
    assert not Researcher.objects.exists()
    assert Proposal.objects.filter(status="pending").count() == counts["proposed_new"]


@pytest.mark.django_db
def test_a_curator_approval_still_confirms_where_the_matcher_does_not(
    settings, curator
):
    settings.CURATION_AUTO_APPLY = SHIPPED_DEFAULT
    harvest_files(source="arxiv", root=DEL_MAESTRO)
    services.matching_run()
    pending = Proposal.objects.filter(status="pending", kind="new").first()
    assert pending is not None, "the real records leave some cluster to a curator"
    services.proposal_apply(proposal=pending, actor=curator)
    confirmed = Constraint.objects.filter(kind="must_link", event__actor=curator)
    assert set(confirmed.values_list("authorship_id", flat=True)) == set(
        pending.authorships.values_list("pk", flat=True)
    )


def _wei_tan(researcher, *, year: int) -> Authorship:
    return AuthorshipFactory(
        paper=PaperFactory(
            categories=["cond-mat.soft"], primary_category="cond-mat.soft"
        ),
        given_name="Wei",
        family_name="Tan",
        orcid="0000-0002-1825-0097",
        affiliations=["Nanyang Technological University, Singapore"],
        researcher=researcher,
    )


@pytest.mark.django_db
@pytest.mark.parametrize("value", [SHIPPED_DEFAULT, "identifiers"])
def test_a_merge_proven_by_an_orcid_waits_for_a_curator(settings, value):
    """Two profiles of one iD (a curator approved two clusters apart): the
    merge is identifier-proven and scored high, and still waits."""
    settings.CURATION_AUTO_APPLY = value
    one = ResearcherFactory(display_name="Wei Tan", block_key="tan w")
    two = ResearcherFactory(display_name="Wei Tan", block_key="tan w")
    _wei_tan(one, year=2019)
    _wei_tan(two, year=2020)
    services.matching_run()
    merge = Proposal.objects.get(kind="merge")
    assert merge.identifier_proven
    assert merge.status == "pending"
    assert Researcher.objects.live().count() == 2


@pytest.mark.django_db
def test_an_attach_to_a_locked_researcher_waits(settings):
    settings.CURATION_AUTO_APPLY = "0.01"  # everything scored clears it
    locked = ResearcherFactory(display_name="Wei Tan", block_key="tan w", locked=True)
    _wei_tan(locked, year=2019)
    _wei_tan(locked, year=2020)
    newcomer = _wei_tan(None, year=2021)
    services.matching_run()
    attach = Proposal.objects.get(kind="attach")
    assert attach.researcher_id == locked.pk
    assert attach.status == "pending"
    assert Authorship.objects.get(pk=newcomer.pk).researcher_id is None


# --- what the public sees ----------------------------------------------------


@pytest.mark.django_db
def test_pages_and_api_say_automatic_until_a_curator_checks(settings, client, curator):
    settings.CURATION_AUTO_APPLY = SHIPPED_DEFAULT
    harvest_files(source="arxiv", root=DEL_MAESTRO)
    services.matching_run()
    applied = Proposal.objects.filter(status="applied", kind="new").first()
    researcher = applied.researcher
    api = client.get(f"/api/researchers/{researcher.pk}/").json()
    assert api["placement"] == "automatic"
    assert api["checked_paper_count"] == 0
    slot = applied.authorships.first()
    paper = client.get(f"/api/papers/{slot.paper_id}/").json()
    placed = {
        a["researcher"]["id"]: a["researcher"]["placement"]
        for a in paper["authorships"]
        if a["researcher"]
    }
    assert placed[researcher.pk] == "automatic"
    page = client.get(researcher.get_absolute_url()).content.decode()
    assert "Automatic: the matcher placed these papers" in page
    assert "Placed automatically by the matcher" in page

    # A curator approves a cluster the matcher left: its profile is checked.
    pending = Proposal.objects.filter(status="pending", kind="new").first()
    services.proposal_apply(proposal=pending, actor=curator)
    checked = Researcher.objects.get(
        pk=Proposal.objects.get(pk=pending.pk).researcher_id
    )
    api = client.get(f"/api/researchers/{checked.pk}/").json()
    assert api["placement"] == "checked by a curator"
    assert (
        api["checked_paper_count"] == api["paper_count"] == pending.authorships.count()
    )
    page = client.get(checked.get_absolute_url()).content.decode()
    assert "Every paper here was checked by a curator." in page
    paper_page = client.get(
        pending.authorships.first().paper.get_absolute_url()
    ).content.decode()
    assert "✓ checked by a curator" in paper_page


@pytest.mark.django_db
def test_a_merge_that_keeps_the_matchers_papers_says_a_curator_checked_them(
    settings, curator
):
    """New-user trial: after a curator's merge, the survivor's own papers
    read "✓ checked by a curator" and "Placed automatically" side by side."""
    from curation import edits
    from wovepaper import profile

    settings.CURATION_AUTO_APPLY = "0.01"
    harvest_files(source="arxiv", root=DEL_MAESTRO)
    services.matching_run()
    survivor, loser = (
        Researcher.objects.live().filter(block_key="maestro a").order_by("pk")[:2]
    )
    kept = set(survivor.authorships.values_list("pk", flat=True))
    edits.researcher_merge(researchers=[survivor, loser], actor=curator)

    rows = profile.researcher_papers_page(survivor)["papers"]
    mine = [r for r in rows if r["own_authorship"] in kept]
    assert mine
    for row in mine:
        assert row["placement"] == "checked by a curator"
        assert row["why"].startswith("Placed automatically by the matcher")
        assert row["why"].endswith(
            "A curator has checked it since (a merge that kept it, say)."
        )


@pytest.mark.django_db
def test_large_collaboration_proposals_have_a_lane_of_their_own(client, curator):
    """A paper of 120 authors: its slots' proposals are marked, and the
    queue opens on the other lane."""
    big = PaperFactory(title="A collaboration's paper")
    for n in range(1, 121):
        AuthorshipFactory(
            paper=big, position=n, given_name="Kalle", family_name=f"Virtanen{n}"
        )
    small = AuthorshipFactory(given_name="Ana", family_name="Ruiz")
    services.matching_run()
    large = Proposal.objects.filter(evidence__has_key=selectors.LARGE_COLLABORATION)
    assert large.count() == 120
    own = Proposal.objects.get(authorships=small)
    assert selectors.LARGE_COLLABORATION not in own.evidence
    client.force_login(curator)
    url = "/admin/curation/proposal/"
    pending = {"status__exact": "pending"}
    main = client.get(url, pending).context["cl"]
    assert [p.pk for p in main.result_list] == [own.pk]
    lane = client.get(url, {**pending, "lane": "large"}).context["cl"]
    assert lane.result_count == 120
    assert client.get(url, {**pending, "lane": "all"}).context["cl"].result_count == 121


@pytest.mark.django_db(transaction=True)
def test_followers_are_told_of_what_the_matcher_attaches_in_a_batch(settings):
    """The matcher's decisions are committed in batches with their follow-ups
    gathered: a follower of a profile the matcher adds a paper to is still
    told, once."""
    from tests.factories import UserFactory
    from wovepaper.models import Follow, Notification

    settings.CURATION_AUTO_APPLY = "0.01"
    tan = ResearcherFactory(display_name="Wei Tan", block_key="tan w")
    _wei_tan(tan, year=2019)
    _wei_tan(tan, year=2020)
    fan = UserFactory()
    Follow.objects.create(user=fan, researcher=tan)
    newcomer = _wei_tan(None, year=2021)
    AuthorshipFactory(given_name="Ana", family_name="Ruiz")  # another decision
    services.matching_run()
    assert Authorship.objects.get(pk=newcomer.pk).researcher_id == tan.pk
    assert Notification.objects.filter(user=fan).count() == 1


@pytest.mark.django_db
def test_after_the_demo_most_people_have_a_public_profile(settings):
    """Issue 47's first target, with ``manage.py demo`` on every bundled arXiv
    record: at least 5,000 researcher profiles right after it, each holding
    its papers, all the matcher's; what waits is what the policy does not
    clear; and another run changes nothing (the demo matched until a run
    applied nothing)."""
    import io

    from django.core.management import call_command

    settings.CURATION_AUTO_APPLY = SHIPPED_DEFAULT
    out = io.StringIO()
    call_command("demo", data=ARXIV, stdout=out)
    live = Researcher.objects.live()
    assert live.count() >= 5000
    applied = Proposal.objects.filter(status="applied").count()
    assert f"{applied} applied by the matcher" in out.getvalue()
    assert not live.filter(authorships__isnull=True).exists()
    assert not CurationEvent.objects.filter(
        kind="proposal_applied", actor__isnull=False
    ).exists()
    # The rest wait: clusters whose weakest link is below the bar.
    waiting = Proposal.objects.filter(status="pending")
    assert waiting.exists()
    assert all(p.evidence["weakest"] < 0.995 for p in waiting if p.kind == "new")
    before = (live.count(), Proposal.objects.count())
    counts = services.matching_run()
    assert counts.get("auto_applied", 0) == 0
    assert (Researcher.objects.live().count(), Proposal.objects.count()) == before


@pytest.mark.django_db
def test_a_bad_setting_fails_the_run_before_it_writes(settings):
    settings.CURATION_AUTO_APPLY = "bogus"
    harvest_files(source="arxiv", root=DEL_MAESTRO)
    with pytest.raises(ImproperlyConfigured, match="'bogus'"):
        services.matching_run()
    with pytest.raises(ImproperlyConfigured, match="'bogus'"):
        services.matching_plan()
    assert not Proposal.objects.exists()

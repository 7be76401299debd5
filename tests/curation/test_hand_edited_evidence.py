"""Proposal evidence edited by hand (not the shape matching records) on the
pages and the API that read it.

From the hostile trial: evidence set to a list, a string, a number, or pairs
and features of the wrong kind made the public researcher page and the
curators' authorship API answer 500, and the admin's proposal page showed "-".
A profile must not go down for one bad row; a curator must be told. The same
for curation events edited by hand (their undo), and, from the new-user trial,
what a curator sees before deciding: a proposal that no longer fits, a new
profile's name, a merged profile's modified time.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.db.models import F
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curation import edits, services
from curation.models import CurationEvent, Proposal
from harvest.services import harvest_arxiv_files
from tests.factories import AuthorshipFactory, ResearcherFactory
from wovepaper import profile
from wovepaper.models import Authorship

pytestmark = pytest.mark.django_db

HOSTILE = [
    [],
    "just a string",
    12345,
    {"pairs": {"a": 1}},
    {"members": "three"},
    {"members": 3, "pairs": [{"features": [1, 2, 3], "contributions": "x"}, 7]},
    {"members": 2.5, "pairs": [{"features": {"name": "high"}, "between": 5}]},
    {"features": [1, 2], "contributions": {"name": "big"}},
    {"pairs": 5},
    {"pairs": True, "members": -5},
]


@pytest.fixture
def placed(arxiv_dir, tmp_path, curator, django_capture_on_commit_callbacks):
    """A real paper's authorships matched and applied by a curator: the
    researcher and the applied proposal that placed its first author."""
    source = arxiv_dir / "abs_files/ftp/arxiv/papers/0704/0704.0295.abs"
    (tmp_path / source.name).symlink_to(source.resolve())
    harvest_arxiv_files(root=tmp_path)
    services.matching_run()
    authorship = Authorship.objects.order_by("position").first()
    proposal = Proposal.objects.get(authorships=authorship, status="pending")
    with django_capture_on_commit_callbacks(execute=True):
        services.proposal_apply(proposal=proposal, actor=curator)
    authorship.refresh_from_db()
    return authorship.researcher, proposal


def _why(client, researcher) -> str:
    response = client.get(researcher.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("evidence", HOSTILE, ids=repr)
def test_the_researcher_page_explains_what_it_can(
    client, placed, evidence, monkeypatch
):
    researcher, proposal = placed
    Proposal.objects.filter(pk=proposal.pk).update(evidence=evidence)
    sql = _why(client, researcher)  # PostgreSQL: wovepaper.profile_sql
    monkeypatch.setattr(profile, "connection", SimpleNamespace(vendor="sqlite"))
    Proposal.objects.filter(pk=proposal.pk).update(score=F("score"))  # new ETag
    orm = _why(client, researcher)
    for body in (sql, orm):
        assert "A curator approved the match" in body
    said = "started a new one" if isinstance(evidence, dict) else ""
    assert said in sql
    assert said in orm


@pytest.mark.parametrize("evidence", HOSTILE, ids=repr)
def test_the_curators_api_gives_evidence_it_cannot_read_as_stored(
    placed, curator, evidence
):
    researcher, proposal = placed
    Proposal.objects.filter(pk=proposal.pk).update(evidence=evidence)
    api = APIClient()
    token, _ = Token.objects.get_or_create(user=curator)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = api.get(f"/api/authorships/?researcher={researcher.pk}")
    assert response.status_code == 200
    seen = response.json()["results"][0]["evidence"]
    assert seen["proposal"] == proposal.pk
    if isinstance(evidence, dict):
        assert {k: seen[k] for k in evidence} == evidence
    else:
        assert seen["evidence_as_stored"] == evidence


@pytest.mark.parametrize("evidence", HOSTILE, ids=repr)
def test_the_proposal_page_says_evidence_is_unreadable(
    client, curator, placed, evidence
):
    _, proposal = placed
    Proposal.objects.filter(pk=proposal.pk).update(evidence=evidence)
    client.force_login(curator)
    response = client.get(f"/admin/curation/proposal/{proposal.pk}/change/")
    assert response.status_code == 200
    body = response.content.decode()
    if isinstance(evidence, dict):
        assert "Unreadable evidence" not in body
        assert "Cohesion" in body or "feature" in body
    else:
        kind = {list: "array", str: "string", int: "number"}[type(evidence)]
        assert f"stored as a JSON {kind}, not an object" in body


@pytest.mark.parametrize(
    ("given", "family", "shown"),
    [
        ("\u202eTrent", "Rtl\u202c", "Trent Rtl"),  # a right-to-left override
        ("Pe\u200bggy", "Zero", "Peggy Zero"),  # a zero-width space
    ],
)
def test_a_new_profile_is_named_without_invisible_characters(
    curator, given, family, shown, django_capture_on_commit_callbacks
):
    """From the hostile trial: names a curator types were cleaned, names a
    ``new`` proposal founded a profile with were not."""
    authorship = AuthorshipFactory(given_name=given, family_name=family)
    services.matching_run()
    proposal = Proposal.objects.get(authorships=authorship, kind="new")
    with django_capture_on_commit_callbacks(execute=True):
        services.proposal_apply(proposal=proposal, actor=curator)
    authorship.refresh_from_db()
    assert authorship.researcher.display_name == shown


def test_the_page_of_an_attach_to_a_researcher_merged_away_warns_before_approval(
    client, curator, django_capture_on_commit_callbacks
):
    """From the new-user trial: the page read as any pending attach until
    Approve said it was stale."""
    survivor, merged = ResearcherFactory(), ResearcherFactory()
    AuthorshipFactory(researcher=merged)
    proposal = Proposal.objects.create(
        kind="attach",
        score=0.9,
        model_version="v-test",
        fingerprint="fp-merged",
        researcher=merged,
        evidence={"features": {"name": 1.0}},
    )
    proposal.authorships.set([AuthorshipFactory()])
    client.force_login(curator)
    url = f"/admin/curation/proposal/{proposal.pk}/change/"
    assert "no longer fits" not in client.get(url).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        edits.researcher_merge(researchers=[survivor, merged], actor=curator)
    body = client.get(url).content.decode()
    assert (
        f"This proposal no longer fits: researcher {merged.pk} was merged into "
        f"{survivor.pk}. Approving it marks it stale"
    ) in body
    assert client.get("/admin/curation/proposal/abc/change/").status_code == 302


# (what is edited into the event's record, what the refusal says of it); "r"
# stands for the placed researcher's id. From two hostile trials: a TypeError
# page, an undo that wrote a column named "id", 500s on "pk", "²" and ids past
# the database's integers.
EDITED_EVENTS = [
    ({"moves": "add garbage", "fields": [1, 2]}, "move 2 is not an authorship"),
    ({"moves": [{"authorship": 1}]}, "move 1 is not an authorship"),
    (
        {"moves": [{"authorship": 10**20, "before": None, "after": 1}]},
        "move 1 is not an authorship",
    ),
    ({"fields": {"r": {"id": [999, "r"]}}}, "it sets id of researcher r, which no"),
    ({"fields": {"r": {"retired": [True, False], "x": [1, 2]}}}, "it sets x of"),
    ({"fields": {"r": {"pk": [999, 1]}}}, "it sets pk of researcher r"),
    ({"fields": {"²": {"retired": [True, False]}}}, "its fields of researcher ²"),
    ({"fields": {str(10**23): {"retired": [True, False]}}}, "its fields of researcher"),
    ({"constraints_on": [10**20]}, "its constraints_on are not a list of constraint"),
]


@pytest.mark.parametrize(("edit", "problem"), EDITED_EVENTS, ids=repr)
def test_an_event_edited_by_hand_is_refused_by_name_not_a_server_error(
    client, curator, placed, edit, problem
):
    researcher, proposal = placed
    event = CurationEvent.objects.get(proposal=proposal, kind="proposal_applied")
    r = str(researcher.pk)

    def placed_id(value):
        if value == "r":
            return researcher.pk
        if isinstance(value, dict):
            return {(r if k == "r" else k): placed_id(v) for k, v in value.items()}
        if isinstance(value, list):
            return [placed_id(v) for v in value]
        return value

    edit = placed_id(edit)
    if edit.get("moves") == "add garbage":
        edit["moves"] = [*event.moves, "garbage"]
    CurationEvent.objects.filter(pk=event.pk).update(**edit)
    client.force_login(curator)
    url = f"/admin/curation/curationevent/{event.pk}/undo/"
    said = (
        f"event {event.pk} cannot be undone: its record was edited by hand and "
        + problem.replace("researcher r", f"researcher {r}")
    )
    page = client.get(url)
    assert page.status_code == 200
    assert said in page.content.decode()
    done = client.post(url, {"confirm": "yes"}, follow=True)
    assert said in done.content.decode()
    assert researcher.authorships.count() == 1  # nothing undone
    researcher.refresh_from_db()
    assert not researcher.retired
    assert not CurationEvent.objects.filter(undoes=event).exists()
    shown = client.get(f"/admin/curation/curationevent/{event.pk}/change/")
    assert "The record cannot be read" in shown.content.decode()


def test_evidence_nested_past_the_recursion_limit_is_named_not_quoted():
    from curation.admin.proposals import _unreadable

    deep: list = []
    for _ in range(5000):
        deep = [deep]
    assert "stored as a JSON array, not an object" in _unreadable(deep)
    assert "(nested too deep to quote)" in _unreadable(deep)


def test_a_merge_marks_the_survivor_modified(
    curator, django_capture_on_commit_callbacks
):
    """From the new-user trial: after a merge the survivor's Modified (and the
    sitemap's lastmod) still gave the time it was made."""
    survivor, merged = ResearcherFactory(), ResearcherFactory()
    AuthorshipFactory(researcher=merged)
    before = survivor.modified
    with django_capture_on_commit_callbacks(execute=True):
        edits.researcher_merge(researchers=[survivor, merged], actor=curator)
    survivor.refresh_from_db()
    assert survivor.revision == 1
    assert survivor.modified > before


@pytest.mark.parametrize(
    "likeliest",
    [
        "researcher 7",
        [7, 4, 5],
        {"researcher": "7", "holds": 4, "of": 5},
        {"researcher": True, "holds": 4, "of": 5},
        {"researcher": 10**20, "holds": 4, "of": 5},
        {"researcher": 7, "holds": 4.5, "of": 5},
        {"researcher": 7},
        None,
    ],
    ids=repr,
)
def test_a_likeliest_person_edited_into_another_shape_is_not_said(
    client, curator, likeliest
):
    # evidence["likeliest"] names a researcher by id on the proposal page
    # (attach._propose_block): edited by hand, the page says nothing of it.
    from django.urls import reverse

    authorship = AuthorshipFactory()
    proposal = Proposal.objects.create(
        kind="new",
        score=1.0,
        evidence={"cohesion": 1.0, "members": 1, "pairs": [], "likeliest": likeliest},
        fingerprint=f"hand-{likeliest!r}",
    )
    proposal.authorships.add(authorship)
    client.force_login(curator)
    page = client.get(reverse("admin:curation_proposal_change", args=[proposal.pk]))
    assert page.status_code == 200
    assert "Likeliest person" not in page.content.decode()

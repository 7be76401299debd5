"""Two curators acting on the same researchers at once, on real PostgreSQL sessions.

The guarantee: one wins, the other gets a :class:`~curation.exceptions.CurationError`
whose message names the researcher, proposal or event, and nothing is half-applied.

Each curator runs in its own thread, so on its own database connection. The race is
made real, not simulated: the first curator calls the service inside an outer
``transaction.atomic()`` (the service's own atomic block nests as a savepoint) and
keeps that transaction open, row locks held, until the second curator's service call
is seen waiting on a lock in ``pg_stat_activity``; only then does the first commit.
The second must then act on the committed state: refuse with a conflict, never apply
on the state it would have read before.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection, transaction

from curation import edits, history, services
from curation.exceptions import (
    ALREADY_UNDONE,
    CHANGED,
    GONE,
    NOT_ON_RESEARCHER,
    NOT_PENDING,
    CurationError,
    NothingToUndo,
    ProposalConflict,
    ProposalNotPending,
    ResearcherChanged,
    ResearcherGone,
)
from curation.models import Constraint, CurationEvent, Proposal
from tests.factories import AuthorshipFactory, ResearcherFactory
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db(transaction=True)

# Seconds any thread or wait may take; a deadlock or a lost wake-up fails the test
# instead of hanging it.
TIMEOUT = 30
MUST, CANNOT = Constraint.Kind.MUST_LINK, Constraint.Kind.CANNOT_LINK


# --- running curators on their own connections ---------------------------------


@dataclass
class Curator:
    """One curator's session: the service call and what it returned or raised."""

    name: str
    action: Callable[[], Any]
    result: Any = None
    error: Exception | None = None
    pid: int | None = None
    thread: threading.Thread | None = None

    def outcome(self) -> Any:
        """The service's return value, or its exception raised again here."""
        if self.error is not None:
            raise self.error
        return self.result


def _session(
    curator: Curator,
    *,
    start: threading.Barrier,
    after: threading.Event | None,
    acted: threading.Event | None,
    release: threading.Event | None,
) -> None:
    """Thread body: wait for the go, call the service, hold its locks if asked."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            curator.pid = cursor.fetchone()[0]
        start.wait(TIMEOUT)
        if after is not None and not after.wait(TIMEOUT):
            raise TimeoutError(f"{curator.name}: the curator before never acted")
        with transaction.atomic():
            curator.result = curator.action()
            if acted is not None:
                acted.set()
            # Commit only when told: the locks stay held while the other waits.
            if release is not None and not release.wait(TIMEOUT):
                raise TimeoutError(f"{curator.name}: never released")
    except Exception as exc:  # handed to the main thread, which asserts on it
        curator.error = exc
    finally:
        if acted is not None:
            acted.set()  # never leave the next curator waiting
        connection.close()


def _spawn(
    curator: Curator,
    start: threading.Barrier,
    *,
    after: threading.Event | None = None,
    acted: threading.Event | None = None,
    release: threading.Event | None = None,
) -> None:
    curator.thread = threading.Thread(
        target=_session,
        args=(curator,),
        kwargs={"start": start, "after": after, "acted": acted, "release": release},
        name=curator.name,
        daemon=True,
    )
    curator.thread.start()


def _lock_wait(curator: Curator) -> str:
    """Wait until the curator's connection waits on a lock; return its statement.

    Returns:
        The SQL it is blocked on, or "" if its thread ended without ever waiting.
    """
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if curator.pid is not None:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT wait_event_type, query FROM pg_stat_activity"
                    " WHERE pid = %s",
                    [curator.pid],
                )
                row = cursor.fetchone()
            if row and row[0] == "Lock":
                return row[1]
        if curator.thread is not None and not curator.thread.is_alive():
            return ""
        time.sleep(0.01)
    raise AssertionError(f"{curator.name} neither waited on a lock nor finished")


def _join(*curators: Curator) -> None:
    for c in curators:
        assert c.thread is not None
        c.thread.join(TIMEOUT)
    alive = [c.name for c in curators if c.thread and c.thread.is_alive()]
    assert not alive, f"still running after {TIMEOUT}s (deadlocked?): {alive}"


def _race(first: Curator, second: Curator) -> None:
    """Run both; ``second`` calls its service while ``first`` holds its row locks.

    Asserts that ``second`` really waited on ``first``'s locks, so the race happened.
    """
    start, acted, release = threading.Barrier(2), threading.Event(), threading.Event()
    _spawn(first, start, acted=acted, release=release)
    _spawn(second, start, after=acted)
    try:
        assert acted.wait(TIMEOUT), f"{first.name} never acted"
        assert first.error is None, f"{first.name} failed: {first.error!r}"
        blocked_on = _lock_wait(second)
        assert blocked_on, (
            f"{second.name} never waited for {first.name}'s row locks "
            f"(it {'raised ' + repr(second.error) if second.error else 'succeeded'})"
        )
    finally:
        release.set()
        _join(first, second)


# --- the database state ----------------------------------------------------------


def _held() -> dict[int, list[int]]:
    """``{researcher id: [authorship ids]}`` of every assigned authorship."""
    held: dict[int, list[int]] = {}
    for pk, researcher_id in Authorship.objects.filter(
        researcher__isnull=False
    ).values_list("pk", "researcher_id"):
        held.setdefault(researcher_id, []).append(pk)
    return {r: sorted(ids) for r, ids in held.items()}


def _researchers() -> dict[int, tuple[int | None, bool, int]]:
    """``{id: (merged_into_id, retired, revision)}`` of every researcher."""
    return {
        r.pk: (r.merged_into_id, r.retired, r.revision)
        for r in Researcher.objects.order_by("pk")
    }


def seed_constraints() -> set[tuple[str, int, int | None, int | None, bool]]:
    return set(
        Constraint.objects.values_list(
            "kind", "researcher_id", "authorship_id", "other_researcher_id", "active"
        )
    )


def _events() -> Counter[str]:
    return Counter(CurationEvent.objects.values_list("kind", flat=True))


def _assert_no_authorship_on_a_dead_researcher() -> None:
    stray = Authorship.objects.filter(researcher__isnull=False).exclude(
        researcher__merged_into__isnull=True, researcher__retired=False
    )
    assert list(stray.values_list("pk", "researcher_id")) == []


def _ids(authorships: list[Authorship]) -> list[int]:
    return sorted(a.pk for a in authorships)


def _researcher_with(n: int, given: str) -> tuple[Researcher, list[Authorship]]:
    researcher = ResearcherFactory(display_name=f"{given} Serre")
    authorships = [
        AuthorshipFactory(researcher=researcher, given_name=f"{given}{i}")
        for i in range(n)
    ]
    return researcher, authorships


@pytest.fixture
def curators(curator):
    """Two curators (staff, in the curators group)."""
    return curator, services.curator_ensure(username="cura2", password="pw-cura2")


# --- 1. merge A+B racing merge B+C -------------------------------------------------


@pytest.mark.parametrize("first", ["A+B", "B+C"])
def test_researcher_merge_racing_overlapping_merge_one_wins(curators, first):
    (a, a_auth), (b, b_auth), (c, c_auth) = (
        _researcher_with(2, "Ann"),
        _researcher_with(3, "Ben"),
        _researcher_with(1, "Cal"),
    )
    pairs = {"A+B": [a, b], "B+C": [b, c]}
    second = "B+C" if first == "A+B" else "A+B"
    # Each curator confirms the merge of the researchers as the page showed them
    # (the revisions the admin's confirmation page posts back).
    seen = {r.pk: r.revision for r in (a, b, c)}

    def merge(pair: str, actor):
        expected = {r.pk: seen[r.pk] for r in pairs[pair]}
        return lambda: edits.researcher_merge(
            researchers=pairs[pair], actor=actor, expected_revisions=expected
        )

    winner = Curator(first, merge(first, curators[0]))
    loser = Curator(second, merge(second, curators[1]))

    _race(winner, loser)

    survivor = pairs[first][0]
    assert winner.outcome().pk == survivor.pk
    if first == "A+B":
        # B is merged into A now: the B+C curator is told to act on A instead.
        message = GONE.format(pk=b.pk, how="merged", target=a.pk)
        with pytest.raises(ResearcherGone, match=f"^{re.escape(message)}$"):
            loser.outcome()
        assert _held() == {a.pk: _ids(a_auth + b_auth), c.pk: _ids(c_auth)}
        assert _researchers() == {
            a.pk: (None, False, 1),
            b.pk: (a.pk, False, 1),
            c.pk: (None, False, 0),
        }
    else:
        # B now also holds C's papers, which the A+B curator never saw: refused.
        with pytest.raises(ResearcherChanged, match=rf"researcher {b.pk} changed"):
            loser.outcome()
        assert _held() == {a.pk: _ids(a_auth), b.pk: _ids(b_auth + c_auth)}
        assert _researchers() == {
            a.pk: (None, False, 0),
            b.pk: (None, False, 1),
            c.pk: (b.pk, False, 1),
        }
    moved = b_auth if first == "A+B" else c_auth
    _assert_no_authorship_on_a_dead_researcher()
    assert _events() == Counter({CurationEvent.Kind.MERGED: 1})
    event = CurationEvent.objects.get()
    assert event.actor == curators[0]
    # The survivor's side as the winner merged it, for later runs to leave
    # alone (selectors.curator_merges).
    kept = a_auth if first == "A+B" else b_auth
    assert event.extra == {"survivor": survivor.pk, "kept": _ids(kept)}
    assert sorted(m["authorship"] for m in event.moves) == _ids(moved)
    # Every paper of the merged profile confirmed: those moved in and the
    # survivor's own (edits.confirm_kept).
    assert seed_constraints() == {
        (MUST, survivor.pk, x.pk, None, True) for x in [*moved, *kept]
    }


# --- 2. approving a merge proposal while another curator rejects it -------------------


@pytest.mark.parametrize("first", ["apply", "reject"])
def test_proposal_apply_racing_reject_one_wins(curators, first):
    (a, a_auth), (b, b_auth) = _researcher_with(2, "Ann"), _researcher_with(2, "Ben")
    proposal = Proposal.objects.create(
        kind=Proposal.Kind.MERGE,
        score=0.9,
        model_version="t",
        fingerprint=services.proposal_fingerprint(
            kind="merge", authorship_ids=[], researcher_ids=[a.pk, b.pk]
        ),
        researcher=a,
        other_researcher=b,
        researcher_revisions={str(a.pk): a.revision, str(b.pk): b.revision},
    )
    calls = {
        "apply": lambda actor: services.proposal_apply(proposal=proposal, actor=actor),
        "reject": lambda actor: services.proposal_reject(
            proposal=proposal, actor=actor, reason="not the same person"
        ),
    }
    second = "reject" if first == "apply" else "apply"
    winner = Curator(first, lambda: calls[first](curators[0]))
    loser = Curator(second, lambda: calls[second](curators[1]))

    _race(winner, loser)

    status = Proposal.Status.APPLIED if first == "apply" else Proposal.Status.REJECTED
    assert winner.outcome().status == status
    message = NOT_PENDING.format(pk=proposal.pk, status=status)
    with pytest.raises(ProposalNotPending, match=f"^{re.escape(message)}$"):
        loser.outcome()
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by) == (status, curators[0])
    _assert_no_authorship_on_a_dead_researcher()
    if first == "apply":
        assert _held() == {a.pk: _ids(a_auth + b_auth)}
        assert _researchers() == {a.pk: (None, False, 1), b.pk: (a.pk, False, 1)}
        assert _events() == Counter({CurationEvent.Kind.PROPOSAL_APPLIED: 1})
        # The approved merge confirms both sides' papers on the survivor.
        assert seed_constraints() == {
            (MUST, a.pk, x.pk, None, True) for x in [*a_auth, *b_auth]
        }
    else:
        assert _held() == {a.pk: _ids(a_auth), b.pk: _ids(b_auth)}
        assert _researchers() == {a.pk: (None, False, 0), b.pk: (None, False, 0)}
        assert _events() == Counter({CurationEvent.Kind.PROPOSAL_REJECTED: 1})
        assert seed_constraints() == {(CANNOT, a.pk, None, b.pk, True)}
    event = CurationEvent.objects.get()
    assert (event.proposal_id, event.actor) == (proposal.pk, curators[0])


# --- 3. splitting a researcher while another curator moves one of its authorships -----


@dataclass
class SplitMove:
    """A source researcher with three authorships and a move target with one.

    The split curator splits ``moving`` off ``source``; the move curator moves the
    same ``moving`` to ``target``. ``target`` has the lower id, so the move locks it
    before ``source``.
    """

    target: Researcher
    target_held: list[Authorship]
    source: Researcher
    moving: Authorship
    kept: list[Authorship]

    @classmethod
    def create(cls) -> SplitMove:
        target, target_held = _researcher_with(1, "Tom")
        source, (moving, *kept) = _researcher_with(3, "Sam")
        return cls(target, target_held, source, moving, kept)

    def curators(self, split_actor, move_actor) -> tuple[Curator, Curator]:
        """The split curator and the move curator, each acting on what they saw."""
        splitter = Curator(
            "split",
            lambda: edits.researcher_split(
                researcher=self.source,
                authorship_ids=[self.moving.pk],
                actor=split_actor,
            ),
        )
        mover = Curator(
            "move",
            lambda: edits.authorship_move(
                authorship=self.moving,
                to=self.target,
                actor=move_actor,
                expected_researcher=self.source.pk,  # where the curator saw it
            ),
        )
        return splitter, mover

    def assert_split_won(self, new: Researcher, *, target_revision: int) -> None:
        assert _held() == {
            self.target.pk: _ids(self.target_held),
            self.source.pk: _ids(self.kept),
            new.pk: [self.moving.pk],
        }
        assert _researchers() == {
            self.target.pk: (None, False, target_revision),
            self.source.pk: (None, False, 1),
            new.pk: (None, False, 1),
        }
        assert seed_constraints() == {
            (MUST, new.pk, self.moving.pk, None, True),
            (CANNOT, self.source.pk, self.moving.pk, None, True),
            (CANNOT, self.source.pk, None, new.pk, True),
        }
        assert _events()[CurationEvent.Kind.SPLIT] == 1
        assert _events()[CurationEvent.Kind.MOVED] == 0
        _assert_no_authorship_on_a_dead_researcher()

    def assert_move_won(self, event: CurationEvent, *, target_revision: int) -> None:
        assert event.kind == CurationEvent.Kind.MOVED
        assert event.moves == [
            {
                "authorship": self.moving.pk,
                "before": self.source.pk,
                "after": self.target.pk,
            }
        ]
        assert _held() == {
            self.target.pk: _ids([*self.target_held, self.moving]),
            self.source.pk: _ids(self.kept),
        }
        # No researcher left behind by the split that lost.
        assert _researchers() == {
            self.target.pk: (None, False, target_revision + 1),
            self.source.pk: (None, False, 1),
        }
        assert seed_constraints() == {
            (MUST, self.target.pk, self.moving.pk, None, True),
            (CANNOT, self.source.pk, self.moving.pk, None, True),
        }
        assert _events()[CurationEvent.Kind.MOVED] == 1
        assert _events()[CurationEvent.Kind.SPLIT] == 0
        _assert_no_authorship_on_a_dead_researcher()


@pytest.mark.parametrize("first", ["split", "move"])
def test_researcher_split_racing_authorship_move_one_wins(curators, first):
    case = SplitMove.create()
    splitter, mover = case.curators(*curators)

    if first == "split":
        _race(splitter, mover)
        case.assert_split_won(splitter.outcome(), target_revision=0)
        message = CHANGED.format(
            pk=case.source.pk, field=f"authorship {case.moving.pk} moved meanwhile"
        )
        with pytest.raises(ResearcherChanged, match=f"^{re.escape(message)}$"):
            mover.outcome()
    else:
        _race(mover, splitter)
        case.assert_move_won(mover.outcome(), target_revision=0)
        message = NOT_ON_RESEARCHER.format(ids=[case.moving.pk], pk=case.source.pk)
        with pytest.raises(ProposalConflict, match=f"^{re.escape(message)}$"):
            splitter.outcome()


def test_researcher_split_interleaved_with_authorship_move_one_wins(curators):
    """A move waiting on a third curator's lock while a split runs.

    A third curator locking the move's target pins the interleaving that used to
    deadlock (the move took the authorship's lock before the researchers', the
    split the other way round; it also happened by timing alone, 19 of 40 races).
    With one lock order one of the two must get a clear conflict, never a
    database deadlock error.
    """
    case = SplitMove.create()
    splitter, mover = case.curators(*curators)
    editor = Curator(
        "lock target",
        lambda: edits.researcher_set_locked(
            researcher=case.target, locked=True, actor=curators[0]
        ),
    )
    start = threading.Barrier(3)
    edited, release, move_waits = (threading.Event() for _ in range(3))
    _spawn(editor, start, acted=edited, release=release)
    _spawn(mover, start, after=edited)
    _spawn(splitter, start, after=move_waits)
    try:
        assert edited.wait(TIMEOUT), "the editor never acted"
        assert editor.error is None, repr(editor.error)
        assert _lock_wait(mover), f"the move never waited: {mover.error!r}"
        move_waits.set()
        # With one lock order everywhere (researchers by id, then authorships) the
        # move may hold nothing while it waits, so the split either waits for it
        # or runs straight through; _lock_wait returns once either has happened.
        _lock_wait(splitter)
    finally:
        move_waits.set()
        release.set()
        _join(editor, mover, splitter)

    assert editor.outcome().locked is True
    failed = [c for c in (splitter, mover) if c.error is not None]
    assert len(failed) == 1, [(c.name, repr(c.error)) for c in (splitter, mover)]
    loser = failed[0]
    # Whoever won, nothing of the loser is left (the target's lock made revision 1).
    if loser is mover:
        case.assert_split_won(splitter.outcome(), target_revision=1)
        expected = ResearcherChanged
    else:
        case.assert_move_won(mover.outcome(), target_revision=1)
        expected = ProposalConflict
    assert isinstance(loser.error, CurationError), (
        f"the {loser.name} failed with {loser.error!r}, not a CurationError"
    )
    with pytest.raises(expected, match=rf"researcher {case.source.pk}\b"):
        loser.outcome()


# --- 4. two undos of the same event ---------------------------------------------------


def test_event_undo_racing_same_undo_one_wins(curators):
    (a, a_auth), (b, b_auth) = _researcher_with(2, "Ann"), _researcher_with(2, "Ben")
    edits.researcher_merge(researchers=[a, b], actor=curators[0])
    merged = CurationEvent.objects.get(kind=CurationEvent.Kind.MERGED)
    winner = Curator(
        "undo 1", lambda: history.event_undo(event=merged, actor=curators[0])
    )
    loser = Curator(
        "undo 2", lambda: history.event_undo(event=merged, actor=curators[1])
    )

    _race(winner, loser)

    undone = winner.outcome()
    assert (undone.kind, undone.undoes_id) == (CurationEvent.Kind.UNDONE, merged.pk)
    message = ALREADY_UNDONE.format(pk=merged.pk, by=undone.pk)
    with pytest.raises(NothingToUndo, match=f"^{re.escape(message)}$"):
        loser.outcome()
    assert _held() == {a.pk: _ids(a_auth), b.pk: _ids(b_auth)}
    assert _researchers() == {a.pk: (None, False, 2), b.pk: (None, False, 2)}
    assert _events() == Counter(
        {CurationEvent.Kind.MERGED: 1, CurationEvent.Kind.UNDONE: 1}
    )
    # The one undo recorded that the two are not one person, once.
    # (The merge confirmed both sides' papers on the survivor; the undo
    # retired all of it.)
    assert seed_constraints() == {
        (MUST, a.pk, x.pk, None, False) for x in [*a_auth, *b_auth]
    } | {(CANNOT, a.pk, None, b.pk, True)}
    assert (
        CurationEvent.objects.get(kind=CurationEvent.Kind.UNDONE).actor == (curators[0])
    )
    _assert_no_authorship_on_a_dead_researcher()

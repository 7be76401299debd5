"""Random sequences of curator edits and undos keep the curation invariants.

A hypothesis state machine builds a small world (4 to 6 researchers, 15
authorships on 15 papers, some unassigned, some researchers with an ORCID iD or
locked) and runs up to 15 random curator actions on it: ``researcher_merge``,
``researcher_split``, ``authorship_move``, ``authorship_detach``,
``researcher_set_locked``, ``researcher_update`` and ``event_undo`` of any earlier
event (undos included). The machine keeps its own model of the expected state (the
researcher of every authorship; ``merged_into_id``, ``retired``, ``locked``,
``orcid`` and ``display_name`` of every researcher) and of every event's before and
after, and checks after every step:

1. every assigned authorship is on a live researcher (not merged away, not
   retired); a foreign key cannot point at two researchers, so "at most one" holds
   by construction;
2. the authorship ids are exactly the ones created (none lost, none duplicated),
   and the database equals the model exactly, so the number assigned changes only
   where the model moves an authorship from or to "unassigned" (a detach, a move
   of an unassigned authorship, the undo of either);
3. an undo restores what the undone event changed (and undoing an undo applies
   it again); undoing the latest event restores the snapshot taken before it, and
   a researcher that event created is retired and holds nothing;
4. no authorship has an active must-link and an active cannot-link to the same
   researcher.

An action the model refuses must raise the predicted ``CurationError`` subclass,
and every refused action must leave the database exactly as it was (researchers,
assignments, constraints and events compared in full). An undo whose result would
break invariant 1 or the uniqueness of ORCID iDs must be refused.

Database isolation: the test function runs inside pytest-django's per-test
transaction. Each hypothesis example builds a new machine, whose ``__init__`` opens
a savepoint; ``teardown`` (which hypothesis calls in a ``finally``, also when the
example fails) rolls back to it, so every example starts from the same empty tables
plus the curator. The services' own ``transaction.atomic`` blocks nest inside it as
savepoints, so a refused service rolls back only its own work. ``on_commit``
callbacks (cache invalidation, notifications) never run, because the outer
transaction never commits. ``database=None`` keeps hypothesis from writing a
``.hypothesis/`` directory into the checkout.

Runtime: 35 examples of up to 15 steps take about 10 to 20 seconds. The shrink
phase is off: shrinking a stateful failure against the database ran for over five
minutes. A failing example is printed unshrunk, with a note per step that names
the call in the world's labels (researchers ``r0``..., authorships ``a0``...,
events ``e0``...), what the model predicted and what happened.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, Phase, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from curation import edits, history, names
from curation.exceptions import (
    CurationError,
    InvalidChange,
    NothingToUndo,
    ResearcherConflict,
    ResearcherGone,
    UndoConflict,
)
from curation.models import Constraint, CurationEvent
from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from wovepaper.models import Authorship, Researcher

TRACKED = ("merged_into_id", "retired", "locked", "orcid", "display_name")
ORCIDS = ("0000-0002-1825-0097", "0000-0001-5109-3700", "0000-0002-1694-233X")
# What a curator may type as an ORCID iD, and the stored form (None: invalid).
ORCID_INPUTS: dict[str | None, str | None] = {
    **{o: o for o in ORCIDS},
    "https://orcid.org/0000-0001-5109-3700": "0000-0001-5109-3700",
    "0000-0002-1825-0098": None,  # wrong check digit
}
CLEARED = ""  # sentinel key: the update removes the iD (passes None)
DISPLAY_NAMES = ("Jean-Pierre Serre", "J.-P.  Serre", "John Tate", "Serre", "   ")
GIVEN = ("J.", "Jean", "J.-P.", "Jean-Pierre", "Jean Paul")
FAMILY = ("Serre", "Tate", "Sere")
# One paper per authorship: the rule that one researcher never holds two slots
# of one paper is tested on its own (tests/curation/test_same_paper.py).
N_PAPERS, N_AUTHORSHIPS = 15, 15
MUST, CANNOT = Constraint.Kind.MUST_LINK, Constraint.Kind.CANNOT_LINK


# --- the model -----------------------------------------------------------------


@dataclass
class World:
    """The curated state: tracked researcher fields and every assignment.

    ``researchers`` is ``{researcher id: {field: value}}`` over :data:`TRACKED`;
    ``assignment`` is ``{authorship id: researcher id or None}``.
    """

    researchers: dict[int, dict[str, Any]]
    assignment: dict[int, int | None]

    def copy(self) -> World:
        """Return a deep copy."""
        return World(copy.deepcopy(self.researchers), dict(self.assignment))

    def live(self, pk: int) -> bool:
        """Return whether the researcher is neither merged away nor retired."""
        r = self.researchers[pk]
        return r["merged_into_id"] is None and not r["retired"]

    def held(self, pk: int) -> list[int]:
        """Return the ids of the authorships on researcher ``pk``, ascending."""
        return sorted(a for a, r in self.assignment.items() if r == pk)

    def retire_if_emptied(self, pk: int | None) -> None:
        """A curator's move or detach that leaves live researcher ``pk``
        holding nothing retires it and frees its ORCID iD
        (``curation.edits.retire_emptied``; the world has no claimed
        researchers and no claims)."""
        if pk is not None and self.live(pk) and not self.held(pk):
            self.researchers[pk]["retired"] = True
            self.researchers[pk]["orcid"] = None

    def orcid_owner(self, orcid: str, *, besides: int) -> int | None:
        """Return the researcher other than ``besides`` holding ``orcid``, if any."""
        for pk, r in self.researchers.items():
            if pk != besides and r["orcid"] == orcid:
                return pk
        return None

    def problems(self) -> list[str]:
        """Return what breaks invariant 1 or ORCID uniqueness (empty if valid)."""
        found = [
            f"authorship {a} is on researcher {r}, which is not live"
            for a, r in sorted(self.assignment.items())
            if r is not None and not self.live(r)
        ]
        orcids = [r["orcid"] for r in self.researchers.values() if r["orcid"]]
        found += [f"ORCID {o} held twice" for o in set(orcids) if orcids.count(o) > 1]
        return found


@dataclass
class Diff:
    """What one event changed: ``moves`` ``{authorship: (before, after)}`` and
    ``fields`` ``{(researcher, field): (before, after)}``."""

    moves: dict[int, tuple[int | None, int | None]]
    fields: dict[tuple[int, str], tuple[Any, Any]]

    def __bool__(self) -> bool:
        return bool(self.moves or self.fields)

    def inverse(self) -> Diff:
        """Return the diff that undoes this one."""
        return Diff(
            {a: (after, before) for a, (before, after) in self.moves.items()},
            {k: (after, before) for k, (before, after) in self.fields.items()},
        )


def diff_of(before: World, after: World) -> Diff:
    """The changes from ``before`` to ``after``.

    A researcher absent from ``before`` was created: it counts as having been
    retired (the services record a creation as ``retired`` True to False),
    and with no ORCID iD (a split's new researcher: this world's authorships
    carry none), so an iD handed to it is a change its undo takes back.
    """
    moves = {
        a: (before.assignment[a], r)
        for a, r in after.assignment.items()
        if before.assignment[a] != r
    }
    fields = {}
    for pk, now in after.researchers.items():
        then = before.researchers.get(pk, {**now, "retired": True, "orcid": None})
        for f in TRACKED:
            if then[f] != now[f]:
                fields[(pk, f)] = (then[f], now[f])
    return Diff(moves, fields)


def diff_apply(world: World, diff: Diff) -> World:
    """Return ``world`` with ``diff``'s after values."""
    result = world.copy()
    for a, (_, after) in diff.moves.items():
        result.assignment[a] = after
    for (pk, f), (_, after) in diff.fields.items():
        result.researchers[pk][f] = after
    return result


@dataclass
class Recorded:
    """One event the machine caused, with the database read before and after it."""

    pk: int
    label: str
    kind: str
    diff: Diff
    before: World
    after: World
    undone: bool = field(default=False)


# --- reading the database --------------------------------------------------------


def read_world() -> World:
    """The tracked state as stored now."""
    return World(
        {
            row.pop("pk"): row
            for row in Researcher.objects.order_by("pk").values("pk", *TRACKED)
        },
        dict(Authorship.objects.values_list("pk", "researcher_id")),
    )


def full_snapshot() -> dict[str, list]:
    """Every curated row in full, to prove that a refused action wrote nothing."""
    return {
        "researchers": list(Researcher.objects.order_by("pk").values()),
        "authorships": list(
            Authorship.objects.order_by("pk").values_list("pk", "researcher_id")
        ),
        "constraints": list(Constraint.objects.order_by("pk").values()),
        "events": list(CurationEvent.objects.order_by("pk").values()),
    }


def last_event_pk() -> int:
    """The newest event id, or 0."""
    return (
        CurationEvent.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    )


def check_database_invariants(authorship_ids: list[int]) -> None:
    """Invariants 1, 2 (no authorship lost or duplicated) and 4 on the database."""
    ids = list(Authorship.objects.order_by("pk").values_list("pk", flat=True))
    assert ids == authorship_ids, "authorships were lost or duplicated"
    world = read_world()
    assert world.problems() == [], "an authorship is on a researcher that is not live"
    links = Constraint.objects.filter(active=True, authorship__isnull=False)
    pairs = {
        (k, a, r) for k, a, r in links.values_list("kind", "authorship", "researcher")
    }
    both = sorted((a, r) for k, a, r in pairs if k == MUST and (CANNOT, a, r) in pairs)
    assert both == [], (
        f"active must-link and cannot-link on the same (authorship, researcher): {both}"
    )


class Refused(Exception):
    """Internal: the action was refused as the model predicted."""


# --- the state machine ---------------------------------------------------------


class CuratorActions(RuleBasedStateMachine):
    """Curator actions on a small world, checked against a model after every step.

    Args:
        actor: the curator who acts.
    """

    def __init__(self, actor: Any) -> None:
        super().__init__()
        self.actor = actor
        self.savepoint = transaction.savepoint()
        self.model = World({}, {})
        self.authorship_ids: list[int] = []
        self.printed: dict[int, tuple[str, str]] = {}  # authorship: (given, family)
        self.labels: dict[int, str] = {}  # researcher id: "r0", "r1", ...
        # (merged-away researcher, survivor): the authorships its latest merge
        # moving any moved, and the ORCID iD it handed over (or None).
        self.brought: dict[tuple[int, int], tuple[set[int], str | None]] = {}
        self.events: list[Recorded] = []
        self._before = World({}, {})
        self._last = 0

    def teardown(self) -> None:
        transaction.savepoint_rollback(self.savepoint)

    # --- helpers ---------------------------------------------------------------

    def _r(self, pk: int | None) -> str:
        return "None" if pk is None else self.labels.get(pk, f"r#{pk}")

    def _a(self, pk: int) -> str:
        return f"a{self.authorship_ids.index(pk)}"

    def _draw_researcher(self, data: st.DataObject) -> int:
        """Usually a live researcher; sometimes any (to exercise refusals)."""
        everyone = sorted(self.model.researchers)
        live = [pk for pk in everyone if self.model.live(pk)]
        pool = (
            live
            if live and data.draw(st.integers(0, 3), label="live only")
            else everyone
        )
        return data.draw(st.sampled_from(pool), label="researcher")

    def _attempt(
        self,
        description: str,
        call: Callable[[], Any],
        refusal: type[CurationError] | None,
    ) -> Any:
        """Run a service; check a refusal changed nothing and was predicted.

        Returns:
            What the service returned.

        Raises:
            Refused: it raised the ``CurationError`` the model predicted.
        """
        note(description)
        note(f"  model: {refusal.__name__ + ' refuses' if refusal else 'succeeds'}")
        self._before = read_world()
        self._last = last_event_pk()
        before = full_snapshot()
        try:
            result = call()
        except CurationError as exc:
            refused: CurationError | None = exc
        else:
            refused = None
        if refused is not None:
            assert full_snapshot() == before, (
                f"{description} was refused ({refused!r}) but changed the database"
            )
            assert refusal is not None, f"{description} was refused: {refused!r}"
            assert isinstance(refused, refusal), (
                f"{description} was refused with {refused!r}, not {refusal.__name__}"
            )
            note(f"  refused: {refused!r}")
            raise Refused from refused
        check_database_invariants(self.authorship_ids)
        assert refusal is None, (
            f"{description} succeeded; the model expected {refusal.__name__}"
        )
        return result

    def _record(
        self,
        description: str,
        kind: str,
        expected: World,
        undoes: Recorded | None = None,
    ) -> Recorded | None:
        """Check the event the action wrote and adopt ``expected`` as the model.

        Returns:
            The recorded event, or None when the action changed nothing (and
            wrote no event).
        """
        diff = diff_of(self.model, expected)
        new = list(CurationEvent.objects.filter(pk__gt=self._last).order_by("pk"))
        self.model = expected
        if not diff:
            assert new == [], f"{description} changed nothing but wrote {new}"
            return None
        assert [e.kind for e in new] == [kind], f"{description} wrote {new}"
        event = new[0]
        assert event.actor_id == self.actor.pk
        assert event.undoes_id == (undoes.pk if undoes else None)
        recorded = Recorded(
            pk=event.pk,
            label=f"e{len(self.events)}",
            kind=kind,
            diff=diff,
            before=self._before,
            after=read_world(),
        )
        self.events.append(recorded)
        note(f"  -> {recorded.label} ({kind})")
        return recorded

    # --- the world -------------------------------------------------------------

    @initialize(
        n=st.integers(4, 6),
        owners=st.lists(
            st.none() | st.integers(0, 5),
            min_size=N_AUTHORSHIPS,
            max_size=N_AUTHORSHIPS,
        ),
        orcids=st.lists(st.none() | st.sampled_from(ORCIDS), min_size=6, max_size=6),
        locked=st.lists(st.booleans(), min_size=6, max_size=6),
    )
    def world(
        self,
        n: int,
        owners: list[int | None],
        orcids: list[str | None],
        locked: list[bool],
    ) -> None:
        researchers = []
        for i in range(n):
            orcid = orcids[i] if orcids[i] not in orcids[:i] else None
            r = ResearcherFactory(
                display_name=f"Researcher {i}", orcid=orcid, locked=locked[i]
            )
            researchers.append(r)
            self.labels[r.pk] = f"r{i}"
            self.model.researchers[r.pk] = {
                "merged_into_id": None,
                "retired": False,
                "locked": locked[i],
                "orcid": orcid,
                "display_name": f"Researcher {i}",
            }
        papers = [PaperFactory() for _ in range(N_PAPERS)]
        for i, owner in enumerate(owners):
            given, family = GIVEN[i % len(GIVEN)], FAMILY[i % len(FAMILY)]
            a = AuthorshipFactory(
                paper=papers[i % N_PAPERS],
                position=i // N_PAPERS + 1,
                given_name=given,
                family_name=family,
                researcher=None if owner is None else researchers[owner % n],
            )
            self.authorship_ids.append(a.pk)
            self.printed[a.pk] = (given, family)
            self.model.assignment[a.pk] = a.researcher_id
        note(
            "world: "
            + ", ".join(
                f"{self._r(pk)}(orcid={r['orcid']}, locked={r['locked']})"
                for pk, r in self.model.researchers.items()
            )
            + "; "
            + ", ".join(
                f"{self._a(a)}->{self._r(r)}" for a, r in self.model.assignment.items()
            )
        )

    # --- the actions -----------------------------------------------------------

    @precondition(lambda self: sum(map(self.model.live, self.model.researchers)) >= 2)
    @rule(data=st.data())
    def merge(self, data: st.DataObject) -> None:
        everyone = sorted(self.model.researchers)
        live = [pk for pk in everyone if self.model.live(pk)]
        pool = live if data.draw(st.integers(0, 3), label="live only") else everyone
        picked = data.draw(
            st.lists(st.sampled_from(pool), min_size=2, max_size=3, unique=True),
            label="researchers",
        )
        ids = sorted(picked)
        description = f"researcher_merge(researchers={[self._r(pk) for pk in picked]})"
        orcids = {self.model.researchers[pk]["orcid"] for pk in ids} - {None}
        refusal: type[CurationError] | None = None
        if not all(map(self.model.live, ids)):
            refusal = ResearcherGone
        elif len(orcids) > 1:
            refusal = ResearcherConflict
        expected = self.model.copy()
        survivor = expected.researchers[ids[0]]
        for loser_pk in ids[1:]:
            loser = expected.researchers[loser_pk]
            for a in expected.held(loser_pk):
                expected.assignment[a] = ids[0]
            if loser["orcid"] and not survivor["orcid"]:
                survivor["orcid"], loser["orcid"] = loser["orcid"], None
            if loser["locked"]:
                survivor["locked"] = True  # a curator's lock follows the papers
            loser["merged_into_id"] = ids[0]
        try:
            result = self._attempt(
                description,
                lambda: edits.researcher_merge(
                    researchers=[Researcher.objects.get(pk=pk) for pk in picked],
                    actor=self.actor,
                ),
                refusal,
            )
        except Refused:
            return
        assert result.pk == ids[0], "the survivor is the lowest id"
        for pk in ids[1:]:
            if self.model.held(pk):
                orcid = self.model.researchers[pk]["orcid"]
                handed = (
                    orcid if orcid and not expected.researchers[pk]["orcid"] else None
                )
                self.brought[(pk, ids[0])] = (set(self.model.held(pk)), handed)
        self._record(description, CurationEvent.Kind.MERGED, expected)

    @precondition(
        lambda self: any(r is not None for r in self.model.assignment.values())
    )
    @rule(data=st.data())
    def split(self, data: st.DataObject) -> None:
        holders = sorted({r for r in self.model.assignment.values() if r is not None})
        source = data.draw(st.sampled_from(holders), label="source")
        held = self.model.held(source)
        moving = data.draw(
            st.lists(
                st.sampled_from(held), min_size=1, max_size=len(held), unique=True
            ),
            label="authorships",
        )
        description = (
            f"researcher_split(researcher={self._r(source)}, "
            f"authorship_ids={[self._a(a) for a in moving]})"
        )
        refusal = InvalidChange if len(moving) == len(held) else None
        try:
            new = self._attempt(
                description,
                lambda: edits.researcher_split(
                    researcher=Researcher.objects.get(pk=source),
                    authorship_ids=moving,
                    actor=self.actor,
                ),
                refusal,
            )
        except Refused:
            return
        assert new.pk not in self.model.researchers
        self.labels[new.pk] = f"r{len(self.labels)}"
        note(f"  new researcher {self._r(new.pk)}")
        best = max(moving, key=lambda a: (len(self.printed[a][0].replace(".", "")), -a))
        expected = self.model.copy()
        expected.researchers[new.pk] = {
            "merged_into_id": None,
            "retired": False,
            "locked": False,
            "orcid": None,  # the authorships carry no iD
            "display_name": " ".join(self.printed[best]),
        }
        for a in moving:
            expected.assignment[a] = new.pk
        # The source keeps its name unless the person it names left with the
        # moved part; then it is named after the fullest name it still prints.
        shown = self.model.researchers[source]["display_name"]
        staying = [a for a in held if a not in moving]
        if names.display_name_fits(
            shown, [self.printed[a] for a in moving]
        ) and not names.display_name_fits(shown, [self.printed[a] for a in staying]):
            fullest = max(
                staying, key=lambda a: (len(self.printed[a][0].replace(".", "")), -a)
            )
            expected.researchers[source] = {
                **expected.researchers[source],
                "display_name": " ".join(self.printed[fullest]),
            }
        self._merged_in_follow(expected, source, new.pk, set(moving), set(staying))
        self._record(description, CurationEvent.Kind.SPLIT, expected)

    def _renamed_after_papers(self, expected, source: int | None, leaving: int) -> None:
        """A profile named after its papers keeps a name they print
        (curation.edits.renames): the one ``leaving`` leaves, when its name
        fit what it held and fits none of what stays, takes the fullest name
        of those."""
        if source is None:
            return
        shown = self.model.researchers[source]["display_name"]
        held = self.model.held(source)
        staying = [a for a in held if a != leaving]
        if (
            staying
            and names.display_name_fits(shown, [self.printed[a] for a in held])
            and not names.display_name_fits(shown, [self.printed[a] for a in staying])
        ):
            fullest = max(
                staying, key=lambda a: (len(self.printed[a][0].replace(".", "")), -a)
            )
            expected.researchers[source] = {
                **expected.researchers[source],
                "display_name": " ".join(self.printed[fullest]),
            }

    @rule(data=st.data())
    def move(self, data: st.DataObject) -> None:
        a = data.draw(st.sampled_from(self.authorship_ids), label="authorship")
        to = self._draw_researcher(data)
        old = self.model.assignment[a]
        description = f"authorship_move(authorship={self._a(a)}, to={self._r(to)})"
        refusal: type[CurationError] | None = None
        if old == to:
            refusal = InvalidChange
        elif not self.model.live(to):
            refusal = ResearcherGone
        expected = self.model.copy()
        expected.assignment[a] = to
        expected.retire_if_emptied(old)
        self._renamed_after_papers(expected, old, a)
        try:
            self._attempt(
                description,
                lambda: edits.authorship_move(
                    authorship=Authorship.objects.get(pk=a),
                    to=Researcher.objects.get(pk=to),
                    actor=self.actor,
                ),
                refusal,
            )
        except Refused:
            return
        self._record(description, CurationEvent.Kind.MOVED, expected)

    @rule(data=st.data())
    def detach(self, data: st.DataObject) -> None:
        a = data.draw(st.sampled_from(self.authorship_ids), label="authorship")
        description = f"authorship_detach(authorship={self._a(a)})"
        refusal = InvalidChange if self.model.assignment[a] is None else None
        expected = self.model.copy()
        expected.assignment[a] = None
        expected.retire_if_emptied(self.model.assignment[a])
        self._renamed_after_papers(expected, self.model.assignment[a], a)
        try:
            self._attempt(
                description,
                lambda: edits.authorship_detach(
                    authorship=Authorship.objects.get(pk=a), actor=self.actor
                ),
                refusal,
            )
        except Refused:
            return
        self._record(description, CurationEvent.Kind.DETACHED, expected)

    @rule(data=st.data(), locked=st.booleans())
    def set_locked(self, data: st.DataObject, locked: bool) -> None:
        pk = self._draw_researcher(data)
        description = (
            f"researcher_set_locked(researcher={self._r(pk)}, locked={locked})"
        )
        refusal: type[CurationError] | None = None
        if not self.model.live(pk):
            refusal = ResearcherGone
        elif self.model.researchers[pk]["locked"] == locked:
            refusal = InvalidChange
        expected = self.model.copy()
        expected.researchers[pk]["locked"] = locked
        try:
            self._attempt(
                description,
                lambda: edits.researcher_set_locked(
                    researcher=Researcher.objects.get(pk=pk),
                    locked=locked,
                    actor=self.actor,
                ),
                refusal,
            )
        except Refused:
            return
        kind = CurationEvent.Kind.LOCKED if locked else CurationEvent.Kind.UNLOCKED
        self._record(description, kind, expected)

    @rule(
        data=st.data(),
        display_name=st.none() | st.sampled_from(DISPLAY_NAMES),
        orcid=st.none() | st.sampled_from([CLEARED, *ORCID_INPUTS]),
    )
    def update(
        self, data: st.DataObject, display_name: str | None, orcid: str | None
    ) -> None:
        pk = self._draw_researcher(data)
        changes: dict[str, str | None] = {}
        if display_name is not None:
            changes["display_name"] = display_name
        if orcid is not None:
            changes["orcid"] = orcid or None
        if not changes:
            changes["display_name"] = DISPLAY_NAMES[0]
        description = f"researcher_update(researcher={self._r(pk)}, changes={changes})"
        refusal: type[CurationError] | None = None
        expected = self.model.copy()
        if not self.model.live(pk):
            refusal = ResearcherGone
        for f, value in changes.items():
            if refusal:
                break
            if f == "display_name":
                name = " ".join((value or "").split())
                if not name:
                    refusal = InvalidChange
                expected.researchers[pk][f] = name
            elif value is None:
                expected.researchers[pk][f] = None
            elif ORCID_INPUTS[value] is None:
                refusal = InvalidChange
            elif self.model.orcid_owner(ORCID_INPUTS[value], besides=pk):
                refusal = ResearcherConflict
            else:
                expected.researchers[pk][f] = ORCID_INPUTS[value]
        try:
            self._attempt(
                description,
                lambda: edits.researcher_update(
                    researcher=Researcher.objects.get(pk=pk),
                    changes=changes,
                    actor=self.actor,
                ),
                refusal,
            )
        except Refused:
            return
        self._record(description, CurationEvent.Kind.EDITED, expected)

    def _merged_in_follow(
        self, expected: World, source: int, new: int, moving: set, staying: set
    ) -> None:
        """The model of edits._merged_in_follow: a researcher merged into the
        source (along a chain too) whose own authorships mostly leave leads
        to the new researcher, with the ORCID iD its merge handed over; one
        whose own mostly stay leads to the source."""
        parent = {
            pk: f["merged_into_id"]
            for pk, f in self.model.researchers.items()
            if f["merged_into_id"] is not None
        }
        tree: set[int] = set()
        level = {source}
        while level:
            level = {pk for pk, up in parent.items() if up in level} - tree
            tree |= level
        merges = {pk: self.brought.get((pk, parent[pk]), (set(), None)) for pk in tree}
        below: dict[int, set[int]] = {}
        for pk in tree:
            below.setdefault(parent[pk], set()).update(merges[pk][0])
        way: dict[int, int | None] = {}
        for pk in tree:
            own = merges[pk][0] - below.get(pk, set())
            gone, kept = len(own & moving), len(own & staying)
            way[pk] = new if gone > kept else source if kept > gone else None

        def leads(pk: int) -> int:
            while pk != source and way.get(pk) is None:
                pk = parent[pk]
            return source if pk == source else way[pk]

        for pk in tree:
            if way[pk] is not None and leads(parent[pk]) != way[pk]:
                expected.researchers[pk] = {
                    **expected.researchers[pk],
                    "merged_into_id": way[pk],
                }
        for pk in sorted(tree):
            handed = merges[pk][1]
            if (
                way[pk] == new
                and handed
                and expected.researchers[source]["orcid"] == handed
                and not expected.researchers[new]["orcid"]
            ):
                expected.researchers[source]["orcid"] = None
                expected.researchers[new]["orcid"] = handed

    @precondition(lambda self: self.events)
    @rule(data=st.data())
    def undo(self, data: st.DataObject) -> None:
        target = data.draw(st.sampled_from(self.events), label="event")
        latest = target is self.events[-1]
        description = f"event_undo(event={target.label} [{target.kind}])"
        refusal: type[CurationError] | None = None
        conflicts = [
            a
            for a, (_, after) in target.diff.moves.items()
            if self.model.assignment[a] != after
        ] + [
            k
            for k, (_, after) in target.diff.fields.items()
            if self.model.researchers[k[0]][k[1]] != after
        ]
        expected = diff_apply(self.model, target.diff.inverse())
        if target.undone:
            refusal = NothingToUndo
        elif conflicts:
            refusal = UndoConflict
        elif expected.problems():
            # Restoring would put an authorship on a dead researcher or give two
            # researchers one iD: a later change depends on the event.
            note(f"  model: restoring would break {expected.problems()}")
            refusal = CurationError
        try:
            self._attempt(
                description,
                lambda: history.event_undo(
                    event=CurationEvent.objects.get(pk=target.pk), actor=self.actor
                ),
                refusal,
            )
        except Refused:
            return
        self._record(description, CurationEvent.Kind.UNDONE, expected, undoes=target)
        target.undone = True
        if latest:
            # Undoing the latest event restores the snapshot taken just before it.
            now = read_world()
            assert now.assignment == target.before.assignment
            for pk, fields in now.researchers.items():
                if pk in target.before.researchers:
                    assert fields == target.before.researchers[pk], self._r(pk)
                else:
                    assert fields["retired"], f"{self._r(pk)} is not retired again"
                    assert not now.held(pk), f"{self._r(pk)} still holds authorships"

    # --- after every step ------------------------------------------------------

    @invariant()
    def database_matches_model(self) -> None:
        check_database_invariants(self.authorship_ids)
        now = read_world()
        for a in self.authorship_ids:
            assert now.assignment[a] == self.model.assignment[a], (
                f"{self._a(a)} is on {self._r(now.assignment[a])}, "
                f"expected {self._r(self.model.assignment[a])}"
            )
        assert now.researchers == self.model.researchers
        assigned = sum(r is not None for r in now.assignment.values())
        assert assigned == sum(r is not None for r in self.model.assignment.values())


@pytest.mark.django_db
def test_curation_invariants_hold_under_random_actions(curator):
    """Merges, splits, moves, detaches, locks, edits and undos keep 1-4 true."""
    run_state_machine_as_test(
        lambda: CuratorActions(curator),
        settings=settings(
            max_examples=35,
            stateful_step_count=15,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )

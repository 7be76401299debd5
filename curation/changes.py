"""The one recorder of curated state changes: every curation write goes through it.

A :class:`Change` is opened inside a service's transaction, locks the researchers it
touches (``select_for_update``, in id order and before any authorship: one lock
order everywhere, so two curators never deadlock), moves authorships by
compare-and-swap, sets researcher fields, adds and retires
constraints, and finally writes one :class:`~curation.models.CurationEvent` holding
the exact before and after of all of it, so :func:`curation.history.event_undo` can
restore the prior state. After the commit it invalidates the cached views of the
researchers touched and queues the notification of their followers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Case, F, IntegerField, Q, Value, When
from django.utils import timezone

from curation.exceptions import (
    GONE,
    MOVED_MEANWHILE,
    NOT_FOUND,
    RETIRED,
    SAME_PAPER,
    ProposalConflict,
    ResearcherConflict,
    ResearcherGone,
)
from curation.models import Constraint, CurationEvent, Proposal
from wovepaper import cache as site_cache
from wovepaper.models import Authorship, Researcher
from wovepaper.outbox import outbox_send
from wovepaper.stats import researcher_stats_queue

# Events whose followers hear about them: what changes a profile's paper list,
# and any that retires a profile (a review's ``retired`` event moves nothing).
NOTIFY_KINDS = frozenset(
    {
        CurationEvent.Kind.MERGED,
        CurationEvent.Kind.SPLIT,
        CurationEvent.Kind.UNDONE,
        CurationEvent.Kind.PROPOSAL_APPLIED,
    }
)


def same_paper_clash(researcher_id: int, authorships: list[Authorship]) -> str:
    """Why these authorships cannot all be researcher ``researcher_id``'s, or "".

    One person appears once on a paper's byline: two slots of one paper (the
    same name printed twice in a 3,000-author list, say) are two people.

    Args:
        researcher_id: the researcher that would receive them.
        authorships: the authorships that would move to it.

    Returns:
        The :data:`~curation.exceptions.SAME_PAPER` message, or "".
    """
    seen: dict[int, int] = {}
    for a in sorted(authorships, key=lambda x: x.pk):
        if a.paper_id in seen and seen[a.paper_id] != a.pk:
            return SAME_PAPER.format(
                r=researcher_id, a=seen[a.paper_id], b=a.pk, paper=a.paper_id
            )
        seen[a.paper_id] = a.pk
    held = (
        Authorship.objects.filter(researcher_id=researcher_id, paper_id__in=seen)
        .exclude(pk__in=[a.pk for a in authorships])
        .values_list("pk", "paper_id")
        .first()
    )
    if held:
        return SAME_PAPER.format(
            r=researcher_id, a=held[0], b=seen[held[1]], paper=held[1]
        )
    return ""


class Change:
    """Collects one event's effects; :meth:`commit` writes the event.

    Use inside ``transaction.atomic()``; nothing is written if the transaction
    rolls back, so a failed step never leaves half a change.

    Args:
        actor: the curator, or None for automation.
    """

    def __init__(self, *, actor: AbstractBaseUser | None) -> None:
        self.actor = actor
        self.moves: list[dict[str, int | None]] = []
        self.fields: dict[str, dict[str, list[Any]]] = {}
        self.touched: set[int] = set()
        self.new_constraints: list[Constraint] = []
        self.constraints_off: list[int] = []
        self.constraints_on: list[int] = []

    # --- reading under lock ---------------------------------------------------

    def lock(self, ids: list[int], *, live: bool = True) -> dict[int, Researcher]:
        """Lock researchers ``FOR UPDATE`` in id order and return them by id.

        Args:
            ids: researcher ids (duplicates ignored).
            live: refuse merged-away or retired researchers.

        Returns:
            ``{id: Researcher}`` for every id.

        Raises:
            ResearcherGone: a researcher is missing, merged away or retired.
        """
        wanted = sorted(set(ids))
        found = {
            r.pk: r
            for r in Researcher.objects.select_for_update()
            .filter(pk__in=wanted)
            .order_by("pk")
        }
        for pk in wanted:
            r = found.get(pk)
            if r is None:
                raise ResearcherGone(NOT_FOUND.format(pk=pk))
            if live and r.merged_into_id:
                raise ResearcherGone(
                    GONE.format(pk=pk, how="merged", target=r.merged_into_id)
                )
            if live and r.retired:
                raise ResearcherGone(RETIRED.format(pk=pk))
        return found

    # --- writing --------------------------------------------------------------

    def move(self, authorships: list[Authorship], to: Researcher | None) -> None:
        """Assign authorships to ``to`` (None detaches) by compare-and-swap.

        One UPDATE per researcher the authorships come from, which must change
        exactly the rows read (each still on the researcher it was read with);
        names as printed join ``to``'s name variants.

        Raises:
            ProposalConflict: an authorship moved since it was read.
            ResearcherConflict: ``to`` would hold two authorships of one paper.
        """
        target = to.pk if to else None
        if to is not None:
            clash = same_paper_clash(to.pk, authorships)
            if clash:
                raise ResearcherConflict(clash)
        by_source: dict[int | None, list[Authorship]] = {}
        for a in authorships:
            if a.researcher_id != target:
                by_source.setdefault(a.researcher_id, []).append(a)
        # One compare-and-swap per source researcher: every row must still be
        # where it was read, or nothing of this change is kept.
        for source, group in by_source.items():
            changed = Authorship.objects.filter(
                pk__in=[a.pk for a in group], researcher=source
            ).update(researcher=target)
            if changed != len(group):
                ids = [a.pk for a in group]
                moved = Authorship.objects.filter(pk__in=ids).exclude(researcher=source)
                first = moved.values_list("pk", flat=True).first() or ids[0]
                raise ProposalConflict(MOVED_MEANWHILE.format(pk=first))
            for a in group:
                self.moves.append(
                    {"authorship": a.pk, "before": source, "after": target}
                )
                a.researcher_id = target
            if source:
                self.touched.add(source)
        if to is not None:
            self.touched.add(to.pk)
            variants = list(to.name_variants)
            variants += [a.raw_name for a in authorships if a.raw_name not in variants]
            variants = list(dict.fromkeys(variants))
            if variants != to.name_variants:
                self.set(to, name_variants=variants)

    def set(self, researcher: Researcher, **values: Any) -> None:
        """Set researcher fields (the row is locked) and record before and after.

        Values must be JSON-serialisable (ids for foreign keys: ``merged_into_id``).
        """
        record = self.fields.setdefault(str(researcher.pk), {})
        update = {}
        for field, value in values.items():
            before = getattr(researcher, field)
            if before == value:
                continue
            if field in record:
                record[field][1] = value
            else:
                record[field] = [before, value]
            setattr(researcher, field, value)
            update[field] = value
        if update:
            Researcher.objects.filter(pk=researcher.pk).update(**update)
            self.touched.add(researcher.pk)

    def create_researcher(self, **values: Any) -> Researcher:
        """Create a researcher; the event records it as ``retired`` True → False.

        So undoing the event retires the profile (kept, not listed) and undoing the
        undo brings it back.
        """
        researcher = Researcher.objects.create(**values)
        self.fields.setdefault(str(researcher.pk), {})["retired"] = [True, False]
        self.touched.add(researcher.pk)
        return researcher

    def constrain(
        self,
        kind: str,
        researcher: Researcher | int,
        *,
        authorship: Authorship | int | None = None,
        other: Researcher | int | None = None,
    ) -> None:
        """Add a must-link or cannot-link constraint, written with the event."""
        self.new_constraints.append(
            Constraint(
                kind=kind,
                researcher_id=getattr(researcher, "pk", researcher),
                authorship_id=getattr(authorship, "pk", authorship),
                other_researcher_id=getattr(other, "pk", other),
            )
        )

    def retire_constraints(self, queryset) -> None:
        """Deactivate the active constraints in ``queryset`` (undo reactivates)."""
        ids = list(queryset.filter(active=True).values_list("pk", flat=True))
        if ids:
            Constraint.objects.filter(pk__in=ids).update(active=False)
            self.constraints_off.extend(ids)

    def restore_constraints(self, ids: list[int]) -> None:
        """Reactivate constraints an earlier event retired."""
        ids = list(
            Constraint.objects.filter(pk__in=ids, active=False).values_list(
                "pk", flat=True
            )
        )
        if ids:
            Constraint.objects.filter(pk__in=ids).update(active=True)
            self.constraints_on.extend(ids)

    def _retire_opposites(self) -> None:
        """Retire active constraints that contradict the ones this change activated.

        A must-link and a cannot-link on the same (authorship, researcher) never
        stand together: the newer decision wins, and the older one is recorded as
        retired so an undo brings it back.
        """
        activated = list(
            Constraint.objects.filter(
                pk__in=self.constraints_on, authorship__isnull=False
            ).values_list("kind", "authorship_id", "researcher_id")
        )
        if not activated:
            return
        opposite = {
            (
                Constraint.Kind.CANNOT_LINK
                if kind == Constraint.Kind.MUST_LINK
                else Constraint.Kind.MUST_LINK,
                a,
                r,
            )
            for kind, a, r in activated
        }
        candidates = Constraint.objects.filter(
            active=True,
            authorship_id__in={a for _, a, _ in activated},
            researcher_id__in={r for _, _, r in activated},
        ).exclude(pk__in=self.constraints_on)
        contradicted = [
            pk
            for pk, kind, a, r in candidates.values_list(
                "pk", "kind", "authorship_id", "researcher_id"
            )
            if (kind, a, r) in opposite
        ]
        self.retire_constraints(Constraint.objects.filter(pk__in=contradicted))

    def commit(
        self,
        *,
        kind: str,
        proposal: Proposal | None = None,
        undoes: CurationEvent | None = None,
        batch: CurationEvent | None = None,
        researchers: list[int] | None = None,
        extra: dict | None = None,
    ) -> CurationEvent:
        """Write the event and its constraints; bump the touched researchers' revision.

        Args:
            kind: a ``CurationEvent.Kind``.
            proposal: the proposal decided, if any.
            undoes: the event this one undoes, if any.
            batch: the bulk action's ``batch`` event, if any.
            researchers: extra researcher ids to list as touched.
            extra: free JSON (reason, claim id, ...).

        Returns:
            The saved CurationEvent.
        """
        touched = sorted(self.touched | set(researchers or []))
        event = CurationEvent.objects.create(
            kind=kind,
            actor=self.actor,
            proposal=proposal,
            undoes=undoes,
            batch=batch,
            researchers=touched,
            moves=self.moves,
            fields=self.fields,
            extra=extra or {},
        )
        for c in self.new_constraints:
            c.event = event
        made = Constraint.objects.bulk_create(self.new_constraints)
        self.constraints_on.extend(c.pk for c in made)
        self._retire_opposites()
        if self.constraints_on or self.constraints_off:
            CurationEvent.objects.filter(pk=event.pk).update(
                constraints_on=self.constraints_on,
                constraints_off=self.constraints_off,
            )
            event.constraints_on = self.constraints_on
            event.constraints_off = self.constraints_off
        if self.moves or self.fields:
            # update() passes over auto_now: the profile's "modified" (the
            # sitemap's lastmod, the admin's Modified) is set here.
            Researcher.objects.filter(pk__in=touched).update(
                revision=F("revision") + 1, modified=timezone.now()
            )
            # Retired, or brought back by an undo: followers hear of both.
            notify = (kind in NOTIFY_KINDS and bool(self.moves)) or any(
                f.get("retired") == [False, True]
                or (
                    kind == CurationEvent.Kind.UNDONE
                    and f.get("retired") == [True, False]
                )
                for f in self.fields.values()
            )
            _follow_up(
                event.pk,
                touched,
                [m["authorship"] for m in self.moves],
                [int(pk) for pk, f in self.fields.items() if "display_name" in f],
                notify=notify,
                listed=self.actor is not None,
            )
        return event


@dataclass
class Founding:
    """One researcher to found on unassigned authorships, for :func:`found_in_bulk`.

    Attributes:
        proposal: the decision it applies (its event names it).
        authorships: the authorships it takes: locked (``select_for_update``),
            unassigned, no two of one paper, in id order.
        display_name: the researcher's display name.
        block_key: the researcher's block key.
        extra: its event's ``extra``.
    """

    proposal: Proposal
    authorships: list[Authorship]
    display_name: str
    block_key: str
    extra: dict


def found_in_bulk(foundings: list[Founding], *, kind: str) -> list[CurationEvent]:
    """Found a researcher per founding, move its authorships onto it and write
    its ``kind`` event, by actor None: the rows, fields and follow-ups that
    ``Change(actor=None)``'s :meth:`~Change.create_researcher`,
    :meth:`~Change.move` and :meth:`~Change.commit` write one founding at a
    time, in a few statements for them all. The matcher founds thousands of
    profiles a run; one at a time took 11 statements and 16 ms each, 86% of
    the demo's wall time (profiled 2026-12-07).

    Must run inside a transaction (the caller's, which locked the
    authorships and checked them, :mod:`curation.deciding.auto_apply_bulk`).

    Args:
        foundings: what to found; each event lists its new researcher and
            records it ``retired`` True → False (undo retires it), its name
            variants and its moves.
        kind: the events' ``CurationEvent.Kind``.

    Returns:
        The events, in the order of ``foundings``.

    Raises:
        ProposalConflict: an authorship was assigned since it was read (none
            can be, locked; nothing of them is then kept by the caller's
            transaction).
    """
    if not foundings:
        return []
    researchers = []
    for f in foundings:
        variants = list(dict.fromkeys(a.raw_name for a in f.authorships))
        # Created with revision 0 and bumped by its event's commit, one at a time.
        r = Researcher(
            display_name=f.display_name,
            block_key=f.block_key,
            name_variants=variants,
            revision=1,
        )
        r.fill_slug()
        researchers.append(r)
    Researcher.objects.bulk_create(researchers)
    moving = {
        a.pk: r.pk
        for f, r in zip(foundings, researchers, strict=True)
        for a in f.authorships
    }
    changed = Authorship.objects.filter(pk__in=moving, researcher__isnull=True).update(
        researcher=Case(
            *(When(pk=a, then=Value(r)) for a, r in moving.items()),
            output_field=IntegerField(),
        )
    )
    if changed != len(moving):
        raise ProposalConflict(MOVED_MEANWHILE.format(pk=min(moving)))
    events = CurationEvent.objects.bulk_create(
        CurationEvent(
            kind=kind,
            actor=None,
            proposal=f.proposal,
            researchers=[r.pk],
            moves=[
                {"authorship": a.pk, "before": None, "after": r.pk}
                for a in f.authorships
            ],
            fields={
                str(r.pk): {
                    "retired": [True, False],
                    "name_variants": [[], r.name_variants],
                }
            },
            extra=f.extra,
        )
        for f, r in zip(foundings, researchers, strict=True)
    )
    # Their cache bumps and tasks queued once (joining an open gathering).
    with gathered():
        for f, r, event in zip(foundings, researchers, events, strict=True):
            for a in f.authorships:
                a.researcher_id = r.pk
            _follow_up(
                event.pk,
                [r.pk],
                [a.pk for a in f.authorships],
                [],
                notify=kind in NOTIFY_KINDS,
                listed=False,
            )
    return events


@dataclass
class _Gathered:
    """What the changes committed inside :func:`gathered` leave to do once."""

    touched: set[int] = dataclass_field(default_factory=set)
    moved: list[int] = dataclass_field(default_factory=list)
    renamed: list[int] = dataclass_field(default_factory=list)
    events: dict[int, list[int]] = dataclass_field(default_factory=dict)
    listed: bool = False


_gathering: ContextVar[_Gathered | None] = ContextVar("_gathering", default=None)


def _after_commit(
    touched: list[int], coauthors: list[int], events: list[int], *, listed: bool
) -> None:
    """Once the transaction commits: drop the touched researchers' cached
    views (and, when ``listed``, every list of researchers found by name:
    :func:`wovepaper.cache.researchers_changed`), have a worker drop their
    co-authors' (a merge across collaboration papers names thousands: 0.5 ms
    each on Redis), and tell the followers of each of ``events``."""
    transaction.on_commit(
        lambda: site_cache.researchers_changed(touched, listed=listed)
    )
    researcher_stats_queue(touched)
    # Through the outbox, written in the change's own transaction: a broker
    # that is down loses none of them and answers no committed change with
    # an error (wovepaper.outbox).
    if coauthors:
        outbox_send(
            task="curation.researcher_caches", kwargs={"researcher_ids": coauthors}
        )
    for pk in events:
        outbox_send(task="curation.notify_followers", kwargs={"event_id": pk})


def _follow_up(
    event: int,
    touched: list[int],
    moved: list[int],
    renamed: list[int],
    *,
    notify: bool,
    listed: bool,
) -> None:
    """The cache bumps and tasks of a committed event (id ``event``, which
    touched ``touched``, moved ``moved`` authorship ids and renamed
    ``renamed`` researcher ids; its followers are told if ``notify``; the
    lists of researchers found by name are dropped if ``listed``: a
    curator's change, not automation's): added to the open
    :func:`gathered`, or queued now."""
    gathering = _gathering.get()
    if gathering is None:
        _after_commit(
            touched,
            _coauthors(moved, renamed, touched),
            [event] if notify else [],
            listed=listed,
        )
        return
    gathering.listed = gathering.listed or listed
    gathering.touched.update(touched)
    gathering.moved.extend(moved)
    gathering.renamed.extend(renamed)
    if notify:
        gathering.events[event] = touched


@contextmanager
def gathered() -> Iterator[None]:
    """Commit many changes in one transaction with their follow-ups once.

    Inside it, each :meth:`Change.commit` adds its touched researchers, their
    co-authors and its event to one gathering instead of queueing its own
    cache bumps and tasks; on the way out they are queued once, to run when
    the transaction commits. Followers are told of the events that touched a
    researcher anyone follows (one query), not of the others. For automation
    applying thousands of decisions: applied one by one, each new profile on
    a 2,800-author paper bumped 2,800 co-authors' caches (the demo's
    auto-apply spent 86 of its 183 s there, and 24 s asking each event's
    followers).

    Must run inside a transaction (``transaction.atomic``); nested, the inner
    one joins the outer gathering.
    """
    if _gathering.get() is not None:
        yield
        return
    gathering = _Gathered()
    token = _gathering.set(gathering)
    try:
        yield
    finally:
        _gathering.reset(token)
    if not gathering.touched:
        return
    from wovepaper.models import Follow

    followed = set(
        Follow.objects.filter(researcher_id__in=gathering.touched).values_list(
            "researcher_id", flat=True
        )
    )
    told = [
        pk for pk, touched in gathering.events.items() if followed.intersection(touched)
    ]
    # An event a savepoint rolled back (a decision that failed after its
    # commit step) tells no one.
    events = (
        sorted(CurationEvent.objects.filter(pk__in=told).values_list("pk", flat=True))
        if told
        else []
    )
    touched = sorted(gathering.touched)
    _after_commit(
        touched,
        _coauthors(gathering.moved, gathering.renamed, touched),
        events,
        listed=gathering.listed,
    )


def _coauthors(moved: list[int], renamed: list[int], touched: list[int]) -> list[int]:
    """The researchers, other than ``touched``, whose cached views show what
    a change rewrote: those holding a slot of a paper whose slot moved (of
    ``moved`` authorship ids: their pages' bylines and co-author networks
    name its holder), or a paper of a researcher renamed (of ``renamed``
    researcher ids: the networks show display names). One query; none when
    nothing moved and no one was renamed.

    Found by a hostile trial: a co-author's page and ``coauthors.json``
    showed a detached slot's old researcher for up to 60 s and 30 min.
    """
    if not moved and not renamed:
        return []
    papers = Authorship.objects.filter(
        Q(pk__in=moved) | Q(researcher_id__in=renamed)
    ).values("paper_id")
    return list(
        Authorship.objects.filter(paper_id__in=papers, researcher__isnull=False)
        .exclude(researcher_id__in=touched)
        .values_list("researcher_id", flat=True)
        .distinct()
    )

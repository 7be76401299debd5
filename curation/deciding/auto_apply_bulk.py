"""The auto-apply step of a matching run (:func:`apply_sure`), and the
matcher's sure ``new`` profiles, applied in bulk (:func:`apply_new`).

Most of what the auto-apply policy (:mod:`curation.deciding.auto_apply`) applies is
``new`` proposals of one to a few unassigned authorships, one per person on
a collaboration paper: 6,655 of the demo's 6,655 decisions. Applied one at a
time (``curation.services.proposal_apply``) each took 11 statements and 16 ms;
here a chunk of them takes about ten statements in all, and writes the same
rows, events and follow-ups (``tests/curation/test_auto_apply_bulk.py``
compares both paths on real records).

Only the plain case is taken: a pending ``new`` proposal not proven by an
identifier, whose authorships all still exist, are all unassigned, print no
ORCID iD, are no two of one paper, and are in no other proposal of the
chunk. Everything else (stale, ORCID-bearing, attaches, overlapping) goes
back to the caller, in order, for the one-at-a-time path, which decides it
with its own checks and messages.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable

from django.db import transaction
from django.db.models import Case, IntegerField, Value, When
from django.utils import timezone

from curation import edits, names
from curation.changes import Founding, found_in_bulk, gathered
from curation.deciding import auto_apply
from curation.deciding.apply import proposal_apply
from curation.exceptions import CONFLICT, CurationError, ProposalConflict
from curation.models import CurationEvent, Proposal
from wovepaper.models import Authorship

logger = logging.getLogger(__name__)

S = Proposal.Status


def apply_new(
    proposals: list[Proposal], policy: auto_apply.Policy
) -> tuple[list[Proposal], list[Proposal]]:
    """Apply, as the matcher, the plain ``new`` proposals of ``proposals``
    (see the module's docstring) in one savepoint.

    Must run inside a transaction; the follow-ups join an open
    :func:`curation.changes.gathered`.

    Args:
        proposals: decisions ``policy`` clears, in the order they would apply.
        policy: the auto-apply policy in force, recorded on each event.

    Returns:
        ``(applied, rest)``: the proposals applied (now ``applied``, with
        their new researcher), and the others in their order, untouched,
        for :func:`curation.services.proposal_apply` one at a time. Should a
        row change under the locks (it cannot), nothing is applied and every
        proposal is in ``rest``.
    """
    # Each proposal once (given twice, it founded two profiles: a hostile trial).
    plain = [
        p
        for p in {p.pk: p for p in proposals}.values()
        if p.kind == Proposal.Kind.NEW
        and p.researcher_id is None
        and not p.identifier_proven
    ]
    if not plain:
        return [], list(proposals)
    links: dict[int, list[int]] = {}
    for proposal_id, authorship_id in (
        Proposal.authorships.through.objects.filter(
            proposal_id__in=[p.pk for p in proposals]
        )
        .order_by("authorship_id")
        .values_list("proposal_id", "authorship_id")
    ):
        links.setdefault(proposal_id, []).append(authorship_id)
    shared = Counter(a for ids in links.values() for a in ids)
    plain = [
        p for p in plain if links.get(p.pk) and all(shared[a] == 1 for a in links[p.pk])
    ]
    try:
        with transaction.atomic():
            applied = _apply(plain, links, policy)
    except CurationError:
        return [], list(proposals)
    done = {p.pk for p in applied}
    return applied, [p for p in proposals if p.pk not in done]


def _apply(
    plain: list[Proposal], links: dict[int, list[int]], policy: auto_apply.Policy
) -> list[Proposal]:
    """Lock ``plain`` (proposals, then authorships, in id order: the lock
    order of the one-at-a-time path), keep those still plain under the locks,
    and apply them."""
    pending = set(
        Proposal.objects.select_for_update()
        .filter(pk__in=[p.pk for p in plain], status=S.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    plain = [p for p in plain if p.pk in pending]
    locked = {
        a.pk: a
        for a in Authorship.objects.select_for_update()
        .filter(pk__in=[a for p in plain for a in links[p.pk]])
        .order_by("pk")
    }
    described = policy.describe()
    foundings = []
    for p in plain:
        authorships = [locked[a] for a in links[p.pk] if a in locked]
        if (
            len(authorships) != len(links[p.pk])
            or any(a.researcher_id is not None or a.orcid for a in authorships)
            or len({a.paper_id for a in authorships}) != len(authorships)
        ):
            continue
        display, given, family = edits.display_name_of(authorships)
        foundings.append(
            Founding(
                proposal=p,
                authorships=authorships,
                display_name=display,
                block_key=names.block_key(given, family),
                extra={
                    "by": "the matcher",
                    "policy": described,
                    "model_version": p.model_version,
                },
            )
        )
    if not foundings:
        return []
    events = found_in_bulk(foundings, kind=CurationEvent.Kind.PROPOSAL_APPLIED)
    now = timezone.now()
    founded = {
        f.proposal.pk: e.researchers[0] for f, e in zip(foundings, events, strict=True)
    }
    changed = Proposal.objects.filter(pk__in=founded, status=S.PENDING).update(
        status=S.APPLIED,
        decided_at=now,
        decided_by=None,
        researcher=Case(
            *(When(pk=p, then=Value(r)) for p, r in founded.items()),
            output_field=IntegerField(),
        ),
    )
    if changed != len(founded):
        raise ProposalConflict(CONFLICT.format(pk=min(founded)))
    for f in foundings:
        f.proposal.status, f.proposal.decided_at = S.APPLIED, now
        f.proposal.decided_by = None
        f.proposal.researcher_id = founded[f.proposal.pk]
    return [f.proposal for f in foundings]


def apply_sure(
    proposals: Iterable[Proposal], counts: Counter, policy: auto_apply.Policy
) -> None:
    """Apply, as the matcher, those of ``proposals`` that ``policy`` clears
    (:meth:`curation.deciding.auto_apply.Policy.clears`), counting ``auto_applied``.

    :data:`AUTO_APPLY_CHUNK` decisions a transaction, their cache bumps and
    tasks queued once a chunk (:func:`curation.changes.gathered`). A chunk's
    plain ``new`` proposals are applied together
    (:func:`apply_new`); the others one at a time,
    each in its own savepoint: one that can no longer apply (a locked
    researcher, a clash, changed since) is logged and left as it is, and
    costs the others nothing.
    """
    sure = [p for p in proposals if policy.clears_proposal(p)]
    for start in range(0, len(sure), AUTO_APPLY_CHUNK):
        with transaction.atomic(), gathered():
            applied, rest = apply_new(sure[start : start + AUTO_APPLY_CHUNK], policy)
            counts["auto_applied"] += len(applied)
            for proposal in rest:
                try:
                    proposal_apply(proposal=proposal, actor=None, policy=policy)
                    counts["auto_applied"] += 1
                except CurationError as exc:
                    logger.info(
                        "auto-apply skipped: %s", exc, extra={"proposal": proposal.pk}
                    )


# Decisions the auto-apply policy commits in one transaction: 500 new
# profiles on a collaboration paper queue one bump of its co-authors' caches,
# not 500, and hold their locks for about a second.
AUTO_APPLY_CHUNK = 500

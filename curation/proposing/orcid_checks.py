"""Checks of the ORCID iDs that drafts rely on: an iD another profile already
holds is no proof, and an iD printed on another byline slot of the paper is
flagged for a curator, never applied (issue 46).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from curation import selectors
from curation.matching import (
    orcids,
    variants,
)
from curation.matching.features import AuthorshipView
from curation.proposing.drafts import Draft


def held_by_merges(
    moving: set[int],
    present: set[int],
    merges: list[tuple[frozenset[int], ...]],
) -> set[int]:
    """The moving authorships a split must leave where they are, because
    moving them would part what a curator merged one at a time
    (:func:`selectors.curator_merges`): those on one side of such a merge
    while another side of it has an authorship that stays. Held ones stay
    too, so the rule is applied until nothing more is held (three sides, or
    merges in a row: A and B, then both with C).

    Args:
        moving: the authorship ids a split part would move.
        present: every authorship id the researcher holds now.
        merges: each merge's sides.

    Returns:
        The ids of ``moving`` to keep; papers that came after the merges (on
        no side) are never held, so a split may still take them.
    """
    going = set(moving)
    changed = True
    while changed and going:
        changed = False
        for sides in merges:
            staying = [bool(side & present - going) for side in sides]
            for i, side in enumerate(sides):
                if side & going and any(staying[:i] + staying[i + 1 :]):
                    going -= side
                    changed = True
    return set(moving) - going


def unproven_where_orcid_taken(drafts: list[Draft]) -> None:
    """A ``new`` cluster whose one ORCID iD a researcher already has, or
    another new cluster of the run has too, is left to a curator: matching did
    not attach it to that researcher (a curator's "not this person", or names
    that cannot meet), so the identifier policy must not decide it; applied,
    it could only make a second researcher of the iD, without it. One query
    for the run."""
    proven = [d for d in drafts if d.kind == "new" and d.identifier_proven]
    clusters_of = Counter(o for d in proven for o in d.evidence["orcids"])
    held = selectors.orcid_holders(clusters_of)
    for d in proven:
        holders = sorted(held[o] for o in d.evidence["orcids"] if o in held)
        if holders:
            d.identifier_proven = False
            d.evidence["orcid_held_by"] = holders
        elif any(clusters_of[o] > 1 for o in d.evidence["orcids"]):
            # Two clusters of one iD in this run (two blocks: "Serre" and
            # "Sere"): one person or a source's mistake, a curator's call.
            d.identifier_proven = False
            d.evidence["orcid_in_other_clusters"] = True


def misplaced_orcids(
    slots_of: Mapping[str, list[orcids.IdSlot]],
) -> dict[int, tuple[str, orcids.IdSlot]]:
    """``{authorship id: (iD, the slot whose name the iD fits)}`` of the slots
    that print an iD whose other slots print another person's name
    (:func:`curation.matching.orcids.misplaced`)."""
    return {
        aid: (orcid, owner)
        for orcid, slots in slots_of.items()
        for aid, owner in orcids.misplaced(slots).items()
    }


def flag_misplaced_orcids(drafts: list[Draft], views: list[AuthorshipView]) -> None:
    """Attach and ``new`` drafts holding a slot whose ORCID iD a source
    misplaced are left to a curator, flagged.

    A source sometimes prints a co-author's iD on another slot of the
    byline (Crossref, issue 46: the iD of "Wei Tan" on "Dmitri Volkov"):
    the slots printing that iD elsewhere print another person's name
    (:func:`curation.matching.orcids.misplaced`). Such a draft is never
    identifier-proven, its ``orcids`` lose the iD (it proves nothing, and
    :func:`unproven_where_orcid_taken` must not count it), and its evidence
    says so: ``flag`` (unless flagged already), and ``misplaced_orcid``:
    ``[{"authorship", "orcid", "printed", "fits"}]`` (``fits``: the name
    the iD's other slots print). Approving it gives no researcher the iD
    (:func:`curation.deciding.apply._apply`). One query a chunk of iDs.
    """
    by_id = {v.id: v for v in views}
    carried = {
        by_id[aid].orcid
        for d in drafts
        if d.kind in ("attach", "new")
        for aid in d.authorship_ids
        if aid in by_id and by_id[aid].orcid
    }
    if not carried:
        return
    suspect = misplaced_orcids(selectors.orcid_slots(carried))
    for d in drafts:
        found = [
            (aid, *suspect[aid])
            for aid in d.authorship_ids
            if d.kind in ("attach", "new") and aid in suspect
        ]
        if not found:
            continue
        d.identifier_proven = False
        d.evidence["misplaced_orcid"] = [
            {
                "authorship": aid,
                "orcid": orcid,
                "printed": variants.written(by_id[aid].given, by_id[aid].family),
                "fits": variants.written(owner.given, owner.family),
            }
            for aid, orcid, owner in found
        ]
        aid, orcid, owner = found[0]
        # An attach already flagged ("ORCID agrees but the names do not")
        # keeps its flag: it says the same of the researcher.
        d.evidence.setdefault(
            "flag",
            f"ORCID iD {orcid} printed on "
            f"{variants.written(by_id[aid].given, by_id[aid].family)!r} is printed "
            f"with {variants.written(owner.given, owner.family)!r} elsewhere: "
            "a source's misplaced iD, not applied",
        )
        if "orcids" in d.evidence:
            wrong = {o for _, o, _ in found}
            d.evidence["orcids"] = [o for o in d.evidence["orcids"] if o not in wrong]

"""``split`` drafts: a profile that holds several ORCID iDs
(:func:`propose_splits`), or a part the engine no longer clusters with the
rest (:func:`propose_suspect_splits`). Splits always wait for a curator.
"""

from __future__ import annotations

import logging
from collections import OrderedDict, defaultdict

from django.conf import settings

from curation import names, selectors
from curation.matching import (
    overmerge,
    pipeline,
    scoring,
)
from curation.matching.features import (
    AuthorshipView,
    full_given_key,
    names_meet,
    profile_of,
    profile_profile_features,
)
from curation.proposing.drafts import Draft
from curation.proposing.orcid_checks import held_by_merges

logger = logging.getLogger(__name__)


def propose_splits(
    conflicts: list[selectors.OrcidConflict], weights: scoring.Weights
) -> list[Draft]:
    """Split proposals for researchers whose authorships carry several ORCID iDs.

    The authorships with the researcher's own iD (or, when it has none, the
    largest group) stay; each other iD's authorships are proposed as a new
    researcher. A curator decides: an ORCID on an authorship can be a source's
    mistake, so this is never applied by the identifier policy.
    """
    drafts = []
    curated = selectors.must_links(c.researcher_id for c in conflicts)
    for conflict in conflicts:
        groups = {
            orcid: [a for a in ids if (a, conflict.researcher_id) not in curated]
            for orcid, ids in conflict.by_orcid.items()
        }
        keep = (
            conflict.orcid
            if conflict.orcid in groups
            else max(groups, key=lambda o: (len(groups[o]), o))
        )
        for orcid, ids in sorted(groups.items()):
            if orcid == keep or not ids:
                continue
            drafts.append(
                Draft(
                    "split",
                    0.99,
                    {
                        "model_version": weights.version,
                        "flag": "several ORCID iDs on one researcher",
                        "orcids": {o: len(a) for o, a in sorted(groups.items())},
                        "kept": keep,
                        "moving": orcid,
                    },
                    conflict.block_key,
                    sorted(ids),
                    researcher_id=conflict.researcher_id,
                )
            )
    return drafts


# The re-clustering of a researcher with too many papers a year, by (researcher
# id, revision, model version, threshold): it costs seconds for thousands of
# authorships, and every run over the block would otherwise repeat it. The
# oldest are dropped past this many.
RECLUSTER_MEMORY = 1_000
_reclusterings: OrderedDict[tuple, list[list[int]]] = OrderedDict()


def _reclustered(
    suspect: selectors.Suspect, threshold: float, weights: scoring.Weights
) -> list[list[AuthorshipView]]:
    """The suspect's authorships re-clustered as unassigned ones are, remembered."""
    key = (suspect.profile.id, suspect.profile.revision, weights.version, threshold)
    ids = _reclusterings.get(key)
    if ids is None:
        ids = [
            [m.id for m in found.members]
            for found in pipeline.cluster_authorships(
                list(suspect.views), threshold=threshold, weights=weights
            )
        ]
        _reclusterings[key] = ids
        if len(_reclusterings) > RECLUSTER_MEMORY:
            _reclusterings.popitem(last=False)
    by_id = {v.id: v for v in suspect.views}
    return [[by_id[i] for i in part] for part in ids]


def _display_fit(display: str, part: list[AuthorshipView]) -> int:
    """How well a part of a researcher prints its display name: 2 with a full
    given name that fits (:func:`curation.names.display_name_fits`), 1 with
    initials only ("W." fits "Wen Wang" as well as "Wei Wang"), else 0."""
    printed = [(v.given, v.family) for v in part]
    if names.display_name_fits(
        display, [(g, f) for g, f in printed if full_given_key(g)]
    ):
        return 2
    return 1 if names.display_name_fits(display, printed) else 0


def propose_suspect_splits(
    suspects: list[selectors.Suspect], skip: set[int], weights: scoring.Weights
) -> list[Draft]:
    """Split proposals for researchers that look like several people.

    The parts are the suspect's disjoint groups, or, for too many papers a year,
    the clusters of a re-clustering of its authorships (as unassigned ones are
    clustered). The part holding most authorships a curator confirmed one at a
    time (:func:`selectors.confirmed_links`) stays (then the one with the
    researcher's ORCID iD, then one printing the researcher's display name
    (:func:`_display_fit`: the profile, its URL, its
    followers and its claim stay with the person it is named after), then the
    largest, then the one printing more full given names, where a display name
    comes from); those never move. Each
    other part of at least :data:`overmerge.MIN_GROUP` papers is proposed as a
    new researcher when the model scores it and the staying part below the
    joining threshold (its score: one minus that pairwise score), or when their
    full given names cannot meet (:func:`names_meet`; score 0.99). Like
    confirmed authorships, those a move would part from what a curator merged
    them with one at a time (in the admin, or a merge proposal approved on its
    own) never move: the curator saw those papers joined
    (:func:`held_by_merges`); papers that came later still may. Locked
    researchers, and those with an ORCID split proposed in the same run
    (``skip``), are left alone.

    Args:
        suspects: from the run's :class:`selectors.ResearcherSnapshot`.
        skip: researcher ids to leave alone.
        weights: the scoring model.

    Returns:
        Split drafts, never identifier-proven.
    """
    threshold = weights.threshold or settings.CURATION_ATTACH_THRESHOLD
    wanted = [s for s in suspects if not s.profile.locked and s.profile.id not in skip]
    curated = selectors.confirmed_links(s.profile.id for s in wanted)
    merges = selectors.curator_merges(v.id for s in wanted for v in s.views)
    merges_of: dict[int, set[int]] = defaultdict(set)  # authorship: merge indexes
    for n, sides in enumerate(merges):
        for side in sides:
            for authorship in side:
                merges_of[authorship].add(n)
    shown = selectors.display_names(s.profile.id for s in wanted)
    drafts = []
    for suspect in wanted:
        present = {v.id for v in suspect.views}
        its_merges = [
            merges[n]
            for n in sorted(set().union(*(merges_of.get(i, ()) for i in present)))
        ]
        by_id = {v.id: v for v in suspect.views}
        if suspect.suspicion.groups:
            parts = [[by_id[i] for i in group] for group in suspect.suspicion.groups]
            grouped = {v.id for part in parts for v in part}
            parts[0] += [v for v in suspect.views if v.id not in grouped]
        else:
            parts = _reclustered(suspect, threshold, weights)
        rid = suspect.profile.id
        orcid = suspect.profile.orcid
        display = shown.get(rid, "")

        def standing(
            part: list[AuthorshipView],
            rid: int = rid,
            orcid: str = orcid,
            display: str = display,
        ):
            return (
                sum((v.id, rid) in curated for v in part),
                any(orcid and v.orcid == orcid for v in part),
                _display_fit(display, part),
                len(part),
                sum(bool(full_given_key(v.given)) for v in part),
                -min(v.id for v in part),
            )

        parts.sort(key=standing, reverse=True)
        for part in parts[1:]:
            moving = [v for v in part if (v.id, rid) not in curated]
            held = held_by_merges({v.id for v in moving}, present, its_merges)
            if held:
                logger.info(
                    "researcher %s: %s authorships stay, a curator merged them "
                    "with the rest",
                    rid,
                    len(held),
                )
                moving = [v for v in moving if v.id not in held]
            if len({v.paper_id for v in moving}) < overmerge.MIN_GROUP:
                continue
            # What stays is the staying part and what this part leaves behind
            # (confirmed or held authorships).
            left = [v for v in part if v not in moving]
            going, staying = profile_of(moving), profile_of(parts[0] + left)
            same = scoring.score(profile_profile_features(going, staying), weights)
            # Full given names that cannot meet ("Wei" and "Wen") are two
            # people whatever the initials both parts share score.
            meet = names_meet(going, staying)
            if meet and same.pairwise_score >= threshold:
                continue
            why = (
                f"the model scores the moving part as the same person at "
                f"{same.pairwise_score:.2f}"
                if meet
                else "the two parts print given names that cannot be one person's"
            )
            drafts.append(
                Draft(
                    "split",
                    round(1.0 - same.pairwise_score, 6) if meet else 0.99,
                    {
                        **same.evidence,
                        "flag": f"{suspect.suspicion.flag}: "
                        f"{suspect.suspicion.detail}; {why}",
                    },
                    suspect.block_key,
                    sorted(v.id for v in moving),
                    researcher_id=rid,
                )
            )
    return drafts

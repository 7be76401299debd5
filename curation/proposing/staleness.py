"""Whether a stored proposal still fits the applied state, and if not, why:
the slots it moves, the profiles it names, the evidence and the proof it
rests on.
"""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings

from curation import selectors
from curation.changes import same_paper_clash
from curation.matching import (
    scoring,
    variants,
)
from curation.matching.features import (
    ProfileView,
    authorship_profile_features,
    names_meet,
)
from curation.models import Proposal
from wovepaper.models import Authorship, Researcher

S = Proposal.Status


def proposal_no_longer_fits(proposal: Proposal) -> str:
    """Why approving a pending proposal now would mark it stale instead (a
    researcher merged away, an authorship placed meanwhile...), or "": what
    its page warns a curator of before the click. Read without locks; the
    approval checks the same again under them (:func:`curation.deciding.apply._apply`).

    Args:
        proposal: any proposal; one not pending gives "".

    Returns:
        The reason, as the stale event would give it, or "".
    """
    if proposal.status != S.PENDING:
        return ""
    ids = [r for r in (proposal.researcher_id, proposal.other_researcher_id) if r]
    researchers = {r.pk: r for r in Researcher.objects.filter(pk__in=ids)}
    authorships = list(Authorship.objects.filter(proposals=proposal).order_by("pk"))
    return stale_reason(proposal, researchers, authorships)


def _rule_share_lost(proposal: Proposal) -> str:
    """Why an attach the evidence-free rule proposed
    (:func:`curation.proposing.attach._rule_attaches`) no longer stands on
    its premise, or "": its researcher holds fewer
    authorships than when it was proposed (a split, a move out), so may no
    longer hold most of the name. An attach its score proposed, or evidence
    edited into another shape, gives ""."""
    evidence = proposal.evidence if isinstance(proposal.evidence, dict) else {}
    likeliest = evidence.get("likeliest")
    if not evidence.get("rule") or not isinstance(likeliest, dict):
        return ""
    holds = likeliest.get("holds")
    if not isinstance(holds, int) or isinstance(holds, bool):
        return ""
    now = Authorship.objects.filter(researcher_id=proposal.researcher_id).count()
    if now >= holds:
        return ""
    return (
        f"researcher {proposal.researcher_id} holds {now} authorships, "
        f"{holds} when the rule proposed it as holding most of the name"
    )


def _frame_lost(proposal: Proposal, researchers: dict[int, Researcher]) -> str:
    """Why an attach to a researcher of another block, proposed because it
    held authorships printed in the authorship's block (evidence ``frame``:
    :func:`curation.proposing.attach._attach_candidates`), no longer stands
    on that premise, or "":
    it holds none printed there now, and does not live there (an undone
    merge took them back; a hostile trial had such an attach applied after
    the merge that made it was undone). ``researchers``: the proposal's, as
    :func:`stale_reason` read them. An attach without a ``frame``, or one
    edited into another shape or naming another block or researcher, gives
    ""."""
    evidence = proposal.evidence if isinstance(proposal.evidence, dict) else {}
    frame = evidence.get("frame")
    block, researcher = proposal.block_key.split("/", 1)[0], proposal.researcher_id
    if (
        not isinstance(frame, dict)
        or frame.get("block") != block
        or frame.get("researcher") != researcher
    ):
        # Not a frame this proposal could carry (edited by hand): as the
        # proposal page, pass it over.
        return ""
    home = researchers.get(researcher)
    if (home is not None and home.block_key == block) or Authorship.objects.filter(
        researcher_id=researcher, block_key=block
    ).exists():
        return ""
    return (
        f"researcher {researcher} no longer holds an authorship printed in "
        f"block {block!r}, as it did when this was proposed"
    )


def _evidence_lost(
    proposal: Proposal, researchers: dict[int, Researcher], authorships: list
) -> str:
    """Why a pending attach no longer stands on its researcher as it is now,
    or "" (a hostile trial approved attaches that matching would no longer
    propose; nothing marked them stale):

    - the authorship's name, as a re-harvest prints it now, cannot be one
      person's with the researcher's ("J. Smith" proposed to John Smith,
      printed "Jane Smith" by the next version);
    - curation moved authorships off the researcher since the proposal was
      made (a split, a move, a detach), and the model in use scores the
      authorship against what it holds now below its attach threshold (the
      papers that matched it were split off to another researcher), or it
      holds none now.

    A researcher that only gained papers is not scored again: what matched
    is still there, and approving one attach would otherwise make the next
    one stale. An attach a rule proposed (its evidence's ``rule``, below
    the threshold by design) or an identifier proved
    (:func:`_proof_lost`) is checked for names only. ``researchers`` and
    ``authorships`` are the proposal's, as :func:`stale_reason` read them.
    """
    r = researchers.get(proposal.researcher_id)
    if r is None or len(authorships) != 1:
        return ""
    (a,) = authorships
    profile = selectors.researcher_names(r.pk, r.block_key, orcid=r.orcid or "")
    if profile is None:
        # Nothing to compare with: a profile made to be filled by hand stays
        # one; one whose papers were all moved off since is not the person
        # it was proposed for.
        if selectors.moved_away_since(r.pk, proposal.created):
            return (
                f"every authorship of researcher {r.pk} was moved off since it "
                "was proposed (by curation, or by its source dropping them)"
            )
        return ""
    read = (
        (a.given_name, a.family_name)
        if a.block_key == r.block_key
        else variants.name_in_block(
            a.given_name, a.family_name, r.block_key, profile.family
        )
    )
    if read is None:
        return ""
    single = ProfileView(id=None, given_names=(read[0],), family=read[1], orcid=a.orcid)
    if not names_meet(single, profile):
        return (
            f"authorship {a.pk} prints {a.raw_name!r} now, a name that cannot be "
            f"the same person's as researcher {r.pk}'s"
        )
    evidence = proposal.evidence if isinstance(proposal.evidence, dict) else {}
    if (
        evidence.get("rule")
        or proposal.identifier_proven
        or not selectors.moved_away_since(r.pk, proposal.created)
    ):
        return ""
    rarities = selectors.corpus_given_rarities(remembered=True)
    weights = selectors.active_weights(remembered=True)
    threshold = weights.threshold or settings.CURATION_ATTACH_THRESHOLD
    (view,) = selectors.authorship_views([a], rarities)
    view = replace(view, given=read[0], family=read[1], block_key=r.block_key)
    now = selectors.researcher_profile(r.pk, rarities)
    if now is None:
        return ""
    s = scoring.score(authorship_profile_features(view, now), weights)
    if s.pairwise_score >= threshold:
        return ""
    return (
        f"authorships were moved off researcher {r.pk} since it was proposed, "
        f"and the model in use ({weights.version}) scores it {s.pairwise_score:.2f} "
        f"against what it holds now, below its threshold {threshold} (proposed "
        f"at {proposal.score:.2f})"
    )


def _proof_lost(
    proposal: Proposal, researchers: dict[int, Researcher], authorships: list
) -> str:
    """Why an identifier-proven proposal's ORCID iD no longer proves it, or
    "": what the identifier policy would apply without a curator must still
    stand on the iD when it is applied (a hostile trial had a pending proven
    attach, held back by a lock, applied to a researcher whose iD a curator
    had corrected meanwhile).

    - ``attach``: its authorships no longer all print one iD, or the
      researcher carries another one (or none, and none of its authorships
      prints it);
    - ``new``: its authorships no longer all print one iD;
    - ``merge``: the two researchers carry different iDs.

    ``researchers`` and ``authorships`` are the proposal's, as
    :func:`stale_reason` read them; a proposal not identifier-proven gives
    ""."""
    if not proposal.identifier_proven:
        return ""
    printed = {a.orcid for a in authorships}
    orcid = next(iter(printed)) if len(printed) == 1 else ""
    if proposal.kind in (Proposal.Kind.ATTACH, Proposal.Kind.NEW) and not orcid:
        return (
            f"authorships {[a.pk for a in authorships]} no longer all print the "
            "ORCID iD that proved it"
        )
    if proposal.kind == Proposal.Kind.ATTACH:
        r = researchers.get(proposal.researcher_id)
        if r is None:
            return ""
        if r.orcid and r.orcid != orcid:
            return (
                f"researcher {r.pk} carries ORCID iD {r.orcid} now and its "
                f"authorship prints {orcid}: the iD no longer proves it"
            )
        if (
            not r.orcid
            and not Authorship.objects.filter(researcher_id=r.pk, orcid=orcid).exists()
        ):
            return (
                f"neither researcher {r.pk} nor its authorships carry ORCID iD "
                f"{orcid} now, which proved it"
            )
    if proposal.kind == Proposal.Kind.MERGE:
        held = {r.pk: r.orcid for r in researchers.values() if r.orcid}
        if len(set(held.values())) > 1:
            return (
                "the researchers carry different ORCID iDs now "
                f"({', '.join(f'{pk}: {o}' for pk, o in sorted(held.items()))})"
            )
    return ""


def stale_reason(
    proposal: Proposal, researchers: dict[int, Researcher], authorships: list
) -> str:
    """Why the proposal no longer fits the state it was made on, or ""."""
    for r in researchers.values():
        if r.merged_into_id:
            return f"researcher {r.pk} was merged into {r.merged_into_id}"
        if r.retired:
            return f"researcher {r.pk} was retired"
    if proposal.kind in (Proposal.Kind.MERGE, Proposal.Kind.SPLIT):
        for pk, seen in sorted(proposal.researcher_revisions.items()):
            now = researchers[int(pk)].revision if int(pk) in researchers else None
            if now is not None and now != seen:
                return (
                    f"researcher {pk} changed since the proposal was made "
                    f"(revision {seen} -> {now})"
                )
    if proposal.kind in (Proposal.Kind.ATTACH, Proposal.Kind.NEW):
        if not authorships:
            return "its authorships no longer exist"
        taken = [a.pk for a in authorships if a.researcher_id is not None]
        if taken:
            return f"authorships {taken} were assigned meanwhile"
    if proposal.kind == Proposal.Kind.ATTACH:
        clash = same_paper_clash(proposal.researcher_id, authorships)
        if clash:
            return clash
        fewer = _rule_share_lost(proposal) or _frame_lost(proposal, researchers)
        if fewer:
            return fewer
        lost = _evidence_lost(proposal, researchers, authorships)
        if lost:
            return lost
    lost = _proof_lost(proposal, researchers, authorships)
    if lost:
        return lost
    if proposal.kind == Proposal.Kind.MERGE and len(researchers) == 2:
        lo, hi = sorted(researchers)
        clash = same_paper_clash(lo, list(Authorship.objects.filter(researcher_id=hi)))
        if clash:
            return clash
    if proposal.kind == Proposal.Kind.SPLIT:
        source = proposal.researcher_id
        elsewhere = [a.pk for a in authorships if a.researcher_id != source]
        if not authorships:
            return "its authorships no longer exist"
        if elsewhere:
            return f"authorships {elsewhere} left researcher {source} meanwhile"
        if (
            not Authorship.objects.filter(researcher_id=source)
            .exclude(pk__in=[a.pk for a in authorships])
            .exists()
        ):
            return f"it would move every authorship of researcher {source}"
    return ""

"""Curation errors; each message is a module constant, matched by tests and admin."""

from __future__ import annotations

NOT_PENDING = "proposal {pk} is {status}, not pending: it was decided already"
NOT_PENDING_STALE = (
    "proposal {pk} is stale, not pending: it no longer fits the data ({reason})"
)
STALE = "proposal {pk} is stale: {reason}"
CONFLICT = "proposal {pk} changed while it was being decided; reload and try again"
MOVED_MEANWHILE = (
    "authorship {pk} moved while this change was being made; reload and try again"
)
LOCKED = "researcher {pk} is locked: automation may propose but not apply changes"
ILLEGAL_TRANSITION = "proposal {pk} cannot go from {old} to {new}"
MATCHING_BUSY = "another matching run holds the matching lock; try again when it ends"


class CurationError(Exception):
    """Base of every curation error; the API maps it to HTTP 409."""


class ProposalNotPending(CurationError):
    """The proposal was already approved, applied, rejected or made stale."""


class ProposalStale(CurationError):
    """The state the proposal was made on changed (authorship moved, merged away)."""


class ProposalConflict(CurationError):
    """Another curator or worker changed the proposal at the same moment."""


class ResearcherLocked(CurationError):
    """Automation tried to change a locked researcher."""


class MatchingBusy(CurationError):
    """Another matching run holds the matching lock."""


class IllegalTransition(CurationError):
    """A status change not in :data:`curation.services.TRANSITIONS`."""


GONE = "researcher {pk} was {how}; act on researcher {target} instead"
RETIRED = "researcher {pk} was retired and holds no paper"
NOT_FOUND = "researcher {pk} does not exist"
CHANGED = "researcher {pk} changed since you opened it ({field}); reload and try again"
IDENTIFIER_TAKEN = "{field} {value} already belongs to researcher {other}"
IDENTIFIERS_DIFFER = (
    "researchers {a} and {b} have different {field} values ({va}, {vb}): "
    "a merge would lose one; remove the wrong one first"
)
SAME_PAPER = (
    "researcher {r} would hold two authorships ({a} and {b}) of paper {paper}: "
    "one person appears once on a byline"
)
CLAIMED_BY_TWO = (
    "researchers {a} and {b} are claimed by two different users: they are two "
    "people, or one claim is wrong; reject it first"
)
UNDO_CLAIMED = (
    "cannot undo event {pk}: researcher {r} would be {how}, but a user has claimed "
    "it; undo the claim approval first"
)
MERGE_NEEDS_TWO = "a merge needs at least two different researchers, got {ids}"
NOT_ON_RESEARCHER = "authorships {ids} are not on researcher {pk} (any more)"
SPLIT_EMPTY = "a split needs at least one authorship to move"
SPLIT_ALL = (
    "a split would move every authorship of researcher {pk}; rename it, or move "
    "authorships to another researcher, instead"
)
SAME_RESEARCHER = "authorship {a} is already on researcher {pk}"
NOT_ASSIGNED = "authorship {a} is not assigned to any researcher"
ALREADY = "researcher {pk} is already {state}"
INVALID = "researcher {pk}: {problem}"
NOTHING_TO_UNDO = "event {pk} ({kind}) changed nothing that can be undone"
NOTHING_LEFT_TO_UNDO = (
    "event {pk} ({kind}) moved only authorships {ids}, which no longer exist (a "
    "newer version of their paper dropped them): nothing is left to undo"
)
UNREADABLE_EVENT = (
    "event {pk} cannot be undone: its record was edited by hand and {problem}, "
    "so what to restore cannot be told"
)
SOURCE_NOT_UNDONE = (
    "event {pk} records a change its source made (a new version of {record}): "
    "a curator does not undo it; if the source is wrong, assign the slot the new "
    "version prints (on the paper's page)"
)
ALREADY_UNDONE = "event {pk} was already undone by event {by}; undo that one instead"
UNDO_MOVED = (
    "cannot undo event {pk}: authorship {a} is now on researcher {now}, not {then}; "
    "a later change moved it, undo that change first"
)
UNDO_FIELD = (
    "cannot undo event {pk}: researcher {r} {field} is now {now!r}, not {then!r}; "
    "a later change altered it, undo that change first"
)
UNDO_CLAIM_PENDING = (
    "cannot undo event {pk}: researcher {r} would be {how}, but a user asks to "
    "claim it (claim {claim}); decide the claim first"
)
UNDO_DEAD = (
    "cannot undo event {pk}: authorship {a} would go back to researcher {r}, which "
    "is {how} now; undo that change first"
)
UNDO_HOLDS = (
    "cannot undo event {pk}: researcher {r} would be {how}, but it holds "
    "authorships {ids} that later changes put there; move them first"
)
UNDO_TAKEN = (
    "cannot undo event {pk}: {field} {value} would go back to researcher {r}, but "
    "researcher {other} holds it now; remove it there first"
)
UNDO_PENDING_TWIN = (
    "cannot undo event {pk}: proposal {proposal} would go back to pending, but the "
    "same proposal is pending again already"
)
CLAIM_NOT_PENDING = "claim {pk} is {status}, not pending: it was decided already"
CLAIM_TAKEN = "researcher {pk} is already claimed by another user"
CLAIM_ORCID = "claim {pk}: the researcher's ORCID iD is {have}, the claim gives {given}"
CLAIM_DUPLICATE = "you already have a pending claim on researcher {pk}"


class ResearcherGone(CurationError):
    """The researcher was merged into another, or retired (an undo, or a
    curator's change, left it holding no paper)."""


class ResearcherConflict(CurationError):
    """The change would break an identity rule (a taken or contradicting iD)."""


class ResearcherChanged(CurationError):
    """Someone changed the researcher since the curator loaded the form."""


class InvalidChange(CurationError):
    """The change itself is malformed (no authorships, an invalid iD, ...)."""


class UndoConflict(CurationError):
    """A later change touched what the event changed: undo that one first."""


class NothingToUndo(CurationError):
    """The event moved nothing (a rejection) or was undone already."""


class ClaimError(CurationError):
    """A claim cannot be submitted or decided as asked."""

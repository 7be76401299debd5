"""Curation errors; each message is a module constant, matched by tests and admin."""

from __future__ import annotations

NOT_PENDING = "proposal {pk} is {status}, not pending: it was decided already"
STALE = "proposal {pk} is stale: {reason}"
CONFLICT = "proposal {pk} changed while it was being decided; reload and try again"
LOCKED = "researcher {pk} is locked: automation may propose but not apply changes"
ILLEGAL_TRANSITION = "proposal {pk} cannot go from {old} to {new}"


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


class IllegalTransition(CurationError):
    """A status change not in :data:`curation.services.TRANSITIONS`."""

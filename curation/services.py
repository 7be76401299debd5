"""Every curation write, by the entry points callers use: the matching run,
deciding proposals, curator accounts and the matcher's model versions.

The code lives in modules named for what they do (issue 52), each importing
only the layers below it (``tests/test_import_layers.py``):

- :mod:`curation.matching`: the engine, over plain dataclasses, no ORM;
- :mod:`curation.proposing`: the engine's output diffed against the applied
  state, as proposals;
- :mod:`curation.deciding`: apply, reject, bulk and auto-apply;
- :mod:`curation.matching_run`: proposing then auto-applying, in one process
  or fanned out over Celery workers;
- :mod:`curation.edits` and :mod:`curation.changes`: merge, split, move, lock;
- :mod:`curation.history`: events and undo;
- :mod:`curation.selectors`: reads.

This module only gathers the entry points, so a view, a task or a command
says ``services.proposal_apply`` without knowing the layout.
"""

from __future__ import annotations

from curation.curators import CURATOR_PERMISSIONS, CURATORS_GROUP, curator_ensure
from curation.deciding.apply import proposal_apply, proposal_reject
from curation.deciding.bulk import bulk_decide_run, bulk_decide_start, proposals_decide
from curation.matcher_models import matcher_activate, matcher_train
from curation.matching_run.fanout import (
    MatchingPlan,
    block_locks,
    matching_finish,
    matching_lock,
    matching_plan,
    matching_run_exclusive,
    matching_shard,
)
from curation.matching_run.run import matching_run
from curation.proposing.drafts import PAIRS_RECORDED, proposal_fingerprint
from curation.proposing.saving import proposals_stale_if_dead
from curation.proposing.staleness import proposal_no_longer_fits
from curation.transitions import TRANSITIONS

__all__ = [
    "CURATORS_GROUP",
    "CURATOR_PERMISSIONS",
    "PAIRS_RECORDED",
    "TRANSITIONS",
    "MatchingPlan",
    "block_locks",
    "bulk_decide_run",
    "bulk_decide_start",
    "curator_ensure",
    "matcher_activate",
    "matcher_train",
    "matching_finish",
    "matching_lock",
    "matching_plan",
    "matching_run",
    "matching_run_exclusive",
    "matching_shard",
    "proposal_apply",
    "proposal_fingerprint",
    "proposal_no_longer_fits",
    "proposal_reject",
    "proposals_decide",
    "proposals_stale_if_dead",
]

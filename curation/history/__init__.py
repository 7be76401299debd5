"""Undo any curation event exactly; an undo is itself an event and can be
undone. One event (:mod:`.undo`) or a whole review or bulk action
(:mod:`.batches`); what an
undo would do, or why it is refused, before it is tried (:mod:`.checks`); a
researcher's history and the event ids it reads (:mod:`.reads`); and the
harvest's changes of curated slots, recorded as events (:mod:`.sources`).

Callers say ``history.name``; this package gathers the names (issue 52).
"""

from curation.history.batches import (  # noqa: F401
    NEVER_UNDONE,
    batch_to_undo,
    batch_undo,
    batch_undo_run,
    batch_undo_start,
    bulk_in_force,
    is_review_batch,
    undo_all_asked,
    undo_all_offered,
)
from curation.history.checks import (  # noqa: F401
    RETIREMENT_EVENTS_READ,
    decision_after_undo,
    event_undone,
    retiring_event,
    undo_forbids,
    undo_preview,
    undo_refusal,
    undo_would_forbid,
    undone_merge_pairs,
)
from curation.history.reads import (  # noqa: F401
    MAX_ID,
    UNDOABLE_FIELDS,
    is_id,
    researcher_history,
    unreadable,
)
from curation.history.sources import (  # noqa: F401
    record_source_changes,
    record_source_hiding,
    source_not_undone,
)
from curation.history.undo import (  # noqa: F401
    event_undo,
)

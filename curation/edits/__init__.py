"""Curators' direct edits of researchers: merge, split, move, detach, lock,
edit (:mod:`.direct`), over the steps they share with proposals
(:mod:`.steps`), the locks they take (:mod:`.locks`) and the retirement of a
profile left with no paper (:mod:`.retire`).

Each public function is one service: one transaction, the researchers it touches
locked ``FOR UPDATE``, assignments changed by compare-and-swap, one CurationEvent
with the before and after of everything changed, and the constraints that keep the
decision in force for every later matching run, written in the same transaction.
Curators may edit locked researchers (a lock stops automation, not curators).

Callers say ``edits.name``; this package gathers the names (issue 52).
"""

from curation.edits.direct import (  # noqa: F401
    authorship_detach,
    authorship_move,
    researcher_merge,
    researcher_set_locked,
    researcher_split,
    researcher_update,
)
from curation.edits.renames import (  # noqa: F401
    RENAMED,
    named_by_their_papers,
    renamed_after_papers,
    researchers_renamed,
)
from curation.edits.retire import (  # noqa: F401
    researchers_retire_emptied,
    retire_emptied,
    would_retire,
)
from curation.edits.steps import (  # noqa: F401
    EDITABLE_FIELDS,
    IDENTIFIER_FIELDS,
    MAX_DISPLAY_NAME,
    MERGE_DEPTH,
    _merged_in_follow,
    _merges_of,
    clean_display_name,
    confirm_kept,
    display_name_of,
    held_by,
    merge_into,
    merged_in,
    split_off,
)

"""The curators' admin: the proposal queue with approve and reject actions
(:mod:`.queue_admin`), a proposal's review page (:mod:`.review`), its filters
and lanes (:mod:`.filters`), and the evidence a review page says in words
(:mod:`.evidence`).

Actions are thin: one service call per proposal, errors caught per proposal, one
message "N applied, M skipped (reasons)". ``status`` is read-only; nothing here
``update()``s a curated model.
"""

from curation.admin.proposals.evidence import (  # noqa: F401
    SCORE_MEANING,
    SIDE_NAMED,
    UNREADABLE_SHOWN,
    _between,
    _cluster_evidence,
    _unreadable,
)
from curation.admin.proposals.filters import (  # noqa: F401
    MERGE_ROWS,
    QUEUE_ORDER,
    BlockFilter,
    FieldFilter,
    LaneFilter,
    QueueChangeList,
    ScoreBandFilter,
)
from curation.admin.proposals.queue_admin import (  # noqa: F401
    ProposalAdmin,
)
from curation.admin.proposals.review import (  # noqa: F401
    APPROVE_NEXT,
)

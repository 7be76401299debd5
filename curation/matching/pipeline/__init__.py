"""Authorships to clusters in one block: the scoring and clustering steps
together (:mod:`.clusters`) over the shapes of :mod:`.shapes`, with large
blocks clustered in chunks (:mod:`.chunks`), the evidence-free rule
(:mod:`.evidence_free`), and what is sure and what joins across blocks
(:mod:`.across_blocks`).

Used by the matching run for authorships that match no researcher, by the
quality evaluation (``manage.py evaluate_matching``) and by
``bench/matching.py``, so all three measure the same thing. Callers say
``pipeline.name``; this package gathers the names (issue 52).
"""

from curation.matching.pipeline.across_blocks import (  # noqa: F401
    cluster_all,
    join_across_blocks,
    sure_clusters,
)
from curation.matching.pipeline.clusters import (  # noqa: F401
    CHUNK,
    _cluster_scored,
    cluster_authorships,
)
from curation.matching.pipeline.evidence_free import (  # noqa: F401
    EVIDENCE_FREE_ATTACH_RULE,
    EVIDENCE_FREE_RULE,
    EVIDENCE_FREE_SHARE,
    attach_evidence_free,
    evidence_free,
)
from curation.matching.pipeline.shapes import (  # noqa: F401
    NO_CONSTRAINTS,
    Cluster,
    Constraints,
)

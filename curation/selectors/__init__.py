"""Every curation read, by what it serves: the engine's inputs (:mod:`.views`),
researchers' profiles and snapshots (:mod:`.profiles`), curators' constraints
and identifiers (:mod:`.constraints`), the pending proposals and the queue
(:mod:`.proposals`), the matcher's model (:mod:`.model`), and the curators'
dossier of a researcher (:mod:`.dossier`).

Callers say ``selectors.name``; this package gathers the names (issue 52:
modules named for what they do, each under about 600 lines).
"""

from curation.selectors.constraints import (  # noqa: F401
    OrcidConflict,
    cannot_links,
    confirmed_links,
    curator_merges,
    display_names,
    holders,
    must_links,
    orcid_conflicts,
    orcid_holders,
    orcid_slots,
    orcids_shared,
    researcher_block_keys,
    researcher_revisions,
    unblocked_authorships,
)
from curation.selectors.dossier import (  # noqa: F401
    COAUTHORS_SHOWN,
    DOSSIER_MAX_BYLINE,
    Dossier,
    DossierPaper,
    incoming_papers,
    researcher_dossier,
)
from curation.selectors.model import (  # noqa: F401
    _SHIPPED_WARNED,
    active_model,
    active_weights,
    fallback_description,
    forget_given_rarities,
    joining_threshold,
    matcher_description,
    shipped_weights,
)
from curation.selectors.profiles import (  # noqa: F401
    PROFILE_MEMORY,
    BlockLinks,
    ResearcherSnapshot,
    Suspect,
    Visitor,
    block_links,
    moved_away_since,
    researcher_names,
    researcher_profile,
    researcher_snapshot,
    visiting_profiles,
)
from curation.selectors.proposals import (  # noqa: F401
    LARGE_COLLABORATION,
    known_fingerprints,
    merge_name_warnings,
    next_pending,
    pending_attaches_of_other_models,
    pending_auto_apply,
    pending_dead_proposals,
    pending_superseded_proposals,
    proposal_queue,
)
from curation.selectors.views import (  # noqa: F401
    CHUNK,
    DEAD_ATTACH,
    authorship_views,
    corpus_given_rarities,
    matchable_views,
    pending_attach_names,
    pending_attach_papers,
)

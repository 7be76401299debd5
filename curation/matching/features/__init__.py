"""What the pairwise model reads: the plain views of an authorship and a
profile (:mod:`.views`), the corpus's name rarities (:mod:`.rarities`), and
the features of a pair with their evidence (:mod:`.evidence`). Pure: no ORM.

Callers say ``features.name``; this package gathers the names (issue 52).
"""

from curation.matching.features.evidence import (  # noqa: F401
    TITLE_NEUTRAL,
    YEARS_APART_CAP,
    Features,
    authorship_profile_features,
    field_archive,
    field_conflict,
    names_conflict,
    names_meet,
    profile_profile_features,
    source_ids_of,
    title_similarity,
    with_text_vectors,
)
from curation.matching.features.rarities import (  # noqa: F401
    BLOCK_REPEAT_CAP,
    BLOCK_REPEAT_MIN_PRINTED,
    BLOCK_REPEAT_UNKNOWN,
    NameRarities,
    block_repeats,
    family_name_rarities,
    given_name_rarities,
    rarities_from_counts,
)
from curation.matching.features.views import (  # noqa: F401
    COAUTHOR_MAX_BYLINE,
    MAIN_AFFILIATION_SHARE,
    AuthorshipView,
    ProfileView,
    affiliation_tokens,
    centroid,
    coauthor_keys_of,
    full_given_key,
    given_form,
    profile_of,
)

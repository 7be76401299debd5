"""The curators' admin of researchers: the list, the change page with its
authorships, and the direct edits (merge, split, move, detach, lock, edit),
each one service call (:mod:`.researcher_admin`), with the list's filter and
the edit form and inline (:mod:`.parts`).
"""

from curation.admin.researchers.parts import (  # noqa: F401
    PERM,
    ResearcherAuthorshipInline,
    ResearcherForm,
    StateFilter,
)
from curation.admin.researchers.researcher_admin import (  # noqa: F401
    ResearcherAdmin,
)

"""Labelled sets read as the engine's inputs: INSPIRE Wang (beard format,
:mod:`.beard`), S2AND sets (:mod:`.s2and`) and the ORCID-linked set, each a
:class:`~curation.matching.labelled_set.LabelledSet` of authorship views, gold
clusters and seeds (:mod:`.sets`), from records read with checks that name
the record and the problem (:mod:`.records`),
through what both formats share (:mod:`.mentions`).

Callers say ``labelled.name``; this package gathers the names (issue 52).
"""

from curation.matching.labelled.records import (  # noqa: F401
    _kind,
)
from curation.matching.labelled.sets import (  # noqa: F401
    DATA_DIR_HINT,
    DEFAULT_SETS,
    EVALUATED_SETS,
    SHIPPED_SETS,
    load,
    not_a_folder,
    orcid_linked_corpora,
)
from curation.matching.labelled_set import (  # noqa: F401
    ORCID_LINKED,
    DatasetError,
    LabelledSet,
)

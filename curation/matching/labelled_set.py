"""What a labelled author-disambiguation set is, apart from how it is read:
:class:`LabelledSet`, :class:`DatasetError` and the ORCID-linked set's name.

Shared by :mod:`curation.matching.labelled` (the folder readers) and
:mod:`curation.matching.orcid_linked` (the set built from the corpora), so
neither imports the other to know them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from curation.matching.features import AuthorshipView

# The ORCID-linked set (:mod:`curation.matching.orcid_linked`) has no folder
# of its own: it is built from the Crossref and OpenAlex corpora of a data
# folder. The pseudo-path ``<data folder>/orcid-linked`` names it (no such
# folder exists there; a real folder of that name is read as any other), and a
# bare ``orcid-linked`` means WOVEPAPER_DATA_DIR's; so a default set list names
# it under WOVEPAPER_DATA_DIR like the others, and ``--dataset orcid-linked``
# works from any directory.
ORCID_LINKED = "orcid-linked"


@dataclass(frozen=True)
class LabelledSet:
    """Mentions as matcher views, and the gold cluster of each.

    Attributes:
        name: the dataset's folder name (``orcid-linked`` for the ORCID-linked
            set, :data:`ORCID_LINKED`).
        views: one AuthorshipView per mention; ``id`` is the mention's index in
            ``mention_ids``.
        mention_ids: the dataset's own signature ids, by view id.
        gold: view id -> gold cluster id.
        raw_names: view id -> the name as the dataset prints it.
        must_link, cannot_link: ``(view id, view id)`` pairs the set's cluster
            seeds require to share a cluster or to stay apart (S2AND's
            ``cluster_seeds.json``, ``require`` and ``disallow``: what a
            curator's decisions are to matching); empty without seeds.
        seeds_dropped: one ``"<sig>-<sig>: why"`` per seed left out (see
            ``_seeds``: of another kind, naming a signature without a gold
            cluster or one left out, one signature twice, a pair seeded both
            ways) and per disallow kept between signatures require seeds join.
        left_out: one ``"<file>: <record>: why"`` per signature record left
            out (its name, ids or author fields are not what the format
            prints) and per part of a record read without (an affiliation
            that is not a string, a paper whose byline cannot be read): one
            broken record costs itself, not the set.
        affiliations: view id -> the affiliation strings as the dataset
            prints them (the views keep their content words only); empty
            for the ORCID-linked set.
    """

    name: str
    views: list[AuthorshipView]
    mention_ids: list[str]
    gold: dict[int, str]
    raw_names: dict[int, str]
    must_link: frozenset[tuple[int, int]] = frozenset()
    cannot_link: frozenset[tuple[int, int]] = frozenset()
    seeds_dropped: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    affiliations: dict[int, tuple[str, ...]] = field(default_factory=dict)


class DatasetError(ValueError):
    """The folder holds no labelled set the readers read; the message says why."""

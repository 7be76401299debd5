"""Which labelled sets there are (default, shipped, evaluated) and where,
and :func:`load`, which reads one as authorship views with the corpus's name
rarities and block repeats.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from curation.matching import orcid_linked
from curation.matching.labelled.beard import _load_beard
from curation.matching.labelled.s2and import _load_s2and
from curation.matching.labelled_set import ORCID_LINKED, DatasetError, LabelledSet

# Said when a default labelled set is missing: where the commands look.
DATA_DIR_HINT = (
    " (the labelled sets are read under WOVEPAPER_DATA_DIR/and:"
    " set WOVEPAPER_DATA_DIR=/path/to/shared/data)"
)


def orcid_linked_corpora(folder: Path) -> Path | None:
    """The data folder the ORCID-linked set named by ``folder`` is built from,
    or None when ``folder`` does not name it (see :data:`ORCID_LINKED`).

    Args:
        folder: a dataset path as given to the commands.

    Returns:
        ``folder``'s parent for ``<data folder>/orcid-linked``,
        ``settings.WOVEPAPER_DATA_DIR`` for a bare ``orcid-linked``; None for
        any other path, and for a real file or folder of that name.
    """
    if folder.name != ORCID_LINKED or folder.exists():
        return None
    if folder.parent == Path():
        from django.conf import settings

        return Path(settings.WOVEPAPER_DATA_DIR)
    return folder.parent


def not_a_folder(folder: Path) -> str:
    """Why ``folder`` cannot hold a labelled set ("" when it is a folder, or
    names the ORCID-linked set of a data folder that exists): for the
    commands' errors."""
    corpora = orcid_linked_corpora(folder)
    if corpora is not None and not corpora.is_dir():
        return f"the ORCID-linked set is built from {corpora}, which is no folder"
    if corpora is not None or folder.is_dir():
        return ""
    if folder.is_file():
        return "a file, not a folder (name the labelled set's folder)"
    return "no such folder"


# The labelled sets trained on by default, under WOVEPAPER_DATA_DIR.
DEFAULT_SETS = ("and/beard_inspire_wang", "and/s2and/qian_partial")
# The sets evaluate_matching scores by default: those, the MEDLINE pair gold
# standard (curation.matching.labelled_pairs; its train pairs are not in
# DEFAULT_SETS: a model trained on them weighs co-authors and fields by MeSH
# headings and journals, not arXiv categories) and S2AND's set with cluster seeds.
# The sets the shipped model file is trained on (train_matcher --ship): every
# labelled set of shared/data/and but S2AND's 9-mention dummy bundle, and the
# ORCID-linked set built from the bundled corpora (ORCID_LINKED).
SHIPPED_SETS = (
    *DEFAULT_SETS,
    "and/medline_vishnyakova_pairs",
    ORCID_LINKED,
)
EVALUATED_SETS = (
    *DEFAULT_SETS,
    "and/medline_vishnyakova_pairs",
    "and/s2and/dummy",
)


def load(
    folder: Path, *, embed: Callable[[list[str]], np.ndarray] | None = None
) -> LabelledSet:
    """Read a labelled set from its folder.

    Args:
        folder: a folder holding ``wang_signatures.json`` and ``wang_clusters.json``
            (beard format) or ``signatures.json`` and ``clusters.json`` (S2AND),
            or the pseudo-path of the ORCID-linked set (:data:`ORCID_LINKED`,
            :func:`curation.matching.orcid_linked.load`).
        embed: texts to unit vectors, for the sets that print titles and
            abstracts (the ORCID-linked set; Wang and Qian print none).

    Returns:
        The LabelledSet; mentions without a gold cluster are left out, and so
        is each signature record that cannot be read (``LabelledSet.left_out``
        names it and why): one broken record costs itself, not the set.

    Raises:
        DatasetError: neither format is there, or both are (which set is meant
            cannot be told), a file of it cannot be read or
            is not the shape its format has (named with the problem), its
            cluster file names a signature twice or one the signature file
            lacks, or no mention has a gold cluster.
    """
    corpora = orcid_linked_corpora(folder)
    if corpora is not None:
        return orcid_linked.load(corpora, embed=embed)
    beard = (folder / "wang_signatures.json").is_file()
    s2and = (folder / "signatures.json").is_file()
    if beard and s2and:
        # Which one was meant cannot be told; reading one in silence would
        # score another set than the one named.
        raise DatasetError(
            f"{folder}: holds both a beard set (wang_signatures.json) and an "
            "S2AND set (signatures.json): give each labelled set a folder of its own"
        )
    if beard:
        read = _load_beard
    elif s2and and (folder / "clusters.json").is_file():
        read = _load_s2and
    else:
        raise DatasetError(
            f"{folder}: no wang_signatures.json (beard) or signatures.json + "
            "clusters.json (S2AND) here, nor a pair set (*_pairs_train.csv, "
            "*_pairs_test.csv and pubmed_articles.tar.xz)"
        )
    try:
        data = read(folder)
    except DatasetError:
        raise
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        # Missing or unreadable files, bad JSON, records of another shape.
        raise DatasetError(
            f"{folder}: not a {read.__name__.removeprefix('_load_')} labelled set: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not data.views:
        why = (
            f"{len(data.left_out)} signature records left out or read in part, "
            f"first: {'; '.join(data.left_out[:3])}"
            if data.left_out
            else "do the cluster files name the signature ids the signature file uses?"
        )
        raise DatasetError(f"{folder}: no mention has a gold cluster ({why})")
    return data

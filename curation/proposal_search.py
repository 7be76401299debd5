"""What a curator's search of the proposal queue finds, through indexes only.

Django's admin search (``search_fields``) reads every proposal with its
authorships, papers and researchers joined and compares each field with
``icontains``: about 2 s over all statuses with 100,000 proposals (issue 48;
``bench/admin_search.py``). A curator searches for a person, a paper or an iD,
so each kind of term goes straight to the index that holds it:

- ``#123`` or ``123``: that proposal;
- an arXiv id (``2201.05500``, ``arXiv:hep-th/9901001v2``) or a DOI: the
  proposals holding that paper's authorships;
- an ORCID iD: the proposals holding authorships, or naming researchers, with
  that iD;
- anything else is a name: read as a family name it finds every block of it
  (``Del Maestro``: ``maestro a``, ``maestro j``, ...), read as a full name
  the block of that name and of its readings (``A. Del Maestro``:
  :func:`curation.names.block_key_variants`); ``maestro a`` is a block key as
  matching writes it.
"""

from __future__ import annotations

import re

from django.db.models import Q

from curation import names
from curation.models import Proposal
from wovepaper.identifiers import (
    arxiv_id_normalise,
    doi_check,
    orcid_normalise,
)
from wovepaper.models import Researcher

SEARCH_HELP = (
    "A name (Del Maestro, A. Del Maestro), a block key (maestro a), an arXiv id, "
    "a DOI, an ORCID iD or a proposal number (#123)."
)
# A proposal number as typed: digits, with or without "#"; at most PostgreSQL's
# bigint.
_NUMBER_RE = re.compile(r"^#?([0-9]{1,18})$", re.ASCII)
# A block key as matching writes it: folded words, a space, one initial.
_BLOCK_KEY_RE = re.compile(r"^[a-z0-9'\-]+ [a-z]$", re.ASCII)


def _holding(**authorship: object) -> Q:
    """Proposals holding an authorship that matches ``authorship`` lookups."""
    through = Proposal.authorships.through.objects.filter(
        **{f"authorship__{k}": v for k, v in authorship.items()}
    )
    return Q(pk__in=through.values("proposal_id"))


def proposals_matching(term: str) -> Q:
    """The proposals a search term names, as a filter.

    Args:
        term: what the curator typed (any text).

    Returns:
        A ``Q`` over Proposal; ``Q(pk__in=[])`` (nothing) for a term that names
        nothing (blank, or a name with no letters).
    """
    text = " ".join(term.split())
    if not text:
        return Q(pk__in=[])
    if number := _NUMBER_RE.match(text):
        return Q(pk=int(number.group(1)))
    try:
        return _holding(paper__arxiv_id=arxiv_id_normalise(text))
    except ValueError:
        pass
    try:
        return _holding(paper__doi=doi_check(text))
    except ValueError:
        pass
    try:
        orcid = orcid_normalise(text)
    except ValueError:
        pass
    else:
        # Subqueries, not joins: an OR over joined tables reads every row.
        holders = Researcher.objects.filter(orcid=orcid).values("pk")
        return (
            _holding(orcid=orcid)
            | Q(researcher_id__in=holders)
            | Q(other_researcher_id__in=holders)
        )
    return _named(text)


def _named(text: str) -> Q:
    """Proposals in the blocks of a block key, or of the text read as a family
    name (every initial), or as a full name (its block and its readings'):
    ``Del Maestro`` is either."""
    folded = names.fold(text)
    if _BLOCK_KEY_RE.match(folded):
        return Q(block_key=folded)
    found = Q(pk__in=[])
    # block_key puts the family core first, then a space and the initial.
    core = names.block_key("x", text)[:-1]
    if core.strip():
        found |= Q(block_key__startswith=core) | Q(block_key=core.strip())
    parsed = names.parse_name(text)
    if parsed.given and parsed.family:
        keys = set(names.block_key_variants(parsed.given, parsed.family)) - {""}
        found |= Q(block_key__in=sorted(keys))
    return found

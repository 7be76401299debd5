"""Name normalisation for author matching: pure functions, no ORM.

Every rule is documented where it is applied, with its source. The general
sources are:

- arXiv bylines as printed in ``.abs`` files (``Authors:`` lines, BibTeX-style LaTeX
  accents, glued initials such as ``D.Peressounko``), arXiv OAI-PMH
  ``arXiv/authors/author/keyname`` and ``forenames``.
- INSPIRE author names (``"Wang, Zheng"``, ``"Wang, W.F."``: family, comma, given), as
  in the beard ``wang_signatures.json`` sample, ``author_name``.
- The BibTeX name grammar (Patashnik, *BibTeXing*, 1988, section 4: "First von Last",
  "von Last, First", "von Last, Jr, First").
- The Chicago Manual of Style, 17th ed., chapter 8 "Names and Terms" (particles,
  Spanish two-part surnames, Chinese, Japanese, Korean and Vietnamese name order)
  and chapter 6 (commas with Jr., Sr., III).

The outputs are used in three ways: :class:`PersonName` (what the byline said,
cleaned; :mod:`.parsing`), :func:`name_key` (a precise key stored on every
authorship) and :func:`block_key` / :func:`block_key_variants` (a coarse key that
decides which pairs are ever compared, so it errs on the side of recall; both in
:mod:`.keys`). Given names are compared in :mod:`.given`, their words read in
:mod:`.tokens`; text is cleaned and folded in :mod:`.text`; the name tables are
in :mod:`.tables`.

Callers say ``names.name``; this package gathers the names (issue 52).
"""

from curation.names.given import (  # noqa: F401
    COMPATIBLE_SIMILARITY,
    MAX_GIVEN_WORDS,
    display_name_fits,
    given_name_similarity,
    given_names_compatible,
    spelling_variants,
)
from curation.names.keys import (  # noqa: F401
    READING_KINDS,
    Reading,
    block_key,
    block_key_readings,
    block_key_variants,
    family_core,
    name_key,
    sub_block_key,
)
from curation.names.parsing import (  # noqa: F401
    PersonName,
    initials,
    is_collaboration,
    parse_name,
)
from curation.names.tables import (  # noqa: F401
    _CHINESE_SURNAMES,
    _EAST_ASIAN_SURNAMES,
)
from curation.names.text import (  # noqa: F401
    NAME_CACHE_CHARS,
    NAME_CACHE_SIZE,
    fold,
    latex_to_unicode,
    remembered,
)
from curation.names.tokens import (  # noqa: F401
    pinyin_syllables,
    reads_as_pinyin,
)

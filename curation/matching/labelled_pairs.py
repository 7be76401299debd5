"""The MEDLINE author-pair gold standard, read into matcher views.

Vishnyakova, Rodriguez-Esteban and Rinaldi (2019), "A new approach and gold
standard toward author disambiguation in MEDLINE", JAMIA 26(10):1037-1045
(doi:10.1093/jamia/ocz028). Its folder (``shared/data/and/medline_vishnyakova_pairs``,
see SOURCES.md) holds:

- ``*_pairs_train.csv`` and ``*_pairs_test.csv``: ``;``-separated, with the
  header ``PMID1;Last_name1;Initials1;First_name1;PMID2;Last_name2;Initials2;
  First_name2;Authorship`` (the test file spells ``Inititals2``; columns are read
  by position); ``Authorship`` is ``YES`` (one person) or ``NO``. Both mentions
  of a pair share a family name and a first initial: every pair sits in one
  block, so the set measures the pairwise scorer, not blocking.
- ``pubmed_articles.tar.xz``: the PubMed efetch XML (``PubmedArticleSet``) of the
  pairs' articles, with each byline (``LastName``, ``ForeName``, ``Initials``,
  ``AffiliationInfo``, ORCID ``Identifier``), the journal and the MeSH headings.

A mention is the author of its article whose family name (folded; a name
spelled with a ``?`` for a lost diacritic is compared by similarity) and first
initial are the row's. Its view carries what the article says: given and family
name, affiliations, ORCID, co-authors (:func:`coauthor_keys_of`), year, and as
its fields the journal and the MeSH descriptors (``journal:<NLM id>``,
``mesh:<descriptor id>``: the ``categories`` feature compares them as it
compares arXiv categories). Name rarities are counted over every author of the
articles. A row whose article or author cannot be found, or whose label is
neither YES nor NO (the test file has one ``N0``), is left out and named.
"""

from __future__ import annotations

import codecs
import re
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz

from curation import names
from curation.matching.features import (
    BLOCK_REPEAT_UNKNOWN,
    AuthorshipView,
    NameRarities,
    affiliation_tokens,
    coauthor_keys_of,
    full_given_key,
    with_text_vectors,
)
from curation.matching.labelled import DatasetError
from harvest.records import RecordError
from harvest.sources.safe_xml import element_text, parse_xml
from wovepaper.embeddings import paper_text
from wovepaper.identifiers import orcid_normalise

ARTICLES = "pubmed_articles.tar.xz"
# Largest pairs file and largest article read (bytes). The real files are 82 KB
# and at most 60 KB an article; the caps keep a hostile file (a link to
# /dev/zero, a small xz holding gigabytes) from filling memory.
MAX_PAIRS_FILE = 50 * 2**20
MAX_ARTICLE = 10 * 2**20
_HEADER = "PMID1"
# Least rapidfuzz ratio (0-100) between two folded family names read as one
# when they are not equal: "Blagoveshchenski?" (a lost diacritic) and
# "Blagoveshchenskii" score 94, "Alodaib" and "al Odaib" 100 once spaces go.
SIMILAR_FAMILY = 85


@dataclass(frozen=True)
class LabelledPair:
    """Two mentions and whether they are one person.

    Attributes:
        a, b: the mentions as matcher views.
        same: the gold label (``Authorship`` YES).
        where: ``"<file>:<line>"`` of the row.
    """

    a: AuthorshipView
    b: AuthorshipView
    same: bool
    where: str


@dataclass(frozen=True)
class PairSet:
    """A labelled pair set, split as its authors split it.

    Attributes:
        name: the folder's name.
        train, test: the pairs of the train and the test file.
        skipped: one ``"<file>:<line>: <why>"`` per row left out.
        shared_pmids: PMIDs named by both a train and a test pair (the two files
            are not split by person; a learned model scored on the test pairs
            may have seen these articles' authors).
        train_left_out: how many of ``skipped`` are train rows.
    """

    name: str
    train: list[LabelledPair]
    test: list[LabelledPair]
    skipped: list[str]
    shared_pmids: int
    train_left_out: int = 0


@dataclass(frozen=True)
class _Author:
    family: str
    given: str
    initials: str
    affiliations: tuple[str, ...]
    orcid: str


@dataclass(frozen=True)
class _Article:
    pmid: str
    authors: tuple[_Author, ...]
    fields: frozenset[str]
    year: int | None
    text: str = ""


def is_pair_set(folder: Path) -> bool:
    """Whether ``folder`` holds a pair set this module reads (train and test
    files and the articles). A folder that holds S2AND or beard files besides
    is read as a pair set."""
    return (
        (folder / ARTICLES).is_file()
        and any(folder.glob("*_pairs_train.csv"))
        and any(folder.glob("*_pairs_test.csv"))
    )


def _pairs_file(folder: Path, kind: str) -> Path:
    """The folder's one ``*_pairs_<kind>.csv``.

    Raises:
        DatasetError: none that is a regular file, or several.
    """
    found = sorted(p for p in folder.glob(f"*_pairs_{kind}.csv") if p.is_file())
    if len(found) != 1:
        names_ = ", ".join(p.name for p in found) or "none that is a regular file"
        raise DatasetError(f"{folder}: one *_pairs_{kind}.csv wanted, found {names_}")
    return found[0]


def load_pairs(
    folder: Path, *, embed: Callable[[list[str]], np.ndarray] | None = None
) -> PairSet:
    """Read a MEDLINE pair set.

    Args:
        folder: a folder holding ``*_pairs_train.csv``, ``*_pairs_test.csv`` and
            ``pubmed_articles.tar.xz``.
        embed: texts to unit vectors (``wovepaper.embeddings.embed_cached``):
            each mention then carries the embedding of its article's title and
            abstract (``AuthorshipView.text_vector``, the ``title_similarity``
            feature); None leaves them without.

    Returns:
        The PairSet (rows that cannot be used are in ``skipped``).

    Raises:
        DatasetError: a file is missing or unreadable (the tarball, a pairs
            file), or no pair could be used (each named with the problem). An
            unreadable article costs only the pairs that name it.
    """
    if not is_pair_set(folder):
        raise DatasetError(
            f"{folder}: no *_pairs_train.csv, *_pairs_test.csv and {ARTICLES} here"
        )
    rows = {kind: _read_rows(_pairs_file(folder, kind)) for kind in ("train", "test")}
    try:
        articles, unreadable = _read_articles(folder / ARTICLES)
    except (OSError, tarfile.TarError, EOFError) as exc:
        # A damaged tarball: its members cannot be told apart from then on.
        raise DatasetError(
            f"{folder / ARTICLES}: unreadable ({type(exc).__name__}: {exc})"
        ) from exc
    rarities = NameRarities.of(
        (a.given, a.family) for article in articles.values() for a in article.authors
    )
    views: dict[tuple[str, int], AuthorshipView] = {}
    skipped: list[str] = []
    split: dict[str, list[LabelledPair]] = {"train": [], "test": []}
    for kind, kind_rows in rows.items():
        for where, row in kind_rows:
            pair, why = _pair(row, articles, unreadable, views, rarities)
            if pair is None:
                skipped.append(f"{where}: {why}")
            else:
                split[kind].append(LabelledPair(*pair, where))
        if kind == "train":
            train_left_out = len(skipped)
    if embed is not None:
        split = _with_texts(split, articles, views, embed)
    if not split["train"] and not split["test"]:
        why = (
            f"{len(skipped)} rows left out, first: {'; '.join(skipped[:3])}"
            if skipped
            else "the pair files hold no row"
        )
        raise DatasetError(f"{folder}: no usable pair ({why})")
    train_pmids = {v.paper_id for p in split["train"] for v in (p.a, p.b)}
    test_pmids = {v.paper_id for p in split["test"] for v in (p.a, p.b)}
    return PairSet(
        folder.name,
        split["train"],
        split["test"],
        skipped,
        len(train_pmids & test_pmids),
        train_left_out,
    )


def _with_texts(
    split: dict[str, list[LabelledPair]],
    articles: dict[str, _Article],
    views: dict[tuple[str, int], AuthorshipView],
    embed: Callable[[list[str]], np.ndarray],
) -> dict[str, list[LabelledPair]]:
    """The pairs again, each mention given its article's text vector."""
    texts = {view.paper_id: articles[pmid].text for (pmid, _), view in views.items()}
    embedded = {v.id: v for v in with_text_vectors(list(views.values()), texts, embed)}
    return {
        kind: [
            LabelledPair(embedded[p.a.id], embedded[p.b.id], p.same, p.where)
            for p in pairs
        ]
        for kind, pairs in split.items()
    }


def _read_rows(path: Path) -> list[tuple[str, list[str]]]:
    """``[("<file>:<line>", cells)]`` of the data rows.

    A line is a row and ``;`` parts its cells (the files quote nothing, so a
    stray ``"`` is a character, not the start of a field that swallows the
    rest). The header is skipped when there is one (its first cell is
    ``PMID1``). The files are not in one encoding: the train file is UTF-8
    (with U+FFFD where the original lost a letter, "Bartholom\ufffd"), the
    test file Latin-1 ("Dur\xe1n"). A UTF-16 byte-order mark is honoured;
    else UTF-8 is tried, then Windows-1252, whose letters are Latin-1's.

    Raises:
        DatasetError: the file cannot be read or is over
            :data:`MAX_PAIRS_FILE` bytes (named).
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_PAIRS_FILE + 1)
    except OSError as exc:
        raise DatasetError(f"{path}: unreadable ({exc})") from exc
    if len(data) > MAX_PAIRS_FILE:
        raise DatasetError(f"{path}: over {MAX_PAIRS_FILE // 2**20} MB")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("cp1252", errors="replace")
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        cells = [c.strip() for c in line.split(";")]
        if not any(cells) or (number == 1 and cells[0].upper() == _HEADER):
            continue
        out.append((f"{path.name}:{number}", cells))
    return out


def _read_articles(path: Path) -> tuple[dict[str, _Article], dict[str, str]]:
    """Every article of the tarball by PMID, and why each unreadable member
    (empty, not well-formed or unsafe XML) was passed over, by the PMID its
    name gives (``pubmed_articles/<PMID>.xml``): one bad file costs only the
    pairs that name it."""
    articles: dict[str, _Article] = {}
    unreadable: dict[str, str] = {}
    with tarfile.open(path, mode="r:xz") as tar:
        for member in tar:
            if not member.isfile() or not member.name.lower().endswith(".xml"):
                continue
            where = f"{path.name}:{member.name}"
            stem = Path(member.name).stem
            if member.size > MAX_ARTICLE:
                unreadable[stem] = f"{where}: over {MAX_ARTICLE // 2**20} MB"
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            try:
                root = parse_xml(handle.read(), where)
            except RecordError as exc:
                unreadable[stem] = str(exc)
                continue
            for element in root.iter("PubmedArticle"):
                article = _article(element)
                # The first article of a PMID stands; a second member
                # claiming it does not replace it.
                if article.pmid and article.pmid not in articles:
                    articles[article.pmid] = article
    return articles, unreadable


def _article(element) -> _Article:
    citation = element.find("MedlineCitation")
    if citation is None:
        return _Article("", (), frozenset(), None)
    abstract = " ".join(
        text
        for part in citation.iterfind("Article/Abstract/AbstractText")
        if (text := element_text(part))
    )
    title = element_text(citation.find("Article/ArticleTitle"))
    authors = []
    for author in citation.iterfind("Article/AuthorList/Author"):
        family = element_text(author.find("LastName"))
        if not family:  # a CollectiveName: a group, not a person
            continue
        orcid = ""
        for identifier in author.iterfind("Identifier"):
            if identifier.get("Source") == "ORCID":
                try:
                    orcid = orcid_normalise(element_text(identifier))
                except ValueError:  # a malformed iD is no evidence
                    orcid = ""
        initials = element_text(author.find("Initials"))
        authors.append(
            _Author(
                family=family,
                given=element_text(author.find("ForeName")) or initials,
                initials=initials,
                affiliations=tuple(
                    text
                    for info in author.iterfind("AffiliationInfo/Affiliation")
                    if (text := element_text(info))
                ),
                orcid=orcid,
            )
        )
    journal = element_text(citation.find("MedlineJournalInfo/NlmUniqueID"))
    fields = {f"journal:{journal}"} if journal else set()
    fields |= {
        f"mesh:{d.get('UI') or element_text(d)}"
        for d in citation.iterfind("MeshHeadingList/MeshHeading/DescriptorName")
    }
    year_text = element_text(citation.find("Article/Journal/JournalIssue/PubDate/Year"))
    if not year_text:  # <MedlineDate>1998 Dec-1999 Jan</MedlineDate>
        year_text = element_text(
            citation.find("Article/Journal/JournalIssue/PubDate/MedlineDate")
        )[:4]
    return _Article(
        element_text(citation.find("PMID")),
        tuple(authors),
        frozenset(fields),
        int(year_text) if _DIGITS.fullmatch(year_text) else None,
        paper_text(title, abstract) if title or abstract else "",
    )


# ASCII digits only: str.isdigit() also takes "²", which int() refuses.
_DIGITS = re.compile(r"[0-9]{1,18}")


def _letters(text: str) -> str:
    return "".join(ch for ch in names.fold(text) if ch.isalpha())


# Printed in the files where the original lost a letter ("Ze?evi?",
# "Bartholom\ufffd"): each stands for one letter when names are compared.
_LOST = "?\ufffd"


def _family_pattern(family: str) -> re.Pattern | None:
    """A family name with lost letters as a pattern of its folded letters
    (``"Ze?evi?"`` matches ``"zecevic"``); None when no letter was lost."""
    if not any(ch in _LOST for ch in family):
        return None
    parts = ["." if ch in _LOST else re.escape(_letters(ch)) for ch in family]
    return re.compile("".join(parts))


def _missing(cell: str) -> str:
    """A cell's text; "" for the files' ``null``."""
    return "" if cell.lower() == "null" else cell


def _find_author(
    article: _Article, family: str, initials: str, given: str
) -> int | None:
    """The byline index of the author a row names, or None.

    Family names equal once folded (a lost letter matching any one), else
    similar (:data:`SIMILAR_FAMILY`); among them those whose first initial is
    the row's; if several, the one whose given name, else whose initials, are
    the row's. None when none or several fit alike.
    """
    wanted, pattern = _letters(family), _family_pattern(family)
    first = _letters(initials or given)[:1]

    def same_family(author: _Author) -> bool:
        letters = _letters(author.family)
        return letters == wanted or bool(pattern and pattern.fullmatch(letters))

    found = [i for i, a in enumerate(article.authors) if same_family(a)] or [
        i
        for i, a in enumerate(article.authors)
        if fuzz.ratio(_letters(a.family), wanted) >= SIMILAR_FAMILY
    ]
    found = [
        i for i in found if not first or _letters(article.authors[i].given)[:1] == first
    ]
    for part, wanted_part in (("given", given), ("initials", initials)):
        if len(found) > 1 and wanted_part:
            alike = [
                i
                for i in found
                if _letters(getattr(article.authors[i], part)) == _letters(wanted_part)
            ]
            found = alike or found
    return found[0] if len(found) == 1 else None


def _view(
    article: _Article, index: int, view_id: int, rarities: NameRarities
) -> AuthorshipView:
    author = article.authors[index]
    given = names.latex_to_unicode(author.given)
    return AuthorshipView(
        id=view_id,
        paper_id=(
            int(article.pmid) if _DIGITS.fullmatch(article.pmid) else hash(article.pmid)
        ),
        given=given,
        family=author.family,
        block_key=names.block_key(given, author.family),
        orcid=author.orcid,
        coauthor_keys=coauthor_keys_of(
            [
                (i, names.name_key(a.given, a.family))
                for i, a in enumerate(article.authors)
            ],
            own=index,
        ),
        categories=article.fields,
        year=article.year,
        affiliation_tokens=affiliation_tokens(author.affiliations),
        given_rarity=rarities.get(full_given_key(given), 0.0),
        family_rarity=rarities.family.get(names.fold(author.family), 0.0),
        # Articles fetched pair by pair are no corpus whose blocks could say
        # how often their affiliations repeat.
        block_repeat=BLOCK_REPEAT_UNKNOWN,
        authors=len(article.authors),
    )


def _pair(
    row: list[str],
    articles: dict[str, _Article],
    unreadable: dict[str, str],
    views: dict[tuple[str, int], AuthorshipView],
    rarities: NameRarities,
) -> tuple[tuple[AuthorshipView, AuthorshipView, bool] | None, str]:
    """The row's two mentions and label, or ``(None, why it is left out)``."""
    if len(row) < 9:
        return None, f"{len(row)} columns, not 9"
    label = row[8].upper()
    if label not in {"YES", "NO"}:
        return None, f"label {row[8]!r} is neither YES nor NO"
    mentions = []
    for side, (pmid, family, initials, given) in enumerate((row[0:4], row[4:8]), 1):
        pmid, family, initials, given = map(_missing, (pmid, family, initials, given))
        if not pmid:
            return None, f"no PMID for mention {side}"
        article = articles.get(pmid)
        if article is None:
            if pmid in unreadable:
                return (
                    None,
                    f"the article of PMID {pmid} is unreadable ({unreadable[pmid]})",
                )
            return None, f"PMID {pmid} is not among the articles"
        index = _find_author(article, family, initials, given)
        if index is None:
            printed = " ".join(filter(None, (family, given or initials)))
            return None, (
                f"the byline of PMID {pmid} has no author, or several alike, "
                f"for {printed!r}"
            )
        key = (pmid, index)
        if key not in views:
            views[key] = _view(article, index, len(views), rarities)
        mentions.append(views[key])
    a, b = mentions
    if a.id == b.id:
        return None, f"both mentions are one authorship of PMID {row[0]}"
    return (a, b, label == "YES"), ""

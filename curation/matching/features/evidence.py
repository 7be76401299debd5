"""The features of a pair (:class:`Features`): name agreement and rarity,
ORCID iDs, co-authors, fields, affiliations, source author ids, years, and
title-and-abstract similarity; for an authorship against a profile and for
two profiles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from curation import names
from curation.matching.features.views import (
    AuthorshipView,
    ProfileView,
    _main_affiliation,
    full_given_key,
    given_form,
)


@dataclass(frozen=True)
class Features:
    """Feature values of one pair.

    Attributes:
        orcid: 1.0 both carry the same ORCID, -1.0 both carry different ones, 0.0 else.
        name: best given-name similarity in [0, 1]
            (:func:`curation.names.given_name_similarity`); 0.0 means incompatible.
        coauthors: number of shared co-author name keys (0, 1, 2 ...).
        categories: Jaccard overlap of arXiv categories in [0, 1].
        field_conflict: 1.0 when both sides carry arXiv categories and share
            no arXiv archive (:func:`field_archive`: ``hep-ex`` against
            ``astro-ph``; ``cond-mat.str-el`` meets ``cond-mat.mes-hall``),
            else 0.0. Fields apart are evidence against, fields unknown none:
            a model trained on labelled sets without fields (Wang, Qian) has a
            bias for pairs of unknown fields, which ``categories`` alone only
            raises, so two bare "J. Varela" of hep-ex and astro-ph scored 0.75
            in the bundled arXiv data.
        same_paper: 1.0 when both sides hold an authorship of the same paper (the pair
            cannot be one person), else 0.0.
        affiliation: Jaccard overlap of affiliation content words in [0, 1]; 0.0
            when either side printed none.
        rare_name: when both sides print the same full given name (not initials),
            how rare that name is in the corpus, in [0, 1]; else 0.0. Two
            "Shang-Yung Wang" are likely one person, two "Wei Wang" much less so.
        same_given: 1.0 when both sides print a full given name the same way
            (:func:`given_form`: ``"Yi-Fang"`` and ``"Yi Fang"``, or ``"Yifang"``
            twice; a full word and initials, ``"Y. Fang"``, count), else 0.0.
            ``name`` scores ``"J."``/``"Jian"`` and ``"J."``/``"J."`` alike;
            people keep one printed form, so a form shared is evidence of its
            own (S2AND's "first names equal" feature, Subramanian et al. 2021).
        same_initials: 1.0 when both sides share printed forms but none as a
            full name on both sides (``"Y.F."`` and ``"Y. F."``, or ``"JP"``
            and ``"J.P."``), else 0.0. A form of initials is shared by many
            more people than a full name: the two are apart so that a model
            weighs them on their own, and
            ``training.fit`` never lets ``same_initials`` weigh more than
            ``same_given`` (:data:`curation.matching.training.AT_LEAST`).
        affiliation_conflict: 1.0 when both sides printed affiliations and they
            share no content word, else 0.0: a mismatch is evidence, a missing
            affiliation is none, and ``affiliation`` alone (0.0 for both) cannot
            tell them apart. An authorship is compared with every word of a
            profile (any past affiliation counts); two profiles with their main
            words (``ProfileView.main_affiliation_tokens``).
        rare_family: how rare the family name is (the lower of the two sides'
            :func:`family_name_rarities`), in [0, 1]: namesakes are few under a
            family name printed with few given names ("Willett"), many under
            "Wang", whatever the given name.
        source_id: 1.0 when both sides carry one ORCID iD among their source
            ids (a source's author profile links it to one side), or one author
            id of OpenAlex or Semantic Scholar (their own disambiguation put the
            two under one profile) and some evidence beyond the name agrees: a
            co-author, a category, an affiliation word (:func:`_beyond_name`);
            else 0.0. A source's author id is weak evidence, never enough
            alone: it is often the very conflation matching exists to undo
            (OpenAlex's one "Jun Li" of 34,000 works; issue 46: four "Min
            Chen" works in soil science, optics and cardiology under one id).
        source_id_conflict: 1.0 when, for some source, both sides carry its
            author ids and share none, and no source id agrees; else 0.0. Weaker
            evidence than an agreement: a source often splits one person over
            several ids (OpenAlex merges them later), more rarely joins two.
        years_apart: how far apart in time the two sides publish: the years
            between their spans of publication years (0 when the spans overlap
            or either side has no dated paper), over :data:`YEARS_APART_CAP`,
            capped at 1.0. A namesake decades away is likelier another person
            (the year-difference features of S2AND, Subramanian et al. 2021,
            and of the MEDLINE pair study, Vishnyakova et al. 2019).
        block_repeat: how often the affiliations printed in the pair's block
            repeat (the lower of the two sides' :func:`block_repeats`), in
            [0, 1]: not evidence about the pair itself but how likely two
            namesakes of that block are one person before any evidence (the
            model's bias, set by the corpus).
        title_similarity: how alike the two sides' titles and abstracts are:
            the cosine of their ``text_vector`` less :data:`TITLE_NEUTRAL`
            (the similarity that is as likely for one person as for two),
            in [-1, 1]; 0.0 when either side has no text. Above 0 speaks for
            one person, below against. Papers on one subject are likelier by
            one author (the title and abstract similarity of S2AND,
            Subramanian et al. 2021, and of Vishnyakova et al. 2019).
    """

    orcid: float
    name: float
    coauthors: float
    categories: float
    same_paper: float = 0.0
    affiliation: float = 0.0
    rare_name: float = 0.0
    same_given: float = 0.0
    affiliation_conflict: float = 0.0
    rare_family: float = 0.0
    source_id: float = 0.0
    source_id_conflict: float = 0.0
    years_apart: float = 0.0
    same_initials: float = 0.0
    block_repeat: float = 0.0
    field_conflict: float = 0.0
    title_similarity: float = 0.0
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict[str, float]:
        """The features as ``{name: value}`` for storing as evidence."""
        return {
            "orcid": self.orcid,
            "name": self.name,
            "coauthors": self.coauthors,
            "categories": self.categories,
            "field_conflict": self.field_conflict,
            "affiliation": self.affiliation,
            "rare_name": self.rare_name,
            "same_given": self.same_given,
            "same_initials": self.same_initials,
            "affiliation_conflict": self.affiliation_conflict,
            "rare_family": self.rare_family,
            "source_id": self.source_id,
            "source_id_conflict": self.source_id_conflict,
            "years_apart": self.years_apart,
            "block_repeat": self.block_repeat,
            "title_similarity": self.title_similarity,
            "same_paper": self.same_paper,
        }


def _rare_name(
    givens_a: tuple[str, ...],
    rarity_a: float,
    givens_b: tuple[str, ...],
    rarity_b: float,
) -> float:
    keys_a = {full_given_key(g) for g in givens_a} - {""}
    keys_b = {full_given_key(g) for g in givens_b} - {""}
    return min(rarity_a, rarity_b) if keys_a & keys_b else 0.0


def _shared_forms(givens_a: tuple[str, ...], givens_b: tuple[str, ...]) -> list[bool]:
    """For each printed form both sides share, whether it is a full name on
    both sides (``"JP"`` against ``"J.P."`` shares the form ``"jp"``, of
    initials on one side: not full). Symmetric in its arguments."""
    full_a: dict[str, bool] = {}
    for g in givens_a:
        form = given_form(g)
        if form:
            full_a[form] = full_a.get(form, False) or bool(full_given_key(g))
    shared: dict[str, bool] = {}
    for g in givens_b:
        form = given_form(g)
        if form in full_a:
            full_b = shared.get(form, False) or bool(full_given_key(g))
            shared[form] = full_b
    return [full_a[form] and full_b for form, full_b in shared.items()]


def _same_given(givens_a: tuple[str, ...], givens_b: tuple[str, ...]) -> float:
    return 1.0 if any(_shared_forms(givens_a, givens_b)) else 0.0


def _same_initials(givens_a: tuple[str, ...], givens_b: tuple[str, ...]) -> float:
    shared = _shared_forms(givens_a, givens_b)
    return 1.0 if shared and not any(shared) else 0.0


def _affiliation_conflict(a: frozenset[str], b: frozenset[str]) -> float:
    return 1.0 if a and b and not a & b else 0.0


def source_ids_of(openalex_author_id: str, s2_author_id: str) -> frozenset[str]:
    """A byline slot's source author ids as prefixed strings.

    Args:
        openalex_author_id: ``Authorship.openalex_author_id`` ("" for none).
        s2_author_id: ``Authorship.s2_author_id`` ("" for none).

    Returns:
        ``{"openalex:<id>", "s2:<id>"}``, without the empty ones.
    """
    out = set()
    if openalex_author_id:
        out.add(f"openalex:{openalex_author_id}")
    if s2_author_id:
        out.add(f"s2:{s2_author_id}")
    return frozenset(out)


def _source_ids(a: frozenset[str], b: frozenset[str]) -> tuple[float, float]:
    """``(source_id, source_id_conflict)`` of two sets of source author ids."""
    if not a or not b:
        return 0.0, 0.0
    if a & b:
        return 1.0, 0.0
    sources_a = {i.split(":", 1)[0] for i in a}
    both = sources_a & {i.split(":", 1)[0] for i in b}
    return 0.0, 1.0 if both else 0.0


def _source_id_features(
    a: frozenset[str], b: frozenset[str], *, beyond_name: bool
) -> dict[str, float]:
    """The ``source_id`` and ``source_id_conflict`` features of two sets of
    source ids; ``beyond_name``: whether evidence beyond the name agrees
    (:func:`_beyond_name`), without which a shared OpenAlex or Semantic
    Scholar author id counts for nothing (a shared ``orcid:`` id still
    does)."""
    agree, conflict = _source_ids(a, b)
    if agree and not beyond_name and not any(i.startswith("orcid:") for i in a & b):
        agree = 0.0
    return {"source_id": agree, "source_id_conflict": conflict}


def _beyond_name(coauthors: float, categories: float, affiliation: float) -> bool:
    """Whether a pair shares more than a name: a co-author, an arXiv category
    or an affiliation word (its ``coauthors``, ``categories`` and
    ``affiliation`` features above 0)."""
    return coauthors > 0.0 or categories > 0.0 or affiliation > 0.0


# The cosine of two title-and-abstract embeddings that says nothing either way.
# Two measurements, with the embeddings the product stores (all-MiniLM-L6-v2 as
# wovepaper.embeddings.model_name runs it: int8, 128 word pieces):
# - the MEDLINE pair set's 1,476 train pairs with texts (labelled_pairs; each pair
#   shares a family name and first initial): a one-feature logistic fit, corrected
#   for the pairs' 66% of one person, crosses a log likelihood ratio of 0 at 0.17.
#   One person: median cosine 0.31 (quartiles 0.19 to 0.49); two: 0.04 (-0.01 to
#   0.13). Those namesakes are drawn from all of biomedicine;
# - the demo corpus (make demo, 1,273 papers): two random papers of one primary
#   arXiv category lie at median 0.26 (quartiles 0.17 to 0.36); any two at 0.07.
# Namesakes in one field, the usual case in an arXiv block, would read as one
# person at 0.17; the neutral point is the field's median, so a shared subject
# counts only when it is nearer than the field makes likely.
TITLE_NEUTRAL = 0.26


def title_similarity(a: np.ndarray | None, b: np.ndarray | None) -> float:
    """The ``title_similarity`` feature of two text vectors (see
    :class:`Features`): their cosine less :data:`TITLE_NEUTRAL`, in [-1, 1],
    rounded to 6 places; 0.0 when either is None."""
    if a is None or b is None:
        return 0.0
    value = float(np.dot(a, b)) - TITLE_NEUTRAL
    return round(min(1.0, max(-1.0, value)), 6) + 0.0


def with_text_vectors(
    views: Iterable[AuthorshipView],
    texts: Mapping[int, str],
    embed: Callable[[list[str]], np.ndarray],
) -> list[AuthorshipView]:
    """The views, each given the embedding of its paper's text.

    Args:
        views: authorship views.
        texts: ``{paper_id: "title. abstract"}``; a paper missing here, or
            whose text is blank, gets no vector.
        embed: texts to unit vectors, one row each (``wovepaper.embeddings``'s
            ``embed`` or ``embed_cached``); called once, on each paper's text
            once.

    Returns:
        New views in input order (``dataclasses.replace``), ``text_vector``
        set where the paper has a text.
    """
    views = list(views)
    papers = sorted(
        {v.paper_id for v in views if (texts.get(v.paper_id) or "").strip()}
    )
    vectors = embed([texts[p] for p in papers]) if papers else []
    by_paper = dict(zip(papers, vectors, strict=True))
    return [replace(v, text_vector=by_paper.get(v.paper_id)) for v in views]


# Years apart at which the years_apart feature reaches 1.0 (a career's length
# is about this; beyond it the gap says no more).
YEARS_APART_CAP = 20


def _years_apart(a: tuple[int, int] | None, b: tuple[int, int] | None) -> float:
    """The ``years_apart`` feature of two ``(first, last)`` year spans."""
    if a is None or b is None:
        return 0.0
    gap = max(a[0] - b[1], b[0] - a[1], 0)
    return round(min(gap, YEARS_APART_CAP) / YEARS_APART_CAP, 6)


def _span(year: int | None) -> tuple[int, int] | None:
    return None if year is None else (year, year)


def _orcid(a: str, b: str) -> float:
    if a and b:
        return 1.0 if a == b else -1.0
    return 0.0


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


@names.remembered
def field_archive(category: str) -> str:
    """The arXiv archive of a category: the part before its first dot, or ""
    for a field of another scheme (a MEDLINE ``"journal:..."`` or
    ``"mesh:..."``, whose journals and headings have no archive to share).

    ``"cond-mat.str-el"`` gives ``"cond-mat"``, ``"hep-th"`` itself. Source:
    the arXiv category taxonomy (https://arxiv.org/category_taxonomy), where a
    category is ``archive.subject`` or an archive of no subjects.
    """
    return "" if ":" in category else category.split(".", 1)[0]


def field_conflict(a: frozenset[str], b: frozenset[str]) -> float:
    """1.0 when both sides carry arXiv categories and share no archive
    (:func:`field_archive`), else 0.0: the ``field_conflict`` feature.
    """
    archives_a = {field_archive(c) for c in a} - {""}
    archives_b = {field_archive(c) for c in b} - {""}
    if not archives_a or not archives_b:
        return 0.0
    return 0.0 if archives_a & archives_b else 1.0


def _best_name(
    givens_a: tuple[str, ...], givens_b: tuple[str, ...], family: str
) -> float:
    pinyin = names.reads_as_pinyin(family)
    best = 0.0
    for a in givens_a:
        for b in givens_b:
            # One alignment a pair: the similarity says whether they are compatible.
            similarity = names.given_name_similarity(a, b, pinyin=pinyin)
            if similarity >= names.COMPATIBLE_SIMILARITY:
                best = max(best, similarity)
    return best


def names_conflict(p: ProfileView, q: ProfileView) -> bool:
    """Whether two profiles hold given names that cannot be one person's.

    True when some given name of ``p`` and some given name of ``q`` are not
    compatible (:func:`curation.names.given_names_compatible`, by pinyin
    syllable for a Chinese family name: ``"Jian"`` and ``"Jie"``), unless both
    carry the same ORCID. Used as a cannot-link constraint when clusters are
    merged: average linkage would otherwise let a
    cluster holding both ``"J."`` and ``"Jian"`` absorb ``"Jie"`` through the
    ``"J."`` mentions.

    Args:
        p, q: the two profiles.

    Returns:
        True when they must stay apart on their names.
    """
    if p.orcid and p.orcid == q.orcid:
        return False
    pinyin = names.reads_as_pinyin(p.family)
    return any(
        not names.given_names_compatible(a, b, pinyin=pinyin)
        for a in p.given_names
        for b in q.given_names
    )


def names_meet(p: ProfileView, q: ProfileView) -> bool:
    """Whether two profiles can be one person on their names.

    True when both carry the same ORCID; else, when both print full given names
    (not initials only), some full given name of each must be compatible with
    one of the other's, so a shared bare ``"J."`` does not bridge ``"Jian"`` and
    ``"Jie"``; else some given name of each. Unlike :func:`names_conflict`, a
    researcher whose variants a curator accepted though the rules call them
    incompatible (``"Yuri"``, ``"Yury"``) still meets either spelling.

    Checked before merge and attach scoring: most researcher pairs in a block
    of a common surname fail it ("Yun" and "Yifang").

    Args:
        p, q: the two profiles.

    Returns:
        False when they cannot be one person on their names.
    """
    if p.orcid and p.orcid == q.orcid:
        return True
    full_p = tuple(g for g in p.given_names if full_given_key(g))
    full_q = tuple(g for g in q.given_names if full_given_key(g))
    if full_p and full_q:
        return _best_name(full_p, full_q, p.family) > 0.0
    return _best_name(p.given_names, q.given_names, p.family) > 0.0


def authorship_profile_features(a: AuthorshipView, p: ProfileView) -> Features:
    """Features of an authorship against a researcher profile."""
    coauthors = float(len(a.coauthor_keys & p.coauthor_keys))
    categories = _jaccard(a.categories, p.categories)
    affiliation = _jaccard(a.affiliation_tokens, p.affiliation_tokens)
    return Features(
        orcid=_orcid(a.orcid, p.orcid),
        name=_best_name((a.given,), p.given_names, a.family),
        coauthors=coauthors,
        categories=categories,
        field_conflict=field_conflict(a.categories, p.categories),
        same_paper=1.0 if a.paper_id in p.paper_ids else 0.0,
        affiliation=affiliation,
        rare_name=_rare_name((a.given,), a.given_rarity, p.given_names, p.given_rarity),
        same_given=_same_given((a.given,), p.given_names),
        same_initials=_same_initials((a.given,), p.given_names),
        affiliation_conflict=_affiliation_conflict(
            a.affiliation_tokens, p.affiliation_tokens
        ),
        rare_family=min(a.family_rarity, p.family_rarity),
        block_repeat=min(a.block_repeat, p.block_repeat),
        **_source_id_features(
            a.source_ids,
            p.source_ids,
            beyond_name=_beyond_name(coauthors, categories, affiliation),
        ),
        years_apart=_years_apart(_span(a.year), p.years),
        title_similarity=title_similarity(a.text_vector, p.text_vector),
    )


def profile_profile_features(p: ProfileView, q: ProfileView) -> Features:
    """Features of two profiles (for merges and for clustering)."""
    coauthors = float(len(p.coauthor_keys & q.coauthor_keys))
    categories = _jaccard(p.categories, q.categories)
    affiliation = _jaccard(p.affiliation_tokens, q.affiliation_tokens)
    return Features(
        orcid=_orcid(p.orcid, q.orcid),
        name=_best_name(p.given_names, q.given_names, p.family),
        coauthors=coauthors,
        categories=categories,
        field_conflict=field_conflict(p.categories, q.categories),
        same_paper=1.0 if p.paper_ids & q.paper_ids else 0.0,
        affiliation=affiliation,
        rare_name=_rare_name(
            p.given_names, p.given_rarity, q.given_names, q.given_rarity
        ),
        same_given=_same_given(p.given_names, q.given_names),
        same_initials=_same_initials(p.given_names, q.given_names),
        # Main words, not unions: two big clusters' unions share some word
        # ("beijing") by chance, which would hide a real conflict.
        affiliation_conflict=_affiliation_conflict(
            _main_affiliation(p), _main_affiliation(q)
        ),
        rare_family=min(p.family_rarity, q.family_rarity),
        block_repeat=min(p.block_repeat, q.block_repeat),
        **_source_id_features(
            p.source_ids,
            q.source_ids,
            beyond_name=_beyond_name(coauthors, categories, affiliation),
        ),
        years_apart=_years_apart(p.years, q.years),
        title_similarity=title_similarity(p.text_vector, q.text_vector),
    )

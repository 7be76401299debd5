"""Pairwise features on real INSPIRE Wang mentions: the printed form, affiliations."""

from __future__ import annotations

import dataclasses
import functools

from django.conf import settings

from curation.matching import labelled, scoring
from curation.matching.features import (
    AuthorshipView,
    authorship_profile_features,
    given_form,
    names_conflict,
    profile_of,
    profile_profile_features,
)
from curation.proposing import attach, merges


@functools.cache
def _wang() -> labelled.LabelledSet:
    return labelled.load(settings.WOVEPAPER_DATA_DIR / "and/beard_inspire_wang")


def _mention(printed: str, affiliation_word: str | None) -> AuthorshipView:
    """The first real mention printed ``printed`` whose affiliation has the word
    (None: printed without an affiliation)."""
    data = _wang()
    for view in data.views:
        if data.raw_names[view.id] != printed:
            continue
        if affiliation_word is None and not view.affiliation_tokens:
            return view
        if affiliation_word and affiliation_word in view.affiliation_tokens:
            return view
    raise AssertionError(f"no {printed} at {affiliation_word}")


def _features(a: AuthorshipView, b: AuthorshipView):
    return profile_profile_features(profile_of([a]), profile_of([b]))


def test_given_form_keeps_initials_and_drops_punctuation():
    assert given_form("Y.F.") == given_form("Y. F.") == given_form("Y-F") == "yf"
    assert given_form("Yi-Fang") == "yifang"
    assert given_form("J.") != given_form("Jian")


def test_the_same_printed_initials_are_evidence_a_full_name_for_them_is_not():
    z_ihep = _mention("Wang, Z.", "beijing")
    zheng_ihep = _mention("Wang, Zheng", "beijing")
    other_z = [
        v
        for v in _wang().views
        if _wang().raw_names[v.id] == "Wang, Z." and v.id != z_ihep.id
    ][0]
    same = _features(z_ihep, other_z)
    mixed = _features(z_ihep, zheng_ihep)
    assert same.name == mixed.name == 0.675  # the name scale alone: a tie
    # The same initials are a feature of their own, apart from a full name
    # printed alike (test_the_same_full_name_and_the_same_initials_differ).
    assert (same.same_initials, mixed.same_initials) == (1.0, 0.0)
    assert (same.same_given, mixed.same_given) == (0.0, 0.0)


def test_the_same_full_name_and_the_same_initials_differ():
    zheng = [v for v in _wang().views if _wang().raw_names[v.id] == "Wang, Zheng"]
    full = _features(zheng[0], zheng[1])
    assert (full.same_given, full.same_initials) == (1.0, 0.0)
    initials = _features(
        _mention("Wang, Y.F.", None), _mention("Wang, Y.F.", "beijing")
    )
    assert (initials.same_given, initials.same_initials) == (0.0, 1.0)
    # A full word among initials is a full name: "Y. Fang"-like forms count.
    jian_x = _mention("Wang, Jian-Xiong", "beijing")
    assert _features(jian_x, jian_x).same_given == 1.0
    # Against a profile, any of its printed forms may be the one shared.
    profile = profile_of([_mention("Wang, Y.F.", "beijing"), zheng[0]])
    against = authorship_profile_features(_mention("Wang, Y.F.", None), profile)
    assert (against.same_given, against.same_initials) == (0.0, 1.0)
    against = authorship_profile_features(zheng[1], profile)
    assert (against.same_given, against.same_initials) == (1.0, 0.0)
    # Symmetric: undotted initials against dotted ones are initials alike.
    jp, j_p = (
        profile_of([dataclasses.replace(zheng[0], given="JP")]),
        profile_of([dataclasses.replace(zheng[1], given="J.P.")]),
    )
    for a, b in ((jp, j_p), (j_p, jp)):
        f = profile_profile_features(a, b)
        assert (f.same_given, f.same_initials) == (0.0, 1.0)
    # Default weights score both as same_given alone did: 0.3 each.
    assert scoring.WEIGHTS["same_initials"] == scoring.WEIGHTS["same_given"] == 0.3


def test_an_affiliation_mismatch_differs_from_a_missing_one():
    syracuse = _mention("Wang, J.C.", "syracuse")
    argonne = _mention("Wang, J.C.", "argonne")
    unknown = _mention("Wang, J.C.", None)
    mismatch = _features(syracuse, argonne)
    missing = _features(syracuse, unknown)
    assert mismatch.affiliation == missing.affiliation == 0.0
    assert (mismatch.affiliation_conflict, missing.affiliation_conflict) == (1.0, 0.0)
    assert _features(syracuse, syracuse).affiliation_conflict == 0.0
    # The default model weighs a mismatch against the pair.
    assert (
        scoring.score(mismatch).pairwise_score < scoring.score(missing).pairwise_score
    )


def test_names_conflict_when_any_two_given_names_cannot_meet():
    jian = _mention("Wang, Jian", None)
    bare = _mention("Wang, J.", None)
    jie = _mention("Wang, Jie", None)
    assert not names_conflict(profile_of([jian, bare]), profile_of([bare]))
    assert names_conflict(profile_of([jian, bare]), profile_of([jie]))
    # By syllable for a Chinese family name: "Dayong" meets "D.Y.", not "D.X.".
    dayong = _mention("Wang, Dayong", None)
    assert not names_conflict(
        profile_of([dayong]), profile_of([_mention("Wang, D.Y.", None)])
    )
    assert names_conflict(
        profile_of([dayong]), profile_of([_mention("Wang, D.X.", None)])
    )


def test_merge_scores_are_remembered_per_snapshot_and_follow_a_changed_profile():

    jian = _mention("Wang, Jian", None)
    other = dataclasses.replace(jian, id=10**6, paper_id=10**6)
    p, q = profile_of([jian], id=1), profile_of([other], id=2)
    model = ("m", 0.0, ())
    first = merges._merge_score(
        (model, (1, hash(p)), (2, hash(q))), p, q, scoring.DEFAULT
    )
    again = merges._merge_score(
        (model, (1, hash(p)), (2, hash(q))), p, q, scoring.DEFAULT
    )
    assert again is first  # remembered, not recomputed
    # The other researcher now prints an affiliation: another snapshot, rescored.
    moved = profile_of(
        [dataclasses.replace(other, affiliation_tokens=frozenset({"syracuse"}))], id=2
    )
    assert hash(moved) != hash(q)
    changed = merges._merge_score(
        (model, (1, hash(p)), (2, hash(moved))), p, moved, scoring.DEFAULT
    )
    assert changed is not first
    assert (
        changed.evidence["features"]
        == scoring.score(profile_profile_features(p, moved)).evidence["features"]
    )


def test_a_shared_bare_initial_is_no_ground_for_a_merge_or_an_attach():
    from curation.matching.features import ProfileView

    context = dict(
        family="Wang",
        coauthor_keys=frozenset({"li|x", "zhao|y"}),
        categories=frozenset({"hep-ex"}),
        affiliation_tokens=frozenset({"ihep"}),
    )
    jian = ProfileView(
        id=1, given_names=("Jian", "J."), paper_ids=frozenset({1, 2}), **context
    )
    jie = ProfileView(
        id=2, given_names=("Jie", "J."), paper_ids=frozenset({3, 4}), **context
    )
    assert not merges.propose_merges("wang j", [jian, jie], set(), scoring.DEFAULT)
    new = AuthorshipView(id=10, paper_id=10, given="Jie", block_key="wang j", **context)
    drafts = attach._propose_block("wang j", [new], [jian], set(), scoring.DEFAULT)
    assert [d.kind for d in drafts] == ["new"]
    # A bare "J." may still join either; and variants a curator accepted on one
    # researcher ("Yuri", "Yury") still meet a new "Yury".
    bare = dataclasses.replace(new, given="J.")
    drafts = attach._propose_block("wang j", [bare], [jian], set(), scoring.DEFAULT)
    assert [(d.kind, d.researcher_id) for d in drafts] == [("attach", 1)]
    yuri = ProfileView(
        id=3, given_names=("Yuri", "Yury"), paper_ids=frozenset({5}), **context
    )
    yury = dataclasses.replace(new, given="Yury", block_key="wang y")
    drafts = attach._propose_block("wang y", [yury], [yuri], set(), scoring.DEFAULT)
    assert [(d.kind, d.researcher_id) for d in drafts] == [("attach", 3)]


def test_two_profiles_conflict_on_main_affiliations_though_their_unions_touch():
    # Two real "Zhi-Gang Wang" of the INSPIRE gold: 115 mentions at North China
    # Electric Power University, 40 at IHEP Beijing. Some of the first print
    # "Beijing" and "Phys." too, so their unions share words by chance.
    data = _wang()
    ncepu, ihep = (
        profile_of([v for v in data.views if data.gold[v.id] == person])
        for person in ("623996", "653681")
    )
    assert ncepu.affiliation_tokens & ihep.affiliation_tokens == {"beijing", "phys"}
    assert ncepu.main_affiliation_tokens == {"north", "china", "electric", "power"}
    assert ihep.main_affiliation_tokens == {"beijing", "high", "energy", "phys"}
    assert profile_profile_features(ncepu, ihep).affiliation_conflict == 1.0
    # One mention is compared with every word a profile printed.
    ihep_mention = next(v for v in data.views if data.gold[v.id] == "653681")
    assert authorship_profile_features(ihep_mention, ncepu).affiliation_conflict == 0.0
    # A profile with one printed affiliation has no main words of its own.
    assert profile_of([ihep_mention]).main_affiliation_tokens is None


def _dated(view: AuthorshipView, year: int | None) -> AuthorshipView:
    """The mention on a paper of its own published in ``year``."""
    return dataclasses.replace(view, year=year, paper_id=-(year or 1))


def test_years_apart_is_the_gap_between_the_years_spans():
    a = _mention("Wang, Shang-Yung", "pittsburgh")
    early = profile_of([_dated(a, 1990), _dated(a, 1995)])
    late = profile_of([_dated(a, 2005), _dated(a, 2010)])
    overlapping = profile_of([_dated(a, 1993), _dated(a, 2001)])
    assert early.years == (1990, 1995)
    assert profile_profile_features(early, late).years_apart == 0.5  # 10 of 20
    assert profile_profile_features(early, overlapping).years_apart == 0.0
    assert authorship_profile_features(_dated(a, 2040), early).years_apart == 1.0
    undated = profile_of([_dated(a, None)])
    assert undated.years is None
    assert profile_profile_features(early, undated).years_apart == 0.0
    # A gap lowers the score, all else equal.
    near = scoring.score(profile_profile_features(early, overlapping))
    far = scoring.score(profile_profile_features(early, late))
    assert far.pairwise_score < near.pairwise_score
    assert far.evidence["features"]["years_apart"] == 0.5


def test_fields_conflict_when_no_arxiv_archive_is_shared():
    syracuse = _mention("Wang, J.C.", "syracuse")

    def conflict(a: set[str], b: set[str]) -> float:
        return _features(
            dataclasses.replace(syracuse, categories=frozenset(a)),
            dataclasses.replace(syracuse, id=-1, paper_id=-1, categories=frozenset(b)),
        ).field_conflict

    # As the bundled arXiv records print them: two bare "J. Varela".
    assert conflict({"hep-ex"}, {"astro-ph"}) == 1.0
    assert conflict({"hep-ex"}, {"astro-ph.CO", "hep-ex"}) == 0.0  # cross-listed
    assert conflict({"cond-mat.str-el"}, {"cond-mat.mes-hall"}) == 0.0
    assert conflict({"hep-ex"}, set()) == 0.0  # a field unknown is no evidence
    # MEDLINE's journals and MeSH headings have no archive to share.
    assert conflict({"journal:0375363"}, {"mesh:D006801"}) == 0.0
    apart = _features(
        dataclasses.replace(syracuse, categories=frozenset({"hep-ex"})),
        dataclasses.replace(
            syracuse, id=-1, paper_id=-1, categories=frozenset({"astro-ph"})
        ),
    )
    unknown = _features(syracuse, dataclasses.replace(syracuse, id=-1, paper_id=-1))
    assert scoring.score(apart).pairwise_score < scoring.score(unknown).pairwise_score

"""Harvest services on small real inputs and hand-made records: upsert rules, resume."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest
from django.conf import settings

from harvest import services
from harvest.models import RawRecord
from harvest.records import AuthorRecord, PaperRecord
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db


def test_harvest_every_raw_record_is_kept_before_parsing(arxiv_dir):
    run = services.harvest_arxiv_files(root=arxiv_dir / "hepcrawl_oai")
    assert RawRecord.objects.filter(last_run=run).count() == run.records_seen
    raw = RawRecord.objects.get(external_id="oai:arXiv.org:1401.2122")
    assert "<keyname>Sergyeyev</keyname>" in raw.payload
    assert raw.status == "parsed"


def test_harvest_truncated_xml_file_is_reported_and_others_land(arxiv_dir, tmp_path):
    shutil.copy(arxiv_dir / "hepcrawl_oai" / "arxiv-single.xml", tmp_path / "a.xml")
    text = (arxiv_dir / "hepcrawl_oai" / "arxiv-physics-hep-th.xml").read_text()
    # Cut inside the third record: the first two are whole.
    cut = text.index("</record>", text.index("</record>") + 1) + 300
    (tmp_path / "b.xml").write_text(text[:cut])

    run = services.harvest_arxiv_files(root=tmp_path)

    assert set(Paper.objects.values_list("arxiv_id", flat=True)) == {
        "1401.2122",
        "1412.8323",
        "1507.07790",
    }
    bad = RawRecord.objects.get(status="failed")
    assert bad.external_id == f"file:{tmp_path / 'b.xml'}"
    assert bad.error.startswith(f"{tmp_path / 'b.xml'}: malformed XML at line")
    assert "2 whole <record> elements read one by one" in bad.error
    assert run.records_failed == 1


def test_harvest_resumes_from_cursor_without_duplicates(arxiv_dir):
    root = arxiv_dir / "hepcrawl_oai"
    files = list(services.arxiv_files(root))
    run = services.harvest_run_start(source="arxiv", params={"root": str(root)})
    run.cursor = "5"  # as a run killed after its fifth file left it
    run.save()

    services.harvest_arxiv_files(root=root, run=run)

    read = {r.locator.split("#")[0] for r in RawRecord.objects.all()}
    assert read == {f"arxiv/hepcrawl_oai/{p.name}" for p in files[5:]}
    run.refresh_from_db()
    assert services.files_cursor(run.cursor)[0] == len(files)
    assert run.status == "finished"

    services.harvest_arxiv_files(root=root)

    # Everything once: 30 records in 15 files, 19 distinct arXiv ids.
    assert RawRecord.objects.count() == 30
    assert Paper.objects.count() == 19


def _record(**kwargs):
    base = dict(
        source="arxiv",
        external_id="x",
        arxiv_id="2101.00001",
        title="T",
        version=1,
        published=dt.date(2021, 1, 1),
        updated=dt.date(2021, 1, 1),
        authors=[AuthorRecord("A. Author", "A.", "Author")],
    )
    base.update(kwargs)
    return PaperRecord(**base)


def test_paper_upsert_older_version_never_overwrites_newer():
    services.paper_upsert(
        record=_record(version=2, title="New title", updated=dt.date(2021, 2, 1))
    )
    result = services.paper_upsert(record=_record(version=1, title="Old title"))
    paper = Paper.objects.get(arxiv_id="2101.00001")
    assert paper.title == "New title"
    assert result.outcome == "unchanged"


def test_paper_upsert_deleted_record_hides_paper():
    services.paper_upsert(record=_record())
    result = services.paper_upsert(record=_record(deleted=True, title=""))
    assert result.outcome == "updated"
    assert Paper.objects.get(arxiv_id="2101.00001").hidden


def test_paper_upsert_keeps_curated_assignment_when_author_moves_position():
    from tests.factories import ResearcherFactory

    services.paper_upsert(record=_record())
    paper = Paper.objects.get()
    a = paper.authorships.get()
    a.researcher = ResearcherFactory()
    a.save()
    services.paper_upsert(
        record=_record(
            version=2,
            updated=dt.date(2021, 3, 1),
            authors=[
                AuthorRecord("B. Second", "B.", "Second"),
                AuthorRecord("A. Author", "A.", "Author"),
            ],
        )
    )
    moved = paper.authorships.get(position=2)
    assert moved.pk == a.pk
    assert moved.researcher_id == a.researcher_id
    assert paper.authorships.get(position=1).researcher_id is None


def _version_2(*authors):
    return _record(
        version=2,
        updated=dt.date(2021, 3, 1),
        authors=[AuthorRecord(f"{g} {f}", g, f) for g, f in authors],
    )


def _version_1(*authors) -> list:
    """Harvest v1 of the paper with these ``(given, family)`` authors; its
    rows by position."""
    services.paper_upsert(
        record=_record(authors=[AuthorRecord(f"{g} {f}", g, f) for g, f in authors])
    )
    return list(Paper.objects.get().authorships.order_by("position"))


def test_a_name_printed_more_fully_keeps_its_row_assignment_and_constraints():
    from curation import edits
    from tests.factories import ResearcherFactory, UserFactory

    row, _ = _version_1(("Z.", "Quenwick"), ("A.", "Author"))
    paper = Paper.objects.get()
    researcher = ResearcherFactory(display_name="Zorblat Quenwick", locked=True)
    edits.authorship_move(authorship=row, to=researcher, actor=UserFactory())

    # v2 spells the name out, adds an initial and puts a new author first.
    services.paper_upsert(
        record=_version_2(
            ("Beta", "Newcomer"), ("Zorblat Q.", "Quenwick"), ("A.", "Author")
        )
    )

    kept = paper.authorships.get(position=2)
    assert kept.pk == row.pk
    assert (kept.given_name, kept.researcher_id) == ("Zorblat Q.", researcher.pk)
    assert kept.constraints.filter(kind="must_link", active=True).count() == 1
    assert paper.authorships.get(position=1).researcher_id is None
    assert paper.authorships.count() == 3


def test_a_detached_row_follows_its_person_when_the_byline_is_reordered():
    from curation import edits
    from tests.factories import ResearcherFactory, UserFactory

    row, _ = _version_1(("A.", "Author"), ("C.", "Third"))
    paper = Paper.objects.get()
    edits.authorship_move(authorship=row, to=ResearcherFactory(), actor=UserFactory())
    edits.authorship_detach(authorship=row, actor=UserFactory())
    assert row.constraints.filter(kind="cannot_link", active=True).exists()

    services.paper_upsert(record=_version_2(("C.", "Third"), ("A.", "Author")))

    moved = paper.authorships.get(position=2)
    assert moved.pk == row.pk
    assert moved.constraints.filter(kind="cannot_link", active=True).exists()
    assert paper.authorships.get(position=1).family_name == "Third"
    assert not paper.authorships.get(position=1).constraints.exists()


def test_an_author_who_left_the_byline_loses_the_row_and_a_namesake_is_not_him(
    caplog,
):
    from tests.factories import ResearcherFactory

    (row,) = _version_1(("Jian", "Wang"))
    paper = Paper.objects.get()
    row.researcher = ResearcherFactory()
    row.save()

    # "Jie" is not "Jian": another person took the slot.
    with caplog.at_level("WARNING", logger="harvest.services.upsert"):
        services.paper_upsert(record=_version_2(("Jie", "Wang")))
    assert f"'Jian Wang' (authorship {row.pk} of researcher" in caplog.text

    assert not paper.authorships.filter(pk=row.pk).exists()
    assert paper.authorships.get().researcher_id is None


def test_harvest_same_payload_is_not_parsed_again_unless_reparse(arxiv_dir):
    root = arxiv_dir / "hepcrawl_oai" / "arxiv-single.xml"
    services.harvest_arxiv_files(root=root)
    Paper.objects.filter(arxiv_id="1401.2122").update(title="edited by hand")

    again = services.harvest_arxiv_files(root=root)
    assert again.papers_unchanged == 1
    assert Paper.objects.get(arxiv_id="1401.2122").title == "edited by hand"

    forced = services.harvest_arxiv_files(root=root, reparse=True)
    assert forced.papers_updated == 1
    assert Paper.objects.get(arxiv_id="1401.2122").title.startswith(
        "New integrable (3+1)-dimensional systems"
    )
    assert RawRecord.objects.filter(external_id="oai:arXiv.org:1401.2122").count() == 1


def test_paper_upsert_arxiv_record_joins_a_paper_known_by_doi_only():
    from tests.factories import PaperFactory

    known = PaperFactory(arxiv_id=None, doi="10.1143/ptp.101.1155", title="Known")
    result = services.paper_upsert(
        record=_record(arxiv_id="hep-th/9901001", doi="10.1143/ptp.101.1155")
    )
    assert result.paper.pk == known.pk
    known.refresh_from_db()
    assert known.arxiv_id == "hep-th/9901001"
    assert Paper.objects.count() == 1


def test_files_come_in_the_order_of_their_sorted_paths_without_a_list(tmp_path):
    """The walk gives what sorting every path gave: .abs before the rest, orig/
    before current, then by path text (a folder "a" after a file "a-b"); the
    JSON sources by path parts; a link to a folder is not followed (no loop)."""
    for name in [
        "a-b.abs",
        "a/z.abs",
        "a/orig/y.abs",
        "b.xml",
        "a/orig/c.json",
        "notes.txt",
        "x/1.json",
        "x-1.json",
    ]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "a" / "loop").symlink_to(tmp_path / "a")
    sorted_paths = sorted(
        (
            p
            for p in tmp_path.rglob("*")
            if p.is_file()
            and p.suffix in services.ARXIV_SUFFIXES
            and "loop" not in p.parts
        ),
        key=lambda p: (p.suffix != ".abs", "orig" not in p.parts, str(p)),
    )
    assert list(services.arxiv_files(tmp_path)) == sorted_paths
    assert [p.relative_to(tmp_path).as_posix() for p in sorted_paths] == [
        "a/orig/y.abs",
        "a-b.abs",
        "a/z.abs",
        "a/orig/c.json",
        "b.xml",
        "x-1.json",
        "x/1.json",
    ]
    assert list(services.crossref_files(tmp_path)) == sorted(
        p for p in tmp_path.rglob("*.json") if "loop" not in p.parts
    )
    assert services.files_count("arxiv", tmp_path) == 7


def test_a_resumed_run_starts_after_its_last_file_even_if_files_went_meanwhile(
    tmp_path,
):
    """The cursor keeps the last file done, not only a count: a file removed
    before the resume moves no other file out of the harvest (a count would skip
    the first file not done yet)."""
    month = settings.WOVEPAPER_DATA_DIR / "arxiv/abs_files/ftp/arxiv/papers/0704"
    for path in sorted(month.glob("*.abs"))[:8]:
        (tmp_path / path.name).symlink_to(path)
    files = list(services.arxiv_files(tmp_path))
    run = services.harvest_run_start(source="arxiv", params={"root": str(tmp_path)})
    # As a run killed after its fifth file left it.
    run.cursor = f"5 {files[4].name}"
    run.save()
    files[1].unlink()  # done before the kill, gone before the resume
    services.harvest_arxiv_files(root=tmp_path, run=run)
    read = {r.locator.rsplit("/", 1)[-1] for r in RawRecord.objects.all()}
    assert read == {p.name for p in files[5:]}
    run.refresh_from_db()
    assert services.files_cursor(run.cursor) == (7, files[-1].name)


def _assigned_byline(*authors):
    """v1 of the paper with these ``(given, family)`` authors, each on a
    researcher of its own; returns the rows by v1 position."""
    from tests.factories import ResearcherFactory

    rows = _version_1(*authors)
    for row in rows:
        row.researcher = ResearcherFactory()
        row.save()
    return rows


def test_a_full_name_moved_elsewhere_keeps_its_row_before_an_initial_takes_it():
    jian, j = _assigned_byline(("Jian", "Wang"), ("J.", "Wang"))

    services.paper_upsert(record=_version_2(("Jun", "Wang"), ("Jian", "Wang")))

    paper = Paper.objects.get()
    assert paper.authorships.get(position=2).pk == jian.pk
    assert paper.authorships.get(position=1).pk == j.pk  # "J." may be Jun


def test_namesakes_keep_their_order_when_a_name_is_inserted_before_them():
    first, second = _assigned_byline(("J.", "Smith"), ("J.", "Smith"))

    services.paper_upsert(
        record=_version_2(("A.", "New"), ("J.", "Smith"), ("J.", "Smith"))
    )

    paper = Paper.objects.get()
    assert [paper.authorships.get(position=p).pk for p in (2, 3)] == [
        first.pk,
        second.pk,
    ]


def test_a_row_never_passes_to_another_person_printed_in_its_place():
    from curation.models import Proposal

    (alice,) = _version_1(("Alice", "Smith"))
    attach = Proposal.objects.create(
        kind="attach", score=0.9, model_version="t", fingerprint="a"
    )
    attach.authorships.set([alice])

    services.paper_upsert(record=_version_2(("Carl", "Brown")))

    carl = Paper.objects.get().authorships.get()
    assert carl.pk != alice.pk
    assert not attach.authorships.exists()  # it can no longer apply to Carl


def test_a_respelled_given_name_keeps_a_locked_researchers_row(caplog):
    from curation import edits
    from tests.factories import ResearcherFactory, UserFactory

    row, _ = _version_1(("Aleksandr", "Petrov"), ("Bob", "Lane"))
    paper = Paper.objects.get()
    petrov = ResearcherFactory(display_name="Alexander Petrov", locked=True)
    edits.authorship_move(authorship=row, to=petrov, actor=UserFactory())

    # v2 transliterates the name another way, which the name rules do not
    # read as one person's: before, the row was deleted and the paper left
    # the locked profile.
    with caplog.at_level("WARNING", logger="harvest.services.upsert"):
        services.paper_upsert(
            record=_version_2(("Alexander", "Petrov"), ("Bob", "Lane"))
        )

    kept = paper.authorships.get(position=1)
    assert kept.pk == row.pk
    assert (kept.given_name, kept.researcher_id) == ("Alexander", petrov.pk)
    assert kept.constraints.filter(kind="must_link", active=True).count() == 1
    assert "not in the new byline" not in caplog.text


def test_another_given_name_in_a_curated_slot_is_not_a_respelling():
    from tests.factories import ResearcherFactory

    (row,) = _version_1(("Jane", "Smith"))
    paper = Paper.objects.get()
    row.researcher = ResearcherFactory()
    row.save()

    services.paper_upsert(record=_version_2(("John", "Smith")))

    assert not Authorship.objects.filter(pk=row.pk).exists()
    assert paper.authorships.get().researcher_id is None


def test_curated_namesakes_follow_their_people_when_a_version_reorders_them():
    """v1 prints "J. Smith, J. Smith"; a curator put them on Jane and John;
    v2 prints "John Smith, Jane Smith". Rows paired in byline order gave
    Jane's row the slot printing John (hostile trial, D3)."""
    from curation import edits
    from tests.factories import ResearcherFactory, UserFactory

    jane_row, john_row = _version_1(("J.", "Smith"), ("J.", "Smith"))
    paper = Paper.objects.get()
    jane = ResearcherFactory(display_name="Jane Smith")
    john = ResearcherFactory(display_name="John Smith", name_variants=["J. Smith"])
    curator = UserFactory()
    edits.authorship_move(authorship=jane_row, to=jane, actor=curator)
    edits.authorship_move(authorship=john_row, to=john, actor=curator)

    services.paper_upsert(record=_version_2(("John", "Smith"), ("Jane", "Smith")))

    first, second = paper.authorships.order_by("position")
    assert (first.pk, first.given_name, first.researcher_id) == (
        john_row.pk,
        "John",
        john.pk,
    )
    assert (second.pk, second.given_name, second.researcher_id) == (
        jane_row.pk,
        "Jane",
        jane.pk,
    )
    # Each row's must-link to its researcher went with it.
    assert first.constraints.get(kind="must_link", active=True).researcher_id == (
        john.pk
    )


def _smiths(*researchers):
    """v1 "J. Smith" once per researcher name (None: unassigned), each
    assigned row moved there by a curator; returns the rows."""
    from curation import edits
    from tests.factories import ResearcherFactory, UserFactory

    rows = _version_1(*[("J.", "Smith")] * len(researchers))
    curator = UserFactory()
    for row, name in zip(rows, researchers, strict=True):
        if name:
            edits.authorship_move(
                authorship=row, to=ResearcherFactory(display_name=name), actor=curator
            )
    return [Authorship.objects.get(pk=r.pk) for r in rows]


@pytest.mark.parametrize(
    ("researchers", "v2", "expected"),
    [
        # One namesake assigned, one not.
        (
            ("Jane Smith", None),
            ("John", "Jane"),
            [("Jane Smith", "Jane"), (None, "John")],
        ),
        # Three: the unassigned row takes the name nobody is known by.
        (
            ("Jane Smith", "John Smith", None),
            ("John", "Jim", "Jane"),
            [("Jane Smith", "Jane"), ("John Smith", "John"), (None, "Jim")],
        ),
        # Known by a fuller name, printed shorter, and the other way round.
        (
            ("Jane M. Smith", "John A. Smith"),
            ("John", "Jane"),
            [("Jane M. Smith", "Jane"), ("John A. Smith", "John")],
        ),
        (
            ("Jane Smith", "John Smith"),
            ("John A.", "Jane M."),
            [("Jane Smith", "Jane M."), ("John Smith", "John A.")],
        ),
        # One printed in full, one as before.
        (
            ("Jane Smith", "John Smith"),
            ("J.", "Jane"),
            [("Jane Smith", "Jane"), ("John Smith", "J.")],
        ),
        # Only John is left: his row stays, Jane's goes.
        (("Jane Smith", "John Smith"), ("John",), [("John Smith", "John")]),
        # One row, two people now: the row follows its researcher.
        (("John Smith",), ("Jane", "John"), [("John Smith", "John"), (None, "Jane")]),
        # Re-trial: a shared first word is no fit when the names are two
        # people's ("Jean-Pierre" is not "Jean-Paul").
        (
            ("Jean-Pierre Smith", "Jean-Paul Smith"),
            ("Jean-Paul", "Jean-Pierre"),
            [("Jean-Pierre Smith", "Jean-Pierre"), ("Jean-Paul Smith", "Jean-Paul")],
        ),
        # Re-trial: two profiles known by one name take the two slots that
        # print it; the unassigned row takes the other name.
        (
            ("Jane Smith", "Jane Smith", None),
            ("Jim", "Jane", "Jane"),
            [("Jane Smith", "Jane"), ("Jane Smith", "Jane"), (None, "Jim")],
        ),
    ],
)
def test_curated_namesakes_follow_the_names_their_researchers_are_known_by(
    researchers, v2, expected
):
    """Cases from the hostile trial of the first fix, which compared names
    one slot at a time and after the exact-printed pass."""
    rows = _smiths(*researchers)
    by_id = {r.pk: r for r in rows}

    services.paper_upsert(record=_version_2(*[(g, "Smith") for g in v2]))

    paper = Paper.objects.get()
    found = []
    for slot in paper.authorships.order_by("position"):
        holder = slot.researcher.display_name if slot.researcher else None
        found.append((holder, slot.given_name))
        if slot.researcher:
            # The row is the one the curator moved there, with its must-link.
            assert slot.pk in by_id
            assert by_id[slot.pk].researcher_id == slot.researcher_id
    assert sorted(found, key=str) == sorted(expected, key=str)


@pytest.mark.parametrize("variants", [5, True, "Jane Smith", {"a": 1}, [None, 3]])
def test_name_variants_edited_by_hand_cost_no_harvest(variants):
    """A researcher's name_variants that is not a list of strings (a row edited
    by hand) is read as none: the re-harvest of its namesakes goes through
    (it raised TypeError, which a harvest batch does not catch)."""
    from wovepaper.models import Researcher

    jane_row, john_row = _smiths("Jane Smith", "John Smith")
    Researcher.objects.filter(pk=jane_row.researcher_id).update(name_variants=variants)

    services.paper_upsert(record=_version_2(("John", "Smith"), ("Jane", "Smith")))

    first, second = Paper.objects.get().authorships.order_by("position")
    assert (first.pk, second.pk) == (john_row.pk, jane_row.pk)
    assert Researcher.objects.get(pk=jane_row.researcher_id).name_variants == [
        "Jane Smith"
    ]


def test_namesakes_follow_their_orcid_ids():
    """Unassigned rows carrying ORCID iDs: a version that prints the two in
    the other order keeps each iD on its row."""
    a, b = "0000-0002-1825-0097", "0000-0001-5109-3700"
    services.paper_upsert(
        record=_record(
            authors=[
                AuthorRecord("J. Smith", "J.", "Smith", orcid=a),
                AuthorRecord("J. Smith", "J.", "Smith", orcid=b),
            ]
        )
    )
    first, second = Paper.objects.get().authorships.order_by("position")

    services.paper_upsert(
        record=_record(
            version=2,
            updated=dt.date(2021, 3, 1),
            authors=[
                AuthorRecord("J. Smith", "J.", "Smith", orcid=b),
                AuthorRecord("J. Smith", "J.", "Smith", orcid=a),
            ],
        )
    )

    rows = list(Paper.objects.get().authorships.order_by("position"))
    assert [(r.pk, r.orcid) for r in rows] == [(second.pk, b), (first.pk, a)]


def test_namesakes_nothing_tells_apart_keep_their_byline_order():
    """Researchers known by initials only: the rows keep their order, as
    before (two "J. Smith" when a name is inserted before them)."""
    from tests.factories import ResearcherFactory

    first, second = _version_1(("J.", "Smith"), ("J.", "Smith"))
    paper = Paper.objects.get()
    Authorship.objects.filter(pk=first.pk).update(
        researcher=ResearcherFactory(display_name="J. Smith")
    )
    Authorship.objects.filter(pk=second.pk).update(
        researcher=ResearcherFactory(display_name="J. Smith")
    )

    services.paper_upsert(
        record=_version_2(("A.", "Author"), ("John", "Smith"), ("Jane", "Smith"))
    )

    assert list(
        paper.authorships.order_by("position").values_list("pk", flat=True)[1:]
    ) == [first.pk, second.pk]


def _version(n: int, *authors):
    return _record(
        version=n,
        updated=dt.date(2021, 1, n),
        authors=[AuthorRecord(f"{g} {f}", g, f) for g, f in authors],
    )


@pytest.mark.parametrize(
    ("researchers", "back", "expected"),
    [
        # Two departed namesakes come back in the other order (re-trial: they
        # came back swapped, paired by their old positions).
        (
            ("Jane Smith", "John Smith"),
            ("John", "Jane"),
            [("John Smith", "John"), ("Jane Smith", "Jane")],
        ),
        # Another name than the researcher is known by takes nothing.
        (("Jane Smith",), ("Jim",), [(None, "Jim")]),
        # A name key that changed ("J." to "Jane M.") still comes back.
        (("Jane Smith",), ("Jane M.",), [("Jane Smith", "Jane M.")]),
    ],
)
def test_departed_namesakes_come_back_to_the_names_they_are_known_by(
    researchers, back, expected
):
    rows = _smiths(*researchers)
    services.paper_upsert(record=_version(2, ("A.", "Author")))
    assert Paper.objects.get().authorships.count() == 1

    services.paper_upsert(
        record=_version(3, ("A.", "Author"), *[(g, "Smith") for g in back])
    )

    slots = list(Paper.objects.get().authorships.order_by("position"))[1:]
    found = [
        (s.researcher.display_name if s.researcher else None, s.given_name)
        for s in slots
    ]
    assert found == expected
    for slot in slots:
        if slot.researcher_id:
            # The row's own id, and its must-link, came back with it.
            assert slot.pk in {r.pk for r in rows}
            assert slot.constraints.get(kind="must_link").researcher_id == (
                slot.researcher_id
            )


def test_a_shared_first_word_never_gives_a_row_to_another_person():
    """Re-trial: "Jae-Hoon" Kim's row, printed "J.-H. Kim" again, went to
    "Jae-Won Kim" through the first word "jae"."""
    from curation import edits
    from tests.factories import ResearcherFactory, UserFactory

    hoon, won = _version_1(("J.-H.", "Kim"), ("J.-W.", "Kim"))
    jae_hoon = ResearcherFactory(display_name="Jae-Hoon Kim")
    edits.authorship_move(authorship=hoon, to=jae_hoon, actor=UserFactory())

    services.paper_upsert(record=_version_2(("J.-H.", "Kim"), ("Jae-Won", "Kim")))

    first, second = Paper.objects.get().authorships.order_by("position")
    assert (first.pk, first.researcher_id) == (hoon.pk, jae_hoon.pk)
    assert (second.pk, second.given_name, second.researcher_id) == (
        won.pk,
        "Jae-Won",
        None,
    )

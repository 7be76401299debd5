"""The bulk write path (new papers as one JSON document, harvest.services.json_rows;
raw records with COPY, stored with their parse's outcome) stores what the
one-by-one upsert stores, on the real arXiv .abs files, and falls back when
PostgreSQL refuses a batch."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from harvest import services
from harvest.models import RawRecord
from harvest.services import batches
from harvest.sources.arxiv_abs import parse_abs, read_abs_file
from wovepaper import search
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db

_SKIP = {"id", "created", "modified", "paper", "researcher"}


def _abs_files(folder, count: int) -> list:
    """The first ``count`` real .abs files of April 2007, linked into ``folder``."""
    month = settings.WOVEPAPER_DATA_DIR / "arxiv/abs_files/ftp/arxiv/papers/0704"
    files = sorted(month.glob("*.abs"))[:count]
    assert len(files) == count
    for path in files:
        (folder / path.name).symlink_to(path)
    return files


def _snapshot() -> dict:
    """Every paper's stored values and byline, by arXiv id, ids and times left out."""
    paper_fields = [
        f.attname for f in Paper._meta.concrete_fields if f.name not in _SKIP
    ]
    slot_fields = [
        f.attname for f in Authorship._meta.concrete_fields if f.name not in _SKIP
    ]
    out = {}
    for paper in Paper.objects.order_by("arxiv_id"):
        values = {name: getattr(paper, name) for name in paper_fields}
        values["search_vector"] = str(values["search_vector"])
        values["byline"] = [
            {name: getattr(slot, name) for name in slot_fields}
            for slot in paper.authorships.order_by("position")
        ]
        out[paper.arxiv_id] = values
    return out


def test_bulk_path_stores_what_the_one_by_one_upsert_stores(tmp_path, caplog):
    files = _abs_files(tmp_path, 150)
    with caplog.at_level("WARNING", logger="harvest.services.batches"):
        run = services.harvest_files(source="arxiv", root=tmp_path)
    # The bulk insert took them: a column it left NULL (Paper.hidden_by had
    # no default) sent every batch one by one, four times slower (hostile trial).
    assert "bulk insert" not in caplog.text
    assert run.papers_created == Paper.objects.count() == 150
    assert run.records_failed == 0
    copied = _snapshot()
    # The search vector went in with the row: a refresh rewrites none of them.
    search.search_vectors_refresh(paper_ids=Paper.objects.values_list("pk", flat=True))
    assert _snapshot() == copied

    Authorship.objects.all().delete()
    Paper.objects.all().delete()
    for path in files:
        item = read_abs_file(path)
        record = parse_abs(item)
        if record.arxiv_id in copied:
            services.paper_upsert(
                record=record, record_hash=services.content_hash(item.payload)
            )
    one_by_one = _snapshot()
    assert one_by_one.keys() == copied.keys()
    for arxiv_id, values in copied.items():
        assert one_by_one[arxiv_id] == values, arxiv_id
    assert sum(len(v["byline"]) for v in copied.values()) == Authorship.objects.count()


def test_a_paper_stored_meanwhile_fails_the_bulk_insert_and_the_batch_is_upserted(
    monkeypatch, tmp_path, caplog
):
    """Between the batch's lookup of stored ids and its insert, another harvest
    stored one of its papers: the insert is refused (unique arXiv id), nothing of
    it stays, and every record of the batch is upserted one by one: that paper is
    updated, not doubled, and the others are created."""
    files = _abs_files(tmp_path, 20)
    first = parse_abs(read_abs_file(files[0]))
    services.paper_upsert(record=first)
    before = Paper.objects.get(arxiv_id=first.arxiv_id)
    monkeypatch.setattr(batches, "_fresh", lambda records: (records, []))
    with caplog.at_level("WARNING", logger="harvest.services.batches"):
        run = services.harvest_files(source="arxiv", root=tmp_path)
    assert "the bulk insert of 20 new papers was refused" in caplog.text
    assert Paper.objects.count() == 20
    after = Paper.objects.get(arxiv_id=first.arxiv_id)
    assert after.pk == before.pk
    assert after.authorships.count() == len(first.authors)
    assert run.records_failed == 0
    assert run.papers_created == 19
    assert run.papers_unchanged + run.papers_updated == 1
    assert (
        RawRecord.objects.filter(status=RawRecord.Status.PARSED).count()
        == run.records_seen
    )


def test_the_write_indexes_nobody_reads_are_gone():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename IN "
            "('wovepaper_paper', 'wovepaper_authorship')"
        )
        names = {row[0] for row in cursor.fetchall()}
    assert not [n for n in names if n.endswith("_like")]
    assert not [n for n in names if "slug" in n]
    # What lookups use stays.
    assert {
        "wovepaper_paper_arxiv_id_key",
        "wovepaper_paper_search_vector_gin",
    } <= names


def test_a_raw_record_is_written_once_with_its_parse_outcome(tmp_path):
    """New raw records go in with the outcome of their parse (parsed, or failed
    with the error naming them), not as pending and then updated."""
    _abs_files(tmp_path, 30)
    (tmp_path / "broken.abs").write_text("Title: a record with no identifier\n")
    with CaptureQueriesContext(connection) as queries:
        run = services.harvest_files(source="arxiv", root=tmp_path)
    assert run.papers_created == 30
    assert run.records_failed == 1
    assert not [q for q in queries if q["sql"].startswith('UPDATE "harvest_rawrecord"')]
    failed = RawRecord.objects.get(status=RawRecord.Status.FAILED)
    assert failed.locator.endswith("broken.abs")
    assert failed.error.startswith(failed.locator)
    assert RawRecord.objects.filter(status=RawRecord.Status.PARSED).count() == 30

"""SQLite only: the FTS5 index the embedded setup searches papers with.

``wovepaper_paper_fts`` holds each paper's title, byline names and abstract
(rowid = the paper's id), tokenised by FTS5's ``porter`` stemmer over
``unicode61`` with diacritics removed (SQLite FTS5 docs, 4.3 "Tokenizers"), so
"models" finds "model" and "Muller" finds "Müller", as PostgreSQL's english
configuration does. Filled here in batches of ids, re-runnable (a batch's rows
are replaced); kept current by wovepaper.search.search_vectors_refresh, whose
statement this one repeats as it stood when written: a migration does not
import app code. PostgreSQL keeps its tsvector column (migration 0004) and
skips this.
"""

from django.db import migrations, transaction

BATCH = 5000

CREATE_SQL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS wovepaper_paper_fts USING fts5("
    "title, names, abstract, tokenize = 'porter unicode61 remove_diacritics 2')"
)

FILL_SQL = """
INSERT INTO wovepaper_paper_fts (rowid, title, names, abstract)
SELECT p.id, p.title,
       coalesce((SELECT group_concat(a.raw_name, ' ')
                 FROM wovepaper_authorship AS a WHERE a.paper_id = p.id), ''),
       p.abstract
FROM wovepaper_paper AS p
WHERE p.id >= %s AND p.id < %s
"""


def paper_fts_create(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute(CREATE_SQL)
        cursor.execute("SELECT min(id), max(id) FROM wovepaper_paper")
        low, high = cursor.fetchone()
    if low is None:
        return
    for start in range(low, high + 1, BATCH):
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute(
                "DELETE FROM wovepaper_paper_fts WHERE rowid >= %s AND rowid < %s",
                [start, start + BATCH],
            )
            cursor.execute(FILL_SQL, [start, start + BATCH])


def paper_fts_drop(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS wovepaper_paper_fts")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("wovepaper", "0025_researcher_stats"),
    ]

    operations = [
        migrations.RunPython(paper_fts_create, paper_fts_drop),
    ]

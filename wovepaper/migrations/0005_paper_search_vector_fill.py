"""Fill ``Paper.search_vector`` for the papers that existed before migration 0004.

PostgreSQL only (SQLite has no ``tsvector``; its search does not read the column).
Batched by id range, each batch its own transaction, so a large table is not held
in one long transaction; re-runnable: a second run writes the same vectors. New and
changed papers get their vector from the harvest (wovepaper.search
.search_vectors_refresh), whose expression this one repeats as it stood when
written: a migration does not import app code, which changes after it.
"""

from django.db import migrations, transaction

BATCH = 5000

FILL_SQL = """
UPDATE wovepaper_paper AS p
SET search_vector =
    setweight(to_tsvector('english', wovepaper_fold(p.title)), 'A')
    || setweight(to_tsvector('english', wovepaper_fold(n.names)), 'B')
    || setweight(to_tsvector('english', wovepaper_fold(p.abstract)), 'C')
FROM (
    SELECT q.id,
           coalesce(string_agg(a.raw_name, ' ' ORDER BY a.position), '') AS names
    FROM wovepaper_paper AS q
    LEFT JOIN wovepaper_authorship AS a ON a.paper_id = q.id
    WHERE q.id >= %s AND q.id < %s
    GROUP BY q.id
) AS n
WHERE p.id = n.id
"""


def search_vectors_fill(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT min(id), max(id) FROM wovepaper_paper")
        low, high = cursor.fetchone()
    if low is None:
        return
    for start in range(low, high + 1, BATCH):
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute(FILL_SQL, [start, start + BATCH])


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("wovepaper", "0004_paper_search_vector_name_trigram"),
    ]

    operations = [
        # Backwards there is nothing to undo: 0004's reverse drops the column.
        migrations.RunPython(search_vectors_fill, migrations.RunPython.noop),
    ]

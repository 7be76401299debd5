"""Fewer indexes to keep on every harvested paper and authorship (PostgreSQL).

Django gives every indexed or unique ``CharField`` a second, ``varchar_pattern_ops``
index (``..._like``) for ``LIKE 'prefix%'`` lookups. Nothing here looks up
identifiers, name keys or block keys by prefix (exact matches use the plain index;
``icontains`` uses neither), so those 10 indexes cost every insert and help no
query. The paper slug is only ever read with its paper, never looked up, so it
loses its index. ``bench/ingest.py`` measures the write rate.
"""

from django.db import migrations, models

# (table, column) whose ``_like`` index goes.
LIKE_INDEXED = [
    ("wovepaper_paper", "arxiv_id"),
    ("wovepaper_paper", "doi"),
    ("wovepaper_paper", "openalex_id"),
    ("wovepaper_paper", "s2_id"),
    ("wovepaper_paper", "primary_category"),
    ("wovepaper_authorship", "name_key"),
    ("wovepaper_authorship", "block_key"),
    ("wovepaper_authorship", "orcid"),
    ("wovepaper_authorship", "s2_author_id"),
    ("wovepaper_authorship", "openalex_author_id"),
]


def like_indexes_drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for table, column in LIKE_INDEXED:
            cursor.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = %s "
                "AND indexname LIKE %s AND indexdef LIKE %s",
                [table, "%\\_like", f"%({column} varchar_pattern_ops)%"],
            )
            for (name,) in cursor.fetchall():
                schema_editor.execute(
                    f"DROP INDEX IF EXISTS {schema_editor.quote_name(name)}"
                )


def like_indexes_create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, column in LIKE_INDEXED:
        name = schema_editor.quote_name(f"{table}_{column}_like")
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} "
            f"({column} varchar_pattern_ops)"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("wovepaper", "0008_institution_ror_relationships_status"),
    ]

    operations = [
        migrations.AlterField(
            model_name="paper",
            name="slug",
            field=models.SlugField(blank=True, db_index=False, max_length=120),
        ),
        migrations.RunPython(like_indexes_drop, like_indexes_create),
    ]

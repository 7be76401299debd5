"""A paper search's ranked head as one PL/pgSQL function (PostgreSQL only).

``wovepaper.search_sql`` calls it; :func:`wovepaper.search.search_head`
documents what the head is (a bounded sample, title matches first, a count
capped then estimated). Built through the ORM the head took three to five
statements, each compiled by Django, sent and planned, and its up to 2,000
matches came back as Python objects to be counted, sorted and joined; on the
100,000-paper bench database (bench/pages.py) that Python work was as long as
PostgreSQL's. Here the matches never leave the server: one statement, the ids
already in order. Plans are custom for each call (``plan_cache_mode``): a
generic plan cannot know whether a word is in half the papers (scan in storage
order and stop early) or in ten (read the GIN index), and either wrong choice
costs a whole-table read. SQLite has neither; there the ORM path stays, and
``tests/wovepaper/test_search_sql.py`` checks both give the same heads.
"""

from django.db import migrations

# One row: the listed ids in order (at most ``sample``), the total and how it
# is known ("exact", "about": the planner's estimate, "more": more than
# ``cap``), whether the sample overflowed (broad), and the sample's primary
# categories with counts, most first. The estimate EXPLAINs the statement the
# ORM path explained (wovepaper.search._estimate), the values put in as
# literals so the planner estimates them as it did there.
SEARCH_HEAD = """
CREATE OR REPLACE FUNCTION wovepaper_search_head_v1(
    query text, category text, first_day date, last_day date,
    sample integer, cap integer
) RETURNS TABLE (
    ids bigint[], total bigint, count_is text, broad boolean, names text[],
    counts bigint[]
) LANGUAGE plpgsql VOLATILE  -- EXPLAIN is refused in a STABLE function
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    q tsquery := websearch_to_tsquery('english'::regconfig, wovepaper_fold(query));
    wanted jsonb := CASE WHEN category IS NULL THEN NULL
                         ELSE jsonb_build_array(category) END;
    m_id bigint[];
    m_published date[];
    m_rank real[];
    m_in boolean[];
    m_primary text[];
    n integer;
    is_broad boolean;
    ranked bigint[];
    titled bigint[];
    found bigint;
    plan json;
    estimate bigint;
BEGIN
    -- The sample: the first sample + 1 matches in storage order, ranked.
    SELECT array_agg(s.id), array_agg(s.primary_category), array_agg(s.published),
           array_agg(s.rank), array_agg(s.in_category)
    INTO m_id, m_primary, m_published, m_rank, m_in
    FROM (SELECT p.id, p.primary_category::text AS primary_category, p.published,
                 ts_rank(p.search_vector, q) AS rank,
                 coalesce(p.categories @> wanted, false) AS in_category
          FROM wovepaper_paper p
          WHERE NOT p.hidden AND p.search_vector @@ q
            AND (first_day IS NULL OR p.published BETWEEN first_day AND last_day)
          LIMIT sample + 1) s;
    n := coalesce(array_length(m_id, 1), 0);
    is_broad := n > sample;
    -- The primary categories of the sample, whatever the category filter.
    SELECT array_agg(c.name ORDER BY c.n DESC, c.name COLLATE "C"),
           array_agg(c.n ORDER BY c.n DESC, c.name COLLATE "C")
    INTO names, counts
    FROM (SELECT u.name, count(*) AS n FROM unnest(m_primary) AS u(name)
          GROUP BY u.name) c;
    IF category IS NOT NULL AND is_broad THEN
        SELECT array_agg(s.id), array_agg(s.published), array_agg(s.rank)
        INTO m_id, m_published, m_rank
        FROM (SELECT p.id, p.published, ts_rank(p.search_vector, q) AS rank
              FROM wovepaper_paper p
              WHERE NOT p.hidden AND p.search_vector @@ q
                AND (first_day IS NULL
                     OR p.published BETWEEN first_day AND last_day)
                AND p.categories @> wanted
              LIMIT sample + 1) s;
    ELSIF category IS NOT NULL THEN
        SELECT array_agg(u.id ORDER BY u.o), array_agg(u.published ORDER BY u.o),
               array_agg(u.rank ORDER BY u.o)
        INTO m_id, m_published, m_rank
        FROM unnest(m_id, m_published, m_rank, m_in) WITH ORDINALITY
            AS u(id, published, rank, in_category, o)
        WHERE u.in_category;
    END IF;
    n := coalesce(array_length(m_id, 1), 0);
    SELECT coalesce(array_agg(u.id ORDER BY u.rank DESC,
                              u.published DESC NULLS LAST, u.id DESC), '{}')
    INTO ranked
    FROM unnest(m_id, m_published, m_rank) AS u(id, published, rank);
    IF n <= sample THEN
        RETURN QUERY SELECT ranked, n::bigint, 'exact'::text, is_broad, names,
                            counts;
        RETURN;
    END IF;
    -- Broad: the title matches first (read through the title index of
    -- migration 0006, whose expression this must stay), then the sample's
    -- others, each part ranked.
    SELECT coalesce(array_agg(s.id ORDER BY s.rank DESC,
                              s.published DESC NULLS LAST, s.id DESC), '{}')
    INTO titled
    FROM (SELECT p.id, p.published, ts_rank(p.search_vector, q) AS rank
          FROM wovepaper_paper p
          WHERE NOT p.hidden AND p.search_vector @@ q
            AND (first_day IS NULL OR p.published BETWEEN first_day AND last_day)
            AND (wanted IS NULL OR p.categories @> wanted)
            AND to_tsvector('english'::regconfig,
                            wovepaper_fold(left(p.title, 100000))) @@ q
          LIMIT sample) s;
    ranked := titled || ARRAY(
        SELECT u.id FROM unnest(ranked) WITH ORDINALITY AS u(id, o)
        LEFT JOIN unnest(titled) AS t(id) ON t.id = u.id
        WHERE t.id IS NULL
        ORDER BY u.o);
    SELECT count(*) INTO found
    FROM (SELECT 1 FROM wovepaper_paper p
          WHERE NOT p.hidden AND p.search_vector @@ q
            AND (first_day IS NULL OR p.published BETWEEN first_day AND last_day)
            AND (wanted IS NULL OR p.categories @> wanted)
          LIMIT cap + 1) c;
    IF found <= cap THEN
        RETURN QUERY SELECT ranked[1:sample], found, 'exact'::text, is_broad,
                            names, counts;
        RETURN;
    END IF;
    EXECUTE format(
        'EXPLAIN (FORMAT JSON) SELECT p.id FROM wovepaper_paper p '
        'WHERE NOT p.hidden AND p.search_vector @@ %L::tsquery', q)
        || CASE WHEN first_day IS NULL THEN '' ELSE format(
            ' AND p.published BETWEEN %L::date AND %L::date', first_day, last_day)
           END
        || CASE WHEN wanted IS NULL THEN '' ELSE format(
            ' AND p.categories @> %L::jsonb', wanted) END
    INTO plan;
    estimate := (plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric::bigint;
    IF estimate > cap THEN
        RETURN QUERY SELECT ranked[1:sample], estimate, 'about'::text, is_broad,
                            names, counts;
    ELSE
        RETURN QUERY SELECT ranked[1:sample], cap::bigint, 'more'::text,
                            is_broad, names, counts;
    END IF;
END
$$;
"""

DROP = """
DROP FUNCTION IF EXISTS wovepaper_search_head_v1(
    text, text, date, date, integer, integer
);
"""


def _run(schema_editor, sql: str) -> None:
    """Run ``sql`` as written: no parameters, so its ``%L`` stay format()'s."""
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(sql)


def function_create(apps, schema_editor):
    _run(schema_editor, SEARCH_HEAD)


def function_drop(apps, schema_editor):
    _run(schema_editor, DROP)


class Migration(migrations.Migration):
    dependencies = [("wovepaper", "0011_researcher_page_functions")]

    operations = [migrations.RunPython(function_create, function_drop)]

"""Hypothesis fuzzing of the arXiv file readers and parsers, for a bounded time.

Real recorded files (an ``.abs``, OAI-PMH ``arXiv`` and ``oai_dc`` pages, an Atom
feed, a recorded OAI-PMH exchange) are mutated (truncated, spliced with random
bytes, cut apart, bytes replaced) and read as the harvest reads them. The only
error allowed out of a reader or a parser is :class:`harvest.records.RecordError`
with a message that names the file: a harvest records it and goes on. Anything
else would cost the rest of a harvest. About 600 examples, under a minute.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings as django_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curation import names
from harvest.records import RecordError
from harvest.services import arxiv_reader_for

SEEDS = (
    "arxiv/abs_files/ftp/arxiv/papers/0704/0704.0001.abs",
    "arxiv/hepcrawl_oai/arxiv-physics-hep-th.xml",
    "arxiv/oai_dc/atomiklabs_listrecords_oai_dc_cs_2024-01-25.xml",
    "arxiv/arxivpy_2016_atom/search_query-au_del_maestro.xml",
    "arxiv/oai_pmh_nock/oaipmh-getrecord---should-get-a-record.json",
)

_mutation = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1), st.just(b"")),
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=40)),
    st.tuples(st.just("cut"), st.floats(0, 1), st.binary(max_size=0)),
    st.tuples(st.just("replace"), st.floats(0, 1), st.binary(min_size=1, max_size=8)),
    st.tuples(
        st.just("insert"),
        st.floats(0, 1),
        st.sampled_from(
            [
                b"\x00",
                b"\xff\xfe",
                b"&#0;",
                b"&#xD800;",
                b"<!ENTITY x SYSTEM 'file:///etc/passwd'>",
                b"]]>",
                b"</record>",
                b"<author><keyname>",
                b"\xe2\x80\xae",
                b'{"a": [',
                b"\\'{e}{\\",
                b"Authors: ,,, and and",
            ]
        ),
    ),
)


def _mutate(body: bytes, steps: list[tuple[str, float, bytes]]) -> bytes:
    for op, where, extra in steps:
        at = int(where * len(body))
        if op == "truncate":
            body = body[:at]
        elif op == "insert":
            body = body[:at] + extra + body[at:]
        elif op == "cut":
            body = body[:at] + body[at + max(1, len(body) // 7) :]
        else:
            body = body[:at] + extra + body[at + len(extra) :]
    return body


def _read_all(path: Path) -> int:
    """Read a file as the harvest does; how many records parsed.

    Every RecordError must name what failed: the file for a file that cannot be
    read, the record (its locator) for a record that cannot be parsed.
    """
    parsed = 0
    unnamed: list[str] = []
    try:
        reader = arxiv_reader_for(path)
        for item in reader.split(path, None):
            try:
                reader.parse(item)
                parsed += 1
            except RecordError as exc:
                if item.locator not in str(exc):
                    unnamed.append(f"{item.locator}: {exc}")
    except RecordError as exc:
        if path.name not in str(exc):
            unnamed.append(f"{path.name}: {exc}")
    assert not unnamed, unnamed
    return parsed


@pytest.fixture(scope="module")
def seeds() -> list[tuple[str, bytes]]:
    root = Path(django_settings.WOVEPAPER_DATA_DIR)
    return [(Path(name).suffix, (root / name).read_bytes()) for name in SEEDS]


@pytest.mark.parametrize("index", range(len(SEEDS)))
@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(_mutation, min_size=1, max_size=4))
def test_mutated_real_file_fails_only_with_a_record_error(
    seeds, tmp_path, index, steps
):
    suffix, body = seeds[index]
    path = tmp_path / f"fuzzed{suffix}"
    path.write_bytes(_mutate(body, steps))
    _read_all(path)


def test_unmutated_seeds_parse(seeds, tmp_path):
    for i, (suffix, body) in enumerate(seeds):
        path = tmp_path / f"seed{i}{suffix}"
        path.write_bytes(body)
        assert _read_all(path) >= 1, SEEDS[i]


@settings(max_examples=300, deadline=None, database=None)
@given(text=st.text(max_size=120))
def test_any_printed_name_parses_to_strings(text):
    parsed = names.parse_name(text)
    assert isinstance(parsed.given, str)
    assert isinstance(parsed.family, str)
    assert isinstance(names.name_key(parsed.given, parsed.family), str)
    assert isinstance(names.block_key(parsed.given, parsed.family), str)

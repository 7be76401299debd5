"""Broken records in a labelled set cost themselves, not the set.

The real INSPIRE Wang and S2AND dummy sets, copied with some records broken
the ways a hand-edited or truncated export breaks them; every other record
reads as it does in the original.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from curation.matching import labelled

WANG = settings.WOVEPAPER_DATA_DIR / "and/beard_inspire_wang"
DUMMY = settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy"
# Real Wang signatures kept in a copy, every STRIDE-th (the file lists them by
# person): enough people with several mentions to train on, small enough to
# read fast.
KEPT = 400
STRIDE = 19


def _wang_copy(tmp_path: Path, breaks: dict[int, object]) -> tuple[Path, list]:
    """:data:`KEPT` Wang signatures and their clusters in a folder,
    record ``n`` (from 0) replaced by ``breaks[n]`` (a dict is merged into it,
    anything else replaces it); returns the folder and the original records."""
    every = json.loads((WANG / "wang_signatures.json").read_text())
    records = every[::STRIDE][:KEPT]
    kept = {r["signature_id"] for r in records}
    clusters = json.loads((WANG / "wang_clusters.json").read_text())
    clusters = {
        a: [s for s in sigs if s in kept]
        for a, sigs in clusters.items()
        if any(s in kept for s in sigs)
    }
    broken = []
    for n, record in enumerate(records):
        change = breaks.get(n)
        if isinstance(change, dict):
            broken.append({**record, **change})
        elif n in breaks:
            broken.append(change)
        else:
            broken.append(record)
    folder = tmp_path / "wang"
    folder.mkdir()
    (folder / "wang_signatures.json").write_text(json.dumps(broken))
    (folder / "wang_clusters.json").write_text(json.dumps(clusters))
    return folder, records


def _wang_clusters_edited(tmp_path: Path, edit) -> Path:
    """:func:`_wang_copy` with its cluster file passed through ``edit``
    (``{author: [signature ids]}`` in, the same shape or a broken one out)."""
    folder, _ = _wang_copy(tmp_path, {})
    path = folder / "wang_clusters.json"
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    return folder


def test_a_broken_beard_record_is_left_out_and_named_and_the_rest_is_read(tmp_path):
    folder, records = _wang_copy(
        tmp_path,
        {
            1: {"author_name": 5},
            2: {"publication_id": None},
            3: 7,
            4: {"author_affiliation": {"name": "IHEP"}},
        },
    )
    path = folder / "wang_signatures.json"
    path.write_text(json.dumps([*json.loads(path.read_text()), records[0]]))
    data = labelled.load(folder)
    sig = [str(r["signature_id"]) for r in records]
    assert data.left_out == (
        f"wang_signatures.json: signature {sig[1]}: author_name is int '5', "
        "not a string; left out",
        f"wang_signatures.json: signature {sig[2]}: publication_id is null, not "
        "a string or an integer; left out",
        "wang_signatures.json: record 4 is int '7', not an object; left out",
        f"wang_signatures.json: signature {sig[4]}: affiliations are an object; "
        "read without them",
        f"wang_signatures.json: signature {sig[0]} is listed twice (record "
        f"{KEPT + 1}, a copy of record 1, left out)",
        # Record 4 has no id left: the cluster naming it is read without it.
        f"wang_clusters.json: cluster {original_gold(sig[3])} names signature "
        f"{sig[3]}, which no readable record holds; left out",
    )
    assert data.mention_ids == [s for n, s in enumerate(sig) if n not in (1, 2, 3)]
    (tmp_path / "original").mkdir()
    original = labelled.load(_wang_copy(tmp_path / "original", {})[0])
    assert len(original.views) == KEPT
    before = dict(zip(original.mention_ids, original.views, strict=True))
    after = dict(zip(data.mention_ids, data.views, strict=True))
    assert after[sig[4]].affiliation_tokens == frozenset()
    assert before[sig[4]].affiliation_tokens
    assert (after[sig[4]].given, after[sig[4]].family) == (
        before[sig[4]].given,
        before[sig[4]].family,
    )
    for s in sig[5:]:
        assert (after[s].given, after[s].family, after[s].affiliation_tokens) == (
            before[s].given,
            before[s].family,
            before[s].affiliation_tokens,
        )
        assert (
            data.gold[data.mention_ids.index(s)]
            == original.gold[original.mention_ids.index(s)]
        )


def original_gold(signature: str) -> str:
    """The INSPIRE author id whose cluster holds a real Wang signature."""
    clusters = json.loads((WANG / "wang_clusters.json").read_text())
    return next(a for a, sigs in clusters.items() if int(signature) in sigs)


def _dummy_copy(tmp_path: Path) -> tuple[Path, dict, dict]:
    folder = tmp_path / "dummy"
    shutil.copytree(DUMMY, folder)
    signatures = json.loads((folder / "signatures.json").read_text())
    papers = json.loads((folder / "papers.json").read_text())
    return folder, signatures, papers


def test_a_broken_s2and_record_is_left_out_and_named_and_the_rest_is_read(tmp_path):
    folder, signatures, papers = _dummy_copy(tmp_path)
    signatures["1"]["author_info"] = None
    signatures["2"]["paper_id"] = [1, 2]
    signatures["3"]["author_info"]["affiliations"] = [
        {"name": "Bridgewater"},
        "Allen Institute for AI",
    ]
    papers[str(signatures["0"]["paper_id"])]["authors"] = "everyone"
    (folder / "signatures.json").write_text(json.dumps(signatures))
    (folder / "papers.json").write_text(json.dumps(papers))
    data = labelled.load(folder)
    assert data.left_out == (
        "signatures.json: signature 0: its paper's authors cannot be read; read "
        "without them",
        "signatures.json: signature 1: author_info is null, not an object; left out",
        "signatures.json: signature 2: paper_id is an array, not a string or an "
        "integer; left out",
        "signatures.json: signature 3: affiliation 1 is an object, not a string; "
        "read without it",
    )
    read = dict(zip(data.mention_ids, data.views, strict=True))
    assert set(read) == {"0", "3", "4"}
    assert read["0"].coauthor_keys == frozenset()
    assert read["3"].affiliation_tokens == {"allen"}
    assert data.gold[data.mention_ids.index("0")] == "1"


def test_a_set_whose_every_record_is_broken_says_what_the_first_are(tmp_path):
    folder, signatures, _ = _dummy_copy(tmp_path)
    for record in signatures.values():
        record["author_info"] = 5
    (folder / "signatures.json").write_text(json.dumps(signatures))
    with pytest.raises(
        labelled.DatasetError,
        match=r"no mention has a gold cluster \(5 signature records left out or "
        r"read in part, first: signatures.json: signature 0: author_info is int "
        r"'5', not an object; left out",
    ):
        labelled.load(folder)


def test_evaluate_matching_lists_the_records_it_left_out(tmp_path):
    folder, _ = _wang_copy(tmp_path, {1: {"author_name": 5}})
    out = io.StringIO()
    call_command("evaluate_matching", dataset=[folder], folds=0, stdout=out)
    assert "  left out: wang_signatures.json: signature" in out.getvalue()
    assert "author_name is int '5', not a string; left out" in out.getvalue()
    out = io.StringIO()
    call_command("evaluate_matching", dataset=[folder], folds=0, json=True, stdout=out)
    assert len(json.loads(out.getvalue())["left_out"]) == 1


@pytest.mark.django_db
def test_train_matcher_trains_on_the_rest_and_says_how_many_it_left_out(tmp_path):
    folder, _ = _wang_copy(tmp_path, {1: {"author_name": 5}, 3: None})
    out = io.StringIO()
    call_command("train_matcher", dataset=[folder], stdout=out)
    # Record 4 has no id left: the cluster that names it is read without it.
    assert "3 signature records of wang left out or read in part" in out.getvalue()
    assert "now the active model" in out.getvalue()


def test_a_cluster_file_naming_an_unknown_signature_still_refuses_the_set(tmp_path):
    # The labels are the measure: a cluster file that names signatures the
    # signature file never held is another set's, not a broken record.
    def edit(clusters):
        next(iter(clusters.values())).append(99999999)
        return clusters

    folder = _wang_clusters_edited(tmp_path, edit)
    with pytest.raises(CommandError, match="not in the signature file: 99999999"):
        call_command("evaluate_matching", dataset=[folder], stdout=io.StringIO())


def test_a_mistyped_position_costs_the_co_authors_not_a_self_co_author(tmp_path):
    folder, signatures, _ = _dummy_copy(tmp_path)
    signatures["0"]["author_info"]["position"] = "1"
    (folder / "signatures.json").write_text(json.dumps(signatures))
    data = labelled.load(folder)
    assert (
        "signatures.json: signature 0: position is str '1', not an integer; read "
        "without co-authors"
    ) in data.left_out
    sattar = data.views[data.mention_ids.index("0")]
    assert sattar.coauthor_keys == frozenset()


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("signatures", "[" * 100_000 + "]" * 100_000, "nested too deep"),
        (
            "cluster_seeds",
            '{"0": {"1": "disallow"}, "0": {"1": "require"}}',
            "key '0' appears twice in one object",
        ),
    ],
)
def test_deep_nesting_and_a_repeated_seed_key_are_refused_naming_the_file(
    tmp_path, name, text, problem
):
    folder, _, _ = _dummy_copy(tmp_path)
    (folder / f"{name}.json").write_text(text)
    with pytest.raises(labelled.DatasetError, match=f"{name}.json: .*{problem}"):
        labelled.load(folder)


@pytest.mark.parametrize("mistyped", [6, 7])
def test_an_id_mistyped_as_anothers_costs_both_records_not_the_set(tmp_path, mistyped):
    # Records 7 and 8 (from 1) show one id: which is the signature its
    # cluster means the file cannot say, so neither is read (whichever comes
    # first), and the cluster naming the mistyped record's real id is read
    # without it.
    folder, _ = _wang_copy(tmp_path, {})
    records = json.loads((folder / "wang_signatures.json").read_text())
    shown = records[13 - mistyped]["signature_id"]
    real = records[mistyped]["signature_id"]
    records[mistyped]["signature_id"] = shown
    (folder / "wang_signatures.json").write_text(json.dumps(records))
    data = labelled.load(folder)
    assert data.left_out == (
        f"wang_signatures.json: signature {shown} is listed twice, as records 7 "
        "and 8, which differ; both left out",
        f"wang_clusters.json: cluster {original_gold(str(real))} names "
        f"signature {real}, which no readable record holds; left out",
    )
    assert len(data.views) == KEPT - 2
    assert str(shown) not in data.mention_ids


def test_cluster_ids_written_as_text_name_integer_ids(tmp_path):
    data = labelled.load(
        _wang_clusters_edited(
            tmp_path,
            lambda clusters: {a: list(map(str, sigs)) for a, sigs in clusters.items()},
        )
    )
    (tmp_path / "original").mkdir()
    original = labelled.load(_wang_copy(tmp_path / "original", {})[0])
    assert data.left_out == ()
    assert (data.mention_ids, data.gold) == (original.mention_ids, original.gold)


def test_a_signature_in_two_clusters_and_a_broken_cluster_cost_themselves(tmp_path):
    seen = {}

    def edit(clusters):
        first, second, third = list(clusters)[:3]
        seen.update(first=first, second=second, third=third, lost=clusters[third])
        seen["twice"] = clusters[first][0]
        clusters[second].append(seen["twice"])
        clusters[third] = None
        return clusters

    data = labelled.load(_wang_clusters_edited(tmp_path, edit))
    first, second, third = seen["first"], seen["second"], seen["third"]
    twice, lost = seen["twice"], seen["lost"]
    assert data.left_out == (
        f"wang_clusters.json: cluster {third} is null, not an array of signature "
        "ids; left out",
        f"wang_clusters.json: signature {twice} is in 2 clusters, {first}, "
        f"{second}; left out",
    )
    assert len(data.views) == KEPT - 1 - len(lost)


@pytest.mark.parametrize("member", [True, 1.0, [1], {"id": 1}, None, ""])
def test_a_cluster_member_that_is_not_an_id_is_left_out_and_named(tmp_path, member):
    authors = []

    def edit(clusters):
        authors.append(next(iter(clusters)))
        clusters[authors[0]].append(member)
        return clusters

    data = labelled.load(_wang_clusters_edited(tmp_path, edit))
    author = authors[0]
    assert data.left_out == (
        f"wang_clusters.json: cluster {author} lists {labelled._kind(member)}, "
        "not a signature id; left out",
    )
    assert len(data.views) == KEPT


@pytest.mark.parametrize("name", ["!!!", "?!.,;", "\u200b", "Wang, ..."[6:]])
def test_a_name_that_folds_to_nothing_is_left_out_as_holding_no_name(tmp_path, name):
    folder, records = _wang_copy(tmp_path, {1: {"author_name": name}})
    data = labelled.load(folder)
    assert data.left_out == (
        f"wang_signatures.json: signature {records[1]['signature_id']}: "
        f"author_name {name!r} holds no name; left out",
    )
    assert all(view.block_key for view in data.views)


def test_one_unreadable_byline_entry_costs_that_co_author_only(tmp_path):
    folder, signatures, papers = _dummy_copy(tmp_path)
    byline = papers[str(signatures["4"]["paper_id"])]["authors"]
    tait = next(a for a in byline if a["author_name"] == "Mike Tait")
    tait["author_name"] = 5
    (folder / "papers.json").write_text(json.dumps(papers))
    data = labelled.load(folder)
    assert data.left_out == (
        "signatures.json: signature 4: 1 of its paper's 7 authors cannot be read "
        "(an entry not an object, a name not a string, a position not an "
        "integer); read without them",
    )
    konovalov = data.views[data.mention_ids.index("4")]
    assert len(konovalov.coauthor_keys) == 5
    assert not any("tait" in key for key in konovalov.coauthor_keys)


def test_bad_seeds_are_left_out_each_with_why(tmp_path):
    folder, signatures, _ = _dummy_copy(tmp_path)
    signatures["2"]["author_info"] = None
    (folder / "signatures.json").write_text(json.dumps(signatures))
    (folder / "cluster_seeds.json").write_text(
        json.dumps(
            {
                "0": {"1": "disallow", "3": "maybe", "4": "require"},
                "1": {"2": "require"},
                "3": {"4": "require"},
                "4": {"3": "disallow", "0": "disallow"},
                "5": [1],
            }
        )
    )
    data = labelled.load(folder)
    ids = data.mention_ids
    assert data.seeds_dropped == (
        "0-3: is str 'maybe', not 'require' or 'disallow'",
        "1-2: names signature 2, whose record was left out",
        "5: its seeds are an array, not an object",
        "0-4: seeded both require and disallow; read as disallow",
        "3-4: seeded both require and disallow; read as disallow",
    )
    pair = lambda a, b: tuple(sorted((ids.index(a), ids.index(b))))  # noqa: E731
    assert data.must_link == frozenset()
    assert data.cannot_link == {pair("0", "1"), pair("3", "4"), pair("0", "4")}


def _dummy_with(tmp_path, edit) -> labelled.LabelledSet:
    folder, signatures, papers = _dummy_copy(tmp_path)
    edit(signatures, papers)
    (folder / "signatures.json").write_text(json.dumps(signatures))
    (folder / "papers.json").write_text(json.dumps(papers))
    return labelled.load(folder)


def _konovalov_paper(signatures, papers) -> dict:
    return papers[str(signatures["4"]["paper_id"])]


@pytest.mark.parametrize(
    ("edit", "note"),
    [
        (
            lambda s, p: s["4"]["author_info"].update(position=99),
            "position 99 is not on its paper's byline; read without co-authors",
        ),
        (
            lambda s, p: s["4"].update(paper_id=-1),
            "its paper -1 is not in papers.json; read without co-authors",
        ),
        (
            lambda s, p: _konovalov_paper(s, p).pop("authors"),
            "its paper's authors cannot be read; read without them",
        ),
        (
            lambda s, p: _konovalov_paper(s, p)["authors"][0].update(position=3),
            "its paper's byline gives position 3 twice; read without co-authors",
        ),
    ],
)
def test_a_byline_that_cannot_place_the_author_costs_the_co_authors(
    tmp_path, edit, note
):
    # Before, the author became their own co-author, or a co-author went
    # missing, and nothing said so.
    data = _dummy_with(tmp_path, edit)
    assert data.left_out == (f"signatures.json: signature 4: {note}",)
    assert data.views[data.mention_ids.index("4")].coauthor_keys == frozenset()


def test_co_authors_whose_names_fold_to_nothing_are_no_one(tmp_path):
    # Two papers each with a co-author printed "!!!" share no co-author.
    def edit(signatures, papers):
        for sig in ("0", "1"):
            byline = papers[str(signatures[sig]["paper_id"])]["authors"]
            byline[0]["author_name"] = "!!!"

    data = _dummy_with(tmp_path, edit)
    first, second = (data.views[data.mention_ids.index(s)] for s in ("0", "1"))
    assert first.coauthor_keys == second.coauthor_keys == frozenset()


def test_a_disallow_inside_a_chain_of_requires_is_named(tmp_path):
    folder, _, _ = _dummy_copy(tmp_path)
    (folder / "cluster_seeds.json").write_text(
        json.dumps(
            {"0": {"1": "require"}, "1": {"3": "require"}, "3": {"0": "disallow"}}
        )
    )
    data = labelled.load(folder)
    assert data.seeds_dropped == (
        "0-3: disallow between signatures the require seeds join; clustering "
        "keeps them apart, so a require between them cannot hold",
    )
    assert len(data.must_link) == 2
    assert len(data.cannot_link) == 1


def test_a_byte_order_mark_is_not_part_of_the_json(tmp_path):
    folder, _, _ = _dummy_copy(tmp_path)
    path = folder / "signatures.json"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert len(labelled.load(folder).views) == 5


@pytest.mark.parametrize("command", ["evaluate_matching", "train_matcher"])
def test_a_file_named_as_the_set_says_to_name_its_folder(command):
    with pytest.raises(CommandError, match="a file, not a folder"):
        call_command(command, dataset=[DUMMY / "signatures.json"], stdout=io.StringIO())

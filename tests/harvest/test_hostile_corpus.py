"""One harvest over a folder of hostile and broken inputs beside good ones.

Every hostile input costs only itself: a failed RawRecord or a skipped file whose
error names it, while the good records of the same run all land. The inputs are the
hand-written fixtures in tests/fixtures/arxiv (billion laughs, external entity, an
.abs without an id) and variants of the real record hep-th/9901001 written here (a
10 MB abstract, a 3,000-author byline and one past MAX_AUTHORS are generated,
not committed).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harvest import services
from harvest.models import RawRecord
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "arxiv"
REAL = "abs_files/ftp/hep-th/papers/9901/9901001.abs"
OAI = "hepcrawl_oai/arxiv-single.xml"


def _with_id(text: str, number: int) -> str:
    return text.replace("arXiv:hep-th/9901001", f"arXiv:hep-th/99010{number:02d}")


@pytest.fixture
def corpus(arxiv_dir, tmp_path) -> Path:
    real = (arxiv_dir / REAL).read_text()
    oai = (arxiv_dir / OAI).read_text()
    folder = tmp_path / "hostile"
    folder.mkdir()
    for name in ("billion_laughs.xml", "xxe.xml", "no_id.abs"):
        shutil.copy(FIXTURES / name, folder / name)
    # Good records, around the bad ones.
    (folder / "good1.abs").write_text(real)
    (folder / "good2.xml").write_text(oai)
    (folder / "truncated.xml").write_text(oai[: len(oai) // 2])
    (folder / "truncated.json").write_text('[{"status": 200, "response": "<OAI-PMH')
    (folder / "bad_utf8.abs").write_bytes(
        _with_id(real, 3).encode().replace(b"Heterotic", b"Hetero\xff\xfetic")
    )
    (folder / "forbidden_chars.xml").write_text(
        oai.replace("New integrable", "New &#1;&#xFFFE; integrable")
    )
    (folder / "path_trick.abs").write_text(
        real.replace("arXiv:hep-th/9901001", "arXiv:../../etc/passwd")
    )
    (folder / "script.abs").write_text(
        _with_id(real, 5)
        .replace("Title: String", "Title: <script>alert(1)</script> String")
        .replace(
            "Authors: Yosuke Imamura", "Authors: <b onmouseover=x>Yosuke</b> Imamura"
        )
    )
    many = ", ".join(f"Author{i} Person{i}" for i in range(1, 3001))
    (folder / "many_authors.abs").write_text(
        _with_id(real, 6).replace("Authors: Yosuke Imamura", f"Authors: {many}")
    )
    past = ", ".join(f"A{i} P{i}" for i in range(1, services.MAX_AUTHORS + 2))
    (folder / "too_many_authors.abs").write_text(
        _with_id(real, 8).replace("Authors: Yosuke Imamura", f"Authors: {past}")
    )
    words = " ".join(f"w{i}" for i in range(1_250_000))  # about 10 MB
    (folder / "huge_abstract.abs").write_text(
        _with_id(real, 7).replace("  We explicitly give", f"  {words} We explicitly")
    )
    return folder


def test_hostile_inputs_cost_only_themselves(corpus):
    run = services.harvest_arxiv_files(root=corpus)

    assert run.status == "finished"
    # The good records, and the hostile ones that are valid records, landed.
    landed = set(Paper.objects.values_list("arxiv_id", flat=True))
    assert landed == {"hep-th/9901001", "1401.2122", "hep-th/9901005", "hep-th/9901006"}
    assert Authorship.objects.filter(paper__arxiv_id="hep-th/9901006").count() == 3000
    # Markup is kept as text (templates escape it), never dropped or executed.
    script = Paper.objects.get(arxiv_id="hep-th/9901005")
    assert script.title.startswith("<script>alert(1)</script> String")
    assert script.authorships.get().raw_name == "<b onmouseover=x>Yosuke</b> Imamura"
    # The path trick is no arXiv id: refused, naming the record.
    assert not any(".." in key for key in landed)

    failed = dict(
        RawRecord.objects.filter(status="failed").values_list("locator", "error")
    )
    skipped = {entry["file"]: entry["reason"] for entry in run.files_skipped}
    problems = {**failed, **skipped}
    for name in (
        "billion_laughs.xml",
        "xxe.xml",
        "no_id.abs",
        "truncated.xml",
        "truncated.json",
        "path_trick.abs",
        "bad_utf8.abs",
        "forbidden_chars.xml",
        "huge_abstract.abs",
        "too_many_authors.abs",
    ):
        (where,) = [k for k in problems if name in k]
        assert name in problems[where]
    assert run.records_failed == len(failed)
    (huge,) = [v for k, v in problems.items() if "huge_abstract" in k]
    assert "abstract is 10,139,050 characters long, at most 100,000 are taken" in huge
    (crowd,) = [v for k, v in problems.items() if "too_many_authors" in k]
    assert "hep-th/9901008" in crowd
    assert "the byline names 10,001 authors, at most 10,000 are taken" in crowd
    (bad,) = [v for k, v in problems.items() if "bad_utf8" in k]
    assert "invalid UTF-8 at byte offset" in bad

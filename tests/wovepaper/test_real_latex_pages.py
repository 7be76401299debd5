"""Real arXiv titles and abstracts whose LaTeX lost words on the public pages.

From the new-user trial: an author's own macros (``\\Dh``) and the number-set
shorthands (``\\R``) vanished, and the space after a control word was eaten
("Z^0 →2γand").
"""

from __future__ import annotations

import pytest

from harvest import services
from wovepaper.models import Paper

pytestmark = pytest.mark.django_db

PAPERS = "abs_files/ftp/arxiv/papers/0704"


@pytest.fixture
def real_papers(arxiv_dir, tmp_path):
    for arxiv_id in ("0704.0295", "0704.0583", "0704.0921"):
        (tmp_path / f"{arxiv_id}.abs").symlink_to(
            (arxiv_dir / PAPERS / f"{arxiv_id}.abs").resolve()
        )
    services.harvest_arxiv_files(root=tmp_path)
    return {p.arxiv_id: p for p in Paper.objects.all()}


def _markdown(client, paper: Paper) -> str:
    return client.get(
        paper.get_absolute_url(), HTTP_ACCEPT="text/markdown"
    ).content.decode()


def test_number_set_shorthands_read_as_their_sets(client, real_papers):
    assert r"\R" in real_papers["0704.0295"].abstract  # as arXiv prints it
    text = _markdown(client, real_papers["0704.0295"])
    assert "o-minimal structure over ℝ" in text
    assert "𝒮(ℝ)" in text


def test_an_authors_own_macro_is_shown_as_printed(client, real_papers):
    text = _markdown(client, real_papers["0704.0583"])
    assert r"Let \\Dh and A be unital" in text  # Markdown escapes the backslash
    body = client.get(real_papers["0704.0583"].get_absolute_url()).content.decode()
    assert r"Let \Dh and A be unital" in body


def test_the_space_after_a_control_word_stays(client, real_papers):
    paper = real_papers["0704.0921"]
    body = client.get(paper.get_absolute_url()).content.decode()
    assert "→ 2γ and" in body
    assert "2γand" not in body

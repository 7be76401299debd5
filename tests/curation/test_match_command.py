"""``manage.py match`` runs the matching service and prints its counts."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from curation.matching import shipped
from curation.models import Proposal
from harvest import services as harvest
from tests.factories import AuthorshipFactory
from wovepaper.models import Authorship

# The model matching scores with here: the committed one (no model is trained).
SHIPPED = shipped.read()[0]

pytestmark = pytest.mark.django_db


def test_match_command_proposes_and_prints_counts():
    a = AuthorshipFactory(given_name="Maryam", family_name="Mirzakhani")
    AuthorshipFactory(given_name="Jean-Pierre", family_name="Serre")
    out = io.StringIO()
    call_command("match", blocks=["mirzakhani m"], stdout=out)
    assert out.getvalue().strip() == (
        "1 blocks with unassigned authorships; proposed 0 attach, 1 new, 0 merge, "
        "0 split; "
        "0 applied by the matcher (auto-apply: identifier-proven new and attach "
        "proposals)\n"
        f"scored with {SHIPPED.version}, joining at {SHIPPED.threshold}"
    )
    assert list(Proposal.objects.values_list("kind", flat=True)) == ["new"]
    assert list(Proposal.objects.get().authorships.all()) == [a]


def test_match_command_says_when_a_named_block_holds_no_authorship():
    AuthorshipFactory(given_name="Maryam", family_name="Mirzakhani")
    out, err = io.StringIO(), io.StringIO()
    call_command("match", blocks=["mirzakhani m", "Serre"], stdout=out, stderr=err)
    assert err.getvalue().strip() == (
        "no authorship is in block 'Serre': a block key is the folded family name "
        'and first initial, as "serre j"'
    )
    assert out.getvalue().startswith("1 blocks with unassigned authorships")


def test_match_names_the_authorships_whose_name_folds_to_no_block(arxiv_dir, tmp_path):
    # A real arXiv record whose first author is printed as "?" (as sources
    # print a name they lack): no block holds it, so no run proposes for it.
    real = arxiv_dir / "abs_files/ftp/arxiv/papers/0704/0704.0047.abs"
    edited = tmp_path / "0704.0047.abs"
    edited.write_text(
        real.read_text().replace("Authors: T. Kosel and", "Authors: ? and")
    )
    harvest.harvest_arxiv_files(root=edited)
    unnamed = Authorship.objects.get(position=1)
    assert (unnamed.raw_name, unnamed.block_key) == ("?", "")
    out = io.StringIO()
    call_command("match", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("1 blocks with unassigned authorships")
    assert lines[1].startswith(f"scored with {SHIPPED.version}")
    assert lines[2:] == [
        "1 unassigned authorship not matched: the printed name folds to no block "
        "key, so no block holds it and no proposal is made",
        f"  authorship {unnamed.pk}: '?', author 1 of paper 0704.0047",
    ]
    assert not Proposal.objects.filter(authorships=unnamed).exists()
    assert Proposal.objects.filter(authorships__family_name="Grabec").exists()

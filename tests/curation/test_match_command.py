"""``manage.py match`` runs the matching service and prints its counts."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from curation.models import Proposal
from tests.factories import AuthorshipFactory

pytestmark = pytest.mark.django_db


def test_match_command_proposes_and_prints_counts():
    a = AuthorshipFactory(given_name="Maryam", family_name="Mirzakhani")
    AuthorshipFactory(given_name="Jean-Pierre", family_name="Serre")
    out = io.StringIO()
    call_command("match", blocks=["mirzakhani m"], stdout=out)
    assert out.getvalue().strip() == (
        "1 blocks with unassigned authorships; proposed 0 attach, 1 new, 0 merge, "
        "0 split; "
        "0 applied by the identifier policy"
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

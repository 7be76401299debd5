"""factory-boy factories of the core models (small hand-made rows for unit tests)."""

from __future__ import annotations

import datetime as dt

import factory
from django.contrib.auth import get_user_model

from curation import names
from wovepaper.models import Authorship, Paper, Researcher


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"user{n}")


class PaperFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Paper

    arxiv_id = factory.Sequence(lambda n: f"2101.{n:05d}")
    title = factory.Sequence(lambda n: f"Paper number {n}")
    published = dt.date(2021, 1, 4)
    categories = factory.LazyFunction(lambda: ["hep-th"])
    primary_category = "hep-th"


class AuthorshipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Authorship

    paper = factory.SubFactory(PaperFactory)
    position = 1
    given_name = "Jean-Pierre"
    family_name = "Serre"
    raw_name = factory.LazyAttribute(lambda o: f"{o.given_name} {o.family_name}")
    name_key = factory.LazyAttribute(
        lambda o: names.name_key(o.given_name, o.family_name)
    )
    block_key = factory.LazyAttribute(
        lambda o: names.block_key(o.given_name, o.family_name)
    )


class ResearcherFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Researcher

    display_name = "Jean-Pierre Serre"
    block_key = factory.LazyAttribute(lambda o: names.block_key("J", "Serre"))


class ProposalFactory(factory.django.DjangoModelFactory):
    """A pending proposal (``attach`` unless told), scored 0.7 by model "t";
    its authorships are set by the caller (``proposal.authorships.set``)."""

    class Meta:
        model = "curation.Proposal"

    kind = "attach"
    score = 0.7
    model_version = "t"
    fingerprint = factory.Sequence(lambda n: f"factory-{n}")

"""Read-only serializers of the curated state."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from curation.models import ClaimRequest, Proposal
from wovepaper.identifiers import orcid_normalise
from wovepaper.models import (
    Authorship,
    Follow,
    Institution,
    Paper,
    Researcher,
    ResearcherStats,
)
from wovepaper.selectors import AUTOMATIC, CHECKED, SLOT_FIELDS, placement


class SparseFieldsMixin:
    """``?fields=id,title`` keeps only those fields (unknown names are a 400)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        request = self.context.get("request") if hasattr(self, "context") else None
        wanted = request.query_params.get("fields") if request else None
        if not wanted:
            return
        names = [n.strip() for n in wanted.split(",")[:50] if n.strip()]
        unknown = sorted(set(names) - set(self.fields))
        if unknown:
            known = sorted(self.fields)
            raise serializers.ValidationError(
                {"fields": f"unknown fields {unknown[:10]}; known: {known}"}
            )
        for name in set(self.fields) - set(names):
            self.fields.pop(name)


class ResearcherRefSerializer(serializers.ModelSerializer):
    """A researcher named from elsewhere (an authorship's assignment)."""

    class Meta:
        model = Researcher
        fields = ("id", "display_name", "orcid")


class PlacedResearcherSerializer(ResearcherRefSerializer):
    """The researcher applied to a byline slot, and who placed them there."""

    placement = serializers.ChoiceField(
        choices=[CHECKED, AUTOMATIC],
        read_only=True,
        help_text="'checked by a curator': a curator confirmed this slot on "
        "the researcher; 'automatic': the matcher placed it (the auto-apply "
        "policy), and no curator has checked it yet.",
    )

    class Meta(ResearcherRefSerializer.Meta):
        fields = (*ResearcherRefSerializer.Meta.fields, "placement")


class AuthorshipSerializer(serializers.ModelSerializer):
    """One byline slot; ``researcher`` is the applied assignment or null.

    ``to_representation`` builds the dict directly: a list page carries hundreds
    of byline slots, and DRF's per-field machinery was most of its time
    (bench/api.py: 27 ms of a filtered paper list, 5 of them in the database).
    The declared fields still describe the shape for the OpenAPI schema.
    """

    researcher = PlacedResearcherSerializer(
        read_only=True,
        allow_null=True,
        help_text="The researcher applied to this slot, null until one is: "
        "`placement` says whether a curator checked it ('checked by a "
        "curator') or the matcher placed it ('automatic').",
    )

    def to_representation(self, instance: Authorship) -> dict:
        r = instance.researcher
        return {
            **{name: getattr(instance, name) for name in SLOT_FIELDS},
            "researcher": (
                {
                    "id": r.pk,
                    "display_name": r.display_name,
                    "orcid": r.orcid,
                    "placement": CHECKED
                    if getattr(instance, "checked", False)
                    else AUTOMATIC,
                }
                if r is not None
                else None
            ),
        }

    class Meta:
        model = Authorship
        fields = (*SLOT_FIELDS, "researcher")


class PaperSerializer(SparseFieldsMixin, serializers.ModelSerializer):
    """A paper with its byline in order."""

    authorships = AuthorshipSerializer(many=True, read_only=True)
    authors_truncated = serializers.BooleanField(
        read_only=True,
        help_text="True on a list page when the paper has more than 100 byline "
        "slots and only the first 100 are given; the paper's own URL gives all.",
    )
    abs_url = serializers.CharField(read_only=True)
    pdf_url = serializers.CharField(read_only=True)

    class Meta:
        model = Paper
        fields = (
            "id",
            "arxiv_id",
            "doi",
            "openalex_id",
            "s2_id",
            "title",
            "abstract",
            "published",
            "published_precision",
            "updated",
            "latest_version",
            "versions",
            "categories",
            "primary_category",
            "journal_ref",
            "comments",
            "report_no",
            "license",
            "withdrawn",
            "authors_incomplete",
            "cited_by_count",
            "abs_url",
            "pdf_url",
            "authorships",
            "authors_truncated",
        )

    # Model attributes copied as they are (the others are dates or the byline).
    PLAIN = frozenset(Meta.fields) - {
        "published",
        "updated",
        "authorships",
        "authors_truncated",
    }

    def to_representation(self, instance: Paper) -> dict:
        """The paper as a dict, built directly (see AuthorshipSerializer for why).

        Only the fields kept by ``fields=`` are built; the byline only if asked.
        A list page hands the byline over ready-made as ``instance.list_byline``
        (:func:`wovepaper.selectors.list_bylines`: dicts, at most 100 slots); a
        detail serializes the prefetched authorships.
        """
        wanted = self.fields
        ready = getattr(instance, "list_byline", None)
        out = {}
        for name in wanted:
            if name in self.PLAIN:
                out[name] = getattr(instance, name)
            elif name in ("published", "updated"):
                value = getattr(instance, name)
                out[name] = value.isoformat() if value else None
            elif name == "authorships":
                if ready is not None:
                    out[name] = ready[0]
                else:
                    byline = wanted["authorships"].child
                    out[name] = [
                        byline.to_representation(a) for a in instance.authorships.all()
                    ]
            elif name == "authors_truncated":
                out[name] = bool(ready and ready[1])
        return out


class PaperRefSerializer(SparseFieldsMixin, serializers.ModelSerializer):
    """A paper listed under a researcher, without its byline."""

    class Meta:
        model = Paper
        fields = ("id", "arxiv_id", "doi", "title", "published", "primary_category")


class SimilarPaperSerializer(PaperRefSerializer):
    """A paper near another in meaning (``/api/papers/<id>/similar/``)."""

    similarity = serializers.FloatField(
        read_only=True,
        help_text="Cosine similarity of the two papers' title-and-abstract "
        "embeddings (all-MiniLM-L6-v2), in [-1, 1]; higher is nearer.",
    )

    class Meta(PaperRefSerializer.Meta):
        fields = (*PaperRefSerializer.Meta.fields, "similarity")


class PaperSearchSerializer(serializers.Serializer):
    """One page of a paper search (``/api/search/papers/``), best first."""

    query = serializers.CharField(help_text="The search text, whitespace collapsed.")
    mode = serializers.ChoiceField(
        choices=["hybrid", "keyword", "semantic"],
        help_text="The mode that answered: the one asked, or `keyword` when a "
        "hybrid search could not reach the embedding model.",
    )
    count = serializers.IntegerField(help_text="Papers found (see `count_is`).")
    count_is = serializers.ChoiceField(
        choices=["exact", "about", "more", "nearest"],
        help_text="`exact`; `about` (PostgreSQL's estimate of a broad keyword "
        "search); `more` (more than `count`); `nearest` (a semantic search lists "
        "the `count` papers nearest in meaning).",
    )
    page = serializers.IntegerField(help_text="This page's number, from 1.")
    pages = serializers.IntegerField(help_text="Pages listed (at most 1,000 papers).")
    results = PaperRefSerializer(many=True)


class ResearcherFiguresSerializer(serializers.ModelSerializer):
    """A researcher's figures (:class:`wovepaper.models.ResearcherStats`)."""

    class Meta:
        model = ResearcherStats
        fields = (
            "citation_count",
            "h_index",
            "first_year",
            "last_year",
            "main_category",
            "latest_affiliation",
            "per_year",
        )


class ResearcherSerializer(SparseFieldsMixin, serializers.ModelSerializer):
    """A live researcher with the number of papers applied to them."""

    paper_count = serializers.IntegerField(read_only=True)
    checked_paper_count = serializers.IntegerField(
        read_only=True,
        help_text="How many of `paper_count` a curator confirmed on this "
        "researcher; the others the matcher placed.",
    )
    placement = serializers.SerializerMethodField(
        help_text="'checked by a curator' (every paper), 'partly checked by a "
        "curator' or 'automatic' (the matcher placed every paper)."
    )
    figures = serializers.SerializerMethodField(
        help_text="What the profile page shows of the record: citations (sum "
        "of the papers' cited_by_count), h-index (Hirsch 2005), first and last "
        "year with a paper, main field (commonest primary arXiv category), "
        "latest affiliation, and papers and citations per year (`per_year`, "
        "every year from the first to the last); null until computed for a "
        "new profile."
    )

    class Meta:
        model = Researcher
        fields = (
            "id",
            "display_name",
            "name_variants",
            "orcid",
            "s2_author_id",
            "openalex_author_id",
            "locked",
            "paper_count",
            "checked_paper_count",
            "placement",
            "figures",
        )

    def get_placement(self, researcher: Researcher) -> str:
        return placement(
            getattr(researcher, "checked_paper_count", 0),
            getattr(researcher, "paper_count", 0),
        )

    @extend_schema_field(ResearcherFiguresSerializer(allow_null=True))
    def get_figures(self, researcher: Researcher) -> dict | None:
        stats = getattr(researcher, "stats", None)
        return ResearcherFiguresSerializer(stats).data if stats else None


class ProposalSerializer(SparseFieldsMixin, serializers.ModelSerializer):
    """A matcher proposal as curators see it, with its evidence."""

    authorships = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    impact = serializers.IntegerField(read_only=True)

    class Meta:
        model = Proposal
        fields = (
            "id",
            "kind",
            "status",
            "score",
            "impact",
            "identifier_proven",
            "researcher",
            "other_researcher",
            "authorships",
            "evidence",
            "model_version",
            "block_key",
            "created",
            "decided_at",
            "reason",
        )
        read_only_fields = fields


class ProposalDecisionSerializer(serializers.Serializer):
    """Body of an approve or reject request."""

    reason = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    moving = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        required=False,
        max_length=10_000,
        help_text="For a split: the authorship ids to move (approve with changes).",
    )


class FollowSerializer(serializers.ModelSerializer):
    """A researcher the signed-in user follows.

    ``researcher`` is the profile followed; ``following`` the live profile
    the follow leads to now: the same one, or, for a profile merged away
    since, its survivor (whose papers the feed carries). The context's
    ``survivors`` (``{merged-away id: live Researcher}``) names them; without
    it, ``following`` is the researcher itself.
    """

    researcher = ResearcherRefSerializer(read_only=True)
    following = serializers.SerializerMethodField(
        help_text="The live researcher this follow leads to: `researcher` "
        "itself, or the survivor of a merge since."
    )

    class Meta:
        model = Follow
        fields = ("researcher", "following", "created")

    @extend_schema_field(ResearcherRefSerializer)
    def get_following(self, follow: Follow) -> dict:
        survivors = self.context.get("survivors", {})
        live = survivors.get(follow.researcher_id, follow.researcher)
        return ResearcherRefSerializer(live).data


class ClaimSerializer(serializers.ModelSerializer):
    """A claim on a researcher profile by the signed-in user."""

    class Meta:
        model = ClaimRequest
        fields = ("id", "researcher", "orcid", "message", "status", "created")
        read_only_fields = ("id", "researcher", "status", "created")
        extra_kwargs = {
            "orcid": {"max_length": 60},
            "message": {"max_length": 2000, "required": False},
        }

    def validate_orcid(self, value: str) -> str:
        """The iD bare; one that is not an ORCID iD (a wrong check digit) is
        a 400 naming the field, as the filters answer (it was a 409, as if
        the profile were in conflict: new-user trial)."""
        try:
            return orcid_normalise(value)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class CoauthorSerializer(serializers.Serializer):
    """A curated co-author and how many visible papers they share."""

    researcher = ResearcherRefSerializer(read_only=True)
    shared_papers = serializers.IntegerField(read_only=True)


class InstitutionSerializer(SparseFieldsMixin, serializers.ModelSerializer):
    """A research organisation (ROR id without the https://ror.org/ prefix)."""

    class Meta:
        model = Institution
        fields = ("id", "ror_id", "name", "aliases", "country_code", "types")


class AuthorshipDetailSerializer(SparseFieldsMixin, serializers.ModelSerializer):
    """One byline slot with its paper and applied researcher.

    ``evidence`` (curators only) is the evidence of the proposal that attached it:
    ``{"proposal": id, "kind", "score", "model_version", "features", ...}``, or
    null when a curator placed it directly or nothing did yet.
    """

    researcher = ResearcherRefSerializer(
        read_only=True,
        allow_null=True,
        help_text="The researcher a curator (or the identifier policy) applied to "
        "this slot; null until one is applied.",
    )
    paper = serializers.PrimaryKeyRelatedField(read_only=True)
    evidence = serializers.SerializerMethodField()

    class Meta:
        model = Authorship
        fields = (
            "id",
            "paper",
            "position",
            "raw_name",
            "given_name",
            "family_name",
            "orcid",
            "affiliations",
            "is_collaboration",
            "researcher",
            "evidence",
        )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        request = self.context.get("request")
        user = getattr(request, "user", None)
        if not (user and user.has_perm("curation.view_proposal")):
            self.fields.pop("evidence", None)

    def get_evidence(self, obj: Authorship) -> dict | None:
        """The latest applied proposal placing this authorship, with its
        evidence's keys beside ``proposal``, ``kind``, ``score`` and
        ``model_version``; None when no proposal placed it, or when a
        curator moved it since to a researcher that proposal did not place
        it on (a hostile trial read an attach to researcher 1 as the reason
        for a slot a curator had moved to researcher 3; the public "Why is
        this paper here?" checks the same). Evidence that is not a JSON
        object (edited by hand) comes whole under ``evidence_as_stored``
        rather than failing the response."""
        applied = getattr(obj, "applied_proposals", None)
        if not applied:
            return None
        p = applied[-1]
        placed = p.other_researcher_id if p.kind == "split" else p.researcher_id
        if placed != obj.researcher_id:
            return None
        evidence = p.evidence
        return {
            "proposal": p.pk,
            "kind": p.kind,
            "score": p.score,
            "model_version": p.model_version,
            **(
                {k: v for k, v in evidence.items() if k != "model_version"}
                if isinstance(evidence, dict)
                else {"evidence_as_stored": evidence}
            ),
        }

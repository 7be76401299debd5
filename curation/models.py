"""Proposals, constraints and the curation audit log."""

from __future__ import annotations

import json
import sys

from django.conf import settings
from django.db import models


class Proposal(models.Model):
    """A change the matcher proposes, with its score and the evidence for it.

    Kinds: ``attach`` (authorships to an existing researcher), ``new`` (a new
    researcher for authorships that match no one), ``merge`` (two researchers are one
    person: ``researcher`` survives, ``other_researcher`` goes), ``split``
    (``researcher`` holds two people: ``authorships`` move to a new researcher,
    named in ``other_researcher`` once applied). ``score`` is in [0, 1]: the
    pairwise score of an attach or merge, the cohesion of a new cluster (its
    members' mean pairwise score), a split's confidence that the parts are two
    people; ``evidence`` holds each feature's value and weight so a
    curator sees why. ``fingerprint`` identifies the proposal on its evidence: the same
    fingerprint is never proposed twice while pending, nor again once rejected.
    """

    class Kind(models.TextChoices):
        ATTACH = "attach", "attach to researcher"
        NEW = "new", "new researcher"
        MERGE = "merge", "merge researchers"
        SPLIT = "split", "split researcher"

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        APPROVED = "approved", "approved"
        APPLIED = "applied", "applied"
        REJECTED = "rejected", "rejected"
        REVERTED = "reverted", "reverted"
        STALE = "stale", "stale"
        FAILED = "failed", "failed"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    score = models.FloatField(
        help_text="In [0, 1]: an attach's or merge's pairwise score, a new "
        "cluster's cohesion (mean pairwise score), a split's confidence that the "
        "parts are two people."
    )
    evidence = models.JSONField(default=dict, blank=True)
    model_version = models.CharField(max_length=64)
    block_key = models.CharField(max_length=200, blank=True, db_index=True)
    fingerprint = models.CharField(max_length=64, db_index=True)
    identifier_proven = models.BooleanField(
        default=False,
        help_text="A shared ORCID or source author id with compatible names proves it.",
    )
    researcher = models.ForeignKey(
        "wovepaper.Researcher",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="proposals",
    )
    other_researcher = models.ForeignKey(
        "wovepaper.Researcher",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="merge_proposals",
    )
    authorships = models.ManyToManyField(
        "wovepaper.Authorship", blank=True, related_name="proposals"
    )
    created = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    reason = models.TextField(blank=True)
    researcher_revisions = models.JSONField(
        default=dict,
        blank=True,
        help_text="{researcher id: revision} when proposed; a change makes it stale.",
    )

    class Meta:
        ordering = ["-score", "id"]
        permissions = [("decide_proposal", "Can approve or reject proposals")]
        constraints = [
            models.UniqueConstraint(
                fields=["fingerprint"],
                condition=models.Q(status="pending"),
                name="proposal_one_pending_per_fingerprint",
            ),
            models.CheckConstraint(
                condition=models.Q(score__gte=0.0) & models.Q(score__lte=1.0),
                name="proposal_score_in_unit_interval",
            ),
        ]
        indexes = [
            # Every matching run looks for the pending identifier-proven ones
            # (selectors.pending_proven): a handful among tens of thousands of
            # pending proposals, found without reading the others.
            models.Index(
                fields=["block_key"],
                condition=models.Q(status="pending", identifier_proven=True),
                name="proposal_pending_proven",
            ),
        ]

    def __str__(self) -> str:
        return (
            f"proposal #{self.pk}: {self.get_kind_display()} "
            f"({self.status}, {self.score:.2f})"
        )


class Constraint(models.Model):
    """A curator decision every later matching run obeys.

    ``must_link``: the authorship belongs to the researcher. ``cannot_link``: the
    authorship is not that researcher (``authorship`` set), or two researchers are not
    one person (``other_researcher`` set).
    """

    class Kind(models.TextChoices):
        MUST_LINK = "must_link", "must link"
        CANNOT_LINK = "cannot_link", "cannot link"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    researcher = models.ForeignKey(
        "wovepaper.Researcher", on_delete=models.CASCADE, related_name="constraints"
    )
    authorship = models.ForeignKey(
        "wovepaper.Authorship",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="constraints",
    )
    other_researcher = models.ForeignKey(
        "wovepaper.Researcher",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    event = models.ForeignKey(
        "curation.CurationEvent", on_delete=models.PROTECT, related_name="constraints"
    )
    active = models.BooleanField(
        default=True, help_text="False once the event that made it was undone."
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        target = self.authorship_id or f"researcher {self.other_researcher_id}"
        return f"{self.kind}: {self.researcher_id} / {target}"


class CurationEvent(models.Model):
    """Append-only audit row: one per applied change or decision.

    An event holds everything needed to undo it exactly:

    - ``moves``: every authorship it moved,
      ``[{"authorship": id, "before": researcher_id | None, "after": researcher_id
      | None}]``;
    - ``fields``: every researcher field it changed,
      ``{"<researcher id>": {"<field>": [before, after]}}`` (a researcher the event
      created shows ``"retired": [true, false]``);
    - ``constraints_on`` / ``constraints_off``: ids of the constraints it made
      active or inactive.

    Undo writes a new ``undone`` event with the inverse of all four (``undoes``
    names the original), so an undo is itself undoable. ``batch`` links the events of
    one bulk admin action to that action's ``batch`` row. ``actor`` is None for
    automation (the identifier policy).
    """

    class Kind(models.TextChoices):
        PROPOSAL_APPLIED = "proposal_applied", "proposal applied"
        PROPOSAL_REJECTED = "proposal_rejected", "proposal rejected"
        PROPOSAL_STALE = "proposal_stale", "proposal stale"
        MERGED = "merged", "researchers merged"
        SPLIT = "split", "researcher split"
        MOVED = "moved", "authorship moved"
        DETACHED = "detached", "authorship detached"
        LOCKED = "locked", "researcher locked"
        UNLOCKED = "unlocked", "researcher unlocked"
        EDITED = "edited", "researcher edited"
        UNDONE = "undone", "event undone"
        RETIRED = "retired", "researcher retired"
        BATCH = "batch", "bulk action"
        CLAIM_APPROVED = "claim_approved", "claim approved"
        CLAIM_REJECTED = "claim_rejected", "claim rejected"
        # A new version of a record dropped or printed again a curated slot
        # (harvest.services.upsert): written by the harvest, never undone.
        SOURCE = "source", "changed by its source"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="curation_events",
    )
    proposal = models.ForeignKey(
        Proposal, null=True, blank=True, on_delete=models.PROTECT, related_name="events"
    )
    undoes = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="undone_by",
    )
    batch = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="batch_events",
    )
    researchers = models.JSONField(default=list, help_text="Researcher ids touched.")
    moves = models.JSONField(default=list, blank=True)
    fields = models.JSONField(default=dict, blank=True)
    constraints_on = models.JSONField(default=list, blank=True)
    constraints_off = models.JSONField(default=list, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]
        permissions = [("undo_curationevent", "Can undo a curation event")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk}"

    @property
    def changes_state(self) -> bool:
        """Whether undoing it would change anything: moves, fields or
        constraints (never for a change its source made: the harvest, not a
        curator, moved those), or a proposal's status back to pending (a rejection, or
        an undo of one, however deep: a rejected ``new`` records no
        constraint, and its undo was refused as changing nothing, though
        undoing a rejection puts the proposal back in the queue). Walks the
        undo chain: one query per link."""
        if self.kind == self.Kind.SOURCE:
            return False
        if self.moves or self.fields or self.constraints_on or self.constraints_off:
            return True
        first, _ = self.undo_chain_root()
        return first.kind == self.Kind.PROPOSAL_REJECTED and bool(first.proposal_id)

    def undo_chain_root(self) -> tuple[CurationEvent, bool]:
        """``(the event an undo chain starts from, whether undoing this one
        does that event again)``: undoing an undo redoes what it undid, so
        an odd depth redoes. The event itself and False when it is no
        undo. One query per link."""
        first, depth = self, 0
        while first.kind == self.Kind.UNDONE and first.undoes_id:
            first, depth = first.undoes, depth + 1
        return first, depth % 2 == 1


class ClaimRequest(models.Model):
    """A signed-in user asks to be recognised as a researcher, with their ORCID iD.

    A curator approves (the user becomes ``claimed_by`` and the profile is locked)
    or rejects it.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        APPROVED = "approved", "approved"
        REJECTED = "rejected", "rejected"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="claims"
    )
    researcher = models.ForeignKey(
        "wovepaper.Researcher", on_delete=models.PROTECT, related_name="claims"
    )
    orcid = models.CharField(max_length=19)
    message = models.TextField(blank=True)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    created = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        permissions = [("decide_claimrequest", "Can approve or reject claims")]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "researcher"],
                condition=models.Q(status="pending"),
                name="claim_one_pending_per_user_researcher",
            )
        ]

    def __str__(self) -> str:
        return f"claim #{self.pk} of researcher {self.researcher_id} ({self.status})"


class StoredJSONDecoder(json.JSONDecoder):
    """JSON of a row that may have been edited by hand: an integer longer
    than Python turns from text (``sys.get_int_max_str_digits()``, 4,300
    digits by default; Python docs, "Integer string conversion length
    limitation") reads as a float, infinite, so the row loads and its
    readers can say what is wrong with it rather than every query that loads
    it failing."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("parse_int", _int_or_float)
        super().__init__(*args, **kwargs)


def _int_or_float(text: str) -> int | float:
    limit = sys.get_int_max_str_digits()
    return int(text) if not limit or len(text) <= limit else float(text)


class MatcherModel(models.Model):
    """A trained pairwise scoring model, versioned; the newest active one is used.

    ``weights`` is ``{feature: weight}`` over ``curation.matching.scoring.FEATURES``;
    ``training`` records what it learned from (datasets, pair counts, curator
    decisions) and its cross-validated quality.
    """

    version = models.CharField(max_length=64, unique=True)
    bias = models.FloatField()
    weights = models.JSONField(decoder=StoredJSONDecoder)
    threshold = models.FloatField(
        help_text="Pairwise score in [0, 1] at which clusters join and attach."
    )
    training = models.JSONField(default=dict, blank=True, decoder=StoredJSONDecoder)
    active = models.BooleanField(default=True)
    trained_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-trained_at", "-id"]

    def __str__(self) -> str:
        return f"matcher {self.version}"

    @property
    def problem(self) -> str:
        """Why matching cannot score with this row, or "" when it can.

        A row edited by hand in the database (weights ``[1]``, a weight
        ``"big"``, a threshold of 2) is one matching passes over for the
        default weights (:func:`curation.selectors.active_weights`); the
        message is :func:`curation.matching.scoring.stored_weights`'s.
        """
        from curation.matching.scoring import stored_weights

        try:
            stored_weights(self.version, self.bias, self.weights, self.threshold)
        except ValueError as exc:
            return str(exc)
        return ""

    @property
    def learned_from(self) -> dict:
        """What ``training`` says the model learned from, read so that a row
        edited by hand shows what it can rather than failing the page.

        Returns:
            ``{"pairs": int | None, "curator_decisions": int | None,
            "datasets": {name: {"pairs": int | None, "positives": int |
            None}}}``: None where the stored count is missing or not a whole
            number at least 0; a ``datasets`` that is not an object gives {}.
        """
        training = self.training if isinstance(self.training, dict) else {}
        sets = training.get("datasets")
        return {
            "pairs": _count(training.get("pairs")),
            "curator_decisions": _count(training.get("curator_decisions")),
            "datasets": {
                str(name): {
                    "pairs": _count(d.get("pairs") if isinstance(d, dict) else None),
                    "positives": _count(
                        d.get("positives") if isinstance(d, dict) else None
                    ),
                }
                for name, d in (sets.items() if isinstance(sets, dict) else ())
            },
        }


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None

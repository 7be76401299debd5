"""The matcher's model versions: train one from labelled sets and curator
decisions (:func:`matcher_train`), and choose the active one
(:func:`matcher_activate`).
"""

from __future__ import annotations

from pathlib import Path

from django.db import transaction
from django.utils import timezone

from curation import selectors
from curation.matching import (
    scoring,
    training,
)
from curation.models import MatcherModel, Proposal
from wovepaper import embeddings

S = Proposal.Status


@transaction.atomic
def matcher_train(
    *, datasets: list[Path], threshold: float, activate: bool = True
) -> MatcherModel:
    """Train the pairwise model on labelled sets and curator decisions; activate it.

    Labelled pairs come from each dataset (see
    :func:`curation.matching.training.labelled_pairs`), each set weighing
    alike (:func:`curation.matching.training.set_weights`); curator decisions
    are the attach and merge proposals a person applied (positives) or
    rejected (negatives), those whose evidence cannot be read left out and
    named. The new model becomes the only active one (unless ``activate`` is
    False: it is stored for :func:`matcher_activate`); matching runs use it
    from then on and record its version on every proposal.

    Args:
        datasets: labelled set folders (:func:`curation.matching.labelled.load`),
            or pair sets (:func:`curation.matching.labelled_pairs.load_pairs`:
            their train pairs).
        threshold: the pairwise score in [0, 1] at which matching with this model
            joins clusters and proposes attachments.
        activate: make it the model matching uses (False: store it inactive,
            to read its weights and training first).

    Returns:
        The saved MatcherModel, active unless ``activate`` is False.

    Raises:
        labelled.DatasetError: a folder holds no labelled set.
        ValueError: the pairs hold only one class.
    """
    twice = [
        f
        for n, f in enumerate(datasets)
        if f.resolve() in {d.resolve() for d in datasets[:n]}
    ]
    if twice:
        raise ValueError(f"{twice[0]}: named twice; name each set once")
    loaded: list[training.SetPairs] = []
    embed = embeddings.text_embedder()
    for folder in datasets:
        one = training.set_pairs(folder, embed=embed)
        if one.name in {other.name for other in loaded}:
            raise ValueError(
                f"{folder}: another set named {one.name!r} is trained on too; "
                "name sets whose folders have different names"
            )
        loaded.append(one)
    sets = {one.name: one.summary for one in loaded}
    decided = Proposal.objects.filter(
        kind__in=[Proposal.Kind.ATTACH, Proposal.Kind.MERGE],
        status__in=[S.APPLIED, S.REJECTED],
        decided_by__isnull=False,
    ).values_list("pk", "evidence", "status")
    decisions, decisions_left_out = training.decision_pairs(
        (pk, evidence, status == S.APPLIED) for pk, evidence, status in decided
    )
    stamp = timezone.now().strftime("%Y%m%d%H%M%S%f")
    try:
        weights, kept = training.fit_sets(
            loaded, version=f"logreg-{stamp}", decisions=decisions
        )
    except ValueError as exc:
        counts = ", ".join(
            f"{name}: {d['pairs']} pairs, {d['positives']} matching"
            for name, d in sets.items()
        )
        raise ValueError(
            f"{exc} ({counts}; curator decisions: {len(decisions.y)} pairs, "
            f"{sum(decisions.y)} approved)"
        ) from exc
    if activate:
        MatcherModel.objects.filter(active=True).update(active=False)
        # This process's next incremental run reads the new model, not the one
        # it remembers (forgetting early costs one read if this transaction
        # fails).
        selectors.forget_given_rarities()
    return MatcherModel.objects.create(
        active=activate,
        version=weights.version,
        bias=weights.bias,
        weights=weights.weights,
        threshold=threshold,
        training={
            "datasets": sets,
            "curator_decisions": len(decisions.y),
            "curator_decisions_left_out": decisions_left_out,
            "pairs": sum(d["pairs"] for d in sets.values()) + len(decisions.y),
            "positives": sum(d["positives"] for d in sets.values()) + sum(decisions.y),
            "features": list(scoring.FEATURES),
            "defaults_kept": kept,
        },
    )


@transaction.atomic
def matcher_activate(*, version: str | None) -> MatcherModel | None:
    """Make one stored model the one matching uses, or none (default weights).

    For a model stored with ``matcher_train(activate=False)``, and to roll
    back to an earlier model, or to the hand-set default weights
    (:data:`curation.matching.scoring.DEFAULT`), when a new one proposes
    worse. Proposals already made keep the version they were scored with;
    later runs score with this one (another process within
    ``CURATION_RARITY_SECONDS``, as a model trained elsewhere reaches it).

    Args:
        version: the ``MatcherModel.version`` to activate; None deactivates
            every model.

    Returns:
        The active model, or None for the default weights.

    Raises:
        ValueError: no stored model has that version (the newest versions
            named), or its row cannot be scored with (edited by hand:
            ``MatcherModel.problem`` says why); nothing is changed.
    """
    model = None
    if version is not None:
        model = MatcherModel.objects.select_for_update().filter(version=version).first()
        if model is None:
            newest = ", ".join(
                MatcherModel.objects.values_list("version", flat=True)[:3]
            )
            raise ValueError(
                f"no stored matcher model has version {version!r}"
                + (f" (newest: {newest})" if newest else " (none is stored)")
            )
        if model.problem:
            raise ValueError(
                f"matcher model {version!r} cannot be scored with: {model.problem}"
            )
    others = MatcherModel.objects.filter(active=True)
    if model is not None:
        others = others.exclude(pk=model.pk)
    others.update(active=False)
    if model is not None and not model.active:
        model.active = True
        model.save(update_fields=["active"])
    selectors.forget_given_rarities()
    return model

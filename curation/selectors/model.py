"""The matcher's model a run scores with: the active trained version, the
shipped file, or the default weights, and how each is described; and
:func:`forget_given_rarities`, which drops what this process remembers.
"""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings

from curation.matching import scoring
from curation.models import MatcherModel
from curation.selectors.profiles import _PROFILES
from curation.selectors.views import _RARITIES, _read_remembered

logger = logging.getLogger(__name__)


def forget_given_rarities() -> None:
    """Drop the remembered rarities, the profiles built with them and the model.

    For tests, after a bulk load, and when this process trains a model.
    """
    _RARITIES.clear()
    _PROFILES.clear()
    _WEIGHTS.clear()


def active_model() -> MatcherModel | None:
    """The newest active trained model, or None when none was trained."""
    return (
        MatcherModel.objects.filter(active=True).order_by("-trained_at", "-id").first()
    )


# The scoring model an incremental run last read, by database: (monotonic expiry
# time, weights).
_WEIGHTS: dict[str, tuple[float, float, scoring.Weights]] = {}


def active_weights(*, remembered: bool = False) -> scoring.Weights:
    """The scoring model matching uses: the newest active trained one, else the
    shipped one (:func:`shipped_weights`), else the hand-set defaults.

    Args:
        remembered: accept the model this process read less than
            ``CURATION_RARITY_SECONDS`` ago, as the rarities are (an incremental
            run; a model trained in another process reaches it within that
            time, one trained in this process at once). False reads it afresh
            and remembers it.
    """
    return _read_remembered(_WEIGHTS, remembered, _read_weights)


def joining_threshold(*, remembered: bool = False) -> float:
    """The pairwise score in [0, 1] at which matching joins clusters and
    attaches: the active model's own threshold, else
    ``CURATION_ATTACH_THRESHOLD`` (``remembered``: see :func:`active_weights`)."""
    weights = active_weights(remembered=remembered)
    return weights.threshold or settings.CURATION_ATTACH_THRESHOLD


def _read_weights() -> scoring.Weights:
    model = active_model()
    if model is None:
        return shipped_weights()
    try:
        return scoring.stored_weights(
            model.version, model.bias, model.weights, model.threshold
        )
    except ValueError as exc:
        # A row edited by hand: matching goes on with the shipped model (and
        # records its version on its proposals); the admin's Matcher models
        # page and manage.py matcher_models say why.
        logger.error(
            "matcher model %s cannot be scored with (%s): using the shipped model",
            model.version,
            exc,
        )
        return shipped_weights()


def matcher_description() -> str:
    """Which model matching scores with now, for a person: its version and
    where it comes from (the active model trained on this database, else
    :func:`fallback_description`).

    Returns:
        One line of text, no trailing period.
    """
    model = active_model()
    if model is not None and not model.problem:
        return f"{model.version} (the active model trained on this database)"
    return fallback_description()


def fallback_description() -> str:
    """What matching scores with while no trained model is active (or the
    active one cannot be scored with): "the shipped model <version>
    (<file>)", or "the hand-set default weights" saying why no shipped model
    is read and what writes one.

    Returns:
        One line of text, no trailing period.
    """
    weights = shipped_weights()
    if weights is not scoring.DEFAULT:
        path = Path(settings.CURATION_SHIPPED_MODEL).resolve()
        base = Path(settings.BASE_DIR).resolve()
        # The committed file by its place in the checkout, whatever the machine.
        shown = path.relative_to(base) if path.is_relative_to(base) else path
        return f"the shipped model {weights.version} ({shown})"
    path = settings.CURATION_SHIPPED_MODEL
    if not path:
        why = "CURATION_SHIPPED_MODEL is empty"
    elif Path(path).exists():
        why = f"the shipped model {path} cannot be read; the error log says why"
    else:
        why = f"no shipped model at {path}; manage.py train_matcher --ship writes it"
    return f"the hand-set default weights {weights.version} ({why})"


# Each missing or unreadable shipped-model file is said once a process (every
# matching run reads the model: a log line a run would bury the first).
_SHIPPED_WARNED: set[str] = set()


def shipped_weights() -> scoring.Weights:
    """The model committed with the code (``CURATION_SHIPPED_MODEL``, written by
    ``manage.py train_matcher --ship``), or the hand-set default weights when
    the setting is empty or the file is missing or unreadable, said loudly
    once a process (an ERROR log naming the file, the problem and the
    command that writes it): they match far worse (B³ F1 0.72 against 0.89
    on INSPIRE Wang, ``manage.py evaluate_matching``).

    Returns:
        The Weights, with their joining threshold (the defaults' is None:
        ``CURATION_ATTACH_THRESHOLD`` applies).
    """
    from curation.matching import shipped

    path = settings.CURATION_SHIPPED_MODEL
    if not path:
        return scoring.DEFAULT
    try:
        weights, _ = shipped.read(Path(path))
    except (OSError, ValueError) as exc:
        if str(path) not in _SHIPPED_WARNED:
            _SHIPPED_WARNED.add(str(path))
            logger.error(
                "no shipped matcher model (%s): matching with the hand-set "
                "default weights, which disambiguate far worse; write it with "
                "'manage.py train_matcher --ship' or point "
                "CURATION_SHIPPED_MODEL at it",
                exc,
            )
        return scoring.DEFAULT
    return weights

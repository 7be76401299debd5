"""The pairwise model shipped with the code: trained, versioned, committed.

``manage.py train_matcher --ship`` trains the model on every labelled set in
``shared/data/and`` and writes it to :data:`SHIPPED_MODEL` (JSON, about 2 KB),
with the command and the data that produced it. Matching uses it whenever no
model trained on the database's own curator decisions is active (a fresh
deployment, ``make demo``, a test database), so what a new installation matches
with is the model ``evaluate_matching`` measures as ``shipped``, not the
hand-set default weights (:data:`curation.matching.scoring.DEFAULT`), which
remain only as the fallback when the file is missing or unreadable.

Pure: reads and writes one file, no ORM.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from curation.matching import scoring

# The committed model, beside this module.
SHIPPED_MODEL = Path(__file__).with_name("shipped_model.json")
# The file layout this module writes and reads; a file of another is refused.
FORMAT = 1


def read(path: Path = SHIPPED_MODEL) -> tuple[scoring.Weights, dict]:
    """The model a shipped-model file holds.

    Args:
        path: the JSON file (:func:`write`'s layout).

    Returns:
        ``(weights, training)``: the scoring model (its version, bias, weights
        and joining threshold) and how it was trained (``command``,
        ``datasets``: per set its mentions and pairs, ``pairs``,
        ``trained_at``), as written.

    Raises:
        FileNotFoundError: there is no file at ``path``.
        ValueError: the file is not JSON of this layout, or a weight, the bias
            or the threshold is not what :func:`scoring.stored_weights` takes;
            the message names the file and the field.
    """
    text = path.read_text(encoding="utf-8")
    try:
        content = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        found = content.get("format") if isinstance(content, dict) else content
        raise ValueError(
            f"{path}: not a shipped matcher model of format {FORMAT} "
            f"(format is {str(found)[:40]!r})"
        )
    training = content.get("training")
    if not isinstance(training, dict):
        raise ValueError(f"{path}: 'training' is not an object")
    try:
        weights = scoring.stored_weights(
            content.get("version"),
            content.get("bias"),
            content.get("weights"),
            content.get("threshold"),
        )
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc
    return weights, training


def write(path: Path, weights: scoring.Weights, training: Mapping) -> None:
    """Write a model as :func:`read` reads it (keys sorted, two-space indent, so
    that a retrained model's diff shows what moved).

    Args:
        path: the file to write (replaced).
        weights: the model; its ``threshold`` must be set. A feature it does
            not weigh is left out of the file, and weighs its default weight
            (:data:`scoring.WEIGHTS`) when read.
        training: how it was trained (JSON-serialisable).

    Raises:
        ValueError: ``weights`` has no threshold.
        OSError: the file cannot be written there (its folder is missing or
            not writable, or the path is a folder).
    """
    if weights.threshold is None:
        raise ValueError("a shipped model needs the threshold it joins clusters at")
    content = {
        "format": FORMAT,
        "version": weights.version,
        "bias": weights.bias,
        # In FEATURES order; a feature left out weighs its default when read.
        "weights": {
            name: weights.weights[name]
            for name in scoring.FEATURES
            if name in weights.weights
        },
        "threshold": weights.threshold,
        "training": dict(training),
    }
    # Written beside the target and renamed over it (atomic on POSIX): a write
    # cut short never leaves a broken model where matching reads one.
    text = json.dumps(content, indent=2, sort_keys=True) + "\n"
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    ) as partial:
        partial.write(text)
    os.replace(partial.name, path)

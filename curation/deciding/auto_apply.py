"""The auto-apply policy: which of the matcher's proposals automation applies.

DESIGN.md ("Curation: matching", 5) and issue 47: ``new`` profiles and
``attach`` decisions the matcher is sure of are applied by the matcher, as
events a curator can undo; ``merge`` and ``split`` always wait for a curator;
a strict mode makes everything wait. The setting ``CURATION_AUTO_APPLY`` says
which:

- ``off``: strict, nothing is applied without a curator;
- ``identifiers``: only proposals proven by a shared identifier (one ORCID iD
  on every slot with compatible names, :attr:`Proposal.identifier_proven`);
- a probability in (0, 1], such as ``0.995`` (the default): those, and every
  ``attach`` whose pairwise score and every ``new`` whose weakest link
  (:attr:`curation.matching.pipeline.Cluster.weakest`: each pair clustering
  scored inside it; 1.0 for one authorship) is at least that.

The default is :data:`DEFAULT_THRESHOLD`, chosen by measurement: the B³
precision of what the policy links, with the shipped model trained without
the set, is at least 0.99 on every labelled set (``evaluate_matching``'s
``auto_applied`` figure).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

OFF = "off"
IDENTIFIERS = "identifiers"
SCORE = "score"

# Measured 2026-12-06 with `manage.py evaluate_matching` (the shipped model
# trained without the set scored, new clusters at the model's threshold, those
# whose weakest link clears the bar applied): B³ precision of the mentions the
# policy links to another, at 0.99 / 0.995: Wang 1.000 / 1.000, Qian-partial
# 0.969 / 0.995, the ORCID-linked set 1.000 / 1.000. 0.99 misses 0.99 on
# Qian, so 0.995.
DEFAULT_THRESHOLD = 0.995

# A probability as the setting takes it: "0.995", "1", ".99".
_DECIMAL = re.compile(r"[0-9]*\.?[0-9]+", re.ASCII)

# Proposal kinds automation may apply; merge and split always wait.
KINDS = frozenset({"new", "attach"})


@dataclass(frozen=True)
class Policy:
    """One reading of ``CURATION_AUTO_APPLY``.

    Attributes:
        mode: :data:`OFF`, :data:`IDENTIFIERS` or :data:`SCORE`.
        threshold: for :data:`SCORE`, the probability in (0, 1] a decision's
            score (a ``new``'s weakest link) must reach; else None.
    """

    mode: str
    threshold: float | None = None

    @property
    def applies_any(self) -> bool:
        """Whether automation applies anything at all (not strict mode)."""
        return self.mode != OFF

    def describe(self) -> str:
        """The policy in words, for run summaries and events."""
        if self.mode == OFF:
            return "off: every proposal waits for a curator"
        if self.mode == IDENTIFIERS:
            return "identifier-proven new and attach proposals"
        return f"identifier-proven, or new and attach scored {self.threshold} or more"

    def clears(
        self,
        *,
        kind: str,
        score: float,
        evidence: Mapping,
        identifier_proven: bool,
    ) -> bool:
        """Whether automation applies a pending proposal of this shape.

        Never a ``merge`` or ``split``; never one whose evidence carries a
        ``flag`` (a misplaced iD, names that disagree with their iD) or names
        a ``likeliest`` holder of its name (a bare name a researcher holds
        most of: attach or new is a curator's call).

        Args:
            kind: the proposal's kind.
            score: its score (an attach's pairwise score).
            evidence: its evidence (a ``new``'s ``weakest`` link; without it,
                a ``new`` of one authorship is its own weakest link, 1.0, and
                one of several waits).
            identifier_proven: its identifier proof.

        Returns:
            True when the policy applies it.
        """
        if self.mode == OFF or kind not in KINDS:
            return False
        if evidence.get("flag") or evidence.get("likeliest"):
            return False
        if identifier_proven:
            return True
        if self.mode != SCORE:
            return False
        if kind == "attach":
            return score >= self.threshold
        weakest = evidence.get("weakest")
        if weakest is None:
            weakest = 1.0 if evidence.get("members") == 1 else 0.0
        return weakest >= self.threshold

    def clears_proposal(self, proposal) -> bool:
        """:meth:`clears` of a :class:`curation.models.Proposal` (its kind,
        score, evidence and identifier proof)."""
        return self.clears(
            kind=proposal.kind,
            score=proposal.score,
            evidence=proposal.evidence,
            identifier_proven=proposal.identifier_proven,
        )


def measured_threshold() -> float:
    """The probability the policy in force applies at, or, when it applies
    none by score (``off``, ``identifiers``), the default's: the bar
    ``evaluate_matching`` measures what automation would link at."""
    found = policy().threshold
    return DEFAULT_THRESHOLD if found is None else found


def policy(value: str | None = None) -> Policy:
    """The auto-apply policy a setting value names.

    Args:
        value: ``off``, ``identifiers`` or a probability in (0, 1]; None reads
            ``settings.CURATION_AUTO_APPLY``. ``none`` and ``strict`` are
            read as ``off``.

    Returns:
        The Policy.

    Raises:
        ImproperlyConfigured: any other value (it names the value and what
            the setting takes).
    """
    raw = settings.CURATION_AUTO_APPLY if value is None else value
    text = str(raw).strip().lower()
    if text in (OFF, "none", "strict"):
        return Policy(OFF)
    if text == IDENTIFIERS:
        return Policy(IDENTIFIERS)
    # Plain decimal digits only: float() also reads "0.9_9", other scripts'
    # digits and "1e-9" (hostile trial).
    threshold = float(text) if _DECIMAL.fullmatch(text) else float("nan")
    if not 0.0 < threshold <= 1.0:
        raise ImproperlyConfigured(
            f"CURATION_AUTO_APPLY={raw!r}: expected 'off', 'identifiers' or a "
            "probability in (0, 1], such as 0.995"
        )
    return Policy(SCORE, threshold)

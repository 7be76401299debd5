"""Curator effort: the decisions a curator makes to reach a correct corpus.

Issue 47's figure that counts. For each labelled set (INSPIRE Wang, S2AND
Qian-partial by default), and for each flow:

- ``auto``: the auto-apply policy at its default
  (:data:`curation.deciding.auto_apply.DEFAULT_THRESHOLD`): the matcher applies what it
  is sure of, curators review the rest;
- ``blocks``: the same policy, then a curator reviewing name blocks on
  their review page (:class:`BlockCurator`);
- ``today``: the flow before issue 47, ``CURATION_AUTO_APPLY=identifiers``
  (the bundled sets carry no iDs, so every proposal waits): a curator approves
  or rejects each proposal;

it builds the corpus through the product's own harvest upsert
(``harvest.services.upsert.paper_upsert``: each mention is a paper with one
author, its name and affiliations as the set prints them), runs matching
(``curation.services.matching_run``), then simulates a curator who takes the
admin's queue in its order (``curation.selectors.proposal_queue``: most
papers first, then most borderline) and answers each item from the gold
labels with the product's own services:

- an ``attach``, a ``merge``: approved when the two sides' people (the gold
  person holding most of each side) agree, else rejected: one decision;
- a ``new`` researcher: approved when its authorships are one gold person;
  otherwise approved and then each other person's authorships split off
  (``curation.edits.researcher_split``): one decision each;
- a ``split``: approved when the part it moves is another person than the
  rest, else rejected: one decision.

When the queue is empty, matching runs again (attachments and merges against
what the curator made), until a run proposes nothing or the target is met.
B³ F1 of the applied state (an unassigned mention is alone) is read every
:data:`EVERY` decisions.

Printed per set and flow: the profiles visible before any curator acts; the
B³ precision of what automation applied (over the mentions it placed with
another); the decisions per 1,000 mentions to reach B³ F1 of at least 0.98,
or 0.99 of the set's same-input ceiling when that is lower; and where the
curator stopped when it was not reached.

Usage::

    .venv/bin/python bench/curator_effort.py [--dataset and/s2and/qian_partial]
        [--flows auto,blocks,today] [--limit N] [--json]

Measured 2026-12-07 (all three flows, both sets, 7 minutes): decisions per
1,000 mentions, target B³ F1 in brackets. Wang (0.968): blocks 13.0,
reaching it (111 move groups, 60 merges of profiles ticked one person, 30
blocks approved; 1,402 papers moved); auto 41.1 and today 56.3, stalling at
0.955. Qian (0.902): blocks 72.6, reaching it (172, 170, 133; 809 papers);
auto 157.0 and today 283.1, stalling at 0.875. Counted as stop 59 did, each
approval and each merged pair a decision of its own
(``per_item_decisions_per_1000_mentions``), blocks is 45.0 and 152.7. The
matcher linked mentions at B³ precision 1.000 on both.

It uses its own SQLite file, ``var/curator_effort.sqlite3`` (emptied each
run), unless ``DATABASE_URL`` names another database, which it flushes.
Celery tasks run in this process.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")
if "DATABASE_URL" not in os.environ:
    os.environ["DATABASE_URL"] = "sqlite:///" + str(
        Path(__file__).resolve().parent.parent / "var" / "curator_effort.sqlite3"
    )
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from curation import (  # noqa: E402
    block_review,
    edits,
    selectors,
    services,
)
from curation.deciding import auto_apply  # noqa: E402
from curation.exceptions import CurationError  # noqa: E402
from curation.matching import evaluation, labelled  # noqa: E402
from curation.models import Proposal  # noqa: E402
from harvest.records import AuthorRecord, PaperRecord  # noqa: E402
from harvest.services.upsert import paper_upsert  # noqa: E402
from wovepaper.models import Authorship, Researcher  # noqa: E402

DATASETS = ("and/beard_inspire_wang", "and/s2and/qian_partial")
FLOWS = {
    "auto": str(auto_apply.DEFAULT_THRESHOLD),
    "blocks": str(auto_apply.DEFAULT_THRESHOLD),
    "today": "identifiers",
}
TARGET = 0.98
# Decisions between two readings of the corpus's B³ F1.
EVERY = 25
# Matching runs after the first, at most (each after the queue emptied).
ROUNDS = 5


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def ingest(data: labelled.LabelledSet, limit: int | None) -> dict[int, str]:
    """Each mention as a paper of one author, through the harvest's upsert.

    Returns:
        ``{authorship id: gold person}``.
    """
    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    views = data.views[:limit] if limit else data.views
    for view in views:
        mention = data.mention_ids[view.id]
        key = f"{data.name}:{mention}"
        paper_upsert(
            record=PaperRecord(
                source="labelled",
                external_id=key,
                # A work id the upsert requires: 40 hex characters, as S2's.
                s2_id=hashlib.sha1(key.encode()).hexdigest(),  # noqa: S324
                title=f"{data.name} mention {mention}",
                authors=[
                    AuthorRecord(
                        raw_name=data.raw_names[view.id],
                        given_name=view.given,
                        family_name=view.family,
                        affiliations=data.affiliations.get(view.id, ()),
                    )
                ],
            )
        )
    by_paper = dict(Authorship.objects.values_list("paper__s2_id", "pk"))
    gold = {}
    for view in views:
        key = f"{data.name}:{data.mention_ids[view.id]}"
        gold[by_paper[hashlib.sha1(key.encode()).hexdigest()]] = data.gold[view.id]  # noqa: S324
    return gold


def applied() -> dict[int, int | None]:
    """``{authorship id: researcher id or None}``."""
    return dict(Authorship.objects.values_list("pk", "researcher_id"))


def b3(gold: dict[int, str]) -> evaluation.PRF:
    """B³ of the applied state; an unassigned mention is alone."""
    state = applied()
    predicted = {a: (f"r{r}" if r else f"a{a}") for a, r in state.items() if a in gold}
    return evaluation.b_cubed(predicted, gold)


def automation_precision(gold: dict[int, str]) -> tuple[float, int]:
    """B³ precision over the mentions automation placed with another, and
    how many those are."""
    state = {a: r for a, r in applied().items() if r and a in gold}
    sizes = Counter(state.values())
    linked = {a: f"r{r}" for a, r in state.items() if sizes[r] > 1}
    if not linked:
        return 1.0, 0
    return evaluation.b_cubed(linked, {a: gold[a] for a in linked}).precision, len(
        linked
    )


def person_of(ids: list[int], gold: dict[int, str]) -> str | None:
    """The gold person holding most of these authorships (None for none: a
    profile emptied since the proposal was made)."""
    found = Counter(gold[a] for a in ids).most_common(1)
    return found[0][0] if found else None


def same(a: str | None, b: str | None) -> bool:
    """Two sides are one person: both known and equal."""
    return a is not None and a == b


def holds(researcher_id: int) -> list[int]:
    return list(
        Authorship.objects.filter(researcher_id=researcher_id).values_list(
            "pk", flat=True
        )
    )


class Curator:
    """Answers review items from the gold labels, counting decisions."""

    def __init__(self, gold: dict[int, str], user) -> None:
        self.gold, self.user, self.decisions = gold, user, 0

    def decide(self, proposal: Proposal) -> None:
        """One queue item, with the product's services."""
        ids = list(proposal.authorships.values_list("pk", flat=True))
        gold = self.gold
        try:
            if proposal.kind == "attach":
                right = same(
                    person_of(ids, gold), person_of(holds(proposal.researcher_id), gold)
                )
                self._answer(proposal, right)
            elif proposal.kind == "merge":
                right = same(
                    person_of(holds(proposal.researcher_id), gold),
                    person_of(holds(proposal.other_researcher_id), gold),
                )
                self._answer(proposal, right)
            elif proposal.kind == "split":
                rest = set(holds(proposal.researcher_id)) - set(ids)
                moving, staying = person_of(ids, gold), person_of(list(rest), gold)
                right = None not in (moving, staying) and moving != staying
                self._answer(proposal, right)
            else:
                self._new(proposal, ids)
        except CurationError:
            pass  # stale or in conflict since it was queued: nothing decided

    def _answer(self, proposal: Proposal, right: bool) -> None:
        self.decisions += 1
        if right:
            services.proposal_apply(proposal=proposal, actor=self.user)
        else:
            services.proposal_reject(proposal=proposal, actor=self.user)

    def _new(self, proposal: Proposal, ids: list[int]) -> None:
        people = Counter(self.gold[a] for a in ids)
        self.decisions += 1
        services.proposal_apply(proposal=proposal, actor=self.user)
        if len(people) == 1:
            return
        researcher = Researcher.objects.get(
            pk=Proposal.objects.get(pk=proposal.pk).researcher_id
        )
        keep = people.most_common(1)[0][0]
        for person in people:
            if person == keep:
                continue
            self.decisions += 1
            edits.researcher_split(
                researcher=Researcher.objects.get(pk=researcher.pk),
                authorship_ids=[a for a in ids if self.gold[a] == person],
                actor=self.user,
            )


class BlockCurator:
    """Reviews a name block at a time on its review page
    (:mod:`curation.block_review`), answering from the gold labels with the
    page's own actions, each one decision:

    - each pending proposal judged as :class:`Curator` judges it (a mixed
      ``new`` is approved, then put right below); a wrong one rejected (one
      decision each), the rest approved with "Approve the waiting ones,
      apply and next block" (one decision for the block);
    - each profile holding papers of another person than the block's profile
      of that person: those papers ticked and moved there with the profile's
      "move the ticked papers" menu (or, when the block has none, to one new
      profile): one decision per profile and place;
    - the profiles of one person ticked "one person" and merged: one
      decision per person.

    Kept beside it, in ``per_item``: the count of stop 59, in which each
    approval and each merged pair of profiles was a decision of its own.
    The papers moved (the ticks) are counted in ``papers_moved``."""

    last: BlockCurator

    def __init__(self, gold: dict[int, str], user) -> None:
        self.gold, self.user, self.decisions = gold, user, 0
        self.papers_moved = self.per_item = 0
        self.kinds: Counter = Counter()
        BlockCurator.last = self

    def review(self, block_key: str) -> None:
        """One block: its proposals, then what is still wrong in it."""
        gold, decisions = self.gold, {}
        for proposal in block_review.pending_in(block_key):
            ids = list(proposal.authorships.values_list("pk", flat=True))
            if proposal.kind == "attach":
                right = same(
                    person_of(ids, gold), person_of(holds(proposal.researcher_id), gold)
                )
            elif proposal.kind == "merge":
                right = same(
                    person_of(holds(proposal.researcher_id), gold),
                    person_of(holds(proposal.other_researcher_id), gold),
                )
            elif proposal.kind == "split":
                rest = set(holds(proposal.researcher_id)) - set(ids)
                moving, staying = person_of(ids, gold), person_of(list(rest), gold)
                right = None not in (moving, staying) and moving != staying
            else:
                right = True  # a mixed new is approved, then put right below
            decisions[proposal.pk] = right
        approved = sum(decisions.values())
        if self._apply(block_key, block_review.Review(decisions=decisions)):
            self._count("rejection", len(decisions) - approved, len(decisions))
            self._count("approve the waiting ones", 1 if approved else 0, 0)
        profiles = {
            r: holds(r)
            for r in Researcher.objects.live()
            .filter(block_key=block_key)
            .values_list("pk", flat=True)
        }
        home: dict[str, int] = {}
        groups: dict[int, list[int]] = {}
        for researcher, ids in sorted(profiles.items(), key=lambda kv: -len(kv[1])):
            person = person_of(ids, gold)
            if person is None:
                continue
            if person in home:
                groups.setdefault(home[person], []).append(researcher)
            else:
                home[person] = researcher
        merged = {b: a for a, group in groups.items() for b in group}
        moves = {}
        for researcher, ids in profiles.items():
            owner = merged.get(researcher, researcher)
            for a in ids:
                there = home.get(gold[a])
                if there is None:
                    moves[a] = block_review.NEW
                elif there != owner:
                    moves[a] = there
        holders = dict(
            Authorship.objects.filter(pk__in=list(moves)).values_list(
                "pk", "researcher_id"
            )
        )
        places = len({(holders[a], target) for a, target in moves.items()})
        if self._apply(block_key, block_review.Review(moves=moves)):
            self._count("move group", places, places)
            self.papers_moved += len(moves)
        for survivor, group in groups.items():
            merges = [(survivor, other) for other in group]
            if self._apply(block_key, block_review.Review(merges=merges)):
                self._count("merge of profiles ticked one person", 1, len(merges))

    def _count(self, kind: str, decisions: int, per_item: int) -> None:
        self.decisions += decisions
        self.per_item += per_item
        self.kinds[kind] += decisions

    def _apply(self, block_key: str, review: block_review.Review) -> bool:
        """Apply a review; False when there was none or it was refused."""
        if not review:
            return False
        try:
            block_review.review_apply(
                block_key=block_key, review=review, actor=self.user
            )
        except CurationError as exc:
            say(f"  review of {block_key} refused: {exc}")
            return False
        return True


def review_blocks(
    curator: BlockCurator, gold: dict[int, str], target: float
) -> tuple[bool, evaluation.PRF, int]:
    """Blocks in queue order, matching again when none waits; returns
    ``(target reached, the last B³, matching rounds after the first)``."""
    rounds, seen = 0, set()
    score = b3(gold)
    while score.f1 < target:
        queue = [b.block_key for b in block_review.block_queue(limit=10**9)]
        queue = [b for b in queue if b not in seen] or queue
        if not queue:
            if rounds >= ROUNDS:
                break
            rounds += 1
            services.matching_run()
            seen.clear()
            if not Proposal.objects.filter(status="pending").exists():
                break
            continue
        for block_key in queue:
            seen.add(block_key)
            before = curator.decisions
            curator.review(block_key)
            if curator.decisions // EVERY != before // EVERY:
                score = b3(gold)
                if score.f1 >= target:
                    return True, score, rounds
        score = b3(gold)
    return score.f1 >= target, score, rounds


def run_flow(data: labelled.LabelledSet, flow: str, limit: int | None) -> dict:
    """Ingest, match, and curate one set in one flow; its figures."""
    settings.CURATION_AUTO_APPLY = FLOWS[flow]
    selectors.forget_given_rarities()
    started = time.perf_counter()
    gold = ingest(data, limit)
    target = min(
        TARGET,
        0.99
        * evaluation.b_cubed(
            evaluation.same_input_ceiling(
                {
                    a: (r["given_name"], r["family_name"], tuple(r["affiliations"]))
                    for a, r in (
                        (row["pk"], row)
                        for row in Authorship.objects.values(
                            "pk", "given_name", "family_name", "affiliations"
                        )
                    )
                },
                gold,
            ),
            gold,
        ).f1,
    )
    counts = services.matching_run()
    visible = Researcher.objects.live().count()
    precision, linked = automation_precision(gold)
    before = b3(gold)
    user = services.curator_ensure(username="effort", password="effort-pw")
    curator = Curator(gold, user)
    reached = before.f1 >= target
    score = before
    rounds = 0
    if flow == "blocks":
        reached, score, rounds = review_blocks(BlockCurator(gold, user), gold, target)
        curator = None
    while not reached and curator is not None:
        queue = list(
            selectors.proposal_queue(Proposal.objects.filter(status="pending"))
        )
        if not queue:
            if rounds >= ROUNDS:
                break
            rounds += 1
            services.matching_run()
            if not Proposal.objects.filter(status="pending").exists():
                break
            continue
        for proposal in queue:
            if not Proposal.objects.filter(pk=proposal.pk, status="pending").exists():
                continue
            curator.decide(proposal)
            if curator.decisions % EVERY == 0:
                score = b3(gold)
                if score.f1 >= target:
                    reached = True
                    break
        else:
            score = b3(gold)
            reached = score.f1 >= target
    mentions = len(gold)
    decisions = (curator or BlockCurator.last).decisions
    return {
        "dataset": data.name,
        "flow": flow,
        "policy": FLOWS[flow],
        "mentions": mentions,
        "target_b3_f1": round(target, 4),
        "profiles_before_curators": visible,
        "auto_applied": counts.get("auto_applied", 0),
        "automation_b3_precision": round(precision, 4),
        "automation_linked_mentions": linked,
        "b3_f1_before_curators": round(before.f1, 4),
        "reached": reached,
        "decisions": decisions,
        "decisions_per_1000_mentions": round(1000 * decisions / mentions, 1),
        "papers_moved": BlockCurator.last.papers_moved if flow == "blocks" else 0,
        "decisions_by_kind": (
            dict(BlockCurator.last.kinds.most_common()) if flow == "blocks" else {}
        ),
        # Stop 59's count: each approval and each merged pair a decision.
        "per_item_decisions_per_1000_mentions": round(
            1000
            * (BlockCurator.last.per_item if flow == "blocks" else decisions)
            / mentions,
            1,
        ),
        "b3_f1_at_stop": round(score.f1, 4),
        "matching_rounds": 1 + rounds,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", action="append", default=None)
    parser.add_argument("--flows", default="auto,blocks,today")
    parser.add_argument("--limit", type=int, default=None, help="first N mentions")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for path in args.dataset or DATASETS:
        data = labelled.load(Path(settings.WOVEPAPER_DATA_DIR) / path)
        for flow in args.flows.split(","):
            say(f"{data.name}, {flow}: ingesting, matching, curating...")
            figures = run_flow(data, flow, args.limit)
            if args.json:
                print(json.dumps(figures), flush=True)
                continue
            print(
                f"{data.name} [{flow}: CURATION_AUTO_APPLY={figures['policy']}] "
                f"{figures['mentions']} mentions: "
                f"{figures['profiles_before_curators']} profiles before any "
                f"curator ({figures['auto_applied']} decisions applied by the "
                f"matcher, B3 precision {figures['automation_b3_precision']} over "
                f"{figures['automation_linked_mentions']} linked mentions; B3 F1 "
                f"{figures['b3_f1_before_curators']}); "
                + (
                    f"{figures['decisions_per_1000_mentions']} curator decisions per "
                    f"1,000 mentions to B3 F1 {figures['target_b3_f1']}"
                    if figures["reached"]
                    else f"target B3 F1 {figures['target_b3_f1']} not reached: "
                    f"{figures['b3_f1_at_stop']} after {figures['decisions']} "
                    f"decisions ({figures['decisions_per_1000_mentions']} per "
                    "1,000 mentions)"
                )
                + f"; {figures['seconds']} s",
                flush=True,
            )


if __name__ == "__main__":
    main()

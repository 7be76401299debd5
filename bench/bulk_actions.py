"""A curator's bulk approve of 10,000 proposals: how long the web request is held.

Issue 47's target: a bulk action of 10,000 decisions never holds a web request
for more than 1 s. The admin's "Approve selected proposals" now records the
action and queues it for a worker (``curation.services.bulk_decide_start``);
this script posts that action through Django's test client (the view's own
time, no network) as a curator selects 10,000 proposals (the pending queue,
"Select all" across its pages), then waits for one real ``celery worker``
process to decide every proposal, and prints both. The baseline in the same
run is the flow before: the same decisions made inside the request
(``services.proposals_decide``, in this process), on a second set of
proposals of the same shape.

Measured 2026-12-06 on 2 cores (PostgreSQL and Redis on the machine):
10,000 decisions held the request 116.05 s before, 0.159 s now (x730);
one worker decided them in 122.5 s (81.7 decisions/s), none skipped or
failed.

Each proposal attaches one unassigned authorship (its own paper) to one of 100
researchers, as a queue of attaches does.

Usage::

    createdb -h 127.0.0.1 -U postgres wovepaper_bulkbench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_bulkbench \\
        REDIS_URL=redis://127.0.0.1:6379/13 \\
        .venv/bin/python bench/bulk_actions.py [--size 10000] [--baseline 10000]

It runs ``migrate`` and ``flush`` on the database ``DATABASE_URL`` names, and
empties the Redis database ``REDIS_URL`` names: give it disposable ones.
"""

from __future__ import annotations

import argparse
import json
import time

import matching_workers as workers  # noqa: I001  (bench/, sets up Django)


def make_proposals(count: int, tag: str) -> list[int]:
    """``count`` pending attach proposals of one authorship each, over 100
    researchers; their ids."""
    from curation.models import Proposal
    from wovepaper.models import Authorship, Paper, Researcher

    researchers = Researcher.objects.bulk_create(
        Researcher(display_name=f"Bench Person {tag}{n}", block_key=f"person b{n}")
        for n in range(100)
    )
    papers = Paper.objects.bulk_create(
        Paper(title=f"Bench paper {tag}{n}", arxiv_id=f"{tag}{n:07d}")
        for n in range(count)
    )
    slots = Authorship.objects.bulk_create(
        Authorship(
            paper=paper,
            position=1,
            raw_name=f"B. Person{n % 100}",
            given_name="B.",
            family_name=f"Person{n % 100}",
        )
        for n, paper in enumerate(papers)
    )
    proposals = Proposal.objects.bulk_create(
        Proposal(
            kind="attach",
            score=0.9,
            model_version="bench",
            fingerprint=f"bench-{tag}-{n}",
            researcher=researchers[n % 100],
            block_key=f"person b{n % 100}",
        )
        for n in range(count)
    )
    Proposal.authorships.through.objects.bulk_create(
        Proposal.authorships.through(proposal_id=p.pk, authorship_id=a.pk)
        for p, a in zip(proposals, slots, strict=True)
    )
    return [p.pk for p in proposals]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument(
        "--baseline",
        type=int,
        default=10_000,
        help="decisions made inside the request (0: none)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import redis
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    from curation import services
    from curation.models import CurationEvent, Proposal

    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    curator = services.curator_ensure(username="bench", password="bench-pw")
    figures: dict[str, float | int] = {"size": args.size}

    if args.baseline:
        ids = make_proposals(args.baseline, "base")
        started = time.perf_counter()
        _, done, _ = services.proposals_decide(
            proposals=list(Proposal.objects.filter(pk__in=ids).order_by("pk")),
            approve=True,
            actor=curator,
        )
        figures["baseline_size"] = args.baseline
        figures["baseline_request_seconds"] = round(time.perf_counter() - started, 2)
        workers.say(
            f"before: {done} decisions inside the request, held "
            f"{figures['baseline_request_seconds']} s"
        )

    ids = make_proposals(args.size, "bulk")
    client = Client()
    client.force_login(curator)
    procs = workers.start_workers(1, queues="celery")
    try:
        started = time.perf_counter()
        # As a curator selects them: the queue filtered to every pending
        # proposal, "Select all" across its pages (the page's ids are sent,
        # the action takes the whole filtered queue).
        response = client.post(
            reverse("admin:curation_proposal_changelist")
            + "?status__exact=pending&lane=all",
            {
                "action": "approve_selected",
                "select_across": "1",
                "index": "0",
                "_selected_action": ids[:100],
            },
        )
        held = time.perf_counter() - started
        assert response.status_code == 302, response.status_code
        batch = CurationEvent.objects.filter(kind="batch").latest("pk")
        while CurationEvent.objects.get(pk=batch.pk).extra.get("state") != "done":
            if any(p.poll() is not None for p in procs):
                raise SystemExit("the worker exited")
            time.sleep(0.5)
        worked = time.perf_counter() - started
    finally:
        workers.stop_workers(procs)
    extra = CurationEvent.objects.get(pk=batch.pk).extra
    figures.update(
        request_seconds=round(held, 3),
        worker_seconds=round(worked, 1),
        decisions_per_second=round(extra["done"] / worked, 1),
        done=extra["done"],
        skipped=extra["skipped_count"],
        failed=extra["failed_count"],
    )
    workers.say(
        f"now: the request held {figures['request_seconds']} s (target at most 1 s); "
        f"one worker decided {extra['done']} ({extra['skipped_count']} skipped, "
        f"{extra['failed_count']} failed) in {figures['worker_seconds']} s, "
        f"{figures['decisions_per_second']} decisions/s"
    )
    if args.baseline:
        workers.say(
            "request held, before / now: "
            f"x{figures['baseline_request_seconds'] / max(held, 1e-6):.0f}"
        )
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()

"""Author profiles of OpenAlex and Semantic Scholar: stored, and looked up live.

The byline slots carry the sources' author ids (``Authorship.openalex_author_id``,
``s2_author_id``); these lookups fetch the profiles behind them into
:class:`~harvest.models.SourceAuthor` (evidence for matching and curation: the
ORCID a source links to the profile, the names and institutions it has seen).
When OpenAlex has merged a profile into another, the slots that carried the old
id are moved to the survivor, so two slots of one OpenAlex person never look
like two people.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from django.conf import settings
from django.db import transaction

from harvest.models import HarvestRun, RawRecord, SourceAuthor
from harvest.records import AuthorProfileRecord, RawItem, RecordError, clean_text
from harvest.services.batches import entities_batch
from harvest.services.lookups import lookup_run
from harvest.services.upsert import _researchers_evidence_changed
from harvest.sources.json_answers import json_payload
from harvest.sources.polite_http import PoliteClient, SourceError
from wovepaper.models import Authorship, Researcher

logger = logging.getLogger(__name__)

# Ids asked in one OpenAlex list request (``filter=openalex:A1|A2|...``); OpenAlex
# takes up to 100 values OR-ed in one filter (OpenAlex docs, "Filter entity
# lists", "OR within a filter"), and a page of 50 authors is a few hundred kB.
OPENALEX_IDS_PER_REQUEST = 50

_SLOT_ID = {"openalex": "openalex_author_id", "semanticscholar": "s2_author_id"}
# How many ids a source did not know a run names in its params (the rest counted).
UNKNOWN_KEPT = 100


def source_author_upsert(
    record: AuthorProfileRecord, raw: RawRecord | None = None
) -> str:
    """Create or update the SourceAuthor of one profile record; move the slots of
    a merged OpenAlex profile to its survivor.

    Args:
        record: a parsed profile.
        raw: the raw record it was parsed from (None for a tombstone the source
            answered without a body: a 404 or a batch ``null``).

    Returns:
        ``"created"``, ``"updated"`` or ``"unchanged"``.
    """
    fields = {
        "name": clean_text(record.name)[:500],
        "aliases": [clean_text(a)[:500] for a in record.aliases],
        "orcid": record.orcid,
        "ror_ids": list(record.ror_ids),
        "affiliations": [clean_text(a)[:1000] for a in record.affiliations],
        "works_count": record.works_count,
        "merged_into": record.merged_into[:32],
        "deleted": record.deleted,
    }
    row = SourceAuthor.objects.filter(
        source=record.source, external_id=record.external_id
    ).first()
    if record.merged_into:
        fields["merged_into"] = survivor = _survivor(record)
        _slots_move(record.source, record.external_id, survivor)
        # Profiles merged into this one earlier now point at its survivor.
        for earlier in SourceAuthor.objects.filter(
            source=record.source, merged_into=record.external_id
        ):
            earlier.merged_into = survivor
            earlier.save(update_fields=["merged_into", "updated"])
            _slots_move(record.source, earlier.external_id, survivor)
    if row is None:
        SourceAuthor.objects.create(
            source=record.source,
            external_id=record.external_id,
            raw_record=raw,
            **fields,
        )
        if fields["orcid"]:
            _holders_changed(record.source, record.external_id)
        return "created"
    if all(getattr(row, k) == v for k, v in fields.items()):
        return "unchanged"
    if (row.orcid, row.deleted) != (fields["orcid"], fields["deleted"]):
        _holders_changed(record.source, record.external_id)
    for key, value in fields.items():
        setattr(row, key, value)
    row.raw_record = raw or row.raw_record
    row.save()
    return "updated"


def _holders_changed(source: str, external_id: str) -> None:
    """Bump the revision of the researchers that hold a slot carrying this
    author id or carry it themselves: the matcher reads a profile's ORCID iD
    and ids as evidence (curation.selectors), and remembers researchers'
    profiles by revision."""
    field = _SLOT_ID[source]
    _researchers_evidence_changed(
        [
            *Authorship.objects.filter(**{field: external_id})
            .exclude(researcher=None)
            .values_list("researcher_id", flat=True),
            *Researcher.objects.filter(**{field: external_id}).values_list(
                "pk", flat=True
            ),
        ]
    )


# Longest chain of merges followed to a survivor (OpenAlex merges a profile into
# one that is itself later merged).
MERGE_CHAIN_MAX = 10


def _survivor(record: AuthorProfileRecord) -> str:
    """The profile ``record.external_id`` lives on as: ``merged_into``, followed
    through the merges stored since.

    Raises:
        RecordError: the merges lead back to the profile (a loop) or run longer
            than :data:`MERGE_CHAIN_MAX`.
    """
    chain = [record.external_id, record.merged_into]
    while len(chain) <= MERGE_CHAIN_MAX + 1:
        after = (
            SourceAuthor.objects.filter(source=record.source, external_id=chain[-1])
            .exclude(merged_into="")
            .values_list("merged_into", flat=True)
            .first()
        )
        if after is None:
            return chain[-1]
        if after in chain:
            raise RecordError(
                f"{record.external_id}: merge loop {' -> '.join([*chain, after])}"
            )
        chain.append(after)
    raise RecordError(
        f"{record.external_id}: merges longer than {MERGE_CHAIN_MAX}: "
        f"{' -> '.join(chain)}"
    )


def _slots_move(source: str, old: str, new: str) -> int:
    """Move the byline slots carrying author id ``old`` to ``new``; how many.

    The researchers holding them, or carrying ``old`` as their own id (which
    stays as a curator set it; matching reads it as its survivor, see
    curation.selectors), get a new revision.
    """
    field = _SLOT_ID[source]
    _holders_changed(source, old)
    moved = Authorship.objects.filter(**{field: old}).update(**{field: new})
    if moved:
        logger.info(
            "%s author %s merged into %s: %d byline slots moved",
            source,
            old,
            new,
            moved,
            extra={"source_author": old},
        )
    return moved


def merged_slots_move(source: str) -> int:
    """Move byline slots that still carry the id of a profile known to be merged
    (a slot harvested after the merge was looked up) to its survivor.

    Returns:
        How many slots moved.
    """
    field = _SLOT_ID[source]
    carried = Authorship.objects.exclude(**{field: ""}).values(field)
    moved = 0
    for old, new in (
        SourceAuthor.objects.filter(source=source, external_id__in=carried)
        .exclude(merged_into="")
        .values_list("external_id", "merged_into")
    ):
        moved += _slots_move(source, old, new)
    return moved


def source_authors_batch(**kwargs) -> None:
    """Store, parse and upsert a batch of author profile records
    (:func:`~harvest.services.batches.entities_batch` of
    :func:`source_author_upsert`); takes the arguments of ``harvest_batch``."""
    entities_batch(**kwargs, upsert=source_author_upsert)


def _profiles_write(
    run: HarvestRun, items: list[RawItem], unknown: list[str], *, parse
) -> None:
    """Store one lookup's answers, and the ids the source does not know as
    deleted profiles (so they are not asked again)."""
    source = run.source
    if items:
        # Always applied (reparse): an answer that comes back after a tombstone
        # brings the profile back.
        source_authors_batch(
            run=run, source=source, items=items, parse=parse, reparse=True
        )
    for external_id in unknown:
        outcome = source_author_upsert(
            AuthorProfileRecord(source=source, external_id=external_id, deleted=True)
        )
        counter = f"papers_{outcome}"
        setattr(run, counter, getattr(run, counter) + 1)
    note_unknown(run, unknown)


def note_unknown(run: HarvestRun, ids: list[str]) -> None:
    """Count ids the source answered it does not know as records seen, and name
    the first :data:`UNKNOWN_KEPT` of them in ``run.params["unknown"]``."""
    run.records_seen += len(ids)
    kept = run.params.setdefault("unknown", [])
    kept.extend(ids[: max(0, UNKNOWN_KEPT - len(kept))])


def _unknown_ids(source: str, after: str, count: int) -> list[str]:
    """Author ids byline slots carry that have no SourceAuthor yet, ascending,
    past ``after``: the next ``count`` to look up."""
    field = _SLOT_ID[source]
    known = SourceAuthor.objects.filter(source=source).values("external_id")
    return list(
        Authorship.objects.exclude(**{field: ""})
        .filter(**{f"{field}__gt": after})
        .exclude(**{f"{field}__in": known})
        .order_by(field)
        .values_list(field, flat=True)
        .distinct()[:count]
    )


def openalex_root(url: str = "") -> str:
    """The OpenAlex API root of ``url`` or ``settings.OPENALEX_WORKS_URL``: the
    works endpoint (``https://api.openalex.org/works``, what ``--url`` names for
    every OpenAlex harvest) or the root itself."""
    return (url or settings.OPENALEX_WORKS_URL).rstrip("/").removesuffix("/works")


def openalex_list(
    http: PoliteClient, url: str, attribute: str, values: list[str]
) -> list:
    """One OpenAlex list request for entities whose ``attribute`` is any of
    ``values`` (``filter=attribute:v1|v2``, one page of ``len(values)``).

    Returns:
        The answer's ``results``.

    Raises:
        SourceError: an answer without a results list; see also
            :meth:`PoliteClient.fetch`.
    """
    from harvest.sources.json_answers import json_answer

    key = {"api_key": settings.OPENALEX_API_KEY} if settings.OPENALEX_API_KEY else {}
    answer = http.fetch(
        url,
        {
            "filter": f"{attribute}:" + "|".join(values),
            "per-page": str(len(values)),
            **key,
        },
        read=lambda r: json_answer(r.text, str(r.url)),
    )
    results = answer.get("results") if isinstance(answer, dict) else None
    if not isinstance(results, list):
        raise SourceError(f"{url}: no results list in the answer")
    return results


def _openalex_look_up(
    http: PoliteClient, base_url: str, ids: list[str]
) -> tuple[list[RawItem], list[str]]:
    """One list request for ``ids``; each id it did not answer asked alone (a
    merged id answers with its survivor, an unknown one 404)."""
    from harvest.sources import openalex
    from harvest.sources.json_answers import json_answer

    key = {"api_key": settings.OPENALEX_API_KEY} if settings.OPENALEX_API_KEY else {}
    root = base_url.rstrip("/")
    results = openalex_list(http, f"{root}/authors", "openalex", ids)
    items, found = [], set()
    for entry in results:
        aid = openalex.author_id(entry.get("id")) if isinstance(entry, dict) else ""
        if aid in ids and aid not in found:
            found.add(aid)
            items.append(
                RawItem(
                    external_id=aid,
                    payload=json_payload(entry),
                    locator=f"{root}/authors/{aid}",
                )
            )
    unknown = []
    for aid in (a for a in ids if a not in found):
        entry = http.fetch(
            f"{root}/authors/{aid}",
            key,
            read=lambda r: (
                None if r.status_code == 404 else json_answer(r.text, str(r.url))
            ),
            accept=frozenset({404}),
        )
        if entry is None:
            unknown.append(aid)
            continue
        # Stored under the id asked: the parser reads a different answered id as
        # a merge into it.
        items.append(
            RawItem(
                external_id=aid,
                payload=json_payload(entry),
                locator=f"{root}/authors/{aid}",
            )
        )
    return items, unknown


def harvest_openalex_authors(
    *,
    ids: list[str] | None = None,
    limit: int | None = None,
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Fetch OpenAlex author profiles into SourceAuthor.

    Without ``ids``, every OpenAlex author id a byline slot carries that has no
    profile yet (a backfill, ids ascending). Ids are asked
    :data:`OPENALEX_IDS_PER_REQUEST` at a time with one list request; an id the
    list leaves out is asked alone: OpenAlex answers a merged id with the
    surviving profile (the slots move to it) and an unknown one with 404 (a
    deleted tombstone is stored, so it is not asked again).

    Args:
        ids: bare OpenAlex author ids (``A5023888391``), or None to backfill.
        limit: most ids to look up; None for all.
        base_url: the works endpoint or the API root (:func:`openalex_root`);
            "" for ``settings.OPENALEX_WORKS_URL``.
        run: a run to resume; task_id, client, progress: as for the works harvest.

    Returns:
        The run, ``finished`` (``papers_*`` count profiles), or ``failed``
        with its ``error`` and a cursor to resume from.

    Source: OpenAlex docs, "Authors", "Filter entity lists", "Merged entities".
    """
    from harvest.sources import openalex

    merged_slots_move("openalex")
    return lookup_run(
        source="openalex",
        mode="openalex-authors",
        ids=ids,
        limit=limit,
        base_url=openalex_root(base_url),
        run=run,
        task_id=task_id,
        client=client,
        progress=progress,
        per_request=OPENALEX_IDS_PER_REQUEST,
        look_up=_openalex_look_up,
        write=partial(_profiles_write, parse=openalex.parse_openalex_author),
        next_ids=partial(_unknown_ids, "openalex"),
        headers=None,
    )


def _s2_look_up(
    http: PoliteClient, base_url: str, ids: list[str]
) -> tuple[list[RawItem], list[str]]:
    """One batch request; ``null`` entries are unknown ids, and an entry that is
    another author than the one asked at its place is a failed record naming
    both."""
    from harvest.sources import semanticscholar as s2

    page = s2.s2_authors_batch(http, base_url, ids)
    items, unknown = [], []
    for index, (aid, entry) in enumerate(zip(ids, page.items, strict=True)):
        if entry is None:
            unknown.append(aid)
            continue
        answered = entry.get("authorId") if isinstance(entry, dict) else None
        items.append(
            RawItem(
                external_id=aid,
                payload=json_payload(entry),
                locator=f"{page.url}#author-{index}",
                problem=""
                if answered == aid
                else f"asked for author {aid}, answered {str(answered)[:40]!r}",
            )
        )
    return items, unknown


def harvest_s2_authors(
    *,
    ids: list[str] | None = None,
    limit: int | None = None,
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Fetch Semantic Scholar author profiles into SourceAuthor.

    Without ``ids``, every S2 author id a byline slot carries that has no profile
    yet. Ids are asked 1,000 at a time (``POST /author/batch``); an id answered
    ``null`` is stored as a deleted tombstone, so it is not asked again.
    ``S2_API_KEY`` is sent as ``x-api-key``.

    Args and returns: as :func:`harvest_openalex_authors`; ``base_url`` ""
    for ``settings.S2_API_URL``.

    Source: Semantic Scholar Graph API, "Get details for multiple authors at once".
    """
    from harvest.sources import semanticscholar as s2

    return lookup_run(
        source="semanticscholar",
        mode="s2-authors",
        ids=ids,
        limit=limit,
        base_url=base_url or settings.S2_API_URL,
        run=run,
        task_id=task_id,
        client=client,
        progress=progress,
        per_request=s2.AUTHOR_BATCH_MAX,
        look_up=_s2_look_up,
        write=partial(_profiles_write, parse=s2.parse_s2_author),
        next_ids=partial(_unknown_ids, "semanticscholar"),
        headers={"x-api-key": settings.S2_API_KEY} if settings.S2_API_KEY else None,
    )


def harvest_s2_author_papers(
    *,
    author_id: str = "",
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Fetch every paper Semantic Scholar attributes to one author, page by page.

    For completing a profile: each paper is stored and upserted like any S2
    record (S2 ranks last: it fills a paper we hold and creates one we lack).
    Each page commits with the next offset, so a killed run resumes at the
    page after the last one that landed.

    Args:
        author_id: an S2 author id (``"1723755"``).
        base_url: Graph API root; "" for ``settings.S2_API_URL``.
        run, task_id, client, progress: as for the other live harvests.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: Semantic Scholar Graph API, "Details about an author's papers".
    """
    from harvest.services.batches import harvest_batch
    from harvest.services.live import _client, _live_run, run_to_end
    from harvest.sources import semanticscholar as s2

    params = (
        run.params
        if run
        else {
            "mode": "s2-author-papers",
            "author": author_id,
            "base_url": base_url or settings.S2_API_URL,
        }
    )
    run = _live_run(source="semanticscholar", params=params, run=run, task_id=task_id)
    if run.status == HarvestRun.Status.FINISHED:
        return run
    key = {"x-api-key": settings.S2_API_KEY} if settings.S2_API_KEY else None

    def walk() -> None:
        pages = s2.s2_author_papers_pages(
            http,
            run.params["base_url"],
            run.params["author"],
            offset=int(run.cursor or 0),
        )
        for page in pages:
            with transaction.atomic():
                harvest_batch(
                    run=run,
                    source="semanticscholar",
                    items=list(s2.split_s2_page(page)),
                    parse=s2.parse_s2_paper,
                )
                run.params["pages"] = run.params.get("pages", 0) + 1
                run.cursor = page.token or str(int(run.cursor or 0) + len(page.items))
                run.save()
            if progress:
                progress(len(page.items))

    with _client(client, "semanticscholar", headers=key) as http:
        return run_to_end(run, walk)

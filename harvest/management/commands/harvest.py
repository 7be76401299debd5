"""``manage.py harvest arxiv``: live OAI-PMH, ``--file``/``--dir``, or ``--resume``."""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models.signals import post_save
from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from harvest import services
from harvest.models import HarvestRun, RawRecord

SOURCES = ("arxiv", "crossref", "openalex", "ror", "semanticscholar")


def _day(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date (YYYY-MM-DD)"
        ) from exc


def _doi_typed(text: str) -> str:
    """A DOI as Crossref takes it: no resolver prefix, lower case.

    Raises:
        ValueError: not a DOI's shape (named).
    """
    from wovepaper.identifiers import doi_normalise, doi_valid

    doi = doi_normalise(text)
    if not doi_valid(doi):
        raise ValueError(f"{text[:80]!r} is not a DOI")
    return doi


def _s2_paper_typed(text: str) -> str:
    from harvest.sources.semanticscholar import s2_paper_id_normalise

    return s2_paper_id_normalise(text)


@dataclass(frozen=True)
class _PaperLookup:
    """Papers looked up by ``--ids`` in one source.

    Attributes:
        mode: the run mode the service records (``--resume`` finds it).
        service: the name of the harvest service (in :mod:`harvest.services`).
        check: an id as typed to the id the service takes; raises ValueError.
        what: what one id is called, for messages.
        keyword: the service's argument for the ids.
    """

    mode: str
    service: str
    check: Callable[[str], str]
    what: str
    keyword: str = "ids"


# arXiv ids go as typed: the API itself refuses a malformed one, naming it.
_PAPER_LOOKUPS = {
    "arxiv": _PaperLookup("arxiv-api", "harvest_arxiv_ids", str.strip, "arXiv id"),
    "crossref": _PaperLookup(
        "crossref-dois", "harvest_crossref_dois", _doi_typed, "DOI", "dois"
    ),
    "semanticscholar": _PaperLookup(
        "s2-papers", "harvest_s2_papers", _s2_paper_typed, "Semantic Scholar paper id"
    ),
}
# Where another id starts after a comma in ``--ids``: any comma for arXiv ids
# (none holds one); for DOIs and Semantic Scholar ids, only a comma before what
# begins an id (``10.``, a ``doi:``/``CorpusId:``-style prefix, an address, a
# paperId, an arXiv id) or before another comma or the end, since a DOI's
# suffix may hold a comma ("10.1000/a,b"). Empty pieces are dropped.
_ANY_COMMA_RE = re.compile(r",")
_NEXT_ID_RE = re.compile(
    r",\s*(?=,|$|10\.|[A-Za-z]+:|[0-9a-fA-F]{40}\b|\d{4}\.\d{4,5}|[a-z][a-z.\-]*/\d{7})"
)


def _lookup_ids(text: str, lookup: _PaperLookup) -> list[str]:
    """The ids of ``--ids``, each through the lookup's check, in order, each
    once (an id typed twice, or in two spellings of one id, is asked once).

    Raises:
        ValueError: an id the check refuses.
    """
    split = _ANY_COMMA_RE if lookup.mode == "arxiv-api" else _NEXT_ID_RE
    checked = [lookup.check(p) for p in split.split(text) if p.strip(" ,")]
    return list(dict.fromkeys(checked))


# The options that choose a live list, by destination and flag: a lookup by id
# or a resumed run takes none of them.
_LIST_OPTIONS = {
    "from_date": "--from",
    "until_date": "--until",
    "set_spec": "--set",
    "extra_filter": "--filter",
}


def _refuse_with(
    options: dict, given: str, others: dict[str, str], why: str = ""
) -> None:
    """Refuse the options ``others`` (``{destination: flag}``) given beside
    ``given``, naming them (an option that would be left out silently is an
    error).

    Raises:
        CommandError: some of ``others`` was given.
    """
    extra = [flag for name, flag in others.items() if options.get(name)]
    if extra:
        reason = why or f"{given} asks for those ids alone"
        raise CommandError(f"{', '.join(extra)} cannot go with {given}: {reason}")


# The largest file ``--ids @FILE`` reads (a million DOIs is about 40 MB).
IDS_FILE_MAX_BYTES = 64 * 1024 * 1024


def _ids_text(text: str) -> str:
    """``--ids`` as given, or for ``@FILE`` the file's ids, one a line or
    comma-separated, joined by commas (blank lines and ``#`` comment lines
    left out).

    Raises:
        argparse.ArgumentTypeError: the file cannot be read, is past
            :data:`IDS_FILE_MAX_BYTES` or is not UTF-8 (named).
    """
    if not text.startswith("@"):
        return text
    path = Path(text[1:])
    try:
        if path.stat().st_size > IDS_FILE_MAX_BYTES:
            raise argparse.ArgumentTypeError(
                f"{path}: larger than {IDS_FILE_MAX_BYTES // 2**20} MB of ids"
            )
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise argparse.ArgumentTypeError(f"{path}: cannot read ids ({exc})") from exc
    return ",".join(
        line.strip() for line in lines if line.strip() and not line.startswith("#")
    )


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return int(text)


class Command(BaseCommand):
    """Harvest a source live or from files, with a progress bar.

    Without ``--file``/``--dir`` the live source is harvested (arXiv's OAI-PMH
    endpoint, Crossref's and OpenAlex's ``/works``), from ``--from`` (default:
    where the last finished run of the same list ended) to ``--until`` (default:
    today): datestamps for arXiv, index dates for Crossref, update dates for
    OpenAlex. Lookups by id: arXiv ``--ids``, the Semantic Scholar paper
    backfill, ``--authors`` (OpenAlex, Semantic Scholar), ``--author-papers``
    (Semantic Scholar), ``--institutions`` (OpenAlex) and ``harvest ror``.
    Prints each run it starts (its id, and how to resume it), then the run's
    counts, each rejected record with its reason, a notice when a folder holds
    no file of the source, and the run's error if it failed.
    """

    help = (
        "Harvest live (harvest arxiv [--from 2026-11-01] [--set cs]; harvest "
        "crossref --from 2026-11-29) or from files (harvest arxiv --dir PATH)"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", choices=SOURCES)
        where = parser.add_mutually_exclusive_group()
        where.add_argument(
            "--file",
            type=Path,
            help="one file: arXiv .abs, OAI-PMH or API Atom .xml, arXiv's metadata "
            "snapshot in JSON lines (Kaggle; up to 64 MB a file, split the whole "
            "one into pieces and give --dir), or a .json answer (arXiv API "
            "cassette, Crossref, OpenAlex, Semantic Scholar, ROR)",
        )
        where.add_argument("--dir", type=Path, help="a folder, searched recursively")
        where.add_argument(
            "--resume", type=int, metavar="RUN_ID", help="resume a run from its cursor"
        )
        live = parser.add_argument_group("live harvest")
        live.add_argument(
            "--from",
            dest="from_date",
            type=_day,
            metavar="DATE",
            help="first day, YYYY-MM-DD (default: where the last finished run of "
            "the same list ended)",
        )
        live.add_argument(
            "--until",
            dest="until_date",
            type=_day,
            metavar="DATE",
            help="last day, YYYY-MM-DD (default: today)",
        )
        live.add_argument("--set", dest="set_spec", default="", help="arXiv: e.g. cs")
        live.add_argument(
            "--format",
            dest="metadata_prefix",
            default="arXiv",
            choices=("arXiv", "arXivRaw", "oai_dc"),
            help="arxiv OAI-PMH metadata format (default arXiv; arXivRaw adds the "
            "version history)",
        )
        live.add_argument(
            "--ids",
            default="",
            type=_ids_text,
            help="arxiv: fetch these ids from the arXiv API; crossref: look these "
            "DOIs up; semanticscholar: look these papers up (CorpusId:N, DOI:..., "
            "ARXIV:..., a paperId); ror: these ROR ids; with --authors: these "
            "author ids (comma-separated; @FILE reads them from a file, one a "
            "line or comma-separated)",
        )
        live.add_argument(
            "--author-papers",
            default="",
            metavar="S2_AUTHOR_ID",
            help="semanticscholar: fetch every paper of this author",
        )
        live.add_argument(
            "--institutions",
            action="store_true",
            help="openalex: fill institutions by ROR id (--ids, or every institution "
            "without a country or a type)",
        )
        live.add_argument(
            "--authors",
            action="store_true",
            help="openalex/semanticscholar: fetch author profiles (--ids, or every "
            "author id byline slots carry that has no profile yet)",
        )
        live.add_argument(
            "--filter",
            dest="extra_filter",
            default="",
            help="crossref/openalex: more filters, e.g. type:journal-article",
        )
        live.add_argument(
            "--limit",
            type=_positive,
            default=None,
            help="semanticscholar: most papers to look up; ror, --authors: most ids",
        )
        live.add_argument(
            "--url",
            default="",
            help="the endpoint, instead of the setting (ARXIV_OAI_URL, ARXIV_API_URL, "
            "CROSSREF_WORKS_URL, OPENALEX_WORKS_URL, S2_API_URL, ROR_API_URL)",
        )
        parser.add_argument(
            "--no-progress",
            action="store_true",
            help="draw no progress bar (for logs and scheduled jobs)",
        )
        parser.add_argument(
            "--reparse",
            action="store_true",
            help="parse again records stored and parsed before (after a parser fix)",
        )

    def handle(self, *args, **options) -> None:
        # Log lines (a rejected record's warning) print above the progress bar
        # instead of through it.
        with self._announce_new_runs(), logging_redirect_tqdm():
            self._handle(options)

    @contextmanager
    def _announce_new_runs(self) -> Iterator[None]:
        """Print each harvest run the command creates as it starts, with how to
        resume it: a run killed outright (``kill -9``) prints no report."""

        def started(sender, instance: HarvestRun, created: bool, **kwargs) -> None:
            if created:
                # The bar (on stderr) steps aside while the line is written.
                with tqdm.external_write_mode(file=sys.stderr):
                    self.stdout.write(
                        f"run #{instance.pk} started; if it stops, resume it "
                        f"with: manage.py harvest {instance.source} --resume "
                        f"{instance.pk}"
                    )

        post_save.connect(started, sender=HarvestRun, weak=False)
        try:
            yield
        finally:
            post_save.disconnect(started, sender=HarvestRun)

    def _handle(self, options: dict) -> None:
        run = None
        if options["metadata_prefix"] != "arXiv" and (
            options["file"] or options["dir"]
        ):
            raise CommandError(
                "--format asks arXiv's OAI-PMH endpoint for a format; files are "
                "read in whatever format they hold (arXiv, arXivRaw, oai_dc, .abs, "
                "Atom): leave --format out"
            )
        if options["ids"] and (options["file"] or options["dir"]):
            raise CommandError(
                "--ids looks records up live; --file and --dir read saved ones: "
                "give one or the other"
            )
        if options["resume"] is not None:
            _refuse_with(
                options,
                "--resume",
                {"ids": "--ids", "author_papers": "--author-papers", **_LIST_OPTIONS},
                why="a resumed run asks what it asked when it started",
            )
            run = HarvestRun.objects.filter(pk=options["resume"]).first()
            if run is None:
                raise CommandError(f"no harvest run {options['resume']}")
            if run.status == HarvestRun.Status.FINISHED:
                raise CommandError(f"run #{run.pk} has finished: nothing to resume")
        if run is not None and run.source != options["source"]:
            raise CommandError(f"run #{run.pk} is a {run.source} run")
        live = (run and run.params.get("mode")) or (
            run is None and not (options["file"] or options["dir"])
        )
        mode = run.params.get("mode") if run else None
        papers = False
        try:
            if options["authors"] or mode in ("openalex-authors", "s2-authors"):
                run = self._authors(run, options)
            elif (live and options["source"] == "ror") or mode == "ror-ids":
                run = self._ror(run, options)
            elif options["author_papers"] or mode == "s2-author-papers":
                run = self._author_papers(run, options)
            elif options["institutions"] or mode == "openalex-institutions":
                run = self._openalex_institutions(run, options)
            elif options["ids"] and options["source"] not in _PAPER_LOOKUPS:
                raise CommandError(
                    "--ids names papers of arxiv, crossref or semanticscholar, "
                    "organisations of ror (or, with --authors, author ids)"
                )
            else:
                papers = True
                run = self._papers(run, live, options)
        except services.HarvestInterrupted as stop:
            run = stop.run  # closed as failed: the report says how to resume it
        except services.HarvestRunRefused as exc:
            raise CommandError(str(exc)) from None
        self._report(run)
        # ROR files hold organisations, no byline: nothing for matching.
        if (
            papers
            and options["source"] != "ror"
            and (run.papers_created or run.papers_updated)
        ):
            self._embed(run)
            # Scheduled harvests queue matching (harvest.tasks); the command
            # leaves it to the operator.
            self.stdout.write(
                "  next: manage.py match proposes researchers for the new authorships"
            )

    def _embed(self, run: HarvestRun) -> None:
        """Queue the embedding of the run's new and changed papers, as the
        scheduled harvests do (``settings.EMBED_AFTER_HARVEST``); in the
        embedded setup Celery runs it here, before the command ends."""
        if not settings.EMBED_AFTER_HARVEST:
            self.stdout.write(
                "  next: manage.py embed_papers embeds them for search by meaning"
            )
            return
        from wovepaper.tasks import embeddings_refresh_task

        eager = settings.CELERY_TASK_ALWAYS_EAGER
        self.stdout.write(
            "  embedding the new and changed papers for search by meaning ..."
            if eager
            else "  queued the embedding of the new and changed papers"
        )
        result = embeddings_refresh_task.delay(changed_since=run.started_at.isoformat())
        if eager:
            counts = result.get()
            if counts.get("error"):
                self.stdout.write(
                    "  embedding skipped: the model is missing (see the log); "
                    "manage.py embed_papers fills them in once it is there"
                )
            else:
                self.stdout.write(
                    f"  embedded {counts['embedded']}, {counts['unchanged']} unchanged"
                )

    def _papers(self, run: HarvestRun | None, live, options) -> HarvestRun:
        lookup = _PAPER_LOOKUPS.get(options["source"])
        mode = run.params.get("mode") if run else None
        if lookup and ((live and options["ids"]) or mode == lookup.mode):
            _refuse_with(options, "--ids", _LIST_OPTIONS)
            ids = []
            if run is None:
                try:
                    ids = _lookup_ids(options["ids"], lookup)
                except ValueError as exc:
                    raise CommandError(f"--ids: {exc}") from exc
                if not ids:
                    raise CommandError(f"--ids names no {lookup.what}")
            with tqdm(
                total=len(ids or run.params.get("ids", [])),
                unit="paper",
                disable=options["no_progress"],
            ) as bar:
                run = getattr(services, lookup.service)(
                    **{lookup.keyword: ids},
                    base_url=options["url"],
                    run=run,
                    progress=bar.update,
                )
            missing = run.params.get("missing")
            # (The arXiv API's run counts its missing ids; the others name them.)
            for unknown in missing if isinstance(missing, list) else ():
                self.stdout.write(f"  not known to {run.source}: {unknown}")
        elif live and options["source"] == "semanticscholar":
            run = self._s2(run, options)
        elif live:
            try:
                run = self._live(run, options)
            except ValueError as exc:  # dates the wrong way round, a bad filter
                raise CommandError(str(exc)) from exc
        else:
            run = self._files(run, options)
        return run

    def _authors(self, run: HarvestRun | None, options) -> HarvestRun:
        from wovepaper import identifiers

        source = options["source"]
        if source not in ("openalex", "semanticscholar"):
            raise CommandError("--authors is OpenAlex's and Semantic Scholar's")
        if options["file"] or options["dir"]:
            raise CommandError(
                "--authors looks profiles up live; saved author answers are read "
                "with --file or --dir alone"
            )
        normalise = (
            identifiers.openalex_author_normalise
            if source == "openalex"
            else identifiers.s2_author_normalise
        )
        harvest = (
            services.harvest_openalex_authors
            if source == "openalex"
            else services.harvest_s2_authors
        )
        return self._lookup(
            run, options, harvest, normalise, "author", f"{source} author profiles"
        )

    def _ror(self, run: HarvestRun | None, options) -> HarvestRun:
        from wovepaper.identifiers import ror_normalise

        return self._lookup(
            run,
            options,
            services.harvest_ror_ids,
            ror_normalise,
            "organisation",
            "organisations in ROR",
        )

    def _author_papers(self, run: HarvestRun | None, options) -> HarvestRun:
        from wovepaper.identifiers import s2_author_normalise

        if options["source"] != "semanticscholar":
            raise CommandError("--author-papers is Semantic Scholar's")
        author = ""
        if run is None:
            try:
                author = s2_author_normalise(options["author_papers"])
            except ValueError as exc:
                raise CommandError(f"--author-papers: {exc}") from exc
        with tqdm(
            unit="paper",
            disable=options["no_progress"],
            desc="papers of a Semantic Scholar author",
        ) as bar:
            return services.harvest_s2_author_papers(
                author_id=author, base_url=options["url"], run=run, progress=bar.update
            )

    def _openalex_institutions(self, run: HarvestRun | None, options) -> HarvestRun:
        from wovepaper.identifiers import ror_normalise

        if options["source"] != "openalex":
            raise CommandError("--institutions is OpenAlex's (ROR: harvest ror)")
        if options["file"] or options["dir"]:
            raise CommandError(
                "--institutions looks institutions up live; saved institution "
                "answers are read with --file or --dir alone"
            )
        return self._lookup(
            run,
            options,
            services.harvest_openalex_institutions,
            ror_normalise,
            "institution",
            "institutions in OpenAlex by ROR id",
        )

    def _lookup(self, run, options, harvest, normalise, unit, what) -> HarvestRun:
        """A lookup by id (``--ids``, checked by ``normalise``) or a backfill."""
        ids = None
        if options["ids"]:
            try:
                ids = [normalise(i) for i in options["ids"].split(",") if i.strip()]
            except ValueError as exc:
                raise CommandError(f"--ids: {exc}") from exc
            if not ids:
                raise CommandError(f"--ids names no {unit} id")
        if options["source"] == "ror" and not settings.ROR_CLIENT_ID:
            self.stderr.write(
                "ROR_CLIENT_ID is not set: ROR allows 50 requests per 5 minutes "
                "without one, so organisations are asked one every 6 s (register "
                "a free client id at https://ror.org/api-client-id)"
            )
        wanted = ids if ids is not None else (run.params.get("ids") if run else None)
        with tqdm(
            total=len(wanted) if wanted else None,
            unit=unit,
            disable=options["no_progress"],
            desc=f"look up {what}",
        ) as bar:
            return harvest(
                ids=ids,
                limit=options["limit"],
                base_url=options["url"],
                run=run,
                progress=bar.update,
            )

    def _report(self, run: HarvestRun) -> None:
        self.stdout.write(
            f"run #{run.pk}: {run.records_seen} records, {run.papers_created} created, "
            f"{run.papers_updated} updated, {run.papers_unchanged} unchanged, "
            f"{run.records_failed} rejected"
        )
        if run.params.get("files") == 0 and not run.files_skipped:
            self.stdout.write(
                f"  no {run.source} files under {run.params.get('root')}: "
                "nothing to harvest"
            )
        for raw in RawRecord.objects.filter(
            last_run=run, status=RawRecord.Status.FAILED
        ):
            self.stdout.write(f"  rejected {raw.problem}")
        for skipped in run.files_skipped:
            self.stdout.write(f"  skipped {skipped['reason']}")
        for unknown in run.params.get("unknown", []):
            self.stdout.write(
                f"  not known to {run.source} (kept as deleted): {unknown}"
            )
        if run.params.get("asked") == 0 and run.status == HarvestRun.Status.FINISHED:
            self.stdout.write(
                "  nothing to look up: every id has been looked up before"
            )
        if run.status == HarvestRun.Status.FAILED:
            raise CommandError(
                f"run #{run.pk} failed: {run.error}\n"
                f"resume it later: manage.py harvest {run.source} --resume {run.pk}"
            )

    def _s2(self, run: HarvestRun | None, options) -> HarvestRun:
        with tqdm(
            unit="paper",
            disable=options["no_progress"],
            desc="look up papers in Semantic Scholar",
        ) as bar:
            return services.harvest_s2_backfill(
                limit=options["limit"],
                base_url=options["url"],
                run=run,
                progress=bar.update,
            )

    def _live(self, run: HarvestRun | None, options) -> HarvestRun:
        if (
            options["from_date"]
            and options["until_date"]
            and options["from_date"] > options["until_date"]
        ):
            raise CommandError("--from is after --until")
        if options["source"] != "arxiv" and (
            options["set_spec"] or options["metadata_prefix"] != "arXiv"
        ):
            raise CommandError("--set and --format are arXiv's")
        if options["source"] == "arxiv" and options["extra_filter"]:
            raise CommandError("--filter is Crossref's and OpenAlex's (arXiv: --set)")
        with tqdm(
            unit="record",
            disable=options["no_progress"],
            desc=f"harvest {options['source']} (live)",
        ) as bar:
            if options["source"] in ("crossref", "openalex"):
                harvest = (
                    services.harvest_crossref
                    if options["source"] == "crossref"
                    else services.harvest_openalex
                )
                services.filters_parse(options["extra_filter"])
                return harvest(
                    from_date=options["from_date"],
                    until_date=options["until_date"],
                    extra_filter=options["extra_filter"],
                    base_url=options["url"],
                    run=run,
                    progress=bar.update,
                )
            return services.harvest_arxiv_oai(
                from_date=options["from_date"],
                until_date=options["until_date"],
                set_spec=options["set_spec"],
                metadata_prefix=options["metadata_prefix"],
                base_url=options["url"],
                run=run,
                progress=bar.update,
            )

    def _files(self, run: HarvestRun | None, options) -> HarvestRun:
        root = Path(run.params["root"]) if run else options["file"] or options["dir"]
        if not root.exists():
            raise CommandError(f"{root}: no such file or folder")
        if options["file"] and not root.is_file():
            raise CommandError(f"{root}: not a regular file (--dir reads a folder)")
        if options["dir"] and not root.is_dir():
            raise CommandError(f"{root}: not a folder (--file reads one file)")
        with tqdm(
            total=services.files_count(options["source"], root),
            unit="file",
            disable=options["no_progress"],
            desc=f"harvest {options['source']}",
        ) as bar:
            if run is not None:
                bar.update(services.files_cursor(run.cursor)[0])
            return services.harvest_files(
                source=options["source"],
                root=root,
                run=run,
                progress=bar.update,
                reparse=options["reparse"],
            )

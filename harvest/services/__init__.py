"""Harvest writes: runs, raw records and the idempotent upsert into the core models.

Every raw record is stored (:class:`~harvest.models.RawRecord`) before it is parsed;
a record that fails to parse or to upsert is marked failed with its error and the run
goes on. Upserting the same record twice changes nothing.

The writes live in submodules: raw (raw records), runs, upsert (one record
into Paper and Authorship), batches, files and live (the two ways to harvest).
"""

from harvest.services.authors import (  # noqa: F401
    harvest_openalex_authors,
    harvest_s2_author_papers,
    harvest_s2_authors,
    source_author_upsert,
    source_authors_batch,
)
from harvest.services.batches import (  # noqa: F401
    entities_batch,
    harvest_batch,
    institution_upsert,
    institutions_batch,
)
from harvest.services.files import (  # noqa: F401
    ARXIV_SUFFIXES,
    BATCH_RECORDS,
    FILE_SOURCES,
    FileSource,
    arxiv_files,
    arxiv_reader_for,
    crossref_files,
    crossref_reader_for,
    files_count,
    files_cursor,
    harvest_arxiv_files,
    harvest_files,
    locator_base,
    openalex_reader_for,
    ror_reader_for,
    s2_reader_for,
)
from harvest.services.institutions import (  # noqa: F401
    harvest_openalex_institutions,
    harvest_ror_ids,
)
from harvest.services.live import (  # noqa: F401
    LivePage,
    PageFetcher,
    arxiv_api_pages_of,
    filters_parse,
    harvest_arxiv_ids,
    harvest_arxiv_oai,
    harvest_crossref,
    harvest_openalex,
    harvest_s2_backfill,
    oai_windows,
)
from harvest.services.lookups import (  # noqa: F401
    harvest_crossref_dois,
    harvest_s2_papers,
)
from harvest.services.raw import (  # noqa: F401
    FileReader,
    RawSplitter,
    RecordParser,
    content_hash,
    raw_record_store,
    raw_records_store,
)
from harvest.services.runs import (  # noqa: F401
    RUN_NOT_FAILED,
    RUN_STILL_RUNNING,
    RUN_UNKNOWN_KIND,
    HarvestInterrupted,
    HarvestRunRefused,
    harvest_run_finish,
    harvest_run_repeat,
    harvest_run_resume,
    harvest_run_start,
    run_held,
)
from harvest.services.upsert import (  # noqa: F401
    MAX_ABSTRACT_CHARS,
    MAX_AUTHORS,
    MAX_TITLE_CHARS,
    NO_WORK_ID,
    SOURCE_PRECEDENCE,
    UpsertResult,
    logger,
    paper_upsert,
)

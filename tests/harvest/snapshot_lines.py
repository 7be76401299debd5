"""Lines of arXiv's metadata snapshot (JSON lines, the Kaggle dataset) built
from real ``.abs`` files, for the tests and ``bench/ingest.py --snapshot``.

shared/data holds no snapshot file; arXiv builds the snapshot from the same
metadata as the ``.abs`` files, so each line here is an ``.abs`` file's header
fields under the snapshot's names (:mod:`harvest.sources.arxiv_kaggle`).
"""

from __future__ import annotations

import re
from pathlib import Path

from harvest.sources import arxiv_abs

# The update_date every built line carries.
UPDATED = "2024-03-01"
# The size arXiv prints after a version's date: "(11kb)", "(39kb,D)".
_SIZE_RE = re.compile(r"\s*\([^)]*\)\s*$")


def snapshot_line(path: Path) -> dict:
    """The snapshot object of one real ``.abs`` file.

    Args:
        path: an ``.abs`` file with a header block (UTF-8).

    Returns:
        ``{"id", "submitter", "authors", "title", "comments", "journal-ref",
        "doi", "report-no", "categories", "license", "abstract", "versions",
        "update_date", "authors_parsed"}``: the header fields as printed (null
        when missing), the versions' dates without their sizes, the abstract
        block as printed, :data:`UPDATED`, no ``authors_parsed``.

    Raises:
        UnicodeDecodeError: the file is not UTF-8.
        IndexError: the file has no header block.
    """
    lines = arxiv_abs._lines(path.read_text())
    marks = [n for n, line in enumerate(lines) if line.strip() == "\\\\"]
    fields = arxiv_abs._header_fields(lines[marks[0] + 1 : marks[1]])
    end = marks[-1] if len(marks) > 2 else len(lines)

    def first(key: str) -> str | None:
        return fields[key][0] if key in fields else None

    dates = [(1, first("Date"))] + sorted(
        (int(m.group(1)), values[0])
        for key, values in fields.items()
        if (m := re.fullmatch(r"Date \(revised v(\d+)\)", key))
    )
    raw_id = (first("arXiv") or first("Paper")).split()[0]
    return {
        "id": re.sub(r"v\d+$", "", raw_id),
        "submitter": "",
        "authors": first("Authors") or "",
        "title": first("Title"),
        "comments": first("Comments"),
        "journal-ref": first("Journal-ref"),
        "doi": first("DOI"),
        "report-no": first("Report-no"),
        "categories": first("Categories"),
        "license": first("License"),
        "abstract": "\n".join(lines[marks[1] + 1 : end]),
        "versions": [
            {"version": f"v{n}", "created": _SIZE_RE.sub("", text)} for n, text in dates
        ],
        "update_date": UPDATED,
        "authors_parsed": [],
    }

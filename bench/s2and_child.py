"""Run S2AND's released production model on one labelled set; write its clusters.

The child half of ``bench/compare_s2and.py``. It runs under the Python 3.11
virtualenv that script makes (``build/s2and-venv``, with ``s2and==0.51.2``) and
imports only s2and, its dependencies and the standard library, never Django or
our code. It reads one labelled set in place, converts it to S2AND's input
format, clusters it with the packaged production bundle
(``s2and/data/production_model_v1.21``, loaded by
``s2and.production_model.load_production_model``) and writes one JSON object:
``{"clusters": {signature_id: predicted cluster id}, "seconds": {...},
"settings": {...}}``. Gold labels are not read here: the parent scores.

What S2AND is given, for both sets:

- Signatures: first, middle, last, position, affiliations (email, ORCID and
  S2AND's inferred gender and ethnicity are left out). Wang names
  ("Last, First") are split the way S2AND's own normaliser splits a given name
  (``s2and.text.split_first_middle_hyphen_aware``: the first token is the first
  name, the rest the middle, a hyphenated given name stays whole); Wang blocks
  are S2AND's ``compute_block`` of the normalised full name ("first-initial
  last"); Qian keeps the blocks it ships with.
- Papers: the least ``ANDData`` accepts: the paper id, an empty title, no
  abstract, venue, journal, year or references, and an empty author list (S2AND
  reads co-authors only from ``papers[].authors``; an empty list means none).
- Name counts: the model was trained with S2 corpus name frequencies, which
  live on S3 only (``s2and.consts._NAME_COUNTS_FALLBACK_URL``). ``empty`` passes
  ``ANDData(load_name_counts={...four empty dicts...})``, so every count takes
  S2AND's unseen-name default of 1; ``none`` passes ``load_name_counts=False``,
  so the six count features are missing (NaN) for LightGBM.
- No fastText language model (``S2AND_SKIP_FASTTEXT=1``; it is on S3 too, and the
  titles are empty anyway), no SPECTER embeddings, the pure-Python backend
  (``S2AND_BACKEND=python``: the Rust path wants Arrow files).

Usage (normally started by ``bench/compare_s2and.py``)::

    S2AND_BACKEND=python S2AND_SKIP_FASTTEXT=1 build/s2and-venv/bin/python \\
        bench/s2and_child.py --folder ../shared/data/and/beard_inspire_wang \\
        --output /tmp/wang.json [--name-counts empty|none] [--n-jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from importlib.metadata import version
from pathlib import Path

# Required before s2and is imported: it reads these at call time, but a missing
# one would send it to S3 (fastText) or to the Rust path, which fail here.
REQUIRED_ENV = {"S2AND_BACKEND": "python", "S2AND_SKIP_FASTTEXT": "1"}
MODEL_DIR_NAME = "production_model_v1.21"


def _split_given(given: str) -> tuple[str | None, str | None]:
    """Split a raw given name into S2AND's (first, middle), keeping the raw text.

    Mirrors ``s2and.text.split_first_middle_hyphen_aware`` (which works on the
    normalised text) on the raw one: a dashed given name stays whole as the first
    name; otherwise the first whitespace token is the first name and the rest the
    middle.

    Args:
        given: the part after the comma of "Last, First", e.g. "Ting T.".

    Returns:
        ``(first, middle)``, each None when empty.
    """
    from s2and.text import has_name_dash

    tokens = given.split()
    if not tokens:
        return None, None
    if has_name_dash(given):
        return " ".join(tokens), None
    return tokens[0], " ".join(tokens[1:]) or None


def _author_info(
    *,
    first: str | None,
    middle: str | None,
    last: str,
    suffix: str | None,
    position: int,
    block: str,
    affiliations: list[str],
) -> dict:
    return {
        "first": first,
        "middle": middle,
        "last": last,
        "suffix": suffix,
        "email": None,
        "position": position,
        "block": block,
        "affiliations": affiliations,
    }


def wang_signatures(folder: Path) -> dict[str, dict]:
    """Read the INSPIRE Wang signatures into S2AND's signature format.

    Source: inspirehep/beard ``examples/data/wang_signatures.json``
    ``[].{signature_id, publication_id, author_name, author_affiliation,
    signature_position}``.

    Args:
        folder: the folder holding ``wang_signatures.json``.

    Returns:
        ``{signature id as str: {signature_id, paper_id, author_info}}`` in file
        order.
    """
    from s2and.text import compute_block, normalize_text

    out: dict[str, dict] = {}
    for sig in json.loads((folder / "wang_signatures.json").read_text()):
        last, _, given = sig["author_name"].partition(",")
        last = " ".join(last.split())
        first, middle = _split_given(given)
        full = normalize_text(" ".join(p for p in (first, middle, last) if p))
        affiliation = (sig.get("author_affiliation") or "").strip()
        sig_id = str(sig["signature_id"])
        out[sig_id] = {
            "signature_id": sig_id,
            "paper_id": str(sig["publication_id"]),
            "author_info": _author_info(
                first=first,
                middle=middle,
                last=last,
                suffix=None,
                position=int(sig["signature_position"]),
                block=compute_block(full),
                affiliations=[affiliation] if affiliation else [],
            ),
        }
    return out


def qian_signatures(folder: Path) -> dict[str, dict]:
    """Read S2AND-format signatures, keeping only the fields compared.

    Source: allenai/S2AND ``tests/qian/signatures.json``
    ``{sig_id: {signature_id, paper_id, author_info{first, middle, last, suffix,
    position, block, affiliations[]}}}``; email, ``given_*`` and the inferred
    ``estimated_gender`` / ``estimated_ethnicity`` are dropped.

    Args:
        folder: the folder holding ``signatures.json``.

    Returns:
        ``{signature id: {signature_id, paper_id, author_info}}`` in file order.
    """
    out: dict[str, dict] = {}
    for sig_id, sig in json.loads((folder / "signatures.json").read_text()).items():
        info = sig["author_info"]
        out[str(sig_id)] = {
            "signature_id": str(sig_id),
            "paper_id": str(sig["paper_id"]),
            "author_info": _author_info(
                first=info.get("first"),
                middle=info.get("middle"),
                last=info.get("last") or "",
                suffix=info.get("suffix"),
                position=int(info["position"]),
                block=info["block"],
                affiliations=list(info.get("affiliations") or []),
            ),
        }
    return out


def minimal_papers(signatures: dict[str, dict]) -> dict[str, dict]:
    """One paper per paper id, with only the keys ``ANDData`` requires.

    Args:
        signatures: S2AND signatures, as returned by the readers above.

    Returns:
        ``{paper id: {paper_id, title "", abstract None, authors [], venue None,
        journal_name None, year None, references None}}``.
    """
    return {
        sig["paper_id"]: {
            "paper_id": sig["paper_id"],
            "title": "",
            "abstract": None,
            "authors": [],
            "venue": None,
            "journal_name": None,
            "year": None,
            "references": None,
        }
        for sig in signatures.values()
    }


def run(folder: Path, name_counts: str, n_jobs: int) -> dict:
    """Cluster one labelled set with the released model.

    Args:
        folder: a beard (``wang_signatures.json``) or S2AND (``signatures.json``)
            set folder.
        name_counts: ``"empty"`` (four empty count tables) or ``"none"`` (no
            counts: the features are NaN).
        n_jobs: worker processes for S2AND's preprocessing and featurisation.

    Returns:
        ``{"clusters": {signature_id: cluster id}, "blocks": int,
        "largest_block": int, "seconds": {"load_model", "dataset",
        "predict"}, "settings": {...}}``.
    """
    from s2and.consts import _PACKAGE_DATA_DIR
    from s2and.data import ANDData
    from s2and.production_model import load_production_model

    started = time.perf_counter()
    model_dir = Path(_PACKAGE_DATA_DIR) / MODEL_DIR_NAME
    clusterer = load_production_model(model_dir)
    clusterer.n_jobs = n_jobs
    loaded = time.perf_counter()

    beard = (folder / "wang_signatures.json").is_file()
    signatures = wang_signatures(folder) if beard else qian_signatures(folder)
    counts: bool | dict = (
        {
            "first_dict": {},
            "last_dict": {},
            "first_last_dict": {},
            "last_first_initial_dict": {},
        }
        if name_counts == "empty"
        else False
    )
    dataset = ANDData(
        signatures=signatures,
        papers=minimal_papers(signatures),
        name=folder.name,
        mode="inference",
        specter_embeddings=None,
        load_name_counts=counts,
        n_jobs=n_jobs,
        compute_reference_features=False,
    )
    built = time.perf_counter()

    blocks = dataset.get_blocks()
    predicted, _ = clusterer.predict(blocks, dataset)
    done = time.perf_counter()

    clusters = {
        str(sig_id): str(cluster_id)
        for cluster_id, sig_ids in predicted.items()
        for sig_id in sig_ids
    }
    return {
        "clusters": clusters,
        "blocks": len(blocks),
        "largest_block": max((len(v) for v in blocks.values()), default=0),
        "seconds": {
            "load_model": round(loaded - started, 2),
            "dataset": round(built - loaded, 2),
            "predict": round(done - built, 2),
        },
        "settings": {
            "s2and_version": version("s2and"),
            "model": MODEL_DIR_NAME,
            "bundle_version": clusterer.production_model_bundle_version,
            "eps": clusterer.cluster_model.eps,
            "linkage": clusterer.cluster_model.linkage,
            "backend": os.environ.get("S2AND_BACKEND"),
            "skip_fasttext": os.environ.get("S2AND_SKIP_FASTTEXT"),
            "name_counts": name_counts,
            "n_jobs": n_jobs,
            "blocks_from": "compute_block(first last)" if beard else "given",
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folder", type=Path, required=True, help="labelled set")
    parser.add_argument("--output", type=Path, required=True, help="JSON written")
    parser.add_argument(
        "--name-counts",
        choices=("empty", "none"),
        default="empty",
        help="empty count tables (every count 1) or none (NaN); default empty",
    )
    parser.add_argument("--n-jobs", type=int, default=1, help="worker processes")
    args = parser.parse_args()
    wrong = {k: v for k, v in REQUIRED_ENV.items() if os.environ.get(k) != v}
    if wrong:
        parser.error(f"set {' '.join(f'{k}={v}' for k, v in wrong.items())}")
    result = run(args.folder, args.name_counts, args.n_jobs)
    args.output.write_text(json.dumps(result))
    print(
        f"{args.folder.name}: {len(result['clusters'])} signatures, "
        f"{len(set(result['clusters'].values()))} clusters, {result['seconds']}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()

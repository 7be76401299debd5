"""S2AND's released model beside ours, B³ on the same labelled sets, in one run.

For each labelled set (``wang``: INSPIRE "Wang", shared/data/and/
beard_inspire_wang; ``qian``: S2AND's Qian set without its papers,
shared/data/and/s2and/qian_partial) this runs, one after the other:

- Semantic Scholar's released S2AND model (``s2and==0.51.2`` from PyPI, its
  packaged production bundle ``production_model_v1.21``), in a child process under
  its own Python 3.11 virtualenv ``build/s2and-venv`` (made and filled here when
  missing: about 1.3 GB). The child is ``bench/s2and_child.py``; it writes the
  predicted clusters as JSON and they are scored here, by our own
  ``curation.matching.evaluation.b_cubed``, against the gold labels our loader
  (``curation.matching.labelled.load``) reads.
- Ours: ``manage.py evaluate_matching --dataset FOLDER --json`` (default weights,
  and the learned model in 5 folds of whole blocks and gold clusters).

It prints B³ precision / recall / F1 of each, S2AND's published B³ F1 (all
features: inspire 0.957, qian 0.971), and the wall time of each side (the S2AND
time includes its process start, model load and Python featurisation).

S2AND runs with what these sets hold and this machine reaches, which is far less
than its published figures had: names and affiliations only; no titles,
abstracts, co-authors, venues, years, references or SPECTER embeddings (the sets
have none: their papers files are missing); no fastText language model and empty
name counts (both are S3 downloads, unreachable here); the pure-Python backend
(``S2AND_BACKEND=python``). ``bench/s2and_child.py`` says exactly what it is
given. The comparison is therefore "the released model on name + affiliation",
not a re-run of the paper.

Usage::

    .venv/bin/python bench/compare_s2and.py [--sets wang,qian] [--json] \\
        [--data-dir ../shared/data] [--name-counts empty|none] [--n-jobs 2]

About 55 minutes on 2 cores: S2AND's Python featuriser scores every pair inside
a block, 9.8 million pairs for Wang (its largest block, "j wang", has 2,711
mentions), 0.27 million for Qian. With ``--json`` the figures are printed as one
JSON object on standard output and the running commentary goes to standard
error; S2AND's own output goes to ``build/s2and-logs/<set>.log``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from curation.matching import evaluation  # noqa: E402
from curation.matching.labelled import load as load_labelled  # noqa: E402

S2AND_VERSION = "0.51.2"
VENV = REPO / "build" / "s2and-venv"
CHILD = REPO / "bench" / "s2and_child.py"
# The two environment variables the issue requires: no Rust extension (it is an
# extra, and its prediction path wants Arrow files), and no fastText download.
S2AND_ENV = {"S2AND_BACKEND": "python", "S2AND_SKIP_FASTTEXT": "1"}
# Set name -> (folder under the data dir, S2AND paper's dataset name, its
# published B³ F1 with all features).
SETS = {
    "wang": ("and/beard_inspire_wang", "inspire", 0.957),
    "qian": ("and/s2and/qian_partial", "qian", 0.971),
}
SETTINGS_TEXT = (
    "S2AND features given: name + affiliation only (no titles, abstracts, "
    "co-authors, venues, years, references or SPECTER embeddings); no fastText; "
    "name counts {name_counts}; S2AND_BACKEND=python; model {model} "
    "(eps {eps}, {linkage} linkage)"
)
# Where the running commentary goes (standard error under --json).
_commentary = sys.stdout


def say(text: str) -> None:
    """Print one line of commentary (stdout, or stderr under ``--json``)."""
    print(text, file=_commentary, flush=True)


def venv_python() -> Path:
    """The S2AND virtualenv's interpreter (it may not exist yet)."""
    return VENV / "bin" / "python"


def installed_s2and_version() -> str | None:
    """The s2and version installed in ``build/s2and-venv``, or None."""
    if not venv_python().exists():
        return None
    found = subprocess.run(
        [
            str(venv_python()),
            "-c",
            "import importlib.metadata as m; print(m.version('s2and'))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() if found.returncode == 0 else None


def ensure_venv() -> None:
    """Make ``build/s2and-venv`` with Python 3.11 and ``s2and==0.51.2`` if needed.

    s2and 0.51.2 declares ``Requires-Python <3.12,>=3.11``. Its dependencies
    install on Python 3.11 from PyPI as declared (it pins scikit-learn, lightgbm,
    hyperopt and the numpy / pandas / pyarrow ranges itself), so no extra pin is
    added here.

    Raises:
        subprocess.CalledProcessError: making the venv or the pip install failed.
    """
    version = installed_s2and_version()
    if version == S2AND_VERSION:
        say(f"s2and {version} already in {VENV}")
        return
    if not venv_python().exists():
        say(f"making {VENV} with python3.11")
        VENV.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["python3.11", "-m", "venv", str(VENV)], check=True)
    say(
        f"pip install s2and=={S2AND_VERSION} into {VENV} "
        f"(found {version or 'none'}; about 1.3 GB, a few minutes)"
    )
    subprocess.run(
        [
            str(venv_python()),
            "-m",
            "pip",
            "install",
            "--quiet",
            f"s2and=={S2AND_VERSION}",
        ],
        stdout=sys.stderr,
        check=True,
    )


def folder_bytes(folder: Path) -> int:
    """Total size of the regular files under ``folder``, in bytes."""
    return sum(
        p.stat().st_size
        for p in folder.rglob("*")
        if p.is_file() and not p.is_symlink()
    )


def run_s2and(folder: Path, name_counts: str, n_jobs: int, log: Path) -> dict:
    """Cluster one set with the released S2AND model in the venv's Python.

    Args:
        folder: the labelled set's folder.
        name_counts: ``"empty"`` or ``"none"`` (see ``bench/s2and_child.py``).
        n_jobs: S2AND worker processes.
        log: the file the child's output goes to (S2AND draws progress bars
            that no setting turns off); its tail is shown if the child fails.

    Returns:
        The child's JSON (``clusters``: signature id -> predicted cluster id,
        ``seconds``, ``settings``, ``blocks``, ``largest_block``) plus
        ``wall_seconds``, the child's whole wall time.

    Raises:
        subprocess.CalledProcessError: the child failed.
    """
    env = {
        **os.environ,
        **S2AND_ENV,
        # S2AND's pair-feature cache directory, should anything write it: kept in
        # the ignored build folder rather than ~/.s2and.
        "S2AND_CACHE": str(REPO / "build" / "s2and-cache"),
    }
    log.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, log.open("w") as log_file:
        output = Path(tmp) / "clusters.json"
        started = time.perf_counter()
        done = subprocess.run(
            [
                str(venv_python()),
                str(CHILD),
                "--folder",
                str(folder),
                "--output",
                str(output),
                "--name-counts",
                name_counts,
                "--n-jobs",
                str(n_jobs),
            ],
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            check=False,
        )
        wall = time.perf_counter() - started
        if done.returncode != 0:
            log_file.flush()
            tail = log.read_text(errors="replace").splitlines()[-40:]
            say("\n".join(["S2AND child failed; end of " + str(log) + ":", *tail]))
            done.check_returncode()
        result = json.loads(output.read_text())
    result["wall_seconds"] = round(wall, 1)
    return result


def run_ours(folder: Path, data_dir: Path) -> dict:
    """Our ``evaluate_matching --json`` on one set, in the project's Python.

    Args:
        folder: the labelled set's folder.
        data_dir: given to the command as ``WOVEPAPER_DATA_DIR``.

    Returns:
        The command's JSON object (``ours``, ``learned``, ``baselines``, ...)
        plus ``wall_seconds``.

    Raises:
        subprocess.CalledProcessError: the command failed.
    """
    env = {
        **os.environ,
        "WOVEPAPER_DATA_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": os.environ.get(
            "DJANGO_SETTINGS_MODULE", "wovepaper.settings.base"
        ),
    }
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "manage.py"),
            "evaluate_matching",
            "--dataset",
            str(folder),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        done.check_returncode()
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["wall_seconds"] = round(wall, 1)
    return report


def score_s2and(folder: Path, clusters: dict[str, str]) -> dict:
    """B³ and pairwise figures of S2AND's clusters against the gold labels.

    Args:
        folder: the labelled set's folder (gold read by our loader).
        clusters: signature id -> S2AND's predicted cluster id.

    Returns:
        ``{"b3": {precision, recall, f1}, "pairwise": {...}, "clusters": int,
        "gold_clusters": int, "mentions": int}``, rates in [0, 1].

    Raises:
        KeyError: a gold signature has no predicted cluster.
    """
    data = load_labelled(folder)
    gold = {data.mention_ids[i]: label for i, label in data.gold.items()}
    predicted = {sig: clusters[sig] for sig in gold}
    return {
        "mentions": len(gold),
        "gold_clusters": len(set(gold.values())),
        "clusters": len(set(predicted.values())),
        "b3": evaluation.b_cubed(predicted, gold).as_dict(),
        "pairwise": evaluation.pairwise(predicted, gold).as_dict(),
    }


def compare(name: str, data_dir: Path, name_counts: str, n_jobs: int) -> dict:
    """Both systems on one set.

    Returns:
        ``{"set", "folder", "published": {"dataset", "b3_f1"}, "s2and": {...},
        "ours": {...}}``; see :func:`run_s2and` and :func:`run_ours`.
    """
    subdir, paper_name, published_f1 = SETS[name]
    folder = data_dir / subdir
    say(f"== {name} ({folder})")
    log = REPO / "build" / "s2and-logs" / f"{name}.log"
    say(f"S2AND released model ... (its log: {log})")
    s2 = run_s2and(folder, name_counts, n_jobs, log)
    s2_scores = score_s2and(folder, s2.pop("clusters"))
    say(
        f"S2AND: B3 F1 {s2_scores['b3']['f1']:.3f} in {s2['wall_seconds']} s "
        f"({s2_scores['clusters']} clusters, {s2_scores['gold_clusters']} gold)"
    )
    say("ours (evaluate_matching) ...")
    ours = run_ours(folder, data_dir)
    say(f"ours: B3 F1 {ours['ours']['b3']['f1']:.3f} in {ours['wall_seconds']} s")
    return {
        "set": name,
        "folder": str(folder),
        "published": {"dataset": paper_name, "b3_f1": published_f1},
        "s2and": {**s2, **s2_scores},
        "ours": {
            "default_weights": ours["ours"],
            "learned": ours.get("learned"),
            "matching_seconds": ours.get("seconds"),
            "wall_seconds": ours["wall_seconds"],
        },
    }


def print_table(results: list[dict], settings_text: str) -> None:
    """The figures as a fixed-width table on the commentary stream."""
    head = (
        f"{'set':<6} {'system':<40} {'B3 P':>6} {'B3 R':>6} {'B3 F1':>6} {'wall s':>8}"
    )
    say("")
    say(head)
    say("-" * len(head))
    for r in results:
        rows = [
            ("S2AND released model (this run)", r["s2and"]["b3"], r["s2and"]),
            (
                "ours, default weights",
                r["ours"]["default_weights"]["b3"],
                r["ours"],
            ),
        ]
        if r["ours"]["learned"]:
            learned = r["ours"]["learned"]
            rows.append(
                (f"ours, learned ({learned['folds']}-fold CV)", learned["b3"], None)
            )
        for label, b3, timed in rows:
            wall = f"{timed['wall_seconds']:>8.1f}" if timed else f"{'(same)':>8}"
            say(
                f"{r['set']:<6} {label:<40} {b3['precision']:>6.3f} "
                f"{b3['recall']:>6.3f} {b3['f1']:>6.3f} {wall}"
            )
        pub = r["published"]
        label = f"S2AND published, all features ({pub['dataset']})"
        say(f"{r['set']:<6} {label:<40} {'':>6} {'':>6} {pub['b3_f1']:>6.3f}")
    say("")
    say(settings_text)
    say(
        "ours: wall time of the whole evaluate_matching command (it also trains "
        "and clusters the 5-fold learned model and the baselines)"
    )


def main() -> None:
    global _commentary
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sets",
        default="wang,qian",
        help=f"comma-separated, of {', '.join(SETS)} (default wang,qian)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("WOVEPAPER_DATA_DIR", REPO.parent / "shared/data")),
        help="the shared data folder (default: $WOVEPAPER_DATA_DIR, else "
        "../shared/data beside the repository)",
    )
    parser.add_argument(
        "--name-counts",
        choices=("empty", "none"),
        default="empty",
        help="S2AND name counts: empty tables, every count 1 (default), or none "
        "(the count features missing)",
    )
    parser.add_argument(
        "--n-jobs", type=int, default=2, help="S2AND worker processes (default 2)"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object on standard output; commentary on standard error",
    )
    args = parser.parse_args()
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in names if s not in SETS]
    if not names or unknown:
        parser.error(f"--sets: choose from {', '.join(SETS)}")
    if args.n_jobs < 1:
        parser.error("--n-jobs must be at least 1")
    data_dir = args.data_dir.resolve()
    for name in names:
        if not (data_dir / SETS[name][0]).is_dir():
            parser.error(f"{data_dir / SETS[name][0]}: no such folder (--data-dir)")
    if args.json:
        _commentary = sys.stderr

    started = time.perf_counter()
    ensure_venv()
    venv_size = folder_bytes(VENV)
    say(f"{VENV}: {venv_size / 2**30:.2f} GiB")
    results = [compare(n, data_dir, args.name_counts, args.n_jobs) for n in names]
    s2_settings = results[0]["s2and"]["settings"]
    settings_text = SETTINGS_TEXT.format(
        name_counts=(
            "empty (every count 1)"
            if args.name_counts == "empty"
            else "none (count features missing)"
        ),
        model=s2_settings["model"],
        eps=s2_settings["eps"],
        linkage=s2_settings["linkage"],
    )
    print_table(results, settings_text)
    report = {
        "s2and_version": S2AND_VERSION,
        "venv": str(VENV),
        "venv_bytes": venv_size,
        "settings": {**s2_settings, "description": settings_text},
        "sets": results,
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()

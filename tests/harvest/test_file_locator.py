"""How a harvest names a file in errors and RawRecords (harvest.records.file_locator):
relative to the folder harvested when inside it, as given otherwise, the same as
``Path.relative_to`` says, on the real arXiv files and on the odd roots."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from harvest.records import file_locator


def test_a_real_file_is_named_from_the_data_folder() -> None:
    data_dir = Path(settings.WOVEPAPER_DATA_DIR)
    path = next((data_dir / "arxiv" / "abs_files" / "ftp").rglob("*.abs"))
    name = file_locator(path, data_dir)
    assert name.startswith("arxiv/abs_files/ftp/")
    assert name.endswith(".abs")
    assert data_dir / name == path
    assert file_locator(path, None) == str(path)


@pytest.mark.parametrize(
    ("path", "root", "name"),
    [
        ("/data/arxiv/0704.0001.abs", "/data", "arxiv/0704.0001.abs"),
        ("/data/arxiv/0704.0001.abs", "/data/", "arxiv/0704.0001.abs"),
        ("/data/arxiv/0704.0001.abs", "/", "data/arxiv/0704.0001.abs"),
        ("/data", "/data", "."),
        ("/", "/", "."),
        # Not inside: a sibling whose name merely starts the same, another tree.
        ("/database/x.abs", "/data", "/database/x.abs"),
        ("/other/x.abs", "/data", "/other/x.abs"),
        # Relative paths: "." holds every relative path and no absolute one.
        ("arxiv/x.abs", ".", "arxiv/x.abs"),
        ("/data/x.abs", ".", "/data/x.abs"),
        ("arxiv/x.abs", "arxiv", "x.abs"),
        ("arxiv/x.abs", "/arxiv", "arxiv/x.abs"),
        # POSIX keeps a leading "//" as a root of its own.
        ("//data/x.abs", "/", "//data/x.abs"),
    ],
)
def test_names_follow_path_relative_to(path: str, root: str, name: str) -> None:
    assert file_locator(Path(path), Path(root)) == name
    inside = Path(path).is_relative_to(root)
    assert name == (Path(path).relative_to(root).as_posix() if inside else path)


def test_a_file_name_that_is_not_utf8_is_named_readably() -> None:
    path = Path("/data/caf\udce9.abs")  # the byte 0xE9, decoded with surrogateescape
    assert file_locator(path, Path("/data")) == "caf\ufffd.abs"

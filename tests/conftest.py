from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings


@pytest.fixture
def arxiv_dir() -> Path:
    """The real recorded arXiv files (read in place, never copied)."""
    path = Path(settings.WOVEPAPER_DATA_DIR) / "arxiv"
    assert path.is_dir(), f"shared data missing: {path}"
    return path


@pytest.fixture
def curator(db):
    """A staff user in the curators group, as the demo creates one."""
    from curation.services import curator_ensure

    return curator_ensure(username="cura", password="pw-cura")

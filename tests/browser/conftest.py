"""Shared fixtures of the browser tests: Debian's Chromium driven by Playwright.

Chromium is Debian's (``/usr/bin/chromium``; ``.ci/run`` installs it): Playwright's
own browser download cannot work here, so a missing Chromium fails the tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections
from playwright.sync_api import Page, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
MISSING_CHROMIUM = (
    f"Chromium is missing at {CHROMIUM}: the browser test needs Debian's chromium "
    "(`apt-get install -y chromium`, as .ci/run does); `playwright install` "
    "cannot download a browser here."
)


@pytest.fixture
def shots(settings) -> Path:
    """``var/screenshots/`` (git-ignored), one PNG per step, replaced each run."""
    folder = Path(settings.VAR_DIR) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def js_errors() -> list[str]:
    """Uncaught JavaScript errors on any page the test opens."""
    return []


@pytest.fixture
def csp_violations() -> list[str]:
    """What the Content-Security-Policy blocked on any page the test opens,
    as ``"<directive> <blocked URI>"``; read with :func:`blocked`."""
    return []


# Runs in every document before its own scripts (Playwright injects it, so the
# policy does not apply to it): it records each violation the page reports.
CSP_LISTENER = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
});
"""


def blocked(page: Page) -> list[str]:
    """The policy violations the page's current document reported so far."""
    return page.evaluate("window.__cspViolations || []")


@pytest.fixture
def page(
    live_server, monkeypatch, js_errors: list[str], viewport: dict
) -> Iterator[Page]:
    """A headless Chromium page whose relative URLs go to the live server; every
    document records what the Content-Security-Policy blocks (:func:`blocked`)."""
    if not CHROMIUM.exists():
        pytest.fail(MISSING_CHROMIUM, pytrace=False)
    # Playwright's sync API keeps an asyncio loop running in this thread, so
    # Django refuses the ORM calls the test makes between browser steps
    # (SynchronousOnlyOperation). The loop is idle while test code runs (the sync
    # API hands control back and forth, it does not interleave), so blocking
    # database calls are safe here; the override is scoped to this test.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        context = browser.new_context(base_url=live_server.url, viewport=viewport)
        context.add_init_script(CSP_LISTENER)
        tab = context.new_page()
        tab.set_default_timeout(10_000)
        tab.on("pageerror", lambda exc: js_errors.append(str(exc)))
        try:
            yield tab
        finally:
            browser.close()
            # With a loop running, Django keeps this thread's connections apart
            # from the ones it uses without (asgiref's Local), so the ORM calls
            # made in here opened their own connection. Close it before the
            # loop stops, or it outlives the test and blocks dropping the
            # test database.
            connections.close_all()


@pytest.fixture
def viewport() -> dict:
    """The browser window: a desktop one unless a test module overrides it."""
    return {"width": 1280, "height": 900}


def test_chromium_is_installed():
    # A missing browser fails the suite here (and the flow test's setup); never
    # a skip, which would hide that the browser flow went untested.
    assert CHROMIUM.exists(), MISSING_CHROMIUM

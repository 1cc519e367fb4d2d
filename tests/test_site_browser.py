"""The documentation site in a real browser (issue 32): the site is built with ``mkdocs build --strict`` into a
temporary directory, served over a local HTTP server (the Material theme's search runs in a web worker, which
``file://`` pages may not start), and its start page and one reference page (``dpkit calibrate``'s, generated from
the command line) are opened in headless Chromium. Each must render (a title, a navigation, its content), log no
console error nor fetch anything from outside the site, and every ``<a href>`` to a page of the site must name a
file the build wrote (and the anchor, when there is one, an element of that page); a screenshot of each is saved
and checked non-empty. The search is tried from disk too (file://, as the README opens the site).

Skipped, as tests/reports/test_browser.py is, without Chromium or Playwright (tests/support/chromium.py).
``DPKIT_SCREENSHOTS`` names a directory to keep the screenshots in (default: the test's temporary directory).
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest
from chromium import FLAGS, HEIGHT, SKIP_REASON, WIDTH, find_chromium, missing, png_size

CHROMIUM = find_chromium()
_MISSING = missing("playwright", "mkdocs")
if _MISSING:
    pytest.skip(f"{SKIP_REASON} (missing: {', '.join(_MISSING)})", allow_module_level=True)

from playwright.sync_api import sync_playwright  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[1]
PAGES = {"start": "index.html", "reference": "reference/commands/calibrate.html"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built strict (a warning fails the build) into a temporary directory."""
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    run = subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return out


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    """A local HTTP server of the built site (port chosen by the system), stopped after the module."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None  # type: ignore[assignment]  # quiet
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _local_target(site: Path, base: str, page_url: str, href: str) -> tuple[Path, str] | None:
    """The file and anchor a link of the page lands on, or None for a link leaving the site."""
    url = urljoin(page_url, href)
    if not url.startswith(base):
        return None
    parsed = urlparse(url)
    path = unquote(parsed.path[len(urlparse(base).path) :]) or "index.html"
    target = site / path
    if target.is_dir():
        target = target / "index.html"
    return target, unquote(parsed.fragment)


@pytest.mark.parametrize("which", sorted(PAGES))
def test_page_renders_with_no_error_and_every_link_resolves(
    which: str, site: Path, server: str, tmp_path: Path
) -> None:
    where = Path(os.environ.get("DPKIT_SCREENSHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    url = server + PAGES[which]
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda err: errors.append(f"page error: {err}"))
            page.on("requestfailed", lambda r: errors.append(f"failed request: {r.url[:100]}: {r.failure}"))
            # the site is self-contained: nothing is fetched from outside the server (fonts, scripts, …)
            page.on("request", lambda r: None if r.url.startswith(server) else errors.append(f"outside: {r.url[:100]}"))
            response = page.goto(url, wait_until="load")
            assert response is not None and response.ok, url
            page.wait_for_load_state("networkidle")
            # rendered: the theme's header and navigation, and the page's own content with its title
            shown = page.evaluate(
                """() => ({title: document.title,
                           h1: (document.querySelector('article h1') || {}).textContent || '',
                           nav: document.querySelectorAll('nav.md-nav a').length,
                           text: (document.querySelector('article') || {innerText: ''}).innerText.length,
                           header: !!document.querySelector('header.md-header')})"""
            )
            assert shown["header"] and shown["nav"] > 20 and shown["text"] > 500 and shown["h1"], shown
            links: list[str] = page.evaluate(
                "() => Array.from(document.querySelectorAll('a[href]'), a => a.getAttribute('href'))"
            )
            broken = []
            for href in links:
                target = _local_target(site, server, url, href)
                if target is None:
                    continue
                file, anchor = target
                if not file.is_file():
                    broken.append(f"{href} → {file.relative_to(site)} (no such file)")
                elif anchor and f'id="{anchor}"' not in file.read_text(encoding="utf-8"):
                    broken.append(f"{href} → no id {anchor!r} in {file.relative_to(site)}")
            assert len(links) > 20
            assert broken == [], f"{len(broken)} broken links on {PAGES[which]}:\n" + "\n".join(broken)
            shot = where / f"site-{which}.png"
            page.screenshot(path=shot, full_page=False)
            assert shot.stat().st_size > 10_000 and png_size(shot) == (WIDTH, HEIGHT)
        finally:
            browser.close()
    assert errors == [], "\n".join(errors)
    if which == "reference":
        assert "dpkit calibrate" in shown["h1"]


def test_the_search_works_from_disk(site: Path) -> None:
    """Issue 43: the README opens build/site/index.html from disk, where the theme's search worker cannot start. Typed
    into the search box of the file:// page, a query finds pages (docs/javascripts/file-worker.js runs the worker in
    an iframe; the index is the script docs/hooks.py writes), each result a page of the site, with no console error
    and nothing fetched from outside the site's files."""
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda err: errors.append(f"page error: {err}"))
            page.on(
                "request", lambda r: None if r.url.startswith("file:") else errors.append(f"outside: {r.url[:100]}")
            )
            page.goto((site / "index.html").as_uri(), wait_until="load")
            page.focus("input.md-search__input")
            page.keyboard.type("calibrate", delay=30)  # the theme searches on key events
            page.wait_for_selector(".md-search-result__item", timeout=15_000)
            hrefs: list[str] = page.evaluate(
                "() => Array.from(document.querySelectorAll('.md-search-result__item a[href]'), a => a.href)"
            )
            meta = page.evaluate("() => document.querySelector('.md-search-result__meta').textContent")
        finally:
            browser.close()
    assert errors == [], "\n".join(errors)
    assert re.fullmatch(r"\d+ matching documents?", meta.strip()), meta
    assert hrefs and all(h.startswith("file:") for h in hrefs)
    files = {Path(unquote(urlparse(h).path)) for h in hrefs}
    assert all(f.is_file() and site in f.parents for f in files), files
    assert any(f.name == "calibrate.html" for f in files)  # dpkit calibrate's own page is found

"""The built documentation site as a reader gets it (issue 43; second tier: the build takes ~20 s): every list
renders as a list, never as text run into a paragraph (``--attack: - auto (default): … - lr: …``); the API
reference shows its examples as code — no doctest as nested quote bars, no reST ``::`` left as text; and the search
index is there as a script too, for the search from disk (tests/test_site_browser.py searches in Chromium).
tests/test_site_markdown.py checks the same at the sources, in the fast tier."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
#: A line of a paragraph's or list item's text that starts like a list item: a list Markdown did not see.
LIST_LINE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\S")
BLOCK = re.compile(r"<(p|li)\b[^>]*>(.*?)</\1>", re.S)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built strict into a temporary directory."""
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [str(Path(sys.executable).with_name("mkdocs")), "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def _article(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    start, end = text.find("<article"), text.find("</article>")
    return text[start:end] if 0 <= start < end else text


def _text(fragment: str) -> str:
    """The text of an HTML fragment, its code left out (a code block may hold anything)."""
    fragment = re.sub(r"<(pre|code)\b.*?</\1>", "", fragment, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_no_list_runs_into_a_paragraph(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 40
    glued = []
    for page in pages:
        for match in BLOCK.finditer(_article(page)):
            lines = _text(match[2]).split("\n")
            glued += [f"{page.relative_to(site)}: {line.strip()[:70]}" for line in lines[1:] if LIST_LINE.match(line)]
    assert glued == [], "lists rendered as text:\n" + "\n".join(glued)


def test_the_api_reference_shows_examples_as_code(site: Path) -> None:
    pages = sorted((site / "reference" / "api").glob("*.html"))
    assert len(pages) == 5
    prompts = 0
    for page in pages:
        article = _article(page)
        assert "<blockquote>" not in article, f"{page.name}: a doctest shown as quote bars"
        literal = [line for line in _text(article).split("\n") if line.rstrip().endswith("::")]
        assert literal == [], f"{page.name}: reST literal blocks shown as text: {literal}"
        prompts += article.count('<span class="gp">&gt;&gt;&gt; </span>')  # a doctest prompt, highlighted as code
    assert prompts >= 30


def test_the_search_index_is_a_script_too(site: Path) -> None:
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    script = (site / "search" / "search_index.js").read_text(encoding="utf-8")
    assert script.startswith("var __index = ") and json.loads(script.removeprefix("var __index = ")) == index
    start = (site / "index.html").read_text(encoding="utf-8")
    assert start.index('src="javascripts/file-worker.js"') < start.index("assets/javascripts/bundle.")

"""The ``--quick`` HTML report in a real browser (issue 20): headless Chromium, driven by Playwright for Python,
opens ``report.html`` from disk at a 1280×900 window and checks what a reader would see: no console or page
errors and no request leaving the file (the report is self-contained), every figure decoded and shown, every
internal link landing on an element, nothing wider than the window; it saves two screenshots.

The report holds an entry of every kind (issue 33): the seed algorithms, a plugin algorithm (the toy of
``tests/support/toy_algorithm.py``, from a file beside the config), a ledger file of Gaussian releases
(``examples/my_ledger.toml``) and a DpEvent file holding a self-composed DP-SGD event
(``examples/mnist_dp_sgd.json``, whose refusal reasons and long values once pushed the page to 1,359 px).

The browser is the system's Chromium (Debian's ``chromium``; ``DPKIT_CHROMIUM`` names another executable), never
one downloaded by ``playwright install``. Without Playwright or Chromium the module is skipped with the reason
(pytest's ``-ra`` summary prints it, and ``make test`` says so first); ``.ci/run`` installs both.
``DPKIT_SCREENSHOTS`` names a directory to keep the screenshots in (default: the test's temporary directory).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from chromium import BROKEN_WORDS, FLAGS, HEIGHT, SKIP_REASON, WIDTH, find_chromium, missing, png_size
from user_files import TOY_ENTRY, TOY_NAME, write_toy

from dpkit.reports.config import load_config
from dpkit.reports.job import compute_report
from dpkit.reports.render import figure_list, write_report

CHROMIUM = find_chromium()
_MISSING = missing("playwright")
if _MISSING:
    pytest.skip(f"{SKIP_REASON} (missing: {', '.join(_MISSING)})", allow_module_level=True)

from playwright.sync_api import ConsoleMessage, Page, Request, sync_playwright  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@dataclass
class Loaded:
    """The report open in the browser, with everything the page logged and asked for while loading."""

    page: Page
    figures: int  # how many figures the report's data lists
    console: list[ConsoleMessage] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


ROOT = Path(__file__).resolve().parents[2]
#: The files a user adds to the default config, one of each kind (beside the plugin algorithm's entry).
FILES = """
[[ledger]]
name = "my ledger"
file = {ledger}
delta = 1e-5
epsilon = 1.0

[[ledger]]
name = "mnist-dp-sgd"
file = {dp_sgd}
delta = 1e-5
epsilon = 3.0
users = 60000
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """The ``dpkit report --quick`` report (~40 s on 2 cores) of the default config with an entry of every other
    kind added — a plugin algorithm and two ``[[ledger]]`` files, a Gaussian ledger and a DP-SGD DpEvent (their
    verdict rows and sections are on the page too) — written to a temporary directory."""
    from dpkit.algorithms import registry

    folder = tmp_path_factory.mktemp("browser-config")
    write_toy(folder / "toy.py")
    default = resources.files("dpkit.reports").joinpath("default.toml").read_text(encoding="utf-8")
    files = {
        "ledger": json.dumps(str(ROOT / "examples" / "my_ledger.toml")),
        "dp_sgd": json.dumps(str(ROOT / "examples" / "mnist_dp_sgd.json")),
    }
    config_text = 'plugins = ["toy.py:SPEC"]\n' + default + TOY_ENTRY + FILES.format(**files)
    (folder / "report.toml").write_text(config_text, encoding="utf-8")
    try:
        config = load_config(folder / "report.toml").shrunk()
        assert [e.name for e in config.ledgers] == ["my ledger", "mnist-dp-sgd"]
        assert [e.kind for e in config.ledgers] == ["ledger file", "event file"]
        assert TOY_NAME in [a.name for a in config.algorithms]
        data = compute_report(config, command=["dpkit", "report", "--quick"])
        out = tmp_path_factory.mktemp("browser-report")
        write_report(data, out)
        yield out / "report.html", len(figure_list(data))
    finally:
        if TOY_NAME in registry.names():
            registry.unregister(TOY_NAME)


@pytest.fixture(scope="module")
def loaded(report: tuple[Path, int]) -> Iterator[Loaded]:
    """The report open in headless Chromium at 1280×900, after its load event and every image decoded."""
    html, figures = report
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            seen = Loaded(page=page, figures=figures)
            page.on("console", lambda m: seen.console.append(m))
            page.on("pageerror", lambda err: seen.page_errors.append(str(err)))
            page.on("request", lambda r: seen.requests.append(r.url))
            page.on("requestfailed", lambda r: seen.failed.append(_failure(r)))
            page.goto(html.as_uri(), wait_until="load")
            page.wait_for_function("Array.from(document.images).every(i => i.complete)")
            yield seen
        finally:
            browser.close()


def _failure(request: Request) -> str:
    return f"{request.url[:100]}: {request.failure}"


def test_loads_without_errors_or_network(loaded: Loaded) -> None:
    problems = [f"console {m.type}: {m.text} ({m.location['url'][:100]})" for m in loaded.console if m.type == "error"]
    problems += [f"page error: {e}" for e in loaded.page_errors]
    problems += [f"failed request: {f}" for f in loaded.failed]
    # the report must be self-contained: nothing but the file itself and data: URIs
    outside = [u for u in loaded.requests if not u.startswith(("file:", "data:"))]
    problems += [f"request leaving the report: {u[:100]}" for u in outside]
    assert problems == [], f"{len(problems)} problems loading report.html:\n" + "\n".join(problems)
    assert loaded.requests and loaded.requests[0].startswith("file:")  # the listener did see the page itself


def test_every_figure_is_decoded_and_shown(loaded: Loaded) -> None:
    images: list[dict[str, Any]] = loaded.page.evaluate(
        """() => Array.from(document.images).map((img, k) => {
             const box = img.getBoundingClientRect(), style = getComputedStyle(img);
             return {k, alt: (img.alt || '').slice(0, 60), complete: img.complete, natural: img.naturalWidth,
                     width: box.width, height: box.height, visible: style.visibility !== 'hidden'
                     && style.display !== 'none' && Number(style.opacity) > 0};
           })"""
    )
    broken = [i for i in images if not (i["complete"] and i["natural"] > 0)]
    assert broken == [], f"images not decoded: {broken}"
    hidden = [i for i in images if not (i["visible"] and i["width"] > 0 and i["height"] > 0)]
    assert hidden == [], f"images not displayed: {hidden}"
    assert len(images) == loaded.figures > 0, "one <img> per figure of the report's data"


def test_every_internal_link_resolves(loaded: Loaded) -> None:
    result: dict[str, Any] = loaded.page.evaluate(
        """() => {
             const ids = Array.from(document.querySelectorAll('[id]'), e => e.id);
             const duplicates = ids.filter((id, k) => ids.indexOf(id) !== k);
             const links = Array.from(document.querySelectorAll('a[href^="#"]'), a => a.getAttribute('href'));
             const broken = links.filter(h => {
               const target = h.length > 1 ? document.getElementById(decodeURIComponent(h.slice(1))) : null;
               return !target || target.getClientRects().length === 0;  // missing, or not displayed
             });
             return {links: links.length, duplicates, broken};
           }"""
    )
    problems = [f"id used more than once: {i!r}" for i in sorted(set(result["duplicates"]))]
    problems += [f"internal link to no displayed element: {h!r}" for h in result["broken"]]
    assert problems == [], "\n".join(problems)
    assert result["links"] > 0  # the summary links to every algorithm's section


def test_nothing_overflows_a_1280px_window(loaded: Loaded) -> None:
    page = loaded.page
    # elements inside a box that clips or scrolls (overflow-x other than visible) stay inside that box on screen:
    # the box itself is checked instead
    over: list[dict[str, Any]] = page.evaluate(
        """() => {
             const limit = window.innerWidth + 0.5;
             const clipped = e => {
               for (let p = e.parentElement; p && p !== document.body; p = p.parentElement)
                 if (getComputedStyle(p).overflowX !== 'visible') return true;
               return false;
             };
             return Array.from(document.body.querySelectorAll('*')).filter(e => {
               const box = e.getBoundingClientRect();
               return (box.width > 0 || box.height > 0) && box.right > limit && !clipped(e);
             }).map(e => ({tag: e.tagName.toLowerCase(), id: e.id, cls: e.className && String(e.className),
                           text: (e.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 60),
                           right: Math.round(e.getBoundingClientRect().right)}));
           }"""
    )
    size: dict[str, int] = page.evaluate(
        "() => ({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})"
    )
    assert size["inner"] == WIDTH
    lines = [f"<{o['tag']} id={o['id']!r} class={o['cls']!r}> right edge {o['right']} px: {o['text']!r}" for o in over]
    lines = lines[:25] + ([f"… and {len(lines) - 25} more"] if len(lines) > 25 else [])
    assert over == [], f"{len(over)} elements extend past the {WIDTH}-px window:\n" + "\n".join(lines)
    assert size["scroll"] <= size["inner"], f"page is {size['scroll']} px wide in a {size['inner']}-px window"


def test_the_implementations_verdict_and_the_papers_flags_are_two_tables(loaded: Loaded) -> None:
    """Issue 43: a green ``consistent`` audit beside a red paper flag in one row read as one signal. The audit
    verdicts are one table (the implementation) and the paper's flags another, each under its own heading: no table
    of the verdicts holds both an audit verdict and a flag."""
    tables: list[dict[str, Any]] = loaded.page.evaluate(
        """() => Array.from(document.querySelectorAll('table.verdicts'), t => {
             let heading = t.parentElement.previousElementSibling;
             while (heading && !/^H[1-4]$/.test(heading.tagName)) heading = heading.previousElementSibling;
             return {cls: t.className, heading: heading ? heading.textContent : '',
                     audits: t.querySelectorAll('.badge.consistent, .badge.violation, .badge.inconclusive, '
                                                + '.badge.not-audited, .badge.stopped').length,
                     flags: t.querySelectorAll('.badge[class*="flag-"], code').length,
                     rows: t.querySelectorAll('tr').length};
           })"""
    )
    implementation = [t for t in tables if "implementation" in t["cls"]]
    paper = [t for t in tables if "paper" in t["cls"]]
    assert len(implementation) == len(paper) == 1, tables
    (impl,), (claim,) = implementation, paper
    assert impl["heading"].startswith("The implementation") and claim["heading"].startswith("The paper's claim")
    assert impl["audits"] == impl["rows"] - 1 > 0 and impl["flags"] == 0  # one verdict per algorithm, no flag
    assert claim["audits"] == 0 and claim["flags"] > 0


def test_no_word_is_broken_inside_a_table_cell(loaded: Loaded) -> None:
    """Issue 43: narrow columns broke words letter by letter (``mo/de/l``, ``repl/ace/-/one``, ``releas/e``). No word
    of any table cell is broken across lines at 1,280 px; in the verdict tables' short cells (all but the sentences)
    no run of non-space characters is either (``replace-one``, a flag's code)."""
    broken: list[dict[str, Any]] = loaded.page.evaluate(BROKEN_WORDS, "table.verdicts td:not(.wrap), table.verdicts th")
    assert broken == [], f"{len(broken)} words broken across lines:\n" + "\n".join(map(str, broken[:25]))


#: Text that stands for a value that was never filled in: an empty ``key = ,`` (or ``= .``), a ``key = —`` where a
#: field of the setting or provenance was empty, and Python's or JavaScript's words for nothing.
PLACEHOLDERS = re.compile(r"=\s*(?:[,.;)]|$)|=\s*—\s*[,.;)]|\b(?:None|undefined|NaN|nan|null)\b|\{\{|\}\}", re.M)


def test_no_placeholder_text(loaded: Loaded) -> None:
    """Issue 43: a provenance line printed ``env = , implementation = —.`` for the fields an RL audit left empty.
    The page's text has no empty field and no placeholder for a missing value."""
    text: str = loaded.page.evaluate("() => document.body.innerText")
    found = [text[max(m.start() - 60, 0) : m.end() + 20].replace("\n", " ") for m in PLACEHOLDERS.finditer(text)]
    assert found == [], f"{len(found)} placeholders:\n" + "\n".join(found[:25])
    assert "The audit's own setting: " in text  # the line that once printed them is there


def test_the_first_screen_holds_both_verdicts_and_the_worst_flag_of_every_entry(
    report: tuple[Path, int], loaded: Loaded, tmp_path: Path
) -> None:
    """Issue 54: the report opened on five green badges, its red paper flags below the first screen. At 1,280 × 900,
    before any scrolling, every algorithm's line shows its audit verdict, its paper-claim verdict and its worst flag
    (each box wholly inside the window), each with the setting it was measured in, and every file's line its claim
    and flag; the words are the report's own (report.json's summary). A screenshot of exactly that screen is kept."""
    data = json.loads((report[0].parent / "report.json").read_text(encoding="utf-8"))
    page = loaded.page
    page.evaluate("() => window.scrollTo(0, 0)")
    rows: list[dict[str, Any]] = page.evaluate(
        """() => Array.from(document.querySelectorAll('table.glance tr')).slice(1).map(tr => {
             const box = (el) => { if (!el) return null; const b = el.getBoundingClientRect();
                                   return {top: b.top, bottom: b.bottom, left: b.left, right: b.right}; };
             const pick = (sel) => tr.querySelector(sel);
             const flag = pick('td.flag .badge') || pick('td.flag a');
             return {name: pick('td.name b').textContent,
                     audit: (pick('td.audit .badge') || pick('td.audit')).textContent.trim(),
                     paper: pick('td.paper .badge').textContent.trim(),
                     flag: flag.textContent.trim(),
                     code: pick('td.flag code') ? pick('td.flag code').textContent : null,
                     settings: Array.from(tr.querySelectorAll('.setting'), e => e.textContent),
                     boxes: [box(pick('td.audit .badge') || pick('td.audit')), box(pick('td.paper .badge')),
                             box(flag), box(pick('td.flag code'))].filter(b => b)};
           })"""
    )
    expected = [row["algorithm"] for row in data["summary"]] + [entry["name"] for entry in data["ledgers"]]
    assert [r["name"] for r in rows] == expected
    for row, line in zip(data["summary"], rows):
        flag = row["worst_flag"]
        assert line["audit"] == (row["verdict"] or "not audited") and line["paper"] == row["paper_claim"]
        assert (line["flag"], line["code"]) == ((flag["severity"], flag["code"]) if flag else ("none", None))
        assert len(line["settings"]) == 2 and any("users per run" in s for s in line["settings"])  # audit, report
    for entry, line in zip(data["ledgers"], rows[len(data["summary"]) :]):
        assert line["paper"].startswith(entry["assessment"]["claim_status"])
    outside = [
        (line["name"], b)
        for line in rows
        for b in line["boxes"]
        if not (0 <= b["top"] and b["bottom"] <= HEIGHT and 0 <= b["left"] and b["right"] <= WIDTH)
    ]
    assert outside == [], f"beyond the first {WIDTH} × {HEIGHT} screen: {outside}"
    codes = page.evaluate(BROKEN_WORDS, "table.glance td.flag, table.glance td.name")
    assert codes == [], f"flag codes or names broken across lines: {codes}"
    where = Path(os.environ.get("DPKIT_SCREENSHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    first = where / "report-first-screen.png"
    page.screenshot(path=first)
    assert png_size(first) == (WIDTH, HEIGHT)


def test_screenshots(loaded: Loaded, tmp_path: Path) -> None:
    where = Path(os.environ.get("DPKIT_SCREENSHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    page = loaded.page
    page.evaluate("() => window.scrollTo(0, 0)")
    # the top: the title and the verdict table (the page's first), whole if it is taller than the window
    bottom = page.evaluate(
        """() => { const t = document.querySelector('table');  // the first table: the verdicts
                   return t ? Math.ceil(t.getBoundingClientRect().bottom + window.scrollY) + 16 : 0; }"""
    )
    top, full = where / "report-top.png", where / "report-full.png"
    page.screenshot(path=top, full_page=True, clip={"x": 0, "y": 0, "width": WIDTH, "height": max(HEIGHT, bottom)})
    page.screenshot(path=full, full_page=True)
    height = page.evaluate("() => document.documentElement.scrollHeight")
    assert top.stat().st_size > 0 and full.stat().st_size > 0
    assert png_size(top) == (WIDTH, max(HEIGHT, bottom))
    assert png_size(full) == (WIDTH, height)
    assert height > HEIGHT  # the report is longer than one window

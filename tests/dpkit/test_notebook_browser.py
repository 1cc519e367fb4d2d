"""An audit result as a notebook shows it (``_repr_html_``), in a real browser: headless Chromium (the system's, as
tests/reports/test_browser.py drives it) renders the views of a consistent, a violating and an inconclusive audit
side by side in an output cell's width, and checks what a reader sees: the release named, the verdict's badge in
its colour, the estimate beside the bound, nothing wider than the cell, no word broken across lines, no error.
``DPKIT_SCREENSHOTS`` names a directory to keep the screenshot in (default: the test's temporary directory).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chromium import BROKEN_WORDS, FLAGS, SKIP_REASON, find_chromium, missing, png_size

import dpkit
from dpkit.algorithms.executors import InProcessExecutor

CHROMIUM = find_chromium()
_MISSING = missing("playwright")
if _MISSING:
    pytest.skip(f"{SKIP_REASON} (missing: {', '.join(_MISSING)})", allow_module_level=True)

from playwright.sync_api import Page, sync_playwright  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: A notebook's output cell: about as wide as JupyterLab's at a 1280-pixel window.
CELL = 860
#: The badge colours a reader sees (the report's: notebook_view.BADGE), as the browser computes them.
COLOURS = {"consistent": "rgb(27, 110, 32)", "violation": "rgb(176, 0, 32)", "inconclusive": "rgb(242, 201, 76)"}


def laplace_release(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, (n, 1))


def leaky_laplace_release(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    return float(np.sum(dataset)) + rng.laplace(0.0, 0.5, (n, 1))


def gaussian_release(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    return float(np.sum(dataset)) + 3.730631635 * rng.standard_normal((n, 1))


@pytest.fixture(scope="module")
def results() -> list[Any]:
    options = {"runs": 10_000, "executor": InProcessExecutor()}
    pure = dpkit.Claim.dp(1.0, 0.0)
    out = [
        dpkit.audit(laplace_release, [0.0], [1.0], claim=pure, **options),
        dpkit.audit(leaky_laplace_release, [0.0], [1.0], claim=pure, **options),
        dpkit.audit(gaussian_release, [0.0], [1.0], claim=pure, runs=3_000, executor=InProcessExecutor()),
    ]
    assert [r.verdict for r in out] == ["consistent", "violation", "inconclusive"]
    return out


@pytest.fixture(scope="module")
def page(results: list[Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    cells = "".join(f'<div class="output" style="width:{CELL}px;margin:16px">{r._repr_html_()}</div>' for r in results)
    path = tmp_path_factory.mktemp("notebook") / "notebook.html"
    path.write_text(f'<!doctype html><html><head><meta charset="utf-8"></head><body>{cells}</body></html>', "utf-8")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            view = browser.new_page(viewport={"width": CELL + 64, "height": 900})
            errors: list[str] = []
            view.on("pageerror", lambda err: errors.append(str(err)))
            view.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            view.goto(path.as_uri(), wait_until="load")
            yield view
            assert errors == []
        finally:
            browser.close()


def test_each_view_names_the_release_and_shows_its_verdict_in_colour(page: Page, results: list[Any]) -> None:
    boxes = page.query_selector_all(".dpkit-audit-result")
    assert len(boxes) == len(results)
    for box, result in zip(boxes, results, strict=True):
        head = box.query_selector(".dpkit-audit-head")
        assert head is not None and result.target in head.inner_text() and head.is_visible()
        badge = head.query_selector(".badge")
        assert badge is not None and badge.inner_text() == result.verdict
        assert badge.evaluate("b => getComputedStyle(b).backgroundColor") == COLOURS[result.verdict]
        text = box.inner_text()
        assert result.shape_estimate.describe(3) in text and "certified" in text


def test_the_estimate_is_the_shapes(page: Page, results: list[Any]) -> None:
    correct, leaky, gaussian = (box.inner_text() for box in page.query_selector_all(".dpkit-audit-result"))
    assert "(laplace shape, δ = 0)" in correct and results[0].shape_estimate.interval[0] <= 1.0
    assert "(laplace shape, δ = 0)" in leaky and 1.8 <= results[1].epsilon_estimate <= 2.2
    assert "estimate ∞ (a Gaussian shape: no finite ε at δ = 0)" in gaussian


def test_the_views_fit_the_cell_without_broken_words(page: Page, tmp_path: Path) -> None:
    widths = page.eval_on_selector_all(".dpkit-audit-result", "bs => bs.map(b => [b.scrollWidth, b.clientWidth])")
    assert all(scroll <= client for scroll, client in widths), widths
    assert page.evaluate("document.documentElement.scrollWidth") <= CELL + 64
    assert page.evaluate(BROKEN_WORDS, None) == []
    shots = Path(os.environ.get("DPKIT_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / "notebook-audit-views.png"
    page.screenshot(path=str(shot), full_page=True)
    assert png_size(shot)[0] == CELL + 64

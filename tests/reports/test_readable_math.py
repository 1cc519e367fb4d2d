"""Readable mathematics in a report: the formulas of the declarations' notes, flags, assumptions and
statistics reach report.html with Unicode operators and HTML sub/superscripts (report.md: Unicode), no raw
ASCII formula piece is left in the visible text, and report.html stays one self-contained file."""

from __future__ import annotations

import contextlib
import io
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dpkit.cli import main
from dpkit.reports.render import math_html, math_markdown

#: the second tier (make test-all): statistical audits and whole reports
pytestmark = pytest.mark.slow

#: Raw formula pieces that must not reach the visible text of report.html (``ln(…)`` and ``log(…)`` are
#: ordinary notation and allowed).
RAW = [
    r"<=",
    r">=",
    r"!=",
    r"\bsqrt\s*\(",
    r"\^\s*[\w({-]",
    r"\*\*",
    r"\w\s*\*\s*\w",
    r"[^\W\d]_\{",
    r"[\w‖]_\(",
    r"(?<![A-Za-z0-9_])[^\W\d_]_[A-Za-z0-9]{1,3}(?![A-Za-z0-9_])",
    r"‖_\w",
    r"\b(?:Sigma|lambda|eps|epsilon|delta|sigma|mu|rho) =",
]


class _Visible(HTMLParser):
    """The text a reader sees (and alt/title texts), without <style>, <script> and <code> (commands, codes)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.links: list[tuple[str, str, str]] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("style", "script", "code"):
            self._hidden += 1
        for name, value in attrs:
            if name in ("alt", "title") and value:
                self.texts.append(value)
            if name in ("src", "href", "srcset", "data", "action", "poster") and value is not None:
                self.links.append((tag, name, value))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script", "code"):
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.texts.append(data)


def raw_pieces(texts: list[str]) -> list[str]:
    """Every raw formula piece in ``texts``, with some context."""
    return [
        f"{pattern}: …{text[max(0, m.start() - 30) : m.end() + 30]}…"
        for text in texts
        for pattern in RAW
        for m in re.finditer(pattern, text)
    ]


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("math") / "report"
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert main(["report", "--quick", "--out", str(out), "--json"]) == 0, err.getvalue()
    return out


def _parse(out: Path) -> _Visible:
    parser = _Visible()
    parser.feed((out / "report.html").read_text(encoding="utf-8"))
    parser.close()
    return parser


def test_html_shows_no_raw_formula(quick: Path) -> None:
    parser = _parse(quick)
    assert raw_pieces(parser.texts) == []
    html = (quick / "report.html").read_text(encoding="utf-8")
    # the formulas are there, rendered
    assert "B<sub>h,p,1</sub>" in html and "√S" in html and " ≤ " in html and "λ<sub>min</sub>" in html
    assert "ε = 1, δ = 0.1" in html  # the audit's own setting names its parameters by their letters


def test_markdown_shows_no_raw_formula(quick: Path) -> None:
    md = (quick / "report.md").read_text(encoding="utf-8")
    prose = re.sub(r"`[^`]*`", "", md)  # commands and flag codes are code
    assert not re.search(r"&lt;=|&gt;=|!=|\bsqrt\(|[^\W\d]_\{", prose)
    assert "Bₕ,ₚ,₁" in md and "√S" in md and " ≤ " in md


def test_html_is_one_self_contained_file(quick: Path) -> None:
    parser = _parse(quick)
    assert parser.links, "the figures are embedded"
    for tag, name, value in parser.links:
        assert value.startswith(("data:", "#")), (tag, name, value[:80])
    html = (quick / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"<link\b|<script\b|@import|url\(|<iframe\b|<object\b|<embed\b", html, re.IGNORECASE)


def test_the_raw_patterns_catch_what_they_should() -> None:
    raw = ["a <= b", "sqrt(S)", "x^2", "x**2", "a * b", "B_{h,p,1}", "Δ_(p,1)", "λ_min", "‖x‖_F", "epsilon = 1"]
    assert all(raw_pieces([text]) for text in raw)
    clean = ["a ≤ b", "√S", "x²", "a·b", "add_remove", "replace_one", "ln(2/δ)", "ε = 1", "state_dim = 2"]
    assert raw_pieces(clean) == []


def test_math_html_escapes_everything_else() -> None:
    shown = math_html("<script>alert(1)</script> a_{<b>} ‖φ_V‖ <= sqrt(S) [x](javascript:alert(1))")
    assert "<script>" not in shown and "<b>" not in shown
    assert str(shown) == (
        "&lt;script&gt;alert(1)&lt;/script&gt; a<sub>&lt;b&gt;</sub> ‖φ<sub>V</sub>‖ ≤ √S [x](javascript:alert(1))"
    )
    assert str(math_html("add_remove, replace_one, T_1,k, s_h, x_(h+1)ᵀ")) == (
        "add_remove, replace_one, T<sub>1,k</sub>, s<sub>h</sub>, x<sub>h+1</sub>ᵀ"
    )


def test_math_markdown_uses_unicode_scripts() -> None:
    assert math_markdown("B_{h,p,1} <= sqrt(d1)·H^2, λ_min, ‖x‖_F") == "Bₕ,ₚ,₁ ≤ √(d1)·H², λₘᵢₙ, ‖x‖_(F)"


def test_decimal_exponents_and_optimal_stars_keep_their_meaning() -> None:
    """Found by a second reading: ``n^0.5`` became n⁰ followed by ".5", and the optimal star of ``J*(x0)`` a product."""
    from dpkit.reports.render import math_html, math_markdown

    assert str(math_html("n^0.5 episodes")) == "n<sup>0.5</sup> episodes"
    assert str(math_html("K**1.5")) == "K<sup>1.5</sup>"
    assert math_markdown("n^0.5") == "n^(0.5)"
    assert str(math_html("J*(x0) - J^pi(x0)")) == "J*(x0) - J<sup>pi</sup>(x0)"
    assert math_markdown("Q*(s, a)") == "Q*(s, a)"
    assert math_markdown("a*b and 2*(x+1)") == "a·b and 2·(x+1)"

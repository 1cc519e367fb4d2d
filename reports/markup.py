"""Text from users and formulas as report.md and report.html show them (:mod:`dpkit.reports.render`'s filters).

Text from users (titles, algorithm and release names, file names, config values) is data, never markup:
:func:`markdown_escape` makes any value literal Markdown (the Markdown templates' ``finalize``), and
:func:`html_finalize` drops control characters before the HTML templates autoescape.

Formulas in the algorithms' texts (``<=``, ``sqrt(S)``, ``B_{h,p,1}``) are shown as mathematics by
:func:`math_html` and :func:`math_markdown`: Unicode operators, and sub/superscripts as HTML ``<sub>``/``<sup>``
(the rest escaped) or Unicode characters in Markdown; report.json keeps the texts as written.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import markupsafe

__all__ = ["html_finalize", "markdown_escape", "math_html", "math_markdown", "no_controls", "symbol"]

_MD_ENTITIES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "[": "&#91;",
    "]": "&#93;",
    "|": "&#124;",
    "`": "&#96;",
    "\\": "&#92;",
}
_MD_TABLE = str.maketrans(_MD_ENTITIES)


def no_controls(text: str) -> str:
    """``text`` with its control characters dropped and its line breaks and tabs as spaces.

    :func:`dpkit.render.plain` does the same for the terminal on its own (the command line imports nothing of the
    reports).

    Args:
        text: The text.

    Returns:
        The cleaned text.
    """
    if text.isprintable():
        return text
    return "".join(
        " " if c in "\n\r\t\v\f" else c
        for c in text
        if c in "\n\r\t\v\f" or not unicodedata.category(c).startswith("C")
    )


def markdown_escape(value: Any) -> str:
    """``value`` as literal Markdown text.

    Raw HTML, links and images, code-span backticks, backslashes and table pipes become character references
    (which render as the same characters), and control characters and line breaks are dropped or become spaces
    (so a value cannot start a heading or end a table row). Emphasis characters (``*``, ``_``) are left as they
    are: the project's own names use them and they cannot inject anything.

    Args:
        value: Any value (shown as ``str(value)``).

    Returns:
        The escaped text.
    """
    text = no_controls(str(value))
    return text.translate(_MD_TABLE) if any(c in _MD_ENTITIES for c in text) else text


# -- formulas -----------------------------------------------------------------------------------------------
#
# The declarations' notes, flags, assumptions and statistics are written in plain text with ASCII formula
# pieces (``<=``, ``sqrt(S)``, ``B_{h,p,1}``, ``λ_min``). What a report shows turns them into readable
# mathematics: Unicode operators (≤ ≥ ≠ √ ·) in both files, and subscripts and superscripts as HTML
# ``<sub>``/``<sup>`` in report.html (everything else escaped) and as Unicode sub/superscript characters in
# report.md where they all exist (``B_(h,p,1)`` otherwise). The JSON keeps the texts as they are.

_OPERATORS = (
    (re.compile(r"<="), "≤"),
    (re.compile(r">="), "≥"),
    (re.compile(r"!="), "≠"),
    (re.compile(r"\bsqrt\("), "√("),
    (re.compile(r"√\((\w)\)"), r"√\1"),  # √(S) → √S
    (re.compile(r"(?<=[\w)])\*(?=\w)"), "·"),  # a*b → a·b (``**`` is a power, below)
    (re.compile(r"(?<=[\w)])(?<!\b[A-Za-z])\*(?=\()"), "·"),  # 2*(x) → 2·(x), but J*(x0), Q*(s, a) keep their star
)

#: A subscript ``X_{…}``, ``X_(…)`` or ``X_k`` after a Greek letter, ``‖`` or a Latin letter that starts a word
#: (``add_remove`` and other identifiers are left as they are), or a superscript ``x^{…}``, ``x^2``, ``x**2``.
_SCRIPT = re.compile(
    r"(?P<base>(?<![A-Za-z0-9_′])[A-Za-z]|[^\W\d_A-Za-z]|‖)_"
    r"(?:\{(?P<sb>[^{}]+)\}|\((?P<sp>[^()\s]+)\)|(?P<sw>[A-Za-z0-9]{1,3}(?:,[A-Za-z0-9]{1,3})*)(?![A-Za-z0-9_′]))"
    r"|(?<=[\w)])(?:\^|\*\*)(?:\{(?P<pb>[^{}]+)\}|(?P<pw>-?\d+\.\d+|-?[A-Za-z0-9]{1,3})(?![A-Za-z0-9_]|[.,]\d))"
)
_SUB = str.maketrans("0123456789+-=()aehijklmnoprstuvx,", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ,")
_SUP = str.maketrans("0123456789+-=()in", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿ")
_SUB_OK = set("0123456789+-=()aehijklmnoprstuvx,")
_SUP_OK = set("0123456789+-=()in")

#: Parameter names that are Greek letters, shown as the letters.
_SYMBOLS = {"epsilon": "ε", "delta": "δ", "sigma": "σ", "mu": "μ", "rho": "ρ", "lambda": "λ", "alpha": "α"}


def _operators(text: str) -> str:
    for pattern, repl in _OPERATORS:
        text = pattern.sub(repl, text)
    return text


def _scripts(text: str) -> list[tuple[str, str]]:
    """``text`` as pieces ``("", plain)``, ``("sub", …)`` and ``("sup", …)``."""
    out: list[tuple[str, str]] = []
    at = 0
    for m in _SCRIPT.finditer(text):
        out.append(("", text[at : m.start()] + (m["base"] or "")))
        sub = m["sb"] or m["sp"] or m["sw"]
        out.append(("sub", sub) if sub is not None else ("sup", m["pb"] or m["pw"]))
        at = m.end()
    out.append(("", text[at:]))
    return out


def math_html(value: Any) -> markupsafe.Markup:
    """``value`` (plain text with formula pieces) as safe HTML: operators as Unicode, scripts as ``<sub>``/``<sup>``.

    Args:
        value: Any value; every character of it is escaped.

    Returns:
        The HTML, marked safe.
    """
    pieces = _scripts(_operators(no_controls(str(value))))
    return markupsafe.Markup("").join(
        markupsafe.Markup(f"<{kind}>{markupsafe.escape(s)}</{kind}>") if kind else markupsafe.escape(s)
        for kind, s in pieces
    )


def math_markdown(value: Any) -> str:
    """``value`` with operators as Unicode and scripts as Unicode sub/superscript characters where each exists.

    Args:
        value: Any value (``X_(…)``, ``x^(…)`` where a script character is missing).

    Returns:
        The text, escaped by :func:`markdown_escape` as every value is.
    """
    out = []
    for kind, s in _scripts(_operators(str(value))):
        if kind == "sub":
            out.append(s.translate(_SUB) if set(s) <= _SUB_OK else f"_({s})")
        elif kind == "sup":
            out.append(s.translate(_SUP) if set(s) <= _SUP_OK else f"^({s})")
        else:
            out.append(s)
    return "".join(out)


def symbol(name: Any) -> str:
    """A parameter's name, or its Greek letter (``epsilon`` → ε).

    Args:
        name: The parameter's name.

    Returns:
        The letter, or the name as text.
    """
    return _SYMBOLS.get(str(name), str(name))


def html_finalize(value: Any) -> Any:
    """Control characters out of every string an HTML template shows (autoescaping does the rest).

    Args:
        value: The value a template prints.

    Returns:
        Strings cleaned by :func:`no_controls`, anything else as it is.
    """
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return no_controls(value)
    return value

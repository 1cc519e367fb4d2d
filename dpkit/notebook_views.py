"""The seam through which a notebook draws an audit result: the results live in :mod:`dpkit.audits`, the drawing in
:mod:`dpkit.reports` (the report's verdict row), and an audit may not import the reports above it.

``import dpkit`` registers the reports' view (:func:`register_html`, a function that imports the reports only when a
notebook first draws a result); a result's ``_repr_html_`` asks :func:`html` for it. This module imports nothing of
dpkit, so every layer may reach it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["html", "register_html"]

#: The view registered (:func:`register_html`): empty before one is.
_VIEW: list[Callable[[Any], str]] = []


def register_html(view: Callable[[Any], str]) -> None:
    """Make ``view`` the HTML a notebook shows of an audit result (it replaces any view registered before).

    Args:
        view: A function of an audit result to a self-contained HTML fragment.

    Raises:
        TypeError: If ``view`` is not callable.
    """
    if not callable(view):
        raise TypeError(f"a notebook view must be callable, got {view!r}")
    _VIEW[:] = [view]


def html(result: Any) -> str:
    """An audit result in HTML, as a notebook shows it: the registered view's, or (none registered) its text
    ``repr`` in a ``<pre>``, escaped.

    Args:
        result: An audit result (:class:`~dpkit.audits.summary.AuditSummary`).

    Returns:
        The HTML fragment.
    """
    if _VIEW:
        return _VIEW[0](result)
    import html as _html  # only here: ``import dpkit`` stays light

    return f"<pre>{_html.escape(repr(result))}</pre>"

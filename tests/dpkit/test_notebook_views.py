"""The seam through which a notebook draws an audit result (:mod:`dpkit.notebook_views`): ``import dpkit`` registers
the reports' verdict table, a result's ``_repr_html_`` reaches it without the audits importing the reports, and with
no view registered a result still shows its text, escaped."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from dpkit import notebook_views
from dpkit.audits.summary import Headline


class _Result(Headline):
    """A result with the headline's methods whose text needs escaping."""

    def __repr__(self) -> str:
        return "Result: <violation> & more"


@pytest.fixture
def no_view() -> Iterator[None]:
    saved = list(notebook_views._VIEW)
    notebook_views._VIEW.clear()
    yield
    notebook_views._VIEW[:] = saved


def test_import_dpkit_registers_the_reports_view_without_importing_them() -> None:
    code = (
        "import sys, dpkit; from dpkit import notebook_views as v; "
        "assert v._VIEW and not any(m.startswith(('dpkit.reports', 'dpkit.audits')) for m in sys.modules); "
        "from dpkit.reports.notebook_view import verdict_table_html; "
        "assert v._VIEW[0].__module__ == 'dpkit' and v._VIEW[0].__name__ == '_verdict_table_html'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_registered_view_draws_every_result(no_view: None) -> None:
    notebook_views.register_html(lambda result: f"<b>{type(result).__name__}</b>")
    assert _Result()._repr_html_() == "<b>_Result</b>"
    notebook_views.register_html(lambda result: "<i>second</i>")  # the last registered replaces the first
    assert _Result()._repr_html_() == "<i>second</i>"


def test_with_no_view_a_result_shows_its_text_escaped(no_view: None) -> None:
    assert _Result()._repr_html_() == "<pre>Result: &lt;violation&gt; &amp; more</pre>"


def test_a_view_must_be_callable() -> None:
    with pytest.raises(TypeError, match="must be callable, got 'html'"):
        notebook_views.register_html("html")  # type: ignore[arg-type]

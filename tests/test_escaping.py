"""Text from users is data, never markup: rich markup, terminal escape sequences and HTML in names,
titles and file names are shown literally on the terminal and escaped in report.md and report.html."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import run
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.render import plain
from dpkit.reports.config import parse_config
from dpkit.reports.job import compute_report
from dpkit.reports.render import markdown_escape, write_report

OSC_TITLE = "\x1b]0;pwned\x07"
HOSTILE = [
    "[/bold]",
    "[link=https://evil.example]click[/link]",
    "[bold red]loud",
    OSC_TITLE + "title",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "a|b`c\\d",
]


def _ledger_file(tmp_path: Path, names: list[str], name: str = "ledger.json") -> Path:
    path = tmp_path / name
    path.write_text(
        json.dumps({"release": [{"name": n, "sensitivity": 1.0, "sigma": 2.0} for n in names]}), encoding="utf-8"
    )
    return path


def test_release_names_with_markup_and_escapes_are_printed_literally(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    names = ["[/bold]", "[link=https://evil.example]click[/link]", OSC_TITLE + "t", "[bold red]x"]
    code, out, err = run(capsys, "ledger", str(_ledger_file(tmp_path, names)), "--delta", "1e-5")
    assert code == 0, err
    assert "[/bold]" in out and "[link=https://evil.example]click[/link]" in out and "[bold red]x" in out
    assert "\x1b" not in out and "\x07" not in out and "]0;pwned" in out  # the OSC is defused, its text kept


def test_an_error_naming_a_hostile_file_is_one_plain_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "ledger", str(tmp_path / f"[/bold]{OSC_TITLE}\nx.json"), "--delta", "1e-5")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and "\x1b" not in err and "[/bold]" in err


@given(st.text(max_size=40))
@settings(max_examples=examples(200), derandomize=True, deadline=None)
def test_plain_leaves_no_control_character(text: str) -> None:
    shown = plain(text)
    assert all(c.isprintable() or c == " " for c in shown if c not in " \u00a0") or shown.isprintable()
    assert not any(0 <= ord(c) < 32 or 127 <= ord(c) < 160 for c in shown)


@given(st.text(max_size=40))
@settings(max_examples=examples(200), derandomize=True, deadline=None)
def test_markdown_escape_leaves_no_markup(text: str) -> None:
    shown = markdown_escape(text)
    assert not any(c in shown for c in "<>[]`|\\\n\r")


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    title = "<script>alert('t')</script> [x](javascript:alert(1)) " + OSC_TITLE + "| `code` [/bold]"
    config = parse_config(
        {
            "title": title,
            "seed": 0,
            "algorithm": [
                {
                    "name": "private-linopt-vi",
                    "states": 2,
                    "episodes": 20,
                    "epsilon": 1.0,
                    "delta": 0.1,
                    "audit": {"enabled": False},
                }
            ],
        },
        "<img src=x onerror=alert(1)>.toml",
    )
    data = compute_report(config, command=["dpkit", "report", "--config", "<img src=x onerror=alert(1)>.toml"])
    out = tmp_path_factory.mktemp("hostile") / "report"
    write_report(data, out)
    return out


def test_report_md_escapes_titles_and_file_names(hostile_report: Path) -> None:
    md = (hostile_report / "report.md").read_text(encoding="utf-8")
    assert "<script>" not in md and "<img" not in md and "](javascript:" not in md and "\x1b" not in md
    assert "&lt;script&gt;" in md and "&lt;img src=x onerror=alert(1)&gt;.toml" in md
    title_line = md.splitlines()[0]
    assert title_line.startswith("# ") and "&#124;" in title_line and "&#96;code&#96;" in title_line


def test_report_html_escapes_titles_and_file_names(hostile_report: Path) -> None:
    html = (hostile_report / "report.html").read_text(encoding="utf-8")
    assert "<script>alert" not in html and "<img src=x onerror" not in html and "\x1b" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;.toml" in html

"""The command line's tables (issue 43): as wide as the terminal, ``COLUMNS`` included, and never a word broken
inside a cell (``gaussian-lr-f/itted`` at 80 columns): a long label wraps between its words first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_runs import run
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.render import fit_widths, print_table

#: The rows of ``dpkit audit --target`` (the README's example), whose value column once folded a word at 80 columns.
ROWS = [
    ["ε lower bound (δ = 1e-05)", "0.618942"],
    ["μ estimate [interval]", "0.396822 [0.369752, 0.423913]"],
    ["μ the claim allows (measured ÷ allowed)", "0.268 (1.481)"],
    ["power (bound an ideal attack certifies at the claim) / ratio", "0.241066 / 0.8995"],
    ["attack", "gaussian-lr-fitted"],
    ["executor", "in-process"],
]
AUDIT = [
    "--target",
    "mech.py:release",
    "--neighbours",
    "mech.py:PAIR",
    "--mu",
    "0.268",
    "--trials",
    "2000",
    "--attack",
    "lr",
]
BOX = "│┃┏┓┗┛━┳┻╇┡┩└┘─┴┬┼"


def _cells(output: str) -> list[list[str]]:
    """The text of each column on each drawn line of a two-column table (the border characters removed)."""
    return [[cell.strip() for cell in re.split(r"[│┃]", line)[1:-1]] for line in output.splitlines() if "│" in line]


def _words_of_table(output: str) -> list[str]:
    return [w for line in output.splitlines() for w in re.split(rf"[\s{BOX}]+", line) if w]


@pytest.mark.parametrize("columns", [80, 60, 120, 200])
def test_a_table_fits_the_terminal_and_breaks_no_word(
    columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    print_table("Audit", ["", "value"], ROWS)
    out = capsys.readouterr().out
    widest = max(len(line) for line in out.splitlines())
    assert widest <= columns, out
    shown = _words_of_table(out)
    for row in ROWS:
        for word in " ".join(row).split():
            assert word in shown, f"{word!r} broken at COLUMNS={columns}:\n{out}"
    if columns >= 100:  # room for every row unwrapped: one line per row, as wide as its text needs (not wider)
        assert [c for c in _cells(out) if any(c)] == [row for row in ROWS]
        assert widest == max(len(a) for a, _ in ROWS) + max(len(b) for _, b in ROWS) + 7
    elif columns == 80:  # the label wraps, between its words; the values (each under half the room) stay whole
        values = [c[1] for c in _cells(out) if c[1]]
        assert values == [v for _, v in ROWS], out


def test_a_long_value_and_a_long_label_share_the_room(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A value longer than half the room (an executor's description) does not squeeze the labels to their longest
    word: both wrap, between words, the room shared as their unwrapped widths are."""
    rows = ROWS + [["executor", "processes (2 workers; auto, slow target: 100 µs a run measured in-process over 19,998 "
                    "runs; a process pool from then on)"]]  # fmt: skip
    monkeypatch.setenv("COLUMNS", "80")
    print_table("Audit", ["", "value"], rows)
    out = capsys.readouterr().out
    label_width = len(re.split(r"[│┃]", out.splitlines()[-2])[1])
    assert label_width > 20, out
    assert "μ the claim allows" in out and "attack" in _words_of_table(out)
    for word in " ".join(" ".join(row) for row in rows).split():
        assert word in _words_of_table(out), f"{word!r} broken:\n{out}"


def test_columns_is_honoured_beyond_80(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A table wider than 80 columns is drawn whole at ``COLUMNS=200`` (no wrap), and wrapped at ``COLUMNS=80``."""
    wide = [["a label of some sixty characters that a wide terminal shows", "a value thirty characters long"]]
    for columns in (200, 80):
        monkeypatch.setenv("COLUMNS", str(columns))
        print_table("T", ["", "value"], wide)
        body = [c for c in _cells(capsys.readouterr().out) if any(c)]  # the header (┃) is not among them
        assert (len(body) == 1) == (columns == 200), body
        assert body[0][0] == wide[0][0]  # the label whole: the value's words still fit beside it


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.lists(st.text(alphabet="ab -", min_size=0, max_size=30), min_size=1, max_size=5), min_size=1, max_size=4
    ),
    st.integers(min_value=0, max_value=120),
)
def test_fit_widths_keeps_every_word_and_the_room(columns: list[list[str]], room: int) -> None:
    widths = fit_widths(columns, room)
    natural = [max(len(c) for c in col) for col in columns]
    words = [max((len(w) for c in col for w in c.split()), default=0) for col in columns]
    if widths is None:
        assert sum(natural) <= room or sum(words) > room
        return
    assert sum(widths) <= room
    assert all(w <= width <= n for w, width, n in zip(words, widths, natural))
    assert sum(widths) == min(room, sum(natural))  # no cell of the room is left unused while a column wraps


def test_an_audit_table_on_the_command_line_at_80_and_200_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``dpkit audit --target`` (the README's release function): ``gaussian-lr-fitted`` whole at 80 columns and at 200,
    and every line within the width."""
    (tmp_path / "mech.py").write_text(
        "import numpy as np\n\n\ndef release(dataset, rng, n):\n"
        "    return np.sum(dataset) + 2.6 * rng.standard_normal((n, 1))\n\n\nPAIR = ([0.0], [0.0, 1.0])\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    for columns in (80, 200):
        monkeypatch.setenv("COLUMNS", str(columns))
        code, out, err = run(capsys, "audit", *AUDIT)
        assert code in (0, 1), err
        assert "gaussian-lr-fitted" in _words_of_table(out), out
        assert max(len(line) for line in out.splitlines()) <= columns, out

"""Output for the command line: one JSON object on stdout, or rich tables for humans."""

from __future__ import annotations

import contextlib
import math
import sys
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .table_layout import fit_widths

if TYPE_CHECKING:  # rich is imported where it draws, so that `--json` output never loads it
    from rich.console import Console
    from rich.text import Text

__all__ = [
    "plain",
    "emit_json",
    "format_number",
    "format_bound",
    "certainty",
    "certainty_cells",
    "fit_widths",
    "print_table",
    "print_lines",
    "stderr_console",
    "busy",
    "progress_bar",
    "progress_with_status",
]


def plain(value: object) -> str:
    """``value`` as text that is only data on a terminal: control characters dropped, line breaks and tabs spaces.

    Rich markup needs no escaping here: the print helpers below hand text to rich as
    :class:`rich.text.Text`, which is never parsed as markup (``[/bold]`` or ``[link=…]`` stay literal).

    Args:
        value: Anything; its ``str`` is made plain.

    Returns:
        The text, on one line, without escape sequences (an OSC "set title"), bells or carriage returns.
    """
    text = str(value)
    if text.isprintable():
        return text
    return "".join(
        " " if c in "\n\r\t\v\f" else c
        for c in text
        if c in "\n\r\t\v\f" or not unicodedata.category(c).startswith("C")
    )


def _text(value: object, lines: bool = False) -> Text:
    from rich.text import Text

    if lines:  # keep the line breaks of a multi-line caption, each line made plain
        return Text("\n".join(plain(line) for line in str(value).split("\n")))
    return Text(plain(value))


def emit_json(obj: Mapping[str, Any]) -> None:
    """Print one JSON object on stdout (full float precision, no NaN/Infinity).

    Args:
        obj: The object to print, JSON-ready (:func:`dpkit.reports.encoding.dumps` encodes it).
    """
    from dpkit.reports.encoding import dumps

    sys.stdout.write(dumps(obj) + "\n")


def format_number(x: float | int | None, digits: int = 8) -> str:
    """A compact, human-readable number; '—' for a missing value.

    Args:
        x: The number (an integer is printed whole), or None.
        digits: The significant digits of a float.

    Returns:
        The number as text.
    """
    if x is None:
        return "—"
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}g}"


def format_bound(x: float | None, *, up: bool, digits: int = 9) -> str:
    """An end of an interval, to ``digits`` significant digits rounded outwards (the interval still holds the truth).

    Args:
        x: The end, or None ('—').
        up: Whether it is an upper end (rounded up; else down).
        digits: The significant digits.

    Returns:
        The end as text (a value that prints exactly is printed as it is).
    """
    if x is None:
        return "—"
    short = format_number(x, digits)
    if not math.isfinite(x) or float(short) == x:
        return short
    from dpkit.accountant.numerics import decimal_round

    return format_number(decimal_round(x, digits, up=up), digits)


def certainty(symbol: str, upper: float, lower: float | None, at: str = "", *, digits: int = 9) -> str:
    """How sure a value is, in words.

    Args:
        symbol: The value's symbol (``ε``).
        upper: The certified value, an upper bound on the truth.
        lower: A lower bound on the truth (at least ``upper``: the value is exact), or None where none is known.
        at: The point of the profile (``"at δ = 1e-05"``), or empty.
        digits: The significant digits of the bounds.

    Returns:
        ``ε = 1.0000093121 at δ = 1e-05`` (exact, 12 digits rounded up), ``ε ≤ 2.99922113 at δ = 1e-05, truth in
        [2.99910356, 2.99922113]`` or ``ε ≤ 3.1 at δ = 1e-05, an upper bound`` where nothing bounds the truth below.
    """
    where = f" {at}" if at else ""
    if lower is not None and lower >= upper:  # the truth itself, never printed below it
        return f"{symbol} = {format_bound(upper, up=True, digits=12)}{where}"
    top = format_bound(upper, up=True, digits=digits)
    if lower is None:
        return f"{symbol} ≤ {top}{where}, an upper bound"
    return f"{symbol} ≤ {top}{where}, truth in [{format_bound(lower, up=False, digits=digits)}, {top}]"


def certainty_cells(upper: float, lower: float | None, *, digits: int = 9) -> list[str]:
    """Two table cells: the certified value (an upper bound) and the lower bound on the truth.

    Args:
        upper: The certified value, an upper bound on the truth.
        lower: A lower bound on the truth (at least ``upper``: the value is exact), or None where none is known.
        digits: The significant digits of the bounds.

    Returns:
        The value and the lower bound (``exact`` for the truth, ``none known`` where nothing bounds it below).
    """
    if lower is not None and lower >= upper:  # the truth itself, never printed below it
        return [format_bound(upper, up=True, digits=10), "exact"]
    top = format_bound(upper, up=True, digits=digits)
    return [top, "none known" if lower is None else format_bound(lower, up=False, digits=digits)]


def format_values(x: float | Sequence[float] | None, digits: int = 6) -> str:
    """One number, or one per step (a σ or Δ of an allocation with per-step values) as a comma-separated list.

    Args:
        x: A number, a sequence of them, or None ('—').
        digits: The significant digits of each.

    Returns:
        The numbers as text.
    """
    if x is None or isinstance(x, (int, float)):
        return format_number(x, digits)
    return ", ".join(format_number(float(v), digits) for v in x)


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], caption: str | None = None) -> None:
    """Render a table on stdout; every string is shown literally (no markup, no control characters).

    The table is as wide as the terminal (``COLUMNS`` where set) allows; cells wrap between words, never inside one
    (:func:`fit_widths`), and only a word longer than the room there is folds.

    Args:
        title: The table's title.
        columns: The column headers (the first column is left-aligned, the others right-aligned).
        rows: The rows, one string per column.
        caption: A caption under the table (its line breaks kept), or None.
    """
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=_text(title), caption=None if caption is None else _text(caption, lines=True), caption_justify="left"
    )
    texts = [[plain(col)] + [plain(row[i]) for row in rows] for i, col in enumerate(columns)]
    console = Console()
    borders = (len(columns) + 1) if table.box else 0
    padding = 2 * len(columns)  # one cell either side of every column (rich's default padding)
    widths = fit_widths(texts, console.width - borders - padding)
    for i, col in enumerate(columns):
        width = None if widths is None else widths[i]
        # the first column (names) is never cut short ("private-linop…"): unwrapped, unless it needs to wrap
        # between its words to leave the values their room
        table.add_column(
            _text(col),
            justify="left" if i == 0 else "right",
            no_wrap=i == 0 and widths is None,
            overflow="fold",
            width=width,
        )
    for row in rows:
        table.add_row(*(_text(cell) for cell in row))
    console.print(table)


def print_lines(lines: Sequence[str], title: str | None = None) -> None:
    """Print plain lines on stdout (no markup), as bullets under an optional bold title.

    Args:
        lines: The lines to print.
        title: The title, or None (or empty) for none.
    """
    from rich.console import Console

    console = Console()
    if title:
        console.print(_text(title), style="bold", markup=False, highlight=False)
    for line in lines:
        console.print(_text(f"  • {line}"), markup=False, highlight=False)


def stderr_console() -> Console:
    """A console on stderr, for progress bars (stdout stays clean for results).

    Returns:
        A :class:`rich.console.Console` writing to stderr.
    """
    from rich.console import Console

    return Console(stderr=True)


@contextlib.contextmanager
def busy(message: str, active: bool = True) -> Iterator[None]:
    """A transient spinner on stderr while a slow computation runs (only on a terminal).

    Args:
        message: The text beside the spinner.
        active: Whether to show it at all (``False``: ``--json`` output, say).

    Yields:
        None, once: the computation runs in the ``with`` block.
    """
    console = stderr_console() if active else None
    if console is None or not console.is_terminal:
        yield
        return
    with console.status(message):
        yield


@contextlib.contextmanager
def progress_bar(description: str, total: float) -> Iterator[Callable[[float], None]]:
    """A transient progress bar on stderr (only on a terminal).

    Args:
        description: The text beside the bar.
        total: The steps the bar stands for.

    Yields:
        ``advance(k)``, which moves the bar on by ``k`` steps (it does nothing off a terminal).
    """
    console = stderr_console()
    if not console.is_terminal:
        yield lambda k: None
        return
    from rich.progress import Progress

    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(description, total=total)
        yield lambda k: progress.advance(task, k)


@contextlib.contextmanager
def progress_with_status(
    description: str, total: float
) -> Iterator[tuple[Callable[[float], None], Callable[[str], None]]]:
    """A transient progress bar on stderr (only on a terminal) whose text can change as evidence arrives.

    Args:
        description: The text beside the bar.
        total: The steps the bar stands for.

    Yields:
        ``(advance, status)``: ``advance(k)`` moves the bar, ``status(text)`` shows ``text`` after ``description``.
    """
    console = stderr_console()
    if not console.is_terminal:
        yield (lambda k: None), (lambda text: None)
        return
    from rich.progress import Progress

    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(description, total=total)
        yield (
            lambda k: progress.advance(task, k),
            lambda text: progress.update(task, description=f"{description} · {text}"),
        )

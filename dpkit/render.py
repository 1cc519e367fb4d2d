"""Output for the command line: one JSON object on stdout, or rich tables for humans."""

from __future__ import annotations

import contextlib
import sys
import time
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported where it draws, so that `--json` output never loads it
    from rich.console import Console
    from rich.text import Text

__all__ = [
    "plain",
    "emit_json",
    "format_number",
    "print_table",
    "print_lines",
    "stderr_console",
    "busy",
    "progress_bar",
    "StageClock",
    "stage_progress",
]


def plain(value: object) -> str:
    """``value`` as text that is only data on a terminal: control characters (escape sequences such as
    an OSC "set title", bells, carriage returns) are dropped and line breaks and tabs become spaces.

    Rich markup needs no escaping here: the print helpers below hand text to rich as
    :class:`rich.text.Text`, which is never parsed as markup (``[/bold]`` or ``[link=…]`` stay literal).
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
    """Print one JSON object on stdout (full float precision, no NaN/Infinity)."""
    from dpkit.reports.encoding import dumps

    sys.stdout.write(dumps(obj) + "\n")


def format_number(x: float | int | None, digits: int = 8) -> str:
    """A compact, human-readable number; '—' for a missing value."""
    if x is None:
        return "—"
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}g}"


def format_values(x: float | Sequence[float] | None, digits: int = 6) -> str:
    """One number, or one per step (a σ or Δ of an allocation with per-step values) as a comma-separated list;
    '—' for a missing value."""
    if x is None or isinstance(x, (int, float)):
        return format_number(x, digits)
    return ", ".join(format_number(float(v), digits) for v in x)


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], caption: str | None = None) -> None:
    """Render a table on stdout; every string is shown literally (no markup, no control characters)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=_text(title), caption=None if caption is None else _text(caption, lines=True), caption_justify="left"
    )
    # the first column (names) is never wrapped or cut short ("private-linop…"); the other cells wrap between words,
    # and a word longer than its column folds
    for i, col in enumerate(columns):
        if i == 0:
            table.add_column(_text(col), justify="left", no_wrap=True)
        else:
            table.add_column(_text(col), justify="right", overflow="fold")
    for row in rows:
        table.add_row(*(_text(cell) for cell in row))
    Console().print(table)


def print_lines(lines: Sequence[str], title: str | None = None) -> None:
    """Print plain lines on stdout (no markup), under an optional bold title."""
    from rich.console import Console

    console = Console()
    if title:
        console.print(_text(title), style="bold", markup=False, highlight=False)
    for line in lines:
        console.print(_text(f"  • {line}"), markup=False, highlight=False)


def stderr_console() -> Console:
    """A console on stderr, for progress bars (stdout stays clean for results)."""
    from rich.console import Console

    return Console(stderr=True)


@contextlib.contextmanager
def busy(message: str, active: bool = True) -> Iterator[None]:
    """A transient spinner on stderr while a slow computation runs (only on a terminal)."""
    console = stderr_console() if active else None
    if console is None or not console.is_terminal:
        yield
        return
    with console.status(message):
        yield


@contextlib.contextmanager
def progress_bar(description: str, total: float) -> Iterator[Callable[[float], None]]:
    """A transient progress bar on stderr (only on a terminal); yields ``advance(k)``."""
    console = stderr_console()
    if not console.is_terminal:
        yield lambda k: None
        return
    from rich.progress import Progress

    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(description, total=total)
        yield lambda k: progress.advance(task, k)


class StageClock:
    """The progress of named stages that may run side by side: ``advance(stage, k)`` moves a stage on by ``k`` of its
    ``totals[stage]`` steps; :attr:`seconds` holds each finished stage's wall time, measured from when the stage was
    opened (:meth:`open`; all stages given at once are opened together)."""

    def __init__(self, totals: Mapping[str, float], on_advance: Callable[[str, float], None] | None = None) -> None:
        self.totals = dict(totals)
        self.done = dict.fromkeys(self.totals, 0.0)
        self.opened: dict[str, float] = {}
        self.seconds: dict[str, float] = {}
        self._on_advance = on_advance
        self._on_finish: Callable[[str, float], None] | None = None

    def open(self, *stages: str) -> None:
        now = time.perf_counter()
        for stage in stages:
            self.opened.setdefault(stage, now)

    def advance(self, stage: str, k: float) -> None:
        if stage not in self.totals:
            raise ValueError(f"unknown stage {stage!r} (stages: {', '.join(self.totals)})")
        self.open(stage)
        self.done[stage] += k
        if self._on_advance is not None:
            self._on_advance(stage, k)
        if stage not in self.seconds and self.done[stage] >= self.totals[stage] - 1e-9:
            self.seconds[stage] = time.perf_counter() - self.opened[stage]
            if self._on_finish is not None:
                self._on_finish(stage, self.seconds[stage])

    def summary(self) -> str:
        """``ledgers 0.4 s, simulations 41.2 s, …`` for the finished stages, in the order given."""
        return ", ".join(f"{stage} {self.seconds[stage]:.1f} s" for stage in self.totals if stage in self.seconds)


@contextlib.contextmanager
def stage_progress(totals: Mapping[str, float]) -> Iterator[StageClock]:
    """One progress bar per stage on stderr (on a terminal; bars of stages that run side by side move together), or
    one line ``STAGE done in T s`` on stderr as each stage finishes (elsewhere: logs of CI runs). Yields the
    :class:`StageClock`, whose ``advance(stage, k)`` moves a stage on; every stage is opened at once."""
    console = stderr_console()
    if not console.is_terminal:
        clock = StageClock(totals)
        clock._on_finish = lambda stage, seconds: console.print(
            f"{stage} done in {seconds:.1f} s", markup=False, highlight=False
        )
        clock.open(*totals)
        yield clock
        return
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description:<12}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        tasks = {stage: progress.add_task(stage, total=total) for stage, total in totals.items()}
        clock = StageClock(totals, on_advance=lambda stage, k: progress.advance(tasks[stage], k))
        clock._on_finish = lambda stage, seconds: progress.stop_task(tasks[stage])
        clock.open(*totals)
        yield clock
